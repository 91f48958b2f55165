// Handles, streams, backend preference and device memory.
#include "error_state.hpp"
#include "handle.hpp"
#include "logging.hpp"
#include "validation.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace tessera::api;
using tessera::registry::registry;

namespace tessera::api {

const char* device_kind_name(int kind) {
  switch (kind) {
    case TSR_DEVICE_CPU: return "cpu";
    case TSR_DEVICE_CUDA: return "cuda";
  }
  return "unknown";
}

tsrStatus_t from_plugin_status(tsrpStatus_t status) {
  switch (status) {
    case TSRP_STATUS_SUCCESS: return TSR_STATUS_SUCCESS;
    case TSRP_STATUS_BAD_PARAM: return TSR_STATUS_BAD_PARAM;
    case TSRP_STATUS_NOT_SUPPORTED: return TSR_STATUS_NOT_SUPPORTED;
    case TSRP_STATUS_INTERNAL_ERROR: return TSR_STATUS_INTERNAL_ERROR;
    case TSRP_STATUS_OUT_OF_MEMORY: return TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY;
    case TSRP_STATUS_DEVICE_ERROR: return TSR_STATUS_EXECUTION_FAILED_DEVICE;
    default: return TSR_STATUS_EXECUTION_FAILED;
  }
}

tsrStatus_t check_handle(const char* function, tsrHandle_t handle) {
  return check_not_null(function, "handle", handle);
}

tsrStatus_t acquire_pool_workspace(tsrContext& h, const char* function, size_t bytes,
                                   void** workspace) {
  if (bytes <= h.workspace_pool_size) {
    *workspace = h.workspace_pool;
    return TSR_STATUS_SUCCESS;
  }
  release_pool_workspace(h);
  void* p = nullptr;
  tsrpStatus_t s = h.device->allocate(h.device_context(), bytes, &p);
  if (s != TSRP_STATUS_SUCCESS) {
    tsrStatus_t status = from_plugin_status(s);
    return fail(status, std::string(function) + ": allocating " + std::to_string(bytes) +
                            " bytes for the handle's workspace pool failed (" +
                            tsrGetErrorString(status) + "); the handle stays usable");
  }
  h.workspace_pool = p;
  h.workspace_pool_size = bytes;
  *workspace = p;
  return TSR_STATUS_SUCCESS;
}

void release_pool_workspace(tsrContext& h) {
  if (h.workspace_pool) h.device->deallocate(h.device_context(), h.workspace_pool);
  h.workspace_pool = nullptr;
  h.workspace_pool_size = 0;
}

void ensure_plugin_contexts(tsrContext& h, const tessera::registry::registry& reg) {
  const auto& plugins = reg.plugins();
  while (h.contexts.size() < plugins.size()) {
    size_t i = h.contexts.size();
    const auto& p = plugins[i];
    void* context = nullptr;
    std::string why;
    if (!p.loaded) {
      why = "backend not loaded: " + p.reason;
    } else if (p.device_kind != h.kind) {
      why = std::string("serves device kind ") + device_kind_name(p.device_kind);
    } else if (p.plugin.has_context) {
      char message[256] = {0};
      tsrpStatus_t s;
      try {
        s = p.plugin.context.create(h.ordinal, &context, message, sizeof(message));
      } catch (...) {
        s = TSRP_STATUS_INTERNAL_ERROR;
        std::snprintf(message, sizeof(message), "context creation threw an exception");
      }
      message[sizeof(message) - 1] = '\0';
      if (s != TSRP_STATUS_SUCCESS) {
        context = nullptr;
        why = std::string("backend context creation failed: ") + message;
        tessera::log::write(tessera::log::level::warn,
                            "backend " + p.name + " unavailable on this handle: " + why);
      } else if (h.stream && p.plugin.context.set_stream) {
        p.plugin.context.set_stream(context, h.stream);
      }
    }
    h.contexts.push_back(context);
    h.unavailable.push_back(why);
  }
}

}  // namespace tessera::api

