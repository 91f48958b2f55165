// Runs one tessera-bench problem through the C API: fill, run on the chosen handle, compare with
// the naive reference, time. Handles are created once per backend and reused.
#ifndef TESSERA_TOOLS_BENCH_RUNNER_HPP
#define TESSERA_TOOLS_BENCH_RUNNER_HPP

#include <tessera/tessera.h>

#include <map>
#include <utility>
#include <string>

#include "bench_args.hpp"

namespace tessera::tools {

enum class outcome_status { passed, skipped, failed };

struct problem_outcome {
  outcome_status status = outcome_status::failed;
  std::string implementation = "-";  // "backend/kernel", "auto" when the library chose
  std::string descriptor;            // the problem as tessera-bench arguments
  double time_ms = -1.0;             // median of the timed runs; -1 when not measured
  double rate = -1.0;                // GFLOP/s (conv) or GB/s (eltwise); -1 when not measured
  const char* rate_unit = "";
  std::string detail;                // why it was skipped or failed
  std::string repro;                 // the full command line that replays the problem
};

class bench_runner {
 public:
  bench_runner() = default;
  ~bench_runner();
  bench_runner(const bench_runner&) = delete;
  bench_runner& operator=(const bench_runner&) = delete;

  // Runs `problem` on a handle for its backend (settings.backend: one name, or empty for the
  // default device), with the settings' tuning mode when --tuning was given. `handle_slot` keeps
  // handles of one backend apart: "--backend=onednn,onednn" runs on two handles of it.
  problem_outcome run(const bench_problem& problem, int handle_slot = 0);

 private:
  struct handle_entry {
    tsrHandle_t handle = nullptr;
    tsrStatus_t status = TSR_STATUS_SUCCESS;  // of creating it; the message says why it failed
    std::string message;
  };
  // The handle for a backend name (empty: the default device) in a slot, created on first use.
  // A failure is remembered so that every problem reports it without retrying.
  const handle_entry& handle_for(const std::string& backend, int slot);

  std::map<std::pair<std::string, int>, handle_entry> handles_;
};

// "PASSED onednn/conv_fwd --conv --dt=f32 ... 0.052ms 12.3GFLOP/s", and for skipped or failed
// problems indented lines with the reason (and the replay command for failures).
std::string format_outcome(const problem_outcome& outcome);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_RUNNER_HPP
