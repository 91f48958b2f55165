// Dispatch shared by every operation: pick the kernel (explicit algorithm or the selection
// policy), check the workspace, run it on the handle's context, map its status, trace the call.
#pragma once

#include "handle.hpp"
#include "kernel_selection.hpp"

#include <string>

namespace tessera::api {

// How a call describes itself in traces and messages (built only when needed).
struct call_description {
  std::string descriptor;  // benchdnn-style problem, e.g. "mb2ic16ih7oc16oh7kh3ph1"
  std::string replay;      // tessera-bench command line that reproduces the call
};
using describe_fn = call_description (*)(const void* problem, const tsrContext& handle,
                                         const std::string& backend);

struct operation_call {
  const char* function = "";  // the C entry point, for messages
  int op = 0;
  const void* problem = nullptr;
  const void* args = nullptr;
  tsrAlgo_t algo = TSR_ALGO_AUTO;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  describe_fn describe = nullptr;
};

// The selection request of a call on this handle (its preference, deterministic-only setting and
// unavailable backends).
registry::selection_request make_request(const tsrContext& h, int op, const void* problem, tsrAlgo_t algo,
                                         bool check_workspace, size_t workspace_size);

// Runs one kernel on the handle's context for that plugin; a failure is an execution failure
// with the kernel's message.
tsrStatus_t run_kernel(tsrContext& h, const registry::registry& reg, const char* function,
                       const registry::kernel_record& k, const void* problem, const void* args,
                       void* workspace, size_t workspace_size);

// Runs the call. Before the kernel runs, nothing is written; on a refusal the message lists
// every kernel's reason.
tsrStatus_t dispatch(tsrContext& handle, const operation_call& call);

// Checks an explicit algorithm id against the operation (TSR_ALGO_AUTO passes).
tsrStatus_t check_algo(const char* function, int op, tsrAlgo_t algo);

// Fills `perf` with candidates in preference order (runnable first) without running them.
tsrStatus_t get_algorithms(tsrContext& handle, const char* function, int op, const void* problem,
                           int requested_count, int* returned_count, tsrAlgoPerf_t perf[]);

// The workspace of the given (or the automatically chosen) kernel.
tsrStatus_t query_workspace(tsrContext& handle, const char* function, int op, const void* problem,
                            tsrAlgo_t algo, size_t* bytes);

// Runs one kernel `iterations` times after a warm-up and reports the median in milliseconds,
// timed with the device interface's events. `args` must point to scratch outputs.
tsrStatus_t time_kernel(tsrContext& handle, const char* function, int64_t kernel_id,
                        const void* problem, const void* args, void* workspace,
                        size_t workspace_size, int iterations, float* median_ms);

// Copies a verdict into a tsrAlgoPerf_t (checks perf's struct_size first).
tsrStatus_t check_perf_array(const char* function, int requested_count, tsrAlgoPerf_t perf[]);
void fill_perf(const registry::registry& reg, const registry::kernel_verdict& v, tsrAlgoPerf_t* out);

}  // namespace tessera::api
