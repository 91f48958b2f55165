#include "tuning.hpp"

#include "error_state.hpp"
#include "logging.hpp"
#include "operation_tensors.hpp"
#include "plugin_discovery.hpp"
#include "problem_key.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>

namespace tessera::api {
namespace {

std::string system_tuning_db_path() {
  if (const char* p = std::getenv("TESSERA_TUNING_SYSTEM_DB")) return p;
  return (std::filesystem::path(registry::library_folder()) / ".." / "share" / "tessera" / "tuning.db")
      .lexically_normal()
      .string();
}

// Find and tuning measure kernels on scratch outputs as large as the outputs' spans. One larger
// than all of the device's memory can never be allocated, however much is freed: the caller's
// descriptor is at fault (the fuzzer's y whose strides span 13 TB), so the call is refused before
// the allocator is asked for it (which would fail anyway, and which an ASan build reports).
// BAD_PARAM_OUT_OF_RANGE: the span is a value outside what this device allows; SIZE_OVERFLOW
// would be wrong, the byte count itself being well defined. Free memory is not looked at: a
// scratch that fits the device but not what is free now stays the allocator's
// EXECUTION_FAILED_OUT_OF_MEMORY, a condition of the moment rather than of the call. A device
// that cannot say (memory_info NULL, as in plugins of ABI < 4, or failing) is not checked.
tsrStatus_t refuse_scratch_beyond_device_memory(tsrContext& h, const char* function,
                                                const std::vector<operation_buffer>& buffers) {
  if (!h.device->memory_info) return TSR_STATUS_SUCCESS;
  size_t free_bytes = 0, total_bytes = 0;
  if (h.device->memory_info(h.device_context(), &free_bytes, &total_bytes) != TSRP_STATUS_SUCCESS ||
      total_bytes == 0)
    return TSR_STATUS_SUCCESS;
  // Strings are built only for a refusal: this runs on every tuning and find call.
  auto beyond = [&]() { return "more than the device's " + std::to_string(total_bytes) + " bytes of memory"; };
  size_t sum = 0;
  for (const operation_buffer& b : buffers) {
    if (b.role != buffer_role::output) continue;
    if (b.bytes > total_bytes) {
      const std::string what = b.has_own_descriptor ? std::string(b.name) + "_desc spans "
                                                    : std::string(b.name) + " takes ";
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(function) + ": " + what + std::to_string(b.bytes) + " bytes, " + beyond() +
                      "; kernels are measured on a scratch " + b.name + " of that size");
    }
    sum = b.bytes > SIZE_MAX - sum ? SIZE_MAX : sum + b.bytes;
  }
  if (sum <= total_bytes) return TSR_STATUS_SUCCESS;
  std::string names;
  for (const operation_buffer& b : buffers)
    if (b.role == buffer_role::output) names += (names.empty() ? "" : ", ") + std::string(b.name);
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(function) + ": the outputs " + names + " together take " + std::to_string(sum) + " bytes, " +
                  beyond() + "; kernels are measured on scratch outputs of those sizes");
}

// Scratch buffers of the device for a call's outputs, freed on scope exit.
class scratch_outputs {
 public:
  scratch_outputs(tsrContext& h) : h_(h) {}
  ~scratch_outputs() {
    for (void* p : allocations_) h_.device->deallocate(h_.device_context(), p);
  }
  // An argument struct whose outputs (among `buffers`, the call's) point at fresh scratch buffers.
  tsrStatus_t redirect(const char* function, const operation_call& call, const std::vector<operation_buffer>& buffers,
                       std::vector<uint8_t>* args) {
    const size_t size = operation_args_size(call.op);
    args->assign(static_cast<const uint8_t*>(call.args), static_cast<const uint8_t*>(call.args) + size);
    for (const operation_buffer& b : buffers) {
      if (b.role != buffer_role::output) continue;
      void* p = nullptr;
      const tsrpStatus_t s = h_.device->allocate(h_.device_context(), b.bytes, &p);
      if (s != TSRP_STATUS_SUCCESS)
        return fail(from_plugin_status(s), std::string(function) + ": allocating a " + std::to_string(b.bytes) +
                                               "-byte scratch " + b.name + " to measure on failed");
      allocations_.push_back(p);
      set_buffer_pointer(args->data(), b.args_offset, p);
    }
    return TSR_STATUS_SUCCESS;
  }

