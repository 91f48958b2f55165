#!/usr/bin/env python3
"""The tools' command lines on the CPU, one check per ctest entry:

    tools_cli_test.py --bin BUILD/bin --source SOURCE --work DIR [--plot-python PY] CHECK

tessera-bench side by side on two handles of oneDNN (a self-consistency check: the ratio must be
near 1 and finite), its JSON and CSV reports and its progress bar; a single backend's output in
the format tools/gpu/ratio_table.py parses; tessera-tune tune and list; tools/perf-report over a
JSON file the first check's run produces. Exit 0: passed, 1: failed, 77: skipped.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys

# Four problems of the drivers that rotate their inputs: convolution, memory-bound, matmul.
SUITE = """# tools_cli_test's suite
--conv mb2ic16ih7oc16oh7kh3ph1_ntiny_conv
--pool mb2ic16ih14oh7kh3sh2ph1
--eltwise 2x16x7x7
--matmul m10n20k30
"""
TUNE_SUITE = """# three problems of three operations
--conv mb2ic16ih7oc16oh7kh3ph1
--pool mb2ic16ih14oh7kh3sh2ph1
--eltwise 2x16x7x7
"""

# The time and rate words ratio_table.py reads from the last two of a row's words.
TIME = re.compile(r"[0-9.eE+-]+(us|ms|s)")
RATE = re.compile(r"[0-9.eE+-]+(GB/s|GFLOP/s)")


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Context:
    def __init__(self, args):
        self.bin = args.bin
        self.source = args.source
        self.work = args.work
        self.plot_python = args.plot_python
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        # One OpenMP thread: two handles timed one after the other on a shared machine then
        # differ by the run's noise, not by a worker thread that was not scheduled.
        self.env.update({"OMP_NUM_THREADS": "1", "TESSERA_LOG_LEVEL": "error",
                         "TESSERA_TUNING_DB": "off"})

    def path(self, name):
        return os.path.join(self.work, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def run(self, program, *args, env=None, expect_rc=0):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([os.path.join(self.bin, program), *args], env=e, cwd=self.work,
                           capture_output=True, text=True, timeout=600)
        expect(expect_rc is None or p.returncode == expect_rc,
               f"{program} {' '.join(args)}: exit {p.returncode}, expected {expect_rc}\n"
               f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def side_by_side(self, prefix):
        """tessera-bench --backend=onednn,onednn over the suite and one command-line problem."""
        self.write("cli_suite.txt", SUITE)  # named relative to the working folder: the suite
        return self.run("tessera-bench", "--backend=onednn,onednn", "--iters=15",
                        "--rotate-mb=4", "--batch=cli_suite.txt",
                        "--conv", "mb1ic8ih8oc8oh8kh3ph1",
                        f"--json={self.path(prefix + '.json')}",
                        f"--csv={self.path(prefix + '.csv')}")


def side_by_side_prints_one_row_per_problem_with_a_finite_ratio_and_geomeans(ctx):
    out = ctx.side_by_side("side_by_side").stdout.splitlines()
    rows = [l for l in out if l.startswith(("PASSED", "FAILED", "SKIPPED"))]
    expect(len(rows) == 5, f"expected 5 rows, got {len(rows)}:\n" + "\n".join(out))
    for row in rows:
        cells = row.split(" | ")
        expect(row.startswith("PASSED") and len(cells) == 3, f"not two passed cells: {row}")
        expect(cells[1].startswith("onednn/") and ("TFLOP/s" in cells[1] or "TB/s" in cells[1]),
               f"first cell lacks a kernel or a rate in tera units: {row}")
        ratio = re.search(r" ratio ([0-9.]+)$", cells[2])
        expect(ratio, f"second cell lacks the ratio: {row}")
        # Two handles of one backend: the same kernel, so ~1 (the band allows a shared machine).
        r = float(ratio.group(1))
        expect(math.isfinite(r) and 0.2 < r < 5.0, f"ratio {r} is not near 1: {row}")
    geomeans = [l for l in out if l.startswith("geomean ")]
    expect(len(geomeans) == 2, "expected a geomean line per suite:\n" + "\n".join(out))
    expect(any(l.startswith("geomean cli_suite.txt: onednn#2/onednn time ratio ")
               for l in geomeans),
           f"no geomean for the batch file: {geomeans}")
    expect(any(l.startswith("geomean command line: ") for l in geomeans),
           f"no geomean for the command line's problems: {geomeans}")
    expect(all(" over 4 problems" in l or " over 1 problem " in l for l in geomeans),
           f"geomeans do not count the problems both ran: {geomeans}")
    expect(out[-1] == "tests:10 passed:10 skipped:0 failed:0", f"summary: {out[-1]}")


def json_report_has_the_header_every_row_and_the_geomeans(ctx):
    ctx.side_by_side("report")
    with open(ctx.path("report.json")) as f:
        report = json.load(f)
    header = report["header"]
    for key in ("date", "command", "tessera_version", "devices", "plugins", "machine"):
        expect(key in header, f"header lacks '{key}': {sorted(header)}")
    expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", header["date"]),
           f"date is not ISO 8601 UTC: {header['date']}")
    expect("--backend=onednn,onednn" in header["command"], header["command"])
    expect(header["devices"]["cpu"] == 1, header["devices"])
    expect(any(p["name"] == "onednn" and p["version"] for p in header["plugins"]),
           f"no onednn plugin with its version: {header['plugins']}")
    expect(report["complete"] is True and report["problems_planned"] == 5 and report["problems_done"] == 5,
           {k: report.get(k) for k in ("complete", "problems_planned", "problems_done")})
    expect(not os.path.exists(ctx.path("report.json.partial")), "the .partial file was left behind")
    rows = report["rows"]
    expect(len(rows) == 5, f"{len(rows)} rows")
    expect([r["driver"] for r in rows] == ["conv", "pool", "eltwise", "matmul", "conv"],
           [r["driver"] for r in rows])
    for r in rows:
        for key in ("suite", "problem", "text", "dtype", "layout", "results"):
            expect(key in r, f"row lacks '{key}': {r}")
        expect("--backend" not in r["problem"], f"problem names a backend: {r['problem']}")
        first, second = r["results"]
        expect(first["backend"] == "onednn" and second["backend"] == "onednn#2", r["results"])
        for res in (first, second):
            expect(res["status"] == "passed" and res["time_ms"] > 0 and res["rate"] > 0 and
                   res["rate_unit"] in ("TFLOP/s", "TB/s"), res)
        expect(first["ratio"] is None and math.isfinite(second["ratio"]), r["results"])
    means = {g["suite"]: g for g in report["geomeans"]}
    expect(set(means) == {"cli_suite.txt", "command line"}, sorted(means))
    expect(all(math.isfinite(g["ratio"]) and g["baseline"] == "onednn" for g in means.values()),
           report["geomeans"])


def csv_report_has_a_line_per_problem_and_columns_per_backend(ctx):
    ctx.side_by_side("table")
    with open(ctx.path("table.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    expect(len(rows) == 5, f"{len(rows)} CSV rows")
    for name in ("suite", "problem", "driver", "dtype", "layout"):
        expect(name in rows[0], f"no column '{name}': {list(rows[0])}")
    for k in (1, 2):
        for name in ("backend", "status", "kernel", "time_ms", "rate", "unit", "ratio"):
            expect(f"{name}_{k}" in rows[0], f"no column '{name}_{k}': {list(rows[0])}")
    for r in rows:
        expect(r["status_1"] == r["status_2"] == "passed", r)
        expect(float(r["time_ms_1"]) > 0 and float(r["rate_2"]) > 0, r)
        expect(r["ratio_1"] == "" and math.isfinite(float(r["ratio_2"])), r)


def single_backend_keeps_the_format_ratio_table_parses(ctx):
    out = ctx.run("tessera-bench", "--backend=onednn", "--iters=3", "--conv",
                  "mb2ic16ih7oc16oh7kh3ph1", "--eltwise", "2x16x7x7").stdout.splitlines()
    expect(len(out) == 3 and not any(l.startswith("geomean") for l in out), "\n".join(out))
    for row in out[:2]:
        words = row.split()
        expect(words[0] == "PASSED" and words[1].startswith("onednn/") and " | " not in row, row)
        expect(TIME.fullmatch(words[-2]) and RATE.fullmatch(words[-1]), row)
    expect(out[2] == "tests:2 passed:2 skipped:0 failed:0", out[2])


def backend_that_cannot_run_shows_skipped_in_its_cell_and_the_others_run(ctx):
    p = ctx.run("tessera-bench", "--backend=onednn,no_such_backend", "--iters=3", "--eltwise",
                "2x16x7x7")
    row = p.stdout.splitlines()[0]
    expect(row.startswith("PASSED --eltwise"), row)
    expect(" | no_such_backend SKIPPED: backend 'no_such_backend' is not among the plugins" in row,
           row)
    expect(p.stdout.splitlines()[-1] == "tests:2 passed:1 skipped:1 failed:0", p.stdout)


def fpmath_tf32_runs_and_an_unknown_mode_is_refused_by_name(ctx):
    # oneDNN's CPU kernels stay exact under TF32 on this machine; the option must reach the handle
    # (tsrSetMathMode) and the problem must still pass its correctness check.
    p = ctx.run("tessera-bench", "--backend=onednn", "--iters=3", "--conv", "--attr-fpmath=tf32",
                "mb2ic16ih7oc16oh7kh3ph1")
    expect(p.stdout.splitlines()[-1] == "tests:1 passed:1 skipped:0 failed:0", p.stdout)
    bad = ctx.run("tessera-bench", "--backend=onednn", "--conv", "--attr-fpmath=fast",
                  "mb2ic16ih7oc16oh7kh3ph1", expect_rc=None)
    expect(bad.returncode != 0, f"--attr-fpmath=fast was accepted:\n{bad.stdout}")
    expect("fpmath" in bad.stderr + bad.stdout, f"the error does not name the option:\n{bad.stderr}")


def back_to_back_timing_runs_memory_bound_problems_and_an_unknown_timing_is_refused(ctx):
    # Both timings give a passing row with a positive rate on the same problems (the copy, an
    # activation, a pooling), and --reset keeps the choice like --iters.
    for timing in ("per-call", "back-to-back"):
        p = ctx.run("tessera-bench", "--backend=onednn", "--iters=4", f"--timing={timing}",
                    "--reorder", "2x16x7x7", "--reset", "--eltwise", "2x16x7x7",
                    "--pool", "--alg=max", "mb2ic8ih8oh4kh2sh2")
        rows = p.stdout.splitlines()
        expect(rows[-1] == "tests:3 passed:3 skipped:0 failed:0", p.stdout)
        for row in rows[:3]:
            words = row.split()
            expect(TIME.fullmatch(words[-2]) and float(words[-1].rstrip("GB/s")) > 0, row)
    bad = ctx.run("tessera-bench", "--backend=onednn", "--timing=fast", "--eltwise", "2x16x7x7",
                  expect_rc=None)
    expect(bad.returncode != 0, f"--timing=fast was accepted:\n{bad.stdout}")
    expect("timing" in bad.stderr + bad.stdout, f"the error does not name the option:\n{bad.stderr}")


def progress_goes_to_stderr_and_never_to_stdout(ctx):
    suite = ctx.write("progress_suite.txt", SUITE)
    p = ctx.run("tessera-bench", "--progress", "--iters=3", "--rotate-mb=0",
                f"--batch={suite}")
    expect(re.search(r"\] 0/4 problems", p.stderr) and re.search(r"\] 4/4 problems", p.stderr),
           f"stderr lacks the first and last progress lines:\n{p.stderr}")
    expect("problems" not in p.stdout and "[" not in p.stdout, f"progress on stdout:\n{p.stdout}")


def tune_stores_an_entry_per_problem_that_list_shows(ctx):
    db = ctx.path("tuned.db")
    for stale in (db, db + "-wal", db + "-shm"):
        if os.path.exists(stale):
            os.remove(stale)
    suite = ctx.write("tune_suite.txt", TUNE_SUITE)
    env = {"TESSERA_TUNING_DB": db}
    p = ctx.run("tessera-tune", "tune", suite, env=env)
    summary = p.stdout.splitlines()[-1]
    expect(summary.startswith("tuned 3 of 3 problems (0 skipped, 0 failed); 3 entries stored"),
           summary)
    listing = ctx.run("tessera-tune", "list", env=env).stdout
    for operation in ("convolution_forward:", "pooling_forward:", "activation_forward:"):
        expect(re.search(rf"^onednn\s.*\s{operation}", listing, re.M),
               f"no onednn entry for {operation}:\n{listing}")
    expect(listing.splitlines()[-1].startswith("3 entries in "), listing)


def perf_report_writes_a_table_and_a_plot_per_suite(ctx):
    if not ctx.plot_python:
        print("skipped: no Python with matplotlib (install python3-matplotlib)")
        sys.exit(77)
    ctx.side_by_side("perf")
    output = ctx.path(os.path.join("perf_report", "PERFORMANCE.md"))
    plots = ctx.path(os.path.join("perf_report", "performance"))
    p = subprocess.run([ctx.plot_python, os.path.join(ctx.source, "tools", "perf-report"),
                        "--output", output, "--plots", plots, ctx.path("perf.json")],
                       capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"perf-report failed:\n{p.stdout}\n{p.stderr}")
    with open(output) as f:
        md = f.read()
    for words in ("## perf", "- Machine: ", "- Tessera ", "- Command: `", "- Date: ",
                  "### cli_suite.txt", "### command line",
                  "| Problem | onednn kernel | onednn ms | onednn rate | onednn#2 kernel",
                  "| onednn#2 / onednn |", "`onednn/conv_fwd`",
                  "Geometric mean of onednn#2 / onednn time: **"):
        expect(words in md, f"PERFORMANCE.md lacks '{words}':\n{md}")
    table_rows = [l for l in md.splitlines() if l.startswith("| `--")]
    expect(len(table_rows) == 5, f"{len(table_rows)} table rows:\n{md}")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", md)
    expect(len(images) == 2, f"expected a plot per suite: {images}")
    for image in images:
        png = os.path.join(os.path.dirname(output), image)
        expect(os.path.isfile(png) and os.path.getsize(png) > 1000, f"no plot at {png}")
        with open(png, "rb") as f:
            expect(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")


CHECKS = {f.__name__: f for f in (
    side_by_side_prints_one_row_per_problem_with_a_finite_ratio_and_geomeans,
    json_report_has_the_header_every_row_and_the_geomeans,
    csv_report_has_a_line_per_problem_and_columns_per_backend,
    single_backend_keeps_the_format_ratio_table_parses,
    backend_that_cannot_run_shows_skipped_in_its_cell_and_the_others_run,
    progress_goes_to_stderr_and_never_to_stdout,
    back_to_back_timing_runs_memory_bound_problems_and_an_unknown_timing_is_refused,
    fpmath_tf32_runs_and_an_unknown_mode_is_refused_by_name,
    tune_stores_an_entry_per_problem_that_list_shows,
    perf_report_writes_a_table_and_a_plot_per_suite,
)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--plot-python", default="")
    parser.add_argument("check", choices=sorted(CHECKS))
    args = parser.parse_args()
    # Each check its own folder: ctest may run them in parallel.
    args.work = os.path.join(args.work, args.check)
    try:
        CHECKS[args.check](Context(args))
    except Failure as failure:
        print(f"FAILED {args.check}: {failure}")
        return 1
    print(f"PASSED {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
