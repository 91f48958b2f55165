// tessera-bench's files for later reading: --json=PATH (the run's description, every row with
// each backend's result, the geometric means; tools/perf-report reads it) and --csv=PATH (one
// line per problem, for spreadsheets).
#ifndef TESSERA_TOOLS_BENCH_REPORT_HPP
#define TESSERA_TOOLS_BENCH_REPORT_HPP

#include <string>
#include <vector>

#include "bench_comparison.hpp"
#include "run_description.hpp"

namespace tessera::tools {

// How far the run got: the JSON is rewritten after every problem (to PATH.partial, then renamed
// over PATH), so that a run killed by a time limit still leaves the rows it finished.
struct run_progress {
  size_t problems_planned = 0;
  bool complete = false;
};

// Both return false with a message naming the file when it cannot be written.
bool write_json_report(const std::string& path, const run_description& run, const run_progress& progress,
                       const std::vector<comparison_row>& rows,
                       const std::vector<ratio_geomeans::mean>& geomeans, std::string* error);

// Columns: suite, problem, text, driver, dtype, layout, then per backend k (1, 2, ..):
// backend_k, status_k, kernel_k, time_ms_k, rate_k, unit_k, ratio_k (ratio to backend 1's
// time; empty for backend 1 and where either did not run).
bool write_csv_report(const std::string& path, const std::vector<comparison_row>& rows,
                      std::string* error);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_REPORT_HPP
