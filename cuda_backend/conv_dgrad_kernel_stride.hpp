// Backward data when the filter extent equals the stride in every spatial dim, with no padding
// before and no dilation: the transposed convolutions ("up-convolutions") of U-Nets and decoders,
// 2x2 stride 2 in 2-D, 2x2x2 stride 2 in 3-D. There every dx element receives exactly one tap of
// at most one output:
//   dx[n, d, c] = sum_k dy[n, d / s, k] * w[k, d % s, c]   (per spatial dim; 0 where d / s >= P),
// so the whole operation is one GEMM, Z = dy (M x K, M = N * P...) times w seen as a K x (T * C)
// matrix (T = the filter's taps; packed KRSC w is that matrix row by row), and a scatter that puts
// Z's element (m, t * C + c) at dx's (n, P-index * s + t-index, c), blending alpha and beta once.
// Why: these problems ran on the tiled direct kernel at 0.06-0.16x cuDNN's speed (3-D U-Net, H200,
// 2026-12-03). Any element type the GEMM engine takes; packed channels-last dx, w and dy; 1 to 3
// spatial dims; one group, cross-correlation; padding after any (taps past dx are dropped).
// Host side only (tests/cuda/dgrad_kernel_stride_host_test.cpp checks it against the reference);
// conv_dgrad_kernel_stride.cu is the kernel.
#pragma once

#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

// The index arithmetic runs in the kernels and in the host test alike.
#if defined(__CUDACC__)
#define TESSERA_KERNEL_STRIDE_HD __host__ __device__
#else
#define TESSERA_KERNEL_STRIDE_HD
#endif

