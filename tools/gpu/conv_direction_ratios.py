#!/usr/bin/env python3
"""ResNet-50 at N=256, fp16 NHWC, per direction: Tessera's time per layer beside PyTorch/cuDNN's
(benchmark mode) measured in the same device run, as ratios.

    conv_direction_ratios.py anchor_subset.json SUITE_JSON...

anchor_subset.json from tools/gpu/anchor_subset.py --conv-backward; each SUITE_JSON is tessera-bench
--json output of tools/suites/resnet50{,_bwd_filter,_bwd_data}_mb256.txt (their rows are the
anchor's layers in the same order, each layer weighted by its _x<count> suffix). The ratio is
torch's time over ours: above 1, Tessera is faster.
"""
import json
import math
import re
import sys

DIRECTIONS = {"FWD": ("r50_layers", "forward"), "BWD_W": ("r50_layers_bwd_filter", "backward filter"),
              "BWD_D": ("r50_layers_bwd_data", "backward data")}


def direction_of(problem):
    m = re.search(r"--dir=(\w+)", problem)
    return m.group(1) if m else "FWD"


def main():
    anchor = json.load(open(sys.argv[1]))
    for path in sys.argv[2:]:
        try:
            run = json.load(open(path))
        except (OSError, ValueError) as error:
            print(f"{path}: not read ({error})")
            continue
        rows = run.get("rows", [])
        if not rows:
            continue
        direction = direction_of(rows[0]["problem"])
        key, title = DIRECTIONS.get(direction, (None, direction))
        theirs = anchor.get(key) if key else None
        if not theirs:
            print(f"{path}: no anchor rows for {title}")
            continue
        print(f"\nResNet-50 N=256 fp16 NHWC, {title}: Tessera (cuda) vs PyTorch/cuDNN, same run")
        print(f"{'layer':<36} {'ours ms':>9} {'torch ms':>9} {'torch/ours':>10}  kernel")
        ours_flop = ours_ms = torch_ms = 0.0
        logs = []
        for row, anchor_row in zip(rows, theirs):
            ours = next((r for r in row["results"] if r["backend"] == "cuda"), None)
            count = int(re.search(r"_x(\d+)", row["problem"]).group(1)) if "_x" in row["problem"] else 1
            if not ours or ours.get("status") != "passed" or not ours.get("time_ms"):
                print(f"{row['text'][:36]:<36} {'-':>9} {anchor_row['ms']:>9.4f} {'-':>10}  not run")
                continue
            ratio = anchor_row["ms"] / ours["time_ms"]
            logs.append(math.log(ratio))
            ours_flop += anchor_row["flops"] * count
            ours_ms += ours["time_ms"] * count
            torch_ms += anchor_row["ms"] * count
            print(f"{row['text'].split('_nr50')[0][:36]:<36} {ours['time_ms']:>9.4f} {anchor_row['ms']:>9.4f} "
                  f"{ratio:>10.2f}  {ours['kernel']}")
        if logs:
            print(f"weighted by layer count: ours {ours_flop / ours_ms / 1e9:.0f} TFLOP/s, torch "
                  f"{ours_flop / torch_ms / 1e9:.0f} TFLOP/s, torch/ours {torch_ms / ours_ms:.2f}; "
                  f"geomean of layer ratios {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)} layers")


if __name__ == "__main__":
    main()
