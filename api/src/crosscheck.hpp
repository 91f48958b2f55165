// Cross-check (tsrSetCrossCheck, TESSERA_CROSSCHECK): a call that succeeded on its kernel also runs
// on the reference backend (a backend of the host CPU other than the kernel's own) from copies of
// its inputs taken before the call, and every output is compared with per-data-type tolerances.
// The caller's outputs are the primary kernel's; mismatches are logged with a replay command and
// counted on the handle (tsrGetCrossCheckCounts); ABORT mode aborts at the first.
#pragma once

#include "dispatch.hpp"
#include "handle.hpp"
#include "host_staging.hpp"

namespace tessera::api {

// Copies the call's buffers to host memory before the primary kernel runs.
tsrStatus_t crosscheck_snapshot(tsrContext& h, const operation_call& call, host_staged_call* snapshot);

// After the primary kernel `primary` ran: runs the reference on the snapshot and compares.
// Never fails the call: problems of the check itself are logged and counted as skipped.
void crosscheck_compare(tsrContext& h, const registry::registry& reg, const operation_call& call, int64_t primary,
                        host_staged_call& snapshot);

}  // namespace tessera::api
