# Prints Tessera's GPU figures beside the anchor measured in the same run, as ratios.
# Usage: ratio_table.py anchor_subset.json bench_h200_anchor.txt bench_resnet50_mb256.txt
# The bench files are tessera-bench output; lines are matched to anchors by their driver flags
# (h200_anchor.txt) or by their _x<count> suffix (resnet50_mb256.txt, weighted like the anchor).
import json, re, sys

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse(path):
    rows = []
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return rows
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or parts[0] not in ("PASSED", "FAILED", "SKIPPED"):
            continue
        m_time = re.fullmatch(r"([0-9.eE+-]+)(us|ms|s)", parts[-2])
        m_rate = re.fullmatch(r"([0-9.eE+-]+)(GB/s|GFLOP/s)", parts[-1])
        rows.append({"status": parts[0], "kernel": parts[1], "line": line,
                     "ms": float(m_time.group(1)) * UNITS[m_time.group(2)] if m_time else None,
                     "rate": float(m_rate.group(1)) if m_rate else None})
    return rows


anchor = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else {}
bench = parse(sys.argv[2]) if len(sys.argv) > 2 else []
conv = parse(sys.argv[3]) if len(sys.argv) > 3 else []
copy = anchor.get("copy_TBps")

table = []


def add(name, ours, theirs, unit, note=""):
    ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
    o = f"{ours:.3g}" if ours else "-"
    t = f"{theirs:.3g}" if theirs else "-"
    table.append(f"{name:<30} {o:>9} {t:>9} {unit:<8} {ratio:>6}  {note}")


def find(pattern):
    for r in bench:
        if re.search(pattern, r["line"]):
            return r
    return None


ours_copy = find(r"--reorder")
if ours_copy and ours_copy["rate"]:
    add("copy 1 GiB (ours vs torch)", ours_copy["rate"] / 1e3, copy, "TB/s", ours_copy["kernel"])
# Our copies of the workloads' sizes (h200_anchor.txt's last lines), each a per-call time like
# the workloads': 411 MB (relu, batch norm, max pool) and 128 MB (softmax, layer norm) each way.
def copy_rate(shape):
    r = find(r"--reorder --sdt=f16.* " + shape + " ")
    return r["rate"] / 1e3 if r and r["rate"] and r["status"] == "PASSED" else None


size_copies = {"411MB": copy_rate("256x256x56x56"), "128MB": copy_rate("64x1024x32x32")}
for size, rate in size_copies.items():
    if rate:
        add(f"copy {size} fp16 (ours)", rate, None, "TB/s", "the ceiling at the workloads' size")
cases = [("relu fp16", r"--eltwise.*relu", "relu_fp16_TBps", "411MB"),
         ("bnorm inference fp16", r"--bnorm.*FWD_I", "bn_infer_fp16_TBps", "411MB"),
         ("bnorm training fwd fp16", r"--bnorm.*FWD_D", "bn_train_fwd_fp16_TBps", "411MB"),
         ("bnorm backward fp16", r"--bnorm.*BWD_DW", None, "411MB"),
         ("maxpool 3x3/2 fp16", r"--pool.*max.*FWD_D", "maxpool3s2_fp16_TBps", "411MB"),
         ("maxpool backward fp16", r"--pool.*max.*BWD_D", None, "411MB"),
         ("softmax fp16", r"--softmax.* 65536x1024", "softmax_fp16_TBps", "128MB"),
         ("layernorm fp16", r"--lnorm.* 65536x1024", "layernorm_fp16_TBps", "128MB"),
         ("softmax fp16 512MB", r"--softmax.* 262144x1024", None, None),
         ("layernorm fp16 512MB", r"--lnorm.* 262144x1024", None, None)]
for name, pattern, key, size in cases:
    r = find(pattern)
    ours = r["rate"] / 1e3 if r and r["rate"] and r["status"] == "PASSED" else None
    note = (r["kernel"] if r else "not run") + (f"; {ours / copy:.0%} of copy" if ours and copy else "")
    if ours and size_copies.get(size):
        note += f", {ours / size_copies[size]:.0%} of our {size} copy"
    add(name + (" vs torch" if key else ""), ours, anchor.get(key) if key else None, "TB/s", note)

r = find(r"--rnn")
if r:
    lstm = anchor.get("lstm_fwd_T128_B64_H1024_L2_ms")
    ours = r["ms"] if r["status"] == "PASSED" else None
    # time: a ratio above 1 means cuDNN is faster
    add("LSTM 2x1024 T128 N64 fp16", ours, lstm, "ms", "ratio = ours/cuDNN time; " + r["kernel"])

if conv:
    flops = ms = 0.0
    passed = 0
    for r in conv:
        m = re.search(r"_x(\d+)", r["line"])
        if r["status"] != "PASSED" or not m or not r["ms"]:
            continue
        count = int(m.group(1))
        flops += r["rate"] * 1e9 * r["ms"] / 1e3 * count
        ms += r["ms"] * count
        passed += 1
    ours = flops / (ms / 1e3) / 1e12 if ms else None
    kernels = sorted({r["kernel"] for r in conv})
    add("R50 conv fwd N256 fp16", ours, anchor.get("r50_conv_fwd_N256_float16_TFLOPs"), "TFLOP/s",
        f"{passed}/{len(conv)} layers; " + ",".join(k.split("/")[-1] for k in kernels)[:80])

print(f"{'workload':<30} {'tessera':>9} {'anchor':>9} {'unit':<8} {'ratio':>6}  note")
print("\n".join(table))
