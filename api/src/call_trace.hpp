// API trace (TESSERA_LOG_LEVEL=trace): for each call, the problem as a benchdnn-style
// descriptor, the kernel chosen, why the others declined, the status, and a tessera-bench command
// line that replays it (ONEDNN_VERBOSE and MIOPEN_ENABLE_LOGGING_CMD are the models).
#pragma once

#include "dispatch.hpp"

namespace tessera::api {

void trace_call(const registry::registry& reg, const tsrContext& handle, const operation_call& call,
                const registry::selection_result& selection, tsrStatus_t status);

}  // namespace tessera::api