namespace {

void destroy_contexts(tsrContext& h, const registry& reg) {
  for (size_t i = 0; i < h.contexts.size(); ++i)
    if (h.contexts[i]) {
      try {
        reg.plugins()[i].plugin.context.destroy(h.contexts[i]);
      } catch (...) {
      }
    }
  h.contexts.clear();
}

tsrStatus_t device_failure(const char* fn, tsrpStatus_t s, const std::string& what) {
  tsrStatus_t status = from_plugin_status(s);
  return fail(status, std::string(fn) + ": " + what + " failed (" + tsrGetErrorString(status) + ")");
}

// The defaults of new handles from the environment, read once per process.
struct handle_defaults {
  tsrTuningMode_t tuning = TSR_TUNING_DATABASE;
  bool deterministic = false;
  bool fallback = false;
  bool check_pointers = false;
  tsrCrossCheckMode_t crosscheck = TSR_CROSSCHECK_OFF;
};

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0 || std::strcmp(v, "true") == 0 ||
               std::strcmp(v, "yes") == 0);
}

const handle_defaults& defaults_from_environment() {
  static const handle_defaults d = [] {
    handle_defaults out;
    if (const char* t = std::getenv("TESSERA_TUNING")) {
      const std::string v = t;
      if (v == "heuristic") out.tuning = TSR_TUNING_HEURISTIC;
      else if (v == "database" || v == "db") out.tuning = TSR_TUNING_DATABASE;
      else if (v == "tune") out.tuning = TSR_TUNING_DATABASE_OR_TUNE;
      else if (v == "always") out.tuning = TSR_TUNING_ALWAYS;
      else
        tessera::log::write(tessera::log::level::warn,
                            "TESSERA_TUNING='" + v + "' is not heuristic, database, tune or always: using database");
    }
    out.deterministic = env_flag("TESSERA_DETERMINISTIC");
    out.fallback = env_flag("TESSERA_FALLBACK");
    out.check_pointers = env_flag("TESSERA_CHECK_POINTERS");
    if (const char* c = std::getenv("TESSERA_CROSSCHECK")) {
      if (std::strcmp(c, "abort") == 0) out.crosscheck = TSR_CROSSCHECK_ABORT;
      else if (env_flag("TESSERA_CROSSCHECK")) out.crosscheck = TSR_CROSSCHECK_ON;
    }
    return out;
  }();
  return d;
}

}  // namespace

namespace tessera::api {

tsrStatus_t create_handle(const char* fn, const registry::registry& reg, tsrDeviceKind_t kind, int ordinal,
                          std::unique_ptr<tsrContext>* out) {
  if (kind != TSR_DEVICE_CPU && kind != TSR_DEVICE_CUDA)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": kind " + std::to_string(kind) + " is not a tsrDeviceKind_t");
  int device_plugin = -1;
  const tsrpDeviceInterface* dev = reg.device_interface(kind, &device_plugin);
  if (!dev)
    return fail(TSR_STATUS_NOT_SUPPORTED_NO_DEVICE,
                std::string(fn) + ": no loaded plugin serves device kind '" + device_kind_name(kind) +
                    "' (tessera-info lists the plugins and why any was refused)");
  int32_t count = 0;
  if (dev->device_count(&count) != TSRP_STATUS_SUCCESS) count = 0;
  if (ordinal < 0 || ordinal >= count)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": ordinal " + std::to_string(ordinal) + " out of range: " +
                    std::to_string(count) + " " + device_kind_name(kind) + " device(s) present");
  auto h = std::make_unique<tsrContext>();
  h->kind = kind;
  h->ordinal = ordinal;
  h->device = dev;
  h->device_plugin = device_plugin;
  ensure_plugin_contexts(*h, reg);
  if (device_plugin >= 0 && !h->unavailable[static_cast<size_t>(device_plugin)].empty()) {
    std::string why = h->unavailable[static_cast<size_t>(device_plugin)];
    destroy_contexts(*h, reg);
    return fail(TSR_STATUS_EXECUTION_FAILED_DEVICE,
                std::string(fn) + ": device plugin " + reg.plugins()[device_plugin].name + " could not open " +
                    device_kind_name(kind) + " device " + std::to_string(ordinal) + ": " + why);
  }
  for (const std::string& name : reg.filter().preferred()) {
    int p = reg.find_plugin(name);
    if (p >= 0) h->preferred_plugins.push_back(static_cast<size_t>(p));
  }
  const handle_defaults& d = defaults_from_environment();
  h->tuning_mode = d.tuning;
  h->deterministic_only = d.deterministic;
  h->fallback_allowed = d.fallback;
  h->check_pointers = d.check_pointers;
  h->crosscheck = d.crosscheck;
  *out = std::move(h);
  return TSR_STATUS_SUCCESS;
}