 private:
  tsrContext& h_;
  std::vector<void*> allocations_;
};

registry::tuning_key key_for(tsrContext& h, const registry::registry& reg, const operation_call& call,
                             size_t plugin_index) {
  registry::tuning_key key;
  key.device_fingerprint = device_fingerprint(h);
  key.plugin_name = reg.plugins()[plugin_index].name;
  key.plugin_version = reg.plugins()[plugin_index].version;
  key.operation = call.op;
  key.problem_key = problem_key(tsrGetOperationName(static_cast<tsrOperation_t>(call.op)), call.problem);
  return key;
}

// The plugins whose kernels this handle's automatic choices may take: those of its device that
// it can use, and only the preferred ones when the preference is exclusive.
std::vector<size_t> usable_plugins(const tsrContext& h, const registry::registry& reg) {
  std::vector<size_t> out;
  for (size_t i = 0; i < reg.plugins().size(); ++i) {
    const registry::plugin_record& p = reg.plugins()[i];
    if (!p.loaded || p.device_kind != h.kind || i >= h.unavailable.size() || !h.unavailable[i].empty()) continue;
    if (h.preferred_only &&
        std::find(h.preferred_plugins.begin(), h.preferred_plugins.end(), i) == h.preferred_plugins.end())
      continue;
    out.push_back(i);
  }
  return out;
}

// The database's fastest entry among the usable plugins, checked to still run the problem.
registry::selection_result from_database(tsrContext& h, const registry::registry& reg, const operation_call& call,
                                         size_t workspace_available) {
  registry::selection_result none;
  registry::tuning_db& db = process_tuning_db();
  int64_t best = -1;
  double best_ms = std::numeric_limits<double>::infinity();
  for (size_t plugin : usable_plugins(h, reg)) {
    const std::optional<registry::tuning_record> r = db.lookup(key_for(h, reg, call, plugin));
    if (!r) continue;
    for (int64_t id : reg.kernels_for(call.op)) {
      const registry::kernel_record& k = reg.kernels()[id];
      if (k.plugin_index == plugin && k.kernel_name == r->kernel_name && r->time_ms < best_ms) {
        best = id;
        best_ms = r->time_ms;
      }
    }
  }
  if (best < 0) return none;
  registry::selection_result checked = registry::select_kernel(
      reg, make_request(h, call.op, call.problem, best, true, workspace_available));
  if (checked.kernel_id < 0) {
    log::write(log::level::info, std::string(call.function) + ": tuned kernel " + reg.kernels()[best].full_name +
                                     " cannot run the call now (" + registry::join_reasons(reg, checked.declined) +
                                     "); choosing again");
    return none;
  }
  return checked;
}

