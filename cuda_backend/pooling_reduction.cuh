// The arithmetic of one pooling window, shared by every pooling kernel (pooling_kernels.cu) and
// the tiled NHWC phases (pooling_tiles.cuh): what a window reduces to (max with either NaN rule,
// the two averages, or backward's argmax), and the alpha/beta blend of a result into its output.
// Host-callable, so that the tiled phases can be run on a machine without a GPU.
#pragma once

#include "element_types.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::cuda::pooling {

enum class pool_op {
  max_skip_nan,       // max; a NaN is ignored unless the whole window is NaN
  max_propagate_nan,  // max; any NaN in the window gives NaN
  avg_include_pad,    // sum / window size
  avg_exclude_pad,    // sum / taps inside the input
  argmax              // the first maximal tap (backward); no NaN ever wins
};

__host__ __device__ __forceinline__ float pool_quiet_nan() {
#ifdef __CUDA_ARCH__
  return __int_as_float(0x7fc00000);
#else
  return std::numeric_limits<float>::quiet_NaN();
#endif
}

// The reduction of one channel's window.
template <pool_op Op>
struct lane_reduction {
  float value;   // the max or the sum so far
  int32_t tap;   // argmax: the winning tap, -1 while none
  bool saw_nan;  // max_propagate_nan

  __host__ __device__ __forceinline__ void reset() {
    // fmaxf(NaN, v) is v, so a NaN start lets fmaxf alone skip NaN inputs: the result is NaN only
    // when every tap was NaN, which is the reference's NOT_PROPAGATE rule.
    if constexpr (Op == pool_op::argmax) {
      value = -INFINITY;
    } else if constexpr (Op == pool_op::max_skip_nan || Op == pool_op::max_propagate_nan) {
      value = pool_quiet_nan();
    } else {
      value = 0.0f;
    }
    tap = -1;
    saw_nan = false;
  }

  __host__ __device__ __forceinline__ void take(float v, int32_t at) {
    if constexpr (Op == pool_op::max_skip_nan) {
      value = fmaxf(value, v);
    } else if constexpr (Op == pool_op::max_propagate_nan) {
      value = fmaxf(value, v);
      saw_nan |= v != v;
    } else if constexpr (Op == pool_op::argmax) {
      // Strictly greater replaces, so ties stay with the first tap; NaN fails both tests. The
      // second test takes the first non-NaN tap even when it is -inf.
      if (v > value || (tap < 0 && v == v)) {
        value = v;
        tap = at;
      }
    } else {
      value += v;
    }
  }

  __host__ __device__ __forceinline__ float result(int32_t taps_inside, int32_t window_size) const {
    if constexpr (Op == pool_op::max_propagate_nan) return saw_nan ? pool_quiet_nan() : value;
    if constexpr (Op == pool_op::avg_include_pad) return value / static_cast<float>(window_size);
    if constexpr (Op == pool_op::avg_exclude_pad) return value / static_cast<float>(taps_inside);
    return value;
  }
};

// out = alpha * r + beta * out, in fp32; `old` is only meaningful when beta != 0.
template <typename T>
__host__ __device__ __forceinline__ T blend(float r, float alpha, float beta, T old) {
  float v = alpha * r;
  if (beta != 0.0f) v = fmaf(beta, to_float(old), v);
  return from_float<T>(v);
}

}  // namespace tessera::cuda::pooling
