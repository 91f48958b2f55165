// Per-handle state: which GPU, which stream, and the device facts kernels size their grids by.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

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

  // Blocks for a grid-stride loop that should run as one wave: `per_sm` blocks (what one SM holds
  // at once, resident_blocks_per_sm) on every SM, never more than `work_blocks` (never zero).
  // Streaming kernels use it so that no late block runs alone at the end.
  unsigned int resident_grid(int64_t work_blocks, int per_sm) const noexcept;

 private:
  cuda_context(int32_t device_ordinal, int sm_count, int cc_major, int cc_minor) noexcept
      : device_ordinal_(device_ordinal), sm_count_(sm_count), cc_major_(cc_major), cc_minor_(cc_minor) {}

  int32_t device_ordinal_;
  cudaStream_t stream_ = nullptr;
  int sm_count_;
  int cc_major_;
  int cc_minor_;
};

// Blocks of `kernel` of `threads` threads (and `shared_bytes` of dynamic shared memory) that one
// SM runs at once, as the runtime computes it from the compiled kernel's registers and shared
// memory; 1 when it cannot tell. No stream work, so it may be called during graph capture.
template <typename Kernel>
int query_resident_blocks(Kernel kernel, int threads, size_t shared_bytes) noexcept {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel), threads,
                                                    shared_bytes) != cudaSuccess ||
      blocks < 1) {
    (void)cudaGetLastError();  // no launch failed: keep the error out of the caller's launch check
    blocks = 1;
  }
  return blocks;
}

// The same for one kernel and block size, asked once per process: it depends only on the
// compiled kernel (every device this plugin runs on is sm_90 or newer).
template <auto Kernel, int Threads, size_t SharedBytes = 0>
int resident_blocks_per_sm() noexcept {
  static const int blocks = query_resident_blocks(Kernel, Threads, SharedBytes);
  return blocks;
}

// The context pointer the host passes back; throws BAD_PARAM for null.
cuda_context& context_from_handle(void* context);

}  // namespace tessera::cuda
