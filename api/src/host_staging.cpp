#include "host_staging.hpp"

#include "error_state.hpp"

#include <cstring>
#include <string>

namespace tessera::api {

tsrStatus_t stage_call_to_host(tsrContext& h, const char* function, const operation_call& call,
                               host_staged_call* out) {
  const size_t args_size = operation_args_size(call.op);
  out->buffers = operation_buffers(call.op, call.problem, call.args);
  out->args.assign(static_cast<const uint8_t*>(call.args), static_cast<const uint8_t*>(call.args) + args_size);
  out->data.clear();
  out->data.reserve(out->buffers.size());
  for (const operation_buffer& b : out->buffers) {
    out->data.emplace_back(b.bytes);
    const void* device = buffer_pointer(call.args, b.args_offset);
    const tsrpStatus_t s = h.device->copy_device_to_host(h.device_context(), out->data.back().data(), device, b.bytes);
    if (s != TSRP_STATUS_SUCCESS)
      return fail(from_plugin_status(s), std::string(function) + ": copying " + b.name + " (" +
                                             std::to_string(b.bytes) + " bytes) to host memory failed");
    set_buffer_pointer(out->args.data(), b.args_offset, out->data.back().data());
  }
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t copy_outputs_to_device(tsrContext& h, const char* function, const operation_call& call,
                                   const host_staged_call& staged) {
  for (size_t i = 0; i < staged.buffers.size(); ++i) {
    const operation_buffer& b = staged.buffers[i];
    if (b.role != buffer_role::output) continue;
    void* device = buffer_pointer(call.args, b.args_offset);
    const tsrpStatus_t s = h.device->copy_host_to_device(h.device_context(), device, staged.data[i].data(), b.bytes);
    if (s != TSRP_STATUS_SUCCESS)
      return fail(from_plugin_status(s), std::string(function) + ": copying " + b.name + " (" +
                                             std::to_string(b.bytes) + " bytes) back to the device failed");
  }
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t host_twin(tsrContext& h, const registry::registry& reg, const char* function, tsrContext** out) {
  if (!h.host) {
    std::unique_ptr<tsrContext> twin;
    if (tsrStatus_t s = create_handle(function, reg, TSR_DEVICE_CPU, 0, &twin)) return s;
    twin->math_mode = h.math_mode.load();
    twin->deterministic_only = h.deterministic_only;
    twin->workspace_limit = h.workspace_limit;
    h.host = std::move(twin);
  }
  ensure_plugin_contexts(*h.host, reg);
  *out = h.host.get();
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t run_staged_on_host(tsrContext& host, const registry::registry& reg, const char* function,
                               const operation_call& call, host_staged_call& staged,
                               registry::selection_result* chosen, int64_t excluded_plugin) {
  // The cross-check's reference must not be the primary kernel's own backend.
  std::vector<std::string> unavailable = host.unavailable;
  if (excluded_plugin >= 0 && static_cast<size_t>(excluded_plugin) < unavailable.size())
    unavailable[static_cast<size_t>(excluded_plugin)] = "ran the call being checked";
  registry::selection_request req =
      make_request(host, call.op, call.problem, TSR_ALGO_AUTO, true, host.workspace_limit);
  req.unavailable = &unavailable;
  *chosen = registry::select_kernel(reg, req);
  if (chosen->kernel_id < 0) return TSR_STATUS_NOT_SUPPORTED_NO_KERNEL;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  if (chosen->workspace > 0) {
    if (tsrStatus_t s = acquire_pool_workspace(host, function, chosen->workspace, &workspace)) return s;
    workspace_size = host.workspace_pool_size;
  }
  return run_kernel(host, reg, function, reg.kernels()[chosen->kernel_id], call.problem, staged.args.data(),
                    workspace, workspace_size);
}

}  // namespace tessera::api