// Measures every candidate, stores each plugin's fastest, and returns the overall fastest.
registry::selection_result tune(tsrContext& h, const registry::registry& reg, const operation_call& call,
                                size_t workspace_available) {
  registry::selection_result none;
  std::vector<registry::kernel_verdict> ranked =
      registry::rank_candidates(reg, make_request(h, call.op, call.problem, TSR_ALGO_AUTO, true, workspace_available));
  std::vector<float> times;
  if (measure_candidates(h, call, ranked, &times, tuning_limits_from_environment(), 5) != TSR_STATUS_SUCCESS) {
    log::write(log::level::warn, std::string(call.function) + ": tuning failed (" + last_error() +
                                     "); the heuristic chooses");
    clear_error();
    return none;
  }
  std::vector<registry::tuning_record> records;
  size_t winner = ranked.size();
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (!ranked[i].can_run || times[i] < 0) continue;
    if (winner == ranked.size() || times[i] < times[winner]) winner = i;
    const registry::kernel_record& k = reg.kernels()[ranked[i].kernel_id];
    auto same_plugin = [&](const registry::tuning_record& r) {
      return r.key.plugin_name == reg.plugins()[k.plugin_index].name;
    };
    auto it = std::find_if(records.begin(), records.end(), same_plugin);
    if (it != records.end() && it->time_ms <= times[i]) continue;
    registry::tuning_record r;
    r.key = key_for(h, reg, call, k.plugin_index);
    r.kernel_name = k.kernel_name;
    r.time_ms = times[i];
    r.workspace = ranked[i].workspace;
    r.measured_at_unix = static_cast<int64_t>(std::time(nullptr));
    r.tessera_version = std::to_string(TSR_VERSION_MAJOR) + "." + std::to_string(TSR_VERSION_MINOR) + "." +
                        std::to_string(TSR_VERSION_PATCH);
    if (it != records.end())
      *it = r;
    else
      records.push_back(r);
  }
  if (winner == ranked.size()) return none;
  if (!records.empty()) process_tuning_db().store_all(records);
  log::write(log::level::info, std::string(call.function) + ": tuned " + std::to_string(records.size()) +
                                   " backend(s); fastest " + reg.kernels()[ranked[winner].kernel_id].full_name + " " +
                                   std::to_string(times[winner]) + " ms");
  registry::selection_result chosen;
  chosen.kernel_id = ranked[winner].kernel_id;
  chosen.workspace = ranked[winner].workspace;
  return chosen;
}

size_t environment_count(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n > 0) ? static_cast<size_t>(n) : fallback;
}

}  // namespace

registry::tuning_db& process_tuning_db() {
  static registry::tuning_db db;
  static std::once_flag opened;
  std::call_once(opened, [] { db.open(registry::default_tuning_db_path(), system_tuning_db_path()); });
  return db;
}

const std::string& device_fingerprint(tsrContext& h) {
  if (h.fingerprint.empty()) {
    char text[256] = {0};
    if (h.device->fingerprint && h.device->fingerprint(h.ordinal, text, sizeof(text)) == TSRP_STATUS_SUCCESS) {
      text[sizeof(text) - 1] = '\0';
      h.fingerprint = text;
    } else if (h.device->device_name(h.ordinal, text, sizeof(text)) == TSRP_STATUS_SUCCESS) {
      text[sizeof(text) - 1] = '\0';
      h.fingerprint = std::string(device_kind_name(h.kind)) + ":" + text;
    } else {
      h.fingerprint = std::string(device_kind_name(h.kind)) + ":unknown";
    }
  }
  return h.fingerprint;
}

tuning_limits tuning_limits_from_environment() {
  tuning_limits l;
  l.max_candidates = environment_count("TESSERA_TUNING_MAX_CANDIDATES", l.max_candidates);
  l.max_ms = static_cast<double>(environment_count("TESSERA_TUNING_MAX_MS", static_cast<size_t>(l.max_ms)));
  return l;
}

