#include "tune_suite.hpp"

#include <tessera/tessera.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "bench_args.hpp"
#include "bench_comparison.hpp"
#include "bench_runner.hpp"
#include "progress_bar.hpp"
#include "tuning_db.hpp"

namespace tessera::tools {
namespace {

struct database_count {
  size_t entries = 0;
  size_t measured_since = 0;  // entries measured at or after the given time
};

database_count count_entries(const std::string& path, int64_t since_unix) {
  database_count count;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return count;
  registry::tuning_db db;
  db.open("", path);  // as a read-only "system" database: nothing is created or changed
  for (const registry::tuning_record& r : db.list(true)) {
    ++count.entries;
    if (r.measured_at_unix >= since_unix) ++count.measured_since;
  }
  return count;
}

}  // namespace

int tune_suite(const tune_request& request) {
  if (request.db_path.empty()) {
    std::cerr << "tessera-tune: no database to store into (TESSERA_TUNING_DB is off and --db "
                 "not given)\n";
    return 2;
  }
  // The library opens its database on first use, from the environment: set before any handle.
  setenv("TESSERA_TUNING_DB", request.db_path.c_str(), 1);
  if (tsrCheckVersion(TSR_VERSION) != TSR_STATUS_SUCCESS) {
    char message[512] = {};
    tsrGetLastErrorString(message, sizeof message);
    std::cerr << "tessera-tune: " << message << "\n";
    return 1;
  }

  std::vector<std::string> args = request.bench_args;
  args.push_back("--batch=" + request.suite);
  bench_settings settings;
  std::vector<bench_problem> problems;
  std::string error;
  if (!parse_bench_arguments(args, "tessera-tune tune", "", settings, &problems, &error)) {
    std::cerr << "tessera-tune: " << error << "\n";
    return 2;
  }
  if (problems.empty()) {
    std::cerr << "tessera-tune: '" << request.suite << "' holds no problems\n";
    return 2;
  }

  const int64_t start_unix = static_cast<int64_t>(std::time(nullptr));
  const auto start = std::chrono::steady_clock::now();
  const database_count before = count_entries(request.db_path, start_unix);
  bench_runner runner;
  progress_bar progress(problems.size(), "problems", request.progress || stderr_is_terminal());
  int tuned = 0, skipped = 0, failed = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    progress.update(i);
    bench_problem problem = problems[i];
    // One run, unchecked and untimed: the measurement happens inside the call, whatever the
    // suite's own --mode says.
    problem.settings.mode = mode_run;
    problem.settings.tuning = TSR_TUNING_ALWAYS;
    const comparison_row row = run_on_each_backend(runner, problem);
    progress.clear();
    // Tuned when every device listed tuned it; each one that did not says why.
    bool any_failed = false, all_passed = true;
    for (const problem_outcome& o : row.outcomes) {
      if (o.status == outcome_status::passed) continue;
      all_passed = false;
      any_failed |= o.status == outcome_status::failed;
      std::cout << format_outcome(o) << std::endl;
    }
    ++(all_passed ? tuned : any_failed ? failed : skipped);
  }
  progress.update(problems.size());
  progress.clear();

  const database_count after = count_entries(request.db_path, start_unix);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "tuned " << tuned << " of " << problems.size() << " problems (" << skipped
            << " skipped, " << failed << " failed); " << after.measured_since
            << " entries stored in '" << request.db_path << "' (" << after.entries
            << " in all, " << before.entries << " before); "
            << progress_bar::format_duration(seconds) << std::endl;
  if (failed) return 1;
  if (tuned > 0 && after.measured_since == 0) {
    std::cerr << "tessera-tune: nothing was stored: see the library's warnings above "
                 "(TESSERA_LOG_LEVEL=info tells more)\n";
    return 1;
  }
  return 0;
}

}  // namespace tessera::tools
