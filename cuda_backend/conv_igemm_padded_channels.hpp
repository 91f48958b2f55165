// Backward convolutions whose C is not a multiple of 8 (3-channel stems: RGB images) on the tensor
// cores, by zero channels. TMA needs 16-byte channel rows, so the implicit-GEMM kernels take C in
// multiples of 8; with C rounded up and the extra channels zero, every product they add is one of
// the real convolution's or zero:
//   - backward data: w is staged with zero channels (K x R x S x C' from K x R x S x C), the unit-
//     stride or strided dgrad writes dx' with C' channels into the workspace (alpha 1, beta 0), and
//     dx = alpha * dx'[..., :C] + beta * dx. Two roundings when alpha is not 1: dx' is stored in
//     the element type before the blend.
//   - backward filter: x is staged with zero channels, the split-K wgrad reduces into fp32 partial
//     sums of C' channels, and its reduction keeps the first C (one rounding, as unpadded).
// Only x or w is staged, and dx' (backward data); dy is read as given. The forward's small-C path
// is the space-to-depth layout (conv_implicit_gemm_space_to_depth.cu), which also folds strides.
// This file: the padded problem (host only, tested by tests/cuda/padded_channels_host_test.cpp);
// conv_igemm_padded_channels.cuh: the staging kernels; conv_igemm_dgrad_padded.cuh and
// conv_igemm_wgrad_padded.cuh: the two directions.
#pragma once

#include "conv_igemm_geometry.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::igemm {

inline int padded_channel_count(int c) { return (c + 7) / 8 * 8; }

// Empty when the problem, with C rounded up to a multiple of 8 in x and w, is one the tensor-core
// kernels take (common_support on packed channels-last copies of x's and w's descriptors), and
// the caller's x and w are packed channels-last; else why not, naming the argument.
inline std::string padded_channels_support(const conv_view& v, int32_t element) {
  // The mode first, as common_support does, so that a flipped problem is declined for its mode.
  if (v.mode != TSRP_CROSS_CORRELATION) {
    return "flipped-filter (convolution) mode not supported: cross-correlation only";
  }
  if (v.x->ndims < 3 || v.w->ndims < 3) return "x and w need a channel dim and at least one spatial dim";
  // Before the rounding below, which would make a mismatch (x's C = 5, w's C = 3) look like a match
  // and the staging read past w.
  if (v.w->dims[1] != v.x->dims[1]) return "w's channels (dim 1) differ from x's: one group only";
  if (v.x->dims[1] % 8 == 0) return "C is a multiple of 8: the kernels without channel padding take it";
  if (v.x->dims[1] < 1 || v.x->dims[1] > (int64_t{1} << 20)) return "x's channels are outside what padding serves";
  if (!is_packed_channels_last(*v.x)) return "x is not packed channels-last (NHWC)";
  if (!is_packed_channels_last(*v.w)) return "w is not packed channels-last (KRSC)";
  tsrpTensor x = *v.x, w = *v.w;
  for (tsrpTensor* t : {&x, &w}) {
    t->dims[1] = padded_channel_count(static_cast<int>(t->dims[1]));
    int64_t stride = 1;  // packed channels-last: C, then the last spatial dim outward, then N
    t->strides[1] = stride;
    stride *= t->dims[1];
    for (int d = t->ndims - 1; d >= 2; --d) {
      t->strides[d] = stride;
      stride *= t->dims[d];
    }
    t->strides[0] = stride;
  }
  conv_view padded = v;
  padded.x = &x;
  padded.w = &w;
  return common_support(padded, element);
}

// The problem the kernels run: C rounded up. Call after padded_channels_support returned empty.
inline nhwc_geometry padded_geometry(const conv_view& v) {
  nhwc_geometry g = make_geometry(v);
  g.c = padded_channel_count(g.c);
  return g;
}

}  // namespace tessera::cuda::igemm