void destroy_handle(tsrContext* h, const registry::registry& reg) {
  if (!h) return;
  destroy_handle(h->host.release(), reg);
  release_pool_workspace(*h);
  destroy_contexts(*h, reg);
  delete h;
}

}  // namespace tessera::api

extern "C" {

TSR_API tsrStatus_t tsrGetDeviceCount(tsrDeviceKind_t kind, int* count) {
  const char* fn = "tsrGetDeviceCount";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "count", count)) return s;
    if (kind != TSR_DEVICE_CPU && kind != TSR_DEVICE_CUDA)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": kind " + std::to_string(kind) + " is not a tsrDeviceKind_t");
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    int plugin = -1;
    const tsrpDeviceInterface* dev = reg.device_interface(kind, &plugin);
    int32_t n = 0;
    if (dev && dev->device_count(&n) != TSRP_STATUS_SUCCESS) n = 0;
    *count = n;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrCreate(tsrDeviceKind_t kind, int ordinal, tsrHandle_t* handle) {
  const char* fn = "tsrCreate";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "handle", handle)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    std::unique_ptr<tsrContext> h;
    if (tsrStatus_t s = create_handle(fn, reg, kind, ordinal, &h)) return s;
    *handle = h.release();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroy(tsrHandle_t handle) {
  return guarded("tsrDestroy", [&] {
    if (!handle) return TSR_STATUS_SUCCESS;
    // No lock: destroying a handle while another thread still uses it is the caller's error
    // (tessera.h), and a lock destroyed with its owner would not help.
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    destroy_handle(handle, reg);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetStream(tsrHandle_t handle, void* stream) {
  const char* fn = "tsrSetStream";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (handle->kind == TSR_DEVICE_CPU && stream)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": stream must be NULL for a CPU handle");
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    ensure_plugin_contexts(*handle, reg);
    // All or nothing: a plugin that refuses the stream leaves every context on the old one.
    for (size_t i = 0; i < handle->contexts.size(); ++i) {
      const auto& p = reg.plugins()[i];
      if (!handle->contexts[i] || !p.plugin.context.set_stream) continue;
      tsrpStatus_t s = p.plugin.context.set_stream(handle->contexts[i], stream);
      if (s != TSRP_STATUS_SUCCESS) {
        for (size_t j = 0; j < i; ++j)
          if (handle->contexts[j] && reg.plugins()[j].plugin.context.set_stream)
            reg.plugins()[j].plugin.context.set_stream(handle->contexts[j], handle->stream);
        return fail(from_plugin_status(s),
                    std::string(fn) + ": backend " + p.name + " refused the stream");
      }
    }
    handle->stream = stream;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetStream(tsrHandle_t handle, void** stream) {
  const char* fn = "tsrGetStream";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (tsrStatus_t s = check_not_null(fn, "stream", stream)) return s;
    *stream = handle->stream;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetBackendPreference(tsrHandle_t handle, const char* backends) {
  const char* fn = "tsrSetBackendPreference";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    std::vector<size_t> order;
    for (const std::string& name : tessera::registry::split_list(backends ? backends : "")) {
      int p = reg.find_plugin(name);
      if (p < 0) {
        std::string loaded;
        for (const auto& rec : reg.plugins())
          if (rec.loaded) loaded += (loaded.empty() ? "" : ", ") + rec.name;
        return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    std::string(fn) + ": backends names '" + name +
                        "', which is not a loaded backend (loaded: " +
                        (loaded.empty() ? "none" : loaded) + ")");
      }
      order.push_back(static_cast<size_t>(p));
    }
    handle->preferred_plugins = std::move(order);
    handle->selections.clear();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetBackendsExclusive(tsrHandle_t handle, int exclusive) {
  const char* fn = "tsrSetBackendsExclusive";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (exclusive != 0 && exclusive != 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": exclusive is " + std::to_string(exclusive) + "; expected 0 or 1");
    auto handle_lock = lock_handle(*handle);
    handle->preferred_only = exclusive == 1;
    handle->selections.clear();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetLastKernelName(tsrHandle_t handle, char* name, size_t size) {
  const char* fn = "tsrGetLastKernelName";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (!name) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": name is NULL");
    auto handle_lock = lock_handle(*handle);
    std::string text;
    if (handle->last_kernel >= 0) {
      registry& reg = registry::instance();
      auto lock = reg.read_lock();
      text = reg.kernels()[static_cast<size_t>(handle->last_kernel)].full_name;
      if (handle->last_kernel_on_host) text += " (host fallback)";
    }
    if (size < text.size() + 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": size is " + std::to_string(size) +
                                                         "; the name needs " + std::to_string(text.size() + 1) +
                                                         " bytes");
    std::memcpy(name, text.c_str(), text.size() + 1);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetMathMode(tsrHandle_t handle, tsrMathMode_t mode) {
  const char* fn = "tsrSetMathMode";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (mode < TSR_MATH_DEFAULT || mode > TSR_MATH_ALLOW_TF32)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrMathMode_t");
    handle->math_mode = mode;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetTuningMode(tsrHandle_t handle, tsrTuningMode_t mode) {
  const char* fn = "tsrSetTuningMode";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (mode < TSR_TUNING_HEURISTIC || mode > TSR_TUNING_ALWAYS)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrTuningMode_t");
    handle->tuning_mode = mode;
    handle->selections.clear();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetTuningMode(tsrHandle_t handle, tsrTuningMode_t* mode) {
  const char* fn = "tsrGetTuningMode";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (tsrStatus_t s = check_not_null(fn, "mode", mode)) return s;
    *mode = handle->tuning_mode;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetDeterministic(tsrHandle_t handle, int deterministic_only) {
  const char* fn = "tsrSetDeterministic";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (deterministic_only != 0 && deterministic_only != 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": deterministic_only is " + std::to_string(deterministic_only) +
                      ", expected 0 or 1");
    handle->deterministic_only = deterministic_only == 1;
    handle->selections.clear();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetFallback(tsrHandle_t handle, int allowed) {
  const char* fn = "tsrSetFallback";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (allowed != 0 && allowed != 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": allowed is " + std::to_string(allowed) + ", expected 0 or 1");
    handle->fallback_allowed = allowed == 1;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetPointerChecks(tsrHandle_t handle, int enabled) {
  const char* fn = "tsrSetPointerChecks";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (enabled != 0 && enabled != 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": enabled is " + std::to_string(enabled) + ", expected 0 or 1");
    auto handle_lock = lock_handle(*handle);
    handle->check_pointers = enabled == 1;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetConstantWeights(tsrHandle_t handle, int constant) {
  const char* fn = "tsrSetConstantWeights";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (constant != 0 && constant != 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": constant is " + std::to_string(constant) + ", expected 0 or 1");
    // Process-wide, so that no two promises (of any handle) share a value; never 0.
    static std::atomic<uint32_t> promises{0};
    uint32_t next = 0;
    while (constant && next == 0) next = ++promises;
    handle->weights_generation = next;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetCrossCheck(tsrHandle_t handle, tsrCrossCheckMode_t mode) {
  const char* fn = "tsrSetCrossCheck";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (mode < TSR_CROSSCHECK_OFF || mode > TSR_CROSSCHECK_ABORT)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrCrossCheckMode_t");
    handle->crosscheck = mode;
    // Cross-checked calls take the full dispatch path; memoized choices stay valid.
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetCrossCheckCounts(tsrHandle_t handle, tsrCrossCheckCounts_t* counts) {
  const char* fn = "tsrGetCrossCheckCounts";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (tsrStatus_t s = check_not_null(fn, "counts", counts)) return s;
    if (counts->struct_size < sizeof(tsrCrossCheckCounts_t))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": counts->struct_size is " + std::to_string(counts->struct_size) +
                      ", expected sizeof(tsrCrossCheckCounts_t) = " + std::to_string(sizeof(tsrCrossCheckCounts_t)));
    const size_t size = counts->struct_size;
    *counts = handle->crosscheck_counts;
    counts->struct_size = size;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetWorkspaceLimit(tsrHandle_t handle, size_t bytes) {
  const char* fn = "tsrSetWorkspaceLimit";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    handle->workspace_limit = bytes;
    handle->selections.clear();
    if (handle->workspace_pool_size > bytes) release_pool_workspace(*handle);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrMalloc(tsrHandle_t handle, size_t bytes, void** pointer) {
  const char* fn = "tsrMalloc";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (tsrStatus_t s = check_not_null(fn, "pointer", pointer)) return s;
    void* p = nullptr;
    tsrpStatus_t s = handle->device->allocate(handle->device_context(), bytes, &p);
    if (s != TSRP_STATUS_SUCCESS)
      return device_failure(fn, s, "allocating " + std::to_string(bytes) + " bytes on " +
                                       device_kind_name(handle->kind) + " device " +
                                       std::to_string(handle->ordinal));
    *pointer = p;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrFree(tsrHandle_t handle, void* pointer) {
  const char* fn = "tsrFree";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (!pointer) return TSR_STATUS_SUCCESS;
    tsrpStatus_t s = handle->device->deallocate(handle->device_context(), pointer);
    if (s != TSRP_STATUS_SUCCESS) return device_failure(fn, s, "freeing device memory");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrMemcpyHostToDevice(tsrHandle_t handle, void* dst, const void* src,
                                          size_t bytes) {
  const char* fn = "tsrMemcpyHostToDevice";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (bytes == 0) return TSR_STATUS_SUCCESS;
    if (tsrStatus_t s = check_not_null(fn, "dst", dst)) return s;
    if (tsrStatus_t s = check_not_null(fn, "src", src)) return s;
    tsrpStatus_t s = handle->device->copy_host_to_device(handle->device_context(), dst, src, bytes);
    if (s != TSRP_STATUS_SUCCESS)
      return device_failure(fn, s, "copying " + std::to_string(bytes) + " bytes to the device");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrMemcpyDeviceToHost(tsrHandle_t handle, void* dst, const void* src,
                                          size_t bytes) {
  const char* fn = "tsrMemcpyDeviceToHost";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    if (bytes == 0) return TSR_STATUS_SUCCESS;
    if (tsrStatus_t s = check_not_null(fn, "dst", dst)) return s;
    if (tsrStatus_t s = check_not_null(fn, "src", src)) return s;
    tsrpStatus_t s = handle->device->copy_device_to_host(handle->device_context(), dst, src, bytes);
    if (s != TSRP_STATUS_SUCCESS)
      return device_failure(fn, s, "copying " + std::to_string(bytes) + " bytes to the host");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSynchronize(tsrHandle_t handle) {
  const char* fn = "tsrSynchronize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    auto handle_lock = lock_handle(*handle);
    tsrpStatus_t s = handle->device->synchronize(handle->device_context());
    if (s != TSRP_STATUS_SUCCESS) return device_failure(fn, s, "synchronizing the stream");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrCreateEvent(tsrHandle_t handle, tsrEvent_t* event) {
  const char* fn = "tsrCreateEvent";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_not_null(fn, "event", event)) return s;
    auto created = std::make_unique<tsrEventStruct>();
    created->handle = handle;
    tsrpStatus_t s = handle->device->event_create(handle->device_context(), &created->device_event);
    if (s != TSRP_STATUS_SUCCESS) return device_failure(fn, s, "creating an event");
    *event = created.release();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyEvent(tsrEvent_t event) {
  const char* fn = "tsrDestroyEvent";
  return guarded(fn, [&] {
    if (!event) return TSR_STATUS_SUCCESS;
    std::unique_ptr<tsrEventStruct> owned(event);
    owned->handle->device->event_destroy(owned->handle->device_context(), owned->device_event);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrRecordEvent(tsrEvent_t event) {
  const char* fn = "tsrRecordEvent";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "event", event)) return s;
    tsrContext& h = *event->handle;
    tsrpStatus_t s = h.device->event_record(h.device_context(), event->device_event);
    if (s != TSRP_STATUS_SUCCESS) return device_failure(fn, s, "recording an event");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetEventElapsedTime(tsrEvent_t start, tsrEvent_t end, float* milliseconds) {
  const char* fn = "tsrGetEventElapsedTime";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "start", start)) return s;
    if (tsrStatus_t s = check_not_null(fn, "end", end)) return s;
    if (tsrStatus_t s = check_not_null(fn, "milliseconds", milliseconds)) return s;
    // Events of two devices (or two streams) share no clock.
    if (start->handle != end->handle)
      return fail(TSR_STATUS_BAD_PARAM,
                  std::string(fn) + ": start and end were created with different handles");
    tsrContext& h = *start->handle;
    tsrpStatus_t s = h.device->event_elapsed_ms(h.device_context(), start->device_event,
                                                end->device_event, milliseconds);
    if (s != TSRP_STATUS_SUCCESS)
      return device_failure(fn, s, "reading the time between two events");
    return TSR_STATUS_SUCCESS;
  });
}

}  // extern "C"
