// tessera-bench: a benchdnn-style driver. Reads problems and modifiers left to right (see
// bench_args.hpp), runs each problem through the C API, checks it against the naive reference
// and times it, prints one line per problem and a summary, and exits non-zero when any failed.
#include <tessera/tessera.h>

#include <iostream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_runner.hpp"

namespace tessera::tools {
namespace {

int run(int argc, char** argv) {
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
  int passed = 0, skipped = 0, failed = 0;
  for (const bench_problem& problem : problems) {
    const problem_outcome outcome = runner.run(problem);
    std::cout << format_outcome(outcome) << std::endl;  // flushed: long suites show progress
    switch (outcome.status) {
      case outcome_status::passed: ++passed; break;
      case outcome_status::skipped: ++skipped; break;
      case outcome_status::failed: ++failed; break;
    }
  }
  std::cout << "tests:" << problems.size() << " passed:" << passed << " skipped:" << skipped
            << " failed:" << failed << std::endl;
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace tessera::tools

int main(int argc, char** argv) { return tessera::tools::run(argc, argv); }
