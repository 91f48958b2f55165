#include "cuda_context.hpp"

#include "cuda_device.hpp"
#include "cuda_errors.hpp"
#include "current_device_guard.hpp"

#include <algorithm>
#include <string>

namespace tessera::cuda {

std::unique_ptr<cuda_context> cuda_context::create(int32_t device_ordinal) {
  std::string why_none;
  const int count = visible_device_count(&why_none);
  if (device_ordinal < 0 || device_ordinal >= count) {
    std::string message = "CUDA device ordinal " + std::to_string(device_ordinal) +
                          " out of range: " + std::to_string(count) + " devices present";
    if (count == 0) {
      message += " (" + why_none + ")";
      throw status_error(TSRP_STATUS_DEVICE_ERROR, message);
    }
    throw status_error(TSRP_STATUS_BAD_PARAM, message);
  }
  int sm_count = 0, cc_major = 0, cc_minor = 0;
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device_ordinal),
             "cudaDeviceGetAttribute(multiprocessor count)");
  check_cuda(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device_ordinal),
             "cudaDeviceGetAttribute(compute capability major)");
  check_cuda(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device_ordinal),
             "cudaDeviceGetAttribute(compute capability minor)");
  {
    // Initialise the primary context now, so a broken device fails here with a clear message
    // rather than inside the first kernel call.
    current_device_guard on_device(device_ordinal);
    check_cuda(cudaFree(nullptr), "initialising the CUDA context");
  }
  return std::unique_ptr<cuda_context>(new cuda_context(device_ordinal, sm_count, cc_major, cc_minor));
}

unsigned int cuda_context::grid_stride_blocks(int64_t work_items, int threads_per_block) const noexcept {
  // 16 blocks per SM is well past full occupancy for 256-thread blocks, so the loop never leaves
  // SMs idle, while the grid stays far below the 2^31-1 limit of gridDim.x.
  const int64_t cap = static_cast<int64_t>(std::max(sm_count_, 1)) * 16;
  const int64_t needed = (work_items + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned int>(std::max<int64_t>(1, std::min(cap, needed)));
}

unsigned int cuda_context::share_blocks(int64_t items, int64_t per_block) noexcept {
  const int64_t blocks = (items + std::max<int64_t>(per_block, 1) - 1) / std::max<int64_t>(per_block, 1);
  return static_cast<unsigned int>(std::max<int64_t>(1, std::min<int64_t>(blocks, 0x7fffffff)));
}

cuda_context& context_from_handle(void* context) {
  if (context == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, "CUDA context is null");
  return *static_cast<cuda_context*>(context);
}

}  // namespace tessera::cuda
