// tessera-tune tune: tunes every problem of a tessera-bench batch file. Each problem runs once
// through tessera-bench's runner (the same problem construction, fills and handles) on a handle
// in TSR_TUNING_ALWAYS: the library then measures every kernel of every backend of the device
// and stores each backend's fastest in the tuning database, which later runs in the default
// mode (database) use.
#ifndef TESSERA_TOOLS_TUNE_SUITE_HPP
#define TESSERA_TOOLS_TUNE_SUITE_HPP

#include <string>
#include <vector>

namespace tessera::tools {

struct tune_request {
  std::string suite;                    // the batch file
  std::vector<std::string> bench_args;  // tessera-bench modifiers read before it (--dt=f16,
                                        // --tag=nhwc, --backend=cuda picks the device)
  std::string db_path;                  // the database the library stores into
  bool progress = false;                // the progress bar also when stderr is not a terminal
};

// Prints the problems that could not be tuned and a summary (problems tuned, entries stored,
// time). Returns the exit status: 0 done, 1 a problem failed or nothing could be stored, 2 bad
// usage (a suite that does not parse).
int tune_suite(const tune_request& request);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_TUNE_SUITE_HPP
