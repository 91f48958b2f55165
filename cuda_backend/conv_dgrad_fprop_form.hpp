// Backward data as a forward convolution (conv_igemm_dgrad_fprop_form.cuh): host-side arithmetic
// only, so that tests/cuda/dgrad_fprop_form_host_test.cpp can check it against the naive
// reference on any machine. With unit strides,
//   dx[n, h, w, c] = sum_{k, r', s'} dy[n, h - pb' + r' d, w - pb' + s' d, k] * wt[c, r', s', k]
//   wt[c, r', s', k] = w[k, R-1-r', S-1-s', c],   pb' = (R-1) d - pad_before,  pa' = (R-1) d - pad_after
// (P + pb' + pa' - (R-1) d = H, so the forward's output has dx's extent).
#pragma once

#include "conv_igemm_geometry.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::igemm {

// Empty when the forward form can express the dgrad problem `g` (dx: n h w c, dy: n p q k);
// otherwise why not.
inline std::string dgrad_fprop_form_reason(const nhwc_geometry& g) {
  const int filter[2] = {g.r, g.s};
  static const char* dim_names[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    if (g.stride[i] != 1) {
      return "strided backward data (stride " + std::to_string(g.stride[i]) + " in " + dim_names[i] +
             ") not supported: the forward form needs unit strides";
    }
    const int reach = (filter[i] - 1) * g.dilation[i];
    if (g.pad_before[i] > reach || g.pad_after[i] > reach) {
      return "padding beyond (filter - 1) * dilation = " + std::to_string(reach) + " in " + dim_names[i] +
             " not supported: the forward form would need negative padding";
    }
  }
  return {};
}

// The forward convolution that computes the dgrad problem `g`: x = dy, w = wt, y = dx.
inline nhwc_geometry dgrad_as_forward(const nhwc_geometry& g) {
  nhwc_geometry f = g;
  f.h = g.p;
  f.w = g.q;
  f.c = g.k;
  f.k = g.c;
  f.p = g.h;
  f.q = g.w;
  const int filter[2] = {g.r, g.s};
  for (int i = 0; i < 2; ++i) {
    f.pad_before[i] = (filter[i] - 1) * g.dilation[i] - g.pad_before[i];
    f.pad_after[i] = (filter[i] - 1) * g.dilation[i] - g.pad_after[i];
    f.stride[i] = 1;
  }
  return f;
}

// Where w[k, r, s, c] (packed KRSC) goes in wt (packed C x R x S x K): wt[c, R-1-r, S-1-s, k].
__host__ __device__ inline int64_t swapped_filter_offset(int k, int r, int s, int c, int k_count, int r_count,
                                                          int s_count) {
  const int64_t flipped_tap = int64_t{r_count - 1 - r} * s_count + (s_count - 1 - s);
  return (int64_t{c} * r_count * s_count + flipped_tap) * k_count + k;
}

}  // namespace tessera::cuda::igemm