namespace tessera::cuda::kernel_stride {

// The problem with its spatial dims padded to three (leading dims of extent 1).
struct plan {
  int64_t n = 0, c = 0, k = 0;
  int64_t dx[3] = {1, 1, 1};    // dx's spatial extents (the forward's x)
  int64_t dy[3] = {1, 1, 1};    // dy's (the forward's y): P
  int64_t taps[3] = {1, 1, 1};  // the filter's extents, equal to the strides
  int64_t m = 0;                // GEMM rows: N * P0 * P1 * P2
  int64_t t = 0;                // taps: R0 * R1 * R2
  TESSERA_KERNEL_STRIDE_HD int64_t z_columns() const { return t * c; }
  TESSERA_KERNEL_STRIDE_HD int64_t dx_elements() const { return n * dx[0] * dx[1] * dx[2] * c; }
};

inline plan plan_of(const tsrpConvolutionProblem& p) {
  plan q;
  q.n = p.x.dims[0];
  q.c = p.x.dims[1];
  q.k = p.w.dims[0];
  const int off = 3 - p.spatial_dims;
  for (int i = 0; i < p.spatial_dims; ++i) {
    q.dx[off + i] = p.x.dims[2 + i];
    q.dy[off + i] = p.y.dims[2 + i];
    q.taps[off + i] = p.w.dims[2 + i];
  }
  q.m = q.n * q.dy[0] * q.dy[1] * q.dy[2];
  q.t = q.taps[0] * q.taps[1] * q.taps[2];
  return q;
}

// Where dx element `index` (packed channels-last, C fastest) takes its value from: Z's flat
// index, or -1 when no output's window reaches it (its value is then 0 before the blend). The
// inverse of dx_pixel below, element by element; the kernel uses it for the unreached elements.
TESSERA_KERNEL_STRIDE_HD inline int64_t z_source(const plan& q, int64_t index) {
  const int64_t c = index % q.c;
  int64_t pixel = index / q.c;
  int64_t out = 0, tap = 0, out_scale = 1, tap_scale = 1;
  for (int i = 2; i >= 0; --i) {  // the last spatial dim is the fastest
    const int64_t d = pixel % q.dx[i];
    pixel /= q.dx[i];
    const int64_t o = d / q.taps[i];
    if (o >= q.dy[i]) return -1;
    out += o * out_scale;
    tap += (d % q.taps[i]) * tap_scale;
    out_scale *= q.dy[i];
    tap_scale *= q.taps[i];
  }
  const int64_t m = pixel * out_scale + out;  // pixel is now n
  return m * q.z_columns() + tap * q.c + c;
}

// The scatter's view (what the kernel runs): row r of Z is dy pixel m = r / T and tap r % T; the
// dx pixel (flat index over N and dx's spatial dims, channels apart) it lands on, or -1 when the
// tap falls past dx (padding after). Each dx pixel is some row's at most once.
TESSERA_KERNEL_STRIDE_HD inline int64_t dx_pixel(const plan& q, int64_t row) {
  int64_t m = row / q.t, tap = row % q.t;
  int64_t pixel = 0, scale = 1;
  for (int i = 2; i >= 0; --i) {
    const int64_t o = m % q.dy[i], t = tap % q.taps[i];
    m /= q.dy[i];
    tap /= q.taps[i];
    const int64_t d = o * q.taps[i] + t;
    if (d >= q.dx[i]) return -1;
    pixel += d * scale;
    scale *= q.dx[i];
  }
  return m * scale + pixel;  // m is now n
}

// Whether some dx element lies past every window (an extent beyond P * stride): those take 0
// before the blend, in a pass of their own (z_source says which).
inline bool has_unreached(const plan& q) {
  for (int i = 0; i < 3; ++i)
    if (q.dx[i] > q.dy[i] * q.taps[i]) return true;
  return false;
}

// The unreached elements as at most three disjoint boxes of dx pixels (all N and all channels):
// box i holds the pixels past the windows' reach R_i = P_i * stride_i in dim i and within it in
// the dims before i, so that the pass over them decodes only their own elements.
struct box {
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // [lo, hi) in each spatial dim of dx
  TESSERA_KERNEL_STRIDE_HD int64_t pixels() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

struct unreached_boxes {
  box boxes[3];
  int count = 0;
};

inline unreached_boxes unreached_of(const plan& q) {
  unreached_boxes u;
  for (int i = 0; i < 3; ++i) {
    const int64_t reach = q.dy[i] * q.taps[i];
    if (q.dx[i] <= reach) continue;
    box b;
    for (int j = 0; j < 3; ++j) {
      b.lo[j] = j == i ? reach : 0;
      b.hi[j] = j < i ? std::min(q.dx[j], q.dy[j] * q.taps[j]) : q.dx[j];
    }
    u.boxes[u.count++] = b;
  }
  return u;
}

// dx's flat index (packed channels-last) of element `index` of box b over all N and channels.
TESSERA_KERNEL_STRIDE_HD inline int64_t box_element(const plan& q, const box& b, int64_t index) {
  const int64_t c = index % q.c;
  int64_t rest = index / q.c;
  int64_t pixel = 0, scale = 1;
  for (int i = 2; i >= 0; --i) {
    const int64_t extent = b.hi[i] - b.lo[i];
    pixel += (b.lo[i] + rest % extent) * scale;
    rest /= extent;
    scale *= q.dx[i];
  }
  return (rest * scale + pixel) * q.c + c;  // rest is now n
}

// Empty when the problem is one of these (packing, types and what the GEMM engine takes are the
// caller's to add); else why not, naming the argument.
inline std::string support(const tsrpConvolutionProblem& p) {
  if (p.mode != TSRP_CROSS_CORRELATION) {
    return "flipped-filter (convolution) mode not supported: cross-correlation only";
  }
  if (p.groups != 1) return "groups " + std::to_string(p.groups) + " not supported (dense convolution only)";
  if (p.spatial_dims < 1 || p.spatial_dims > 3) {
    return "spatial_dims " + std::to_string(p.spatial_dims) + " not supported (1 to 3)";
  }
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "dx"}, {&p.w, "w"}, {&p.y, "dy"}};
  for (const auto& [t, name] : tensors) {
    if (t->ndims != p.spatial_dims + 2) {
      return std::string(name) + " has " + std::to_string(t->ndims) + " dims, expected spatial_dims + 2";
    }
    for (int d = 0; d < t->ndims; ++d)
      if (t->dims[d] < 0) return std::string(name) + " has a negative dim";
  }
  for (int i = 0; i < p.spatial_dims; ++i) {
    const std::string dim = " in spatial dim " + std::to_string(i);
    if (p.stride[i] < 1) return "stride " + std::to_string(p.stride[i]) + dim + " (at least 1)";
    if (p.w.dims[2 + i] != p.stride[i]) {
      return "filter extent " + std::to_string(p.w.dims[2 + i]) + " differs from stride " +
             std::to_string(p.stride[i]) + dim + " (this kernel is for filters that tile dx exactly)";
    }
    if (p.pad_before[i] != 0) return "padding before" + dim + " (this kernel takes none)";
    if (p.pad_after[i] < 0) return "negative padding after" + dim;
    if (p.dilation[i] != 1) return "dilation " + std::to_string(p.dilation[i]) + dim + " (this kernel takes 1)";
  }
  if (p.w.dims[1] != p.x.dims[1]) return "w's channels differ from dx's";
  if (!is_packed_channels_last(p.x)) return "dx is not packed channels-last (NHWC / NDHWC)";
  if (!is_packed_channels_last(p.w)) return "w is not packed channels-last (KRSC / KTRSC)";
  if (!is_packed_channels_last(p.y)) return "dy is not packed channels-last (NPQK / NOPQK)";
  const plan q = plan_of(p);
  constexpr int64_t int_max = std::numeric_limits<int32_t>::max();
  if (q.m > int_max) return "dy has " + std::to_string(q.m) + " pixels (N*P...), more than the GEMM's int32 M";
  if (q.z_columns() > int_max) return "w has more than 2^31 taps times channels (the GEMM's N)";
  return {};
}

}  // namespace tessera::cuda::kernel_stride
