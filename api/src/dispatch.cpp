#include "dispatch.hpp"

#include "call_trace.hpp"
#include "crosscheck.hpp"
#include "fallback.hpp"
#include "operation_tensors.hpp"
#include "tuning.hpp"
#include "error_state.hpp"
#include "logging.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tessera::api {

using registry::kernel_verdict;
using registry::selection_request;
using registry::selection_result;

selection_request make_request(const tsrContext& h, int op, const void* problem, tsrAlgo_t algo,
                               bool check_workspace, size_t workspace_size) {
  selection_request req;
  req.op = op;
  req.device_kind = h.kind;
  req.problem = problem;
  req.preferred_plugins = &h.preferred_plugins;
  req.preferred_only = h.preferred_only;
  req.unavailable = &h.unavailable;
  req.explicit_kernel = algo;
  req.check_workspace = check_workspace;
  req.workspace_available = workspace_size;
  req.deterministic_only = h.deterministic_only;
  return req;
}

namespace {

// The refusal when nothing could be chosen.
tsrStatus_t refuse(const registry::registry& reg, const char* function, int op,
                   const selection_result& sel, tsrAlgo_t algo) {
  std::string reasons = registry::join_reasons(reg, sel.declined);
  if (sel.workspace_short)
    return fail(TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL,
                std::string(function) + ": workspace too small (pass a larger one, or none to use "
                                        "the handle's pool): " + reasons);
  if (algo >= 0)
    return fail(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                std::string(function) + ": algo " + std::to_string(algo) + " cannot run this " +
                    tsrGetOperationName(static_cast<tsrOperation_t>(op)) + " problem: " + reasons);
  return fail(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
              std::string(function) + ": no kernel can run this " +
                  tsrGetOperationName(static_cast<tsrOperation_t>(op)) + " problem: " + reasons);
}

}  // namespace

tsrStatus_t run_kernel(tsrContext& h, const registry::registry& reg, const char* function,
                       const registry::kernel_record& k, const void* problem, const void* args,
                       void* workspace, size_t workspace_size) {
  char message[512] = {0};
  tsrpStatus_t s;
  try {
    s = k.kernel.run(k.kernel.user_data, h.contexts[k.plugin_index], problem, args, workspace,
                     workspace_size, message, sizeof(message));
  } catch (...) {
    s = TSRP_STATUS_INTERNAL_ERROR;
    std::snprintf(message, sizeof(message), "kernel threw an exception");
  }
  if (s == TSRP_STATUS_SUCCESS) return TSR_STATUS_SUCCESS;
  message[sizeof(message) - 1] = '\0';
  tsrStatus_t status = from_plugin_status(s);
  // Whatever the plugin says, a kernel that failed while running is an execution failure: the
  // arguments were checked before it started.
  if (TSR_STATUS_CATEGORY(status) != TSR_STATUS_EXECUTION_FAILED)
    status = TSR_STATUS_EXECUTION_FAILED;
  (void)reg;
  return fail(status, std::string(function) + ": kernel " + k.full_name + " failed: " +
                          (message[0] ? message : "no message"));
}


namespace {
// Caller holds the registry's read lock.
tsrStatus_t check_algo_locked(const registry::registry& reg, const char* function, int op,
                              tsrAlgo_t algo) {
  if (algo == TSR_ALGO_AUTO) return TSR_STATUS_SUCCESS;
  if (algo < 0 || algo >= static_cast<tsrAlgo_t>(reg.kernels().size()) ||
      reg.kernels()[algo].kernel.operation != op)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(function) + ": algo " + std::to_string(algo) + " is not a kernel of " +
                    tsrGetOperationName(static_cast<tsrOperation_t>(op)) +
                    " (use TSR_ALGO_AUTO, tsrGetAlgoByName or a get/find result)");
  return TSR_STATUS_SUCCESS;
}
}  // namespace

tsrStatus_t check_algo(const char* function, int op, tsrAlgo_t algo) {
  const registry::registry& reg = registry::registry::instance();
  auto lock = reg.read_lock();
  return check_algo_locked(reg, function, op, algo);
}

namespace {

// tsrSetPointerChecks: every tensor of the call must be memory of the handle's device.
tsrStatus_t check_pointer_devices(const tsrContext& h, const operation_call& call) {
  if (!h.device->pointer_device) return TSR_STATUS_SUCCESS;  // the device cannot tell
  for (const operation_buffer& b : operation_buffers(call.op, call.problem, call.args)) {
    int32_t ordinal = -1;
    if (h.device->pointer_device(buffer_pointer(call.args, b.args_offset), &ordinal) != TSRP_STATUS_SUCCESS) continue;
    if (ordinal == h.ordinal) continue;
    const std::string where = ordinal < 0 ? std::string("host memory or memory of no ") + device_kind_name(h.kind) +
                                                " device"
                                          : std::string("memory of ") + device_kind_name(h.kind) + " device " +
                                                std::to_string(ordinal);
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(call.function) + ": " + b.name + " is " + where + ", but the handle is on " +
                    device_kind_name(h.kind) + " device " + std::to_string(h.ordinal));
  }
  return TSR_STATUS_SUCCESS;
}

}  // namespace

