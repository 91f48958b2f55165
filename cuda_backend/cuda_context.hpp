// Per-handle state: which GPU, which stream, and the device facts kernels size their grids by.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace tessera::cuda {

class cuda_context {
 public:
  // Throws status_error: BAD_PARAM for an ordinal out of range, DEVICE_ERROR when there is no
  // usable device at all (no driver, no GPU) or the device cannot be initialised.
  static std::unique_ptr<cuda_context> create(int32_t device_ordinal);

  int32_t device_ordinal() const noexcept { return device_ordinal_; }
  // nullptr is the legacy default stream of the device, the stream cuDNN also starts with.
  cudaStream_t stream() const noexcept { return stream_; }
  // The stream belongs to the caller: the context never creates or destroys one.
  void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }

  int sm_count() const noexcept { return sm_count_; }
  int compute_capability_major() const noexcept { return cc_major_; }
  int compute_capability_minor() const noexcept { return cc_minor_; }
  // The fatbinary holds sm_90a code and compute_90 PTX, so nothing older than 9.0 can run it.
  bool can_run_plugin_code() const noexcept { return cc_major_ >= 9; }

  // Blocks for a grid-stride loop over `work_items` threads' worth of work: enough blocks to fill
  // every SM several times over, never more than the work needs (and never zero).
  unsigned int grid_stride_blocks(int64_t work_items, int threads_per_block) const noexcept;

  // Blocks for a kernel whose blocks each take a contiguous share of `per_block` items (the last
  // one fewer): many short blocks, which the hardware keeps balancing across the SMs to the end,
  // where a few waves of long grid-stride blocks leave the last partial wave running alone.
  // Capped at the grid limit (the kernels then take larger shares). Never zero.
  static unsigned int share_blocks(int64_t items, int64_t per_block) noexcept;

  // How many blocks of `kernel` (at `threads` a block and `shared_bytes` of dynamic shared memory)
  // this context's device holds resident at once, as `query()` finds it (an occupancy query after
  // raising the kernel's shared-memory limit: rnn_persistent_launch.cu), asked once per context
  // and kernel shape, then remembered: the driver's answers cost microseconds a call. Per context,
  // not per process: a kernel's attributes belong to the driver context they were set in.
  // Thread-safe; a query that throws remembers nothing.
  template <typename Query>
  int64_t resident_blocks(const void* kernel, int threads, size_t shared_bytes, Query&& query) const {
    const residency_key key{kernel, threads, shared_bytes};
    std::lock_guard<std::mutex> lock(residency_mutex_);
    auto found = residency_.find(key);
    if (found == residency_.end()) found = residency_.emplace(key, query()).first;
    return found->second;
  }

 private:
  struct residency_key {
    const void* kernel;
    int threads;
    size_t shared_bytes;
    bool operator<(const residency_key& o) const {
      return std::tie(kernel, threads, shared_bytes) < std::tie(o.kernel, o.threads, o.shared_bytes);
    }
  };

  cuda_context(int32_t device_ordinal, int sm_count, int cc_major, int cc_minor) noexcept
      : device_ordinal_(device_ordinal), sm_count_(sm_count), cc_major_(cc_major), cc_minor_(cc_minor) {}

  int32_t device_ordinal_;
  cudaStream_t stream_ = nullptr;
  int sm_count_;
  int cc_major_;
  int cc_minor_;
  mutable std::mutex residency_mutex_;
  mutable std::map<residency_key, int64_t> residency_;
};

// The context pointer the host passes back; throws BAD_PARAM for null.
cuda_context& context_from_handle(void* context);

}  // namespace tessera::cuda
