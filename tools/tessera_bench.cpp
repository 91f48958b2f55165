// tessera-bench: a benchdnn-style driver. Reads problems and modifiers left to right (see
// bench_args.hpp), runs each problem through the C API, checks it against the naive reference
// and times it, prints one line per problem and a summary, and exits non-zero when any failed.
// --backend=a,b runs each problem on every backend listed, side by side (bench_comparison.hpp);
// --json/--csv write the rows to files (bench_report.hpp); a progress bar goes to stderr.
#include <tessera/tessera.h>

#include <malloc.h>

#include <iostream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_comparison.hpp"
#include "bench_report.hpp"
#include "bench_runner.hpp"
#include "progress_bar.hpp"
#include "run_description.hpp"

namespace tessera::tools {
namespace {

// What the whole run writes, apart from the problems' settings.
struct output_options {
  std::string json_path;  // --json=PATH
  std::string csv_path;   // --csv=PATH
  bool progress = false;  // --progress: the bar also when stderr is not a terminal
};

// Takes the output options out of `args`: they are about the run, not about the problems that
// follow them, so bench_args does not read them.
output_options take_output_options(std::vector<std::string>& args) {
  output_options options;
  std::vector<std::string> rest;
  for (const std::string& arg : args) {
    if (arg.rfind("--json=", 0) == 0) options.json_path = arg.substr(7);
    else if (arg.rfind("--csv=", 0) == 0) options.csv_path = arg.substr(6);
    else if (arg == "--progress") options.progress = true;
    else rest.push_back(arg);
  }
  args = std::move(rest);
  return options;
}

struct tally {
  int runs = 0, passed = 0, skipped = 0, failed = 0;
  void add(const comparison_row& row) {
    for (const problem_outcome& o : row.outcomes) {
      ++runs;
      switch (o.status) {
        case outcome_status::passed: ++passed; break;
        case outcome_status::skipped: ++skipped; break;
        case outcome_status::failed: ++failed; break;
      }
    }
  }
};

bool write_json(const output_options& options, const run_description& run, const run_progress& progress,
                const std::vector<comparison_row>& rows, const std::vector<ratio_geomeans::mean>& geomeans) {
  std::string error;
  if (!options.json_path.empty() && !write_json_report(options.json_path, run, progress, rows, geomeans, &error)) {
    std::cerr << "tessera-bench: " << error << "\n";
    return false;
  }
  return true;
}

bool write_reports(const output_options& options, const run_description& run, const run_progress& progress,
                   const std::vector<comparison_row>& rows,
                   const std::vector<ratio_geomeans::mean>& geomeans) {
  std::string error;
  if (!write_json(options, run, progress, rows, geomeans)) return false;
  if (!options.csv_path.empty() && !write_csv_report(options.csv_path, rows, &error)) {
    std::cerr << "tessera-bench: " << error << "\n";
    return false;
  }
  return true;
}

// Each problem allocates host tensors of up to hundreds of MB (inputs, their packed copies,
// rotations), once per backend of a row. glibc serves such blocks with mmap and unmaps them on
// free, so every problem paid its page faults again: on a suite of three 411 MB relu problems
// run side by side, 7.8 s of 30 s were system time. Kept in the heap and never trimmed, freed
// blocks serve the next problem: 2.2-3.4 s system and 21 s in all (this 2-core VM, 2026-12-03),
// for a resident size of the largest problem's footprint, which the benchmark needs anyway.
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
}

int run(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  const std::vector<std::string> command(argv, argv + argc);
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& arg : args)
    if (arg == "--help" || arg == "-h") {
      std::cout << bench_usage();
      return 0;
    }
  if (args.empty()) {
    std::cerr << bench_usage();
    return 2;
  }
  if (tsrCheckVersion(TSR_VERSION) != TSR_STATUS_SUCCESS) {
    char message[512] = {};
    tsrGetLastErrorString(message, sizeof message);
    std::cerr << "tessera-bench: " << message << "\n";
    return 2;
  }

  const output_options options = take_output_options(args);
  bench_settings settings;
  std::vector<bench_problem> problems;
  std::string error;
  if (!parse_bench_arguments(args, "command line", "", settings, &problems, &error)) {
    std::cerr << "tessera-bench: " << error << "\n";
    return 2;
  }
  if (problems.empty()) {
    std::cerr << "tessera-bench: no problems given (try --help)\n";
    return 2;
  }

  bench_runner runner;
  progress_bar progress(problems.size(), "problems", options.progress || stderr_is_terminal());
  const bool keep_rows = !options.json_path.empty() || !options.csv_path.empty();
  std::vector<comparison_row> rows;
  ratio_geomeans geomeans;
  tally counts;
  const run_description run_info = keep_rows ? describe_run(command) : run_description{};
  run_progress done{problems.size(), false};
  for (size_t i = 0; i < problems.size(); ++i) {
    progress.update(i);
    comparison_row row = run_on_each_backend(runner, problems[i]);
    progress.clear();
    std::cout << format_row(row) << std::endl;  // flushed: long suites show progress
    counts.add(row);
    if (row.side_by_side()) geomeans.add(row);
    if (keep_rows) rows.push_back(std::move(row));
    // The rows so far, so that a run stopped by a time limit still leaves them.
    if (!write_json(options, run_info, done, rows, geomeans.means())) return 1;
  }
  done.complete = true;
  progress.update(problems.size());
  progress.clear();
  const std::vector<ratio_geomeans::mean> means = geomeans.means();
  for (const ratio_geomeans::mean& m : means) std::cout << format_geomean(m) << "\n";
  // Last: scripts read the summary with `tail -1`.
  std::cout << "tests:" << counts.runs << " passed:" << counts.passed
            << " skipped:" << counts.skipped << " failed:" << counts.failed << std::endl;
  if (!write_reports(options, run_info, done, rows, means)) return 1;
  return counts.failed ? 1 : 0;
}

}  // namespace
}  // namespace tessera::tools

int main(int argc, char** argv) { return tessera::tools::run(argc, argv); }
