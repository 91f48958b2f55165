// Host copies of one call's buffers, for the calls that run on the host backend instead of (or
// besides) the handle's device: fallback and cross-check. The copies go through the handle's
// device interface, which orders them on the handle's stream and returns when they are done.
#pragma once

#include "dispatch.hpp"
#include "handle.hpp"
#include "operation_tensors.hpp"

#include <cstdint>
#include <vector>

namespace tessera::api {

struct host_staged_call {
  std::vector<operation_buffer> buffers;
  std::vector<std::vector<uint8_t>> data;  // one host copy per buffer
  std::vector<uint8_t> args;               // the argument struct, pointing at the copies
};

// Copies every buffer of the call (inputs and outputs: outputs may be read by a blend) into host
// memory and builds an argument struct that points at the copies.
tsrStatus_t stage_call_to_host(tsrContext& h, const char* function, const operation_call& call,
                               host_staged_call* out);

// Copies the host copies of the outputs back over the call's device outputs.
tsrStatus_t copy_outputs_to_device(tsrContext& h, const char* function, const operation_call& call,
                                   const host_staged_call& staged);

// The handle's CPU twin (created on first use, with its own workspace pool); nullptr and an error
// when no plugin serves the host. The caller holds the registry's read lock.
tsrStatus_t host_twin(tsrContext& h, const registry::registry& reg, const char* function, tsrContext** out);

// Chooses a kernel of the host handle for the staged call and runs it there; `chosen` receives
// its id, or the refusals when none can run it.
tsrStatus_t run_staged_on_host(tsrContext& host, const registry::registry& reg, const char* function,
                               const operation_call& call, host_staged_call& staged,
                               registry::selection_result* chosen, int64_t excluded_plugin = -1);

}  // namespace tessera::api
