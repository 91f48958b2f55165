#include "fallback.hpp"

#include "error_state.hpp"
#include "host_staging.hpp"
#include "logging.hpp"
#include "problem_key.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace tessera::api {
namespace {

// True the first time this process sees the problem fall back.
bool first_fallback_of(int op, const void* problem) {
  static std::mutex mutex;
  static std::set<std::pair<int, uint64_t>> seen;
  std::lock_guard<std::mutex> lock(mutex);
  return seen.insert({op, problem_hash(problem)}).second;
}

}  // namespace

tsrStatus_t run_fallback(tsrContext& h, const registry::registry& reg, const operation_call& call,
                         const registry::selection_result& device_refusal) {
  const std::string op_name = tsrGetOperationName(static_cast<tsrOperation_t>(call.op));
  const std::string device_reasons = registry::join_reasons(reg, device_refusal.declined);
  tsrContext* host = nullptr;
  if (host_twin(h, reg, call.function, &host) != TSR_STATUS_SUCCESS) {
    return fail(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, std::string(call.function) + ": no kernel can run this " +
                                                        op_name + " problem (" + device_reasons +
                                                        ") and the host fallback is unavailable: " + last_error());
  }
  host_staged_call staged;
  if (tsrStatus_t s = stage_call_to_host(h, call.function, call, &staged)) return s;
  registry::selection_result chosen;
  tsrStatus_t s = run_staged_on_host(*host, reg, call.function, call, staged, &chosen);
  if (chosen.kernel_id < 0) {
    return fail(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                std::string(call.function) + ": no kernel can run this " + op_name + " problem: " + device_reasons +
                    "; host fallback: " + registry::join_reasons(reg, chosen.declined));
  }
  h.last_kernel = chosen.kernel_id;
  h.last_kernel_on_host = true;
  if (s != TSR_STATUS_SUCCESS) return s;
  if (tsrStatus_t c = copy_outputs_to_device(h, call.function, call, staged)) return c;
  if (first_fallback_of(call.op, call.problem)) {
    log::write(log::level::warn, std::string(call.function) + ": no " + device_kind_name(h.kind) +
                                     " kernel can run this " + op_name + " problem; it ran on " +
                                     reg.kernels()[chosen.kernel_id].full_name +
                                     " through host memory (warned once per problem). Declined: " + device_reasons);
  }
  return TSR_STATUS_SUCCESS;
}

}  // namespace tessera::api
