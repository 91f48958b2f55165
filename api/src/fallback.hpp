// Fallback (tsrSetFallback, TESSERA_FALLBACK): a call that no kernel of the handle's device can
// run goes to a backend of the host CPU, its buffers staged through host memory. Never silent:
// the first time a problem falls back, a warning names every declining kernel and its reason.
#pragma once

#include "dispatch.hpp"
#include "handle.hpp"

namespace tessera::api {

// Runs the call on the host backend. `device_refusal` is why no kernel of the device took it
// (its reasons go into the warning, and into the error when the host cannot run it either).
// The caller holds the registry's read lock.
tsrStatus_t run_fallback(tsrContext& h, const registry::registry& reg, const operation_call& call,
                         const registry::selection_result& device_refusal);

}  // namespace tessera::api
