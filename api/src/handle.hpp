// The handle: one device, one stream, per-plugin contexts, the selection settings.
//
// Threads: a handle may be shared (tessera.h, "Threads"). Every call that reads or changes its
// state, or runs a kernel on its plugin contexts (which are not thread-safe: a oneDNN stream, a
// primitive cache, a CUDA stream), holds `mutex` for its whole duration, so calls on one handle
// run one at a time; lock order is the handle's mutex, then the registry's lock. math_mode is
// atomic because problems are built before the lock is taken.
#pragma once

#include "registry.hpp"
#include "selection_cache.hpp"

#include <tessera/tessera.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct tsrContext {
  tsrDeviceKind_t kind = TSR_DEVICE_CPU;
  int ordinal = 0;
  void* stream = nullptr;
  std::atomic<tsrMathMode_t> math_mode{TSR_MATH_DEFAULT};
  std::mutex mutex;  // held by every call that uses the state below
  std::vector<size_t> preferred_plugins;  // plugin indices, in the order asked for
  bool preferred_only = false;            // tsrSetBackendsExclusive
  // The kernel the last operation call ran (tsrGetLastKernelName): -1 before any.
  int64_t last_kernel = -1;
  bool last_kernel_on_host = false;  // through the host fallback

  // The device plugin's interface and its index (-1: the registry's host interface).
  const tsrpDeviceInterface* device = nullptr;
  int device_plugin = -1;

  // Per plugin index: that plugin's context for this handle (nullptr if it has none), and a
  // non-empty reason when this handle cannot use the plugin at all.
  std::vector<void*> contexts;
  std::vector<std::string> unavailable;

  // Workspace owned by the handle, for calls that pass none (activations have no workspace
  // argument; a convolution given NULL/0 uses it too). It grows to the largest request up to
  // workspace_limit and is freed with the handle. Growing allocates: a caller that captures calls
  // into a CUDA graph passes its own workspace, or warms the pool up before capturing.
  // What the selection policy chose for problems seen before (cleared when the preference or
  // the workspace limit changes).
  tessera::api::selection_cache selections;

  void* workspace_pool = nullptr;
  size_t workspace_pool_size = 0;
  size_t workspace_limit = size_t(1) << 30;

  // Selection policy (tsrSetTuningMode, tsrSetDeterministic, tsrSetFallback, tsrSetCrossCheck);
  // defaults from the environment at creation.
  tsrTuningMode_t tuning_mode = TSR_TUNING_DATABASE;
  bool deterministic_only = false;
  bool fallback_allowed = false;
  bool check_pointers = false;
  // tsrSetConstantWeights: 0 off, else the current promise; atomic like math_mode (problems are
  // built before the lock is taken).
  std::atomic<uint32_t> weights_generation{0};
  tsrCrossCheckMode_t crosscheck = TSR_CROSSCHECK_OFF;
  tsrCrossCheckCounts_t crosscheck_counts{sizeof(tsrCrossCheckCounts_t), 0, 0, 0};
  std::string fingerprint;  // the device's, for the tuning database (computed on first use)
  // A CPU handle made on first use, for fallback and cross-check runs on the host backend.
  std::unique_ptr<tsrContext> host;

  void* device_context() const {
    return device_plugin >= 0 ? contexts[static_cast<size_t>(device_plugin)] : nullptr;
  }
};

// A timing event of the handle's device (tsrCreateEvent): the device interface's event and the
// handle whose stream and device it belongs to.
struct tsrEventStruct {
  tsrContext* handle = nullptr;
  void* device_event = nullptr;
};

namespace tessera::api {

// Creates contexts for plugins loaded since the handle was made (tsrLoadPlugin). The caller holds
// the registry's read lock.
void ensure_plugin_contexts(tsrContext& handle, const registry::registry& reg);

tsrStatus_t check_handle(const char* function, tsrHandle_t handle);

// Holds the handle for the rest of the calling scope (calls on one handle are serialized).
[[nodiscard]] inline std::unique_lock<std::mutex> lock_handle(tsrContext& handle) {
  return std::unique_lock<std::mutex>(handle.mutex);
}

// A handle on device `ordinal` of `kind` with the environment's defaults (tsrCreate's work); the
// caller holds the registry's read lock. destroy_handle frees it, its pool and its contexts.
tsrStatus_t create_handle(const char* function, const registry::registry& reg, tsrDeviceKind_t kind,
                          int ordinal, std::unique_ptr<tsrContext>* out);
void destroy_handle(tsrContext* handle, const registry::registry& reg);

// Makes the handle's workspace pool at least `bytes` large and returns it.
tsrStatus_t acquire_pool_workspace(tsrContext& handle, const char* function, size_t bytes,
                                   void** workspace);
void release_pool_workspace(tsrContext& handle);

// Plugin statuses share tsrStatus_t's values; anything unknown is an execution failure.
tsrStatus_t from_plugin_status(tsrpStatus_t status);

const char* device_kind_name(int kind);

}  // namespace tessera::api
