#include "call_trace.hpp"

#include "logging.hpp"

namespace tessera::api {

void trace_call(const registry::registry& reg, const tsrContext& h, const operation_call& call,
                const registry::selection_result& sel, tsrStatus_t status) {
  std::string backend = sel.kernel_id >= 0
                            ? reg.plugins()[reg.kernels()[sel.kernel_id].plugin_index].name
                            : std::string();
  call_description d;
  if (call.describe) d = call.describe(call.problem, h, backend);
  std::string line = std::string(call.function) + " " + device_kind_name(h.kind) + ":" +
                     std::to_string(h.ordinal) + " " + d.descriptor + " kernel=" +
                     (sel.kernel_id >= 0 ? reg.kernels()[sel.kernel_id].full_name : "none") +
                     " status=" + tsrGetErrorString(status);
  if (!sel.declined.empty()) line += " declined=[" + registry::join_reasons(reg, sel.declined) + "]";
  if (!d.replay.empty()) line += " replay: " + d.replay;
  log::write(log::level::trace, line);
}

}  // namespace tessera::api