tsrStatus_t measure_candidates(tsrContext& h, const operation_call& call,
                               std::vector<registry::kernel_verdict>& ranked, std::vector<float>* times,
                               const tuning_limits& limits, int iterations) {
  times->assign(ranked.size(), -1.0f);
  // Refused whether or not a kernel accepts: outputs no scratch could hold make the call wrong
  // on this device, whichever plugins are loaded.
  const std::vector<operation_buffer> buffers = operation_buffers(call.op, call.problem, call.args);
  if (tsrStatus_t s = refuse_scratch_beyond_device_memory(h, call.function, buffers)) return s;
  // Scratch outputs are only needed when something will run: a problem every kernel declines
  // allocates nothing.
  if (std::none_of(ranked.begin(), ranked.end(), [](const auto& v) { return v.can_run; }))
    return TSR_STATUS_SUCCESS;
  scratch_outputs scratch(h);
  std::vector<uint8_t> args;
  if (tsrStatus_t s = scratch.redirect(call.function, call, buffers, &args)) return s;
  const bool use_pool = !call.workspace && call.workspace_size == 0;
  const auto started = std::chrono::steady_clock::now();
  size_t measured = 0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    registry::kernel_verdict& v = ranked[i];
    if (!v.can_run) continue;
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (measured >= limits.max_candidates || elapsed_ms > limits.max_ms) {
      v.can_run = false;
      v.reason = "not measured: the tuning limits (TESSERA_TUNING_MAX_CANDIDATES, TESSERA_TUNING_MAX_MS) were reached";
      continue;
    }
    ++measured;
    void* workspace = call.workspace;
    size_t workspace_size = call.workspace_size;
    tsrStatus_t s = TSR_STATUS_SUCCESS;
    if (use_pool && v.workspace > 0) {
      s = acquire_pool_workspace(h, call.function, v.workspace, &workspace);
      workspace_size = h.workspace_pool_size;
    }
    float ms = 0;
    const auto candidate_started = std::chrono::steady_clock::now();
    if (s == TSR_STATUS_SUCCESS)
      s = time_kernel(h, call.function, v.kernel_id, call.problem, args.data(), workspace, workspace_size, iterations,
                      &ms);
    // Where a find's time goes: the wall time of each candidate (first launch, module load and
    // plan creation included) beside its kernel time.
    if (log::enabled(log::level::debug)) {
      const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                       candidate_started).count();
      const registry::kernel_record& k = registry::registry::instance().kernels()[v.kernel_id];
      log::write(log::level::debug, std::string(call.function) + ": measured " +
                                        registry::registry::instance().plugins()[k.plugin_index].name + "/" +
                                        k.kernel.name + " in " + std::to_string(wall_ms) + " ms wall, kernel " +
                                        std::to_string(ms) + " ms");
    }
    if (s == TSR_STATUS_SUCCESS) {
      (*times)[i] = ms;
    } else {
      v.can_run = false;
      v.reason = "failed while measured: " + last_error();
    }
  }
  clear_error();
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t find_algorithms(tsrContext& h, const operation_call& call, int requested_count, int* returned_count,
                            tsrAlgoPerf_t perf[]) {
  auto handle_lock = lock_handle(h);
  const registry::registry& reg = registry::registry::instance();
  auto lock = reg.read_lock();
  ensure_plugin_contexts(h, reg);
  const bool use_pool = !call.workspace && call.workspace_size == 0;
  std::vector<registry::kernel_verdict> ranked = registry::rank_candidates(
      reg, make_request(h, call.op, call.problem, TSR_ALGO_AUTO, true, use_pool ? h.workspace_limit : call.workspace_size));
  std::vector<float> times;
  if (tsrStatus_t s = measure_candidates(h, call, ranked, &times, tuning_limits_from_environment(), 5)) return s;
  std::vector<size_t> order(ranked.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranked[a].can_run != ranked[b].can_run) return ranked[a].can_run;
    return ranked[a].can_run && times[a] < times[b];
  });
  const int n = std::min<int>(requested_count, static_cast<int>(order.size()));
  for (int i = 0; i < n; ++i) {
    fill_perf(reg, ranked[order[i]], &perf[i]);
    perf[i].time_ms = times[order[i]];
  }
  *returned_count = n;
  return TSR_STATUS_SUCCESS;
}

registry::selection_result tuned_choice(tsrContext& h, const registry::registry& reg, const operation_call& call,
                                        size_t workspace_available) {
  registry::selection_result none;
  switch (h.tuning_mode) {
    case TSR_TUNING_HEURISTIC:
      return none;
    case TSR_TUNING_DATABASE:
      return from_database(h, reg, call, workspace_available);
    case TSR_TUNING_DATABASE_OR_TUNE: {
      registry::selection_result found = from_database(h, reg, call, workspace_available);
      return found.kernel_id >= 0 ? found : tune(h, reg, call, workspace_available);
    }
    case TSR_TUNING_ALWAYS:
      return tune(h, reg, call, workspace_available);
    case TSR_TUNING_MODE_ENUM_MIN_:
    case TSR_TUNING_MODE_ENUM_MAX_: break;  // range markers (TSR_ENUM_RANGE), refused when set
  }
  return none;
}

}  // namespace tessera::api
