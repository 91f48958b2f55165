// tessera-bench side by side: --backend=cuda,cudnn runs each problem on every backend listed,
// each on its own handle, and reports per problem the ratio of each later backend's time to the
// first's (> 1: the first is faster), and per suite the geometric mean of those ratios.
#ifndef TESSERA_TOOLS_BENCH_COMPARISON_HPP
#define TESSERA_TOOLS_BENCH_COMPARISON_HPP

#include <map>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_runner.hpp"

namespace tessera::tools {

// "cuda,cudnn" -> {"cuda", "cudnn"}; a single name, or none (the default device), is a list of
// one: it runs and prints exactly as tessera-bench always has.
std::vector<std::string> split_backend_list(const std::string& list);

// How each backend of a list is shown: its name, with "#2", "#3".. for repeats
// ("onednn,onednn" -> "onednn", "onednn#2").
std::vector<std::string> backend_labels(const std::vector<std::string>& backends);

// The rate in the units a large device reads best: GFLOP/s as TFLOP/s, GB/s as TB/s.
struct scaled_rate {
  double value = -1.0;  // -1 when not measured
  std::string unit;
};
scaled_rate tera_rate(const problem_outcome& outcome);

// One problem run on each backend of its list.
struct comparison_row {
  bench_problem problem;
  std::vector<std::string> backends;  // as listed; one entry when not side by side
  std::vector<std::string> labels;    // backend_labels(backends)
  std::vector<problem_outcome> outcomes;
  std::string descriptor;  // the problem as tessera-bench arguments, without --backend

  bool side_by_side() const { return outcomes.size() > 1; }
  // outcomes[i]'s time over outcomes[0]'s: > 1 means the first backend is faster. NaN unless
  // both passed and were timed.
  double ratio(size_t i) const;
};

comparison_row run_on_each_backend(bench_runner& runner, const bench_problem& problem);

// A problem on one backend exactly as format_outcome writes it; side by side, one line
//   "PASSED <problem> | <kernel> <time> <rate> | <kernel> <time> <rate> ratio <r>"
// (a backend that could not run it shows "<label> SKIPPED: <reason>" in its cell), then for
// each backend that failed its reason and replay command on indented lines.
std::string format_row(const comparison_row& row);

// Geometric means of the ratios, per suite and per later backend, over the problems that both
// it and the first backend ran.
class ratio_geomeans {
 public:
  struct mean {
    std::string suite;
    std::string backend;   // the later backend's label
    std::string baseline;  // the first backend's label
    double value = 0.0;
    int problems = 0;
  };

  void add(const comparison_row& row);
  // In the order the suites and backends were first seen.
  std::vector<mean> means() const;

 private:
  struct sum {
    double log_sum = 0.0;
    int count = 0;
  };
  std::vector<mean> order_;  // identities only; value and count come from sums_
  std::map<std::string, sum> sums_;
};

// "geomean resnet50.txt: cudnn/cuda time ratio 1.234 over 23 problems (> 1: cuda is faster)"
std::string format_geomean(const ratio_geomeans::mean& mean);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_COMPARISON_HPP