tsrStatus_t dispatch(tsrContext& h, const operation_call& call) {
  auto handle_lock = lock_handle(h);
  const registry::registry& reg = registry::registry::instance();
  auto lock = reg.read_lock();
  if (tsrStatus_t s = check_algo_locked(reg, call.function, call.op, call.algo)) return s;
  if (h.check_pointers) {
    if (tsrStatus_t s = check_pointer_devices(h, call)) return s;
  }
  ensure_plugin_contexts(h, reg);
  // No workspace given: the handle's pool serves, up to its limit.
  const bool use_pool = !call.workspace && call.workspace_size == 0;
  const size_t available = use_pool ? h.workspace_limit : call.workspace_size;
  bool tracing = log::enabled(log::level::trace);
  selection_result sel;
  // Warm path: the same problem was chosen for before on this handle. Tracing takes the full
  // path, so that the log shows every kernel's verdict.
  const selection_cache::choice* memo =
      tracing ? nullptr
              : h.selections.find(call.op, call.algo, available, call.problem, reg.plugins().size());
  if (memo) {
    sel.kernel_id = memo->kernel_id;
    sel.workspace = memo->workspace;
  } else {
    // Cold path: the tuning mode's choice (database or measurement), else the heuristic.
    if (call.algo == TSR_ALGO_AUTO && h.tuning_mode != TSR_TUNING_HEURISTIC)
      sel = tuned_choice(h, reg, call, available);
    if (sel.kernel_id < 0) {
      selection_request req = make_request(h, call.op, call.problem, call.algo, true, available);
      sel = registry::select_kernel(reg, req);
    }
    if (sel.kernel_id >= 0)
      h.selections.insert(call.op, call.algo, available, call.problem, {sel.kernel_id, sel.workspace});
  }
  if (sel.kernel_id < 0) {
    // Nothing of the device can run it: the host backend may, when the handle allows it.
    if (h.fallback_allowed && h.kind != TSR_DEVICE_CPU && !sel.workspace_short && call.algo == TSR_ALGO_AUTO)
      return run_fallback(h, reg, call, sel);
    tsrStatus_t s = refuse(reg, call.function, call.op, sel, call.algo);
    if (tracing) trace_call(reg, h, call, sel, s);
    return s;
  }
  void* workspace = call.workspace;
  size_t workspace_size = call.workspace_size;
  if (use_pool && sel.workspace > 0) {
    if (tsrStatus_t s = acquire_pool_workspace(h, call.function, sel.workspace, &workspace)) return s;
    workspace_size = h.workspace_pool_size;
  }
  const registry::kernel_record& k = reg.kernels()[sel.kernel_id];
  host_staged_call snapshot;
  const bool crosschecking = h.crosscheck != TSR_CROSSCHECK_OFF &&
                             crosscheck_snapshot(h, call, &snapshot) == TSR_STATUS_SUCCESS;
  h.last_kernel = sel.kernel_id;
  h.last_kernel_on_host = false;
  tsrStatus_t s =
      run_kernel(h, reg, call.function, k, call.problem, call.args, workspace, workspace_size);
  if (tracing) trace_call(reg, h, call, sel, s);
  if (crosschecking && s == TSR_STATUS_SUCCESS) crosscheck_compare(h, reg, call, sel.kernel_id, snapshot);
  return s;
}

tsrStatus_t check_perf_array(const char* function, int requested_count, tsrAlgoPerf_t perf[]) {
  if (requested_count < 1)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(function) + ": requested_count is " + std::to_string(requested_count) +
                    ", expected at least 1");
  if (!perf)
    return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(function) + ": perf is NULL");
  // The struct only grows: a caller compiled with this version or a later one is understood.
  for (int i = 0; i < requested_count; ++i)
    if (perf[i].struct_size < sizeof(tsrAlgoPerf_t))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(function) + ": perf[" + std::to_string(i) + "].struct_size is " +
                      std::to_string(perf[i].struct_size) + ", expected sizeof(tsrAlgoPerf_t) = " +
                      std::to_string(sizeof(tsrAlgoPerf_t)));
  return TSR_STATUS_SUCCESS;
}

void fill_perf(const registry::registry& reg, const kernel_verdict& v, tsrAlgoPerf_t* out) {
  const registry::kernel_record& k = reg.kernels()[v.kernel_id];
  size_t size = out->struct_size;
  std::memset(static_cast<void*>(out), 0, sizeof(tsrAlgoPerf_t));
  out->struct_size = size;
  out->algo = k.id;
  out->status = v.can_run ? TSR_STATUS_SUCCESS
                          : (v.workspace_short ? TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL
                                               : TSR_STATUS_NOT_SUPPORTED_NO_KERNEL);
  out->time_ms = -1.0f;
  out->workspace_size = v.workspace;
  out->deterministic = (k.kernel.flags & TSRP_KERNEL_DETERMINISTIC) ? 1 : 0;
  std::snprintf(out->kernel_name, sizeof(out->kernel_name), "%s", k.kernel_name.c_str());
  std::snprintf(out->backend_name, sizeof(out->backend_name), "%s",
                reg.plugins()[k.plugin_index].name.c_str());
  const char* text = v.can_run ? (k.kernel.notes ? k.kernel.notes : "") : v.reason.c_str();
  std::snprintf(out->reason, sizeof(out->reason), "%s", text);
}

tsrStatus_t get_algorithms(tsrContext& h, const char* function, int op, const void* problem,
                           int requested_count, int* returned_count, tsrAlgoPerf_t perf[]) {
  if (!returned_count)
    return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(function) + ": returned_count is NULL");
  if (tsrStatus_t s = check_perf_array(function, requested_count, perf)) return s;
  auto handle_lock = lock_handle(h);
  const registry::registry& reg = registry::registry::instance();
  auto lock = reg.read_lock();
  ensure_plugin_contexts(h, reg);
  std::vector<kernel_verdict> ranked =
      registry::rank_candidates(reg, make_request(h, op, problem, TSR_ALGO_AUTO, false, 0));
  int n = std::min<int>(requested_count, static_cast<int>(ranked.size()));
  for (int i = 0; i < n; ++i) fill_perf(reg, ranked[i], &perf[i]);
  *returned_count = n;
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t query_workspace(tsrContext& h, const char* function, int op, const void* problem,
                            tsrAlgo_t algo, size_t* bytes) {
  if (!bytes) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(function) + ": bytes is NULL");
  auto handle_lock = lock_handle(h);
  const registry::registry& reg = registry::registry::instance();
  auto lock = reg.read_lock();
  if (tsrStatus_t s = check_algo_locked(reg, function, op, algo)) return s;
  ensure_plugin_contexts(h, reg);
  // The automatic choice ignores workspace here: the answer is what the preferred kernel needs.
  selection_result sel = registry::select_kernel(reg, make_request(h, op, problem, algo, false, 0));
  if (sel.kernel_id < 0) return refuse(reg, function, op, sel, algo);
  *bytes = sel.workspace;
  return TSR_STATUS_SUCCESS;
}

// Caller holds the handle and the registry's read lock.
tsrStatus_t time_kernel(tsrContext& h, const char* function, int64_t kernel_id,
                        const void* problem, const void* args, void* workspace,
                        size_t workspace_size, int iterations, float* median_ms) {
  const registry::registry& reg = registry::registry::instance();
  const registry::kernel_record& k = reg.kernels()[kernel_id];
  const tsrpDeviceInterface* dev = h.device;
  void* dctx = h.device_context();
  // Warm-up: first-call costs (primitive creation, module load) stay out of the figure.
  if (tsrStatus_t s = run_kernel(h, reg, function, k, problem, args, workspace, workspace_size))
    return s;
  void* start = nullptr;
  void* end = nullptr;
  if (dev->event_create(dctx, &start) != TSRP_STATUS_SUCCESS ||
      dev->event_create(dctx, &end) != TSRP_STATUS_SUCCESS) {
    if (start) dev->event_destroy(dctx, start);
    return fail(TSR_STATUS_EXECUTION_FAILED_DEVICE, std::string(function) + ": could not create timing events");
  }
  std::vector<float> times;
  tsrStatus_t status = TSR_STATUS_SUCCESS;
  for (int i = 0; i < iterations && status == TSR_STATUS_SUCCESS; ++i) {
    dev->event_record(dctx, start);
    status = run_kernel(h, reg, function, k, problem, args, workspace, workspace_size);
    dev->event_record(dctx, end);
    dev->synchronize(dctx);
    float ms = 0;
    if (status == TSR_STATUS_SUCCESS && dev->event_elapsed_ms(dctx, start, end, &ms) == TSRP_STATUS_SUCCESS)
      times.push_back(ms);
  }
  dev->event_destroy(dctx, start);
  dev->event_destroy(dctx, end);
  if (status != TSR_STATUS_SUCCESS) return status;
  if (times.empty())
    return fail(TSR_STATUS_EXECUTION_FAILED_DEVICE, std::string(function) + ": timing events failed");
  std::sort(times.begin(), times.end());
  *median_ms = times[times.size() / 2];
  return TSR_STATUS_SUCCESS;
}

}  // namespace tessera::api
