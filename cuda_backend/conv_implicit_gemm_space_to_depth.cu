// Stem convolutions on the tensor cores: few input channels (ResNet's 7x7/2 over RGB, C = 3)
// through space-to-depth.
//   "conv_fwd_igemm_sm90_s2d_128x64x16_<type>", "conv_bias_act_fwd_igemm_sm90_s2d_128x64x16_<type>"
//
// The as-given implicit GEMM needs C to be a multiple of 8 and spends a whole 64-channel k-tile
// on every filter tap, so C = 3 would waste 95 % of its MMAs; the direct kernel that otherwise
// runs these layers is ~70x slower than cuDNN. Folding each stride_h x stride_w block of (zero-
// padded) input pixels into channels turns the strided R x S convolution over C channels into a
// stride-1, unpadded ceil(R/sh) x ceil(S/sw) convolution over C*sh*sw channels (rounded up to 8),
// with the filter folded the same way (taps past R or S become zeros):
//   x'[n, i, j, (a, b, c)] = x[n, sh*i + a - pad_h, sw*j + b - pad_w, c]   (0 outside x)
//   w'[k, r, s, (a, b, c)] = w[k, sh*r + a, sw*s + b, c]                   (0 past R, S)
//   y[n, p, q, k] = sum over r, s, (a, b, c) of x'[n, p + r, q + s, .] * w'[k, r, s, .]
// For 7x7/2 over RGB that is a 4x4 convolution over 12 -> 16 channels: 256 MACs per output
// against 147 useful ones, in 16-channel k-tiles that waste nothing. The folded x' and w' live in
// the workspace (for ResNet-50 at N = 256: 108 MB); the gather is one pass over x.
//
// The products are the same as the direct convolution's, summed in fp32 in another order: the
// same tolerance as the other implicit-GEMM kernels. Deterministic.
#include "conv_igemm_fprop_kernels.cuh"
#include "conv_igemm_kernels.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessera::cuda {
namespace igemm {
namespace {

// Beyond this many folded channels the stem trick stops paying (the 16-channel k-tiles are then
// the slow part) and larger C is what the as-given kernels are for.
constexpr int64_t k_max_folded_channels = 64;

int64_t round_up_to_8(int64_t v) { return (v + 7) / 8 * 8; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One 8-channel (16-byte) chunk of the folded tensor per thread. `src` is a packed NHWC tensor
// of 2-byte elements (fp16 and bf16 alike: only bits move, and zero is all-zero bits in both);
// `dst` is packed NHWC with dst_h x dst_w pixels of padded_c channels.
__global__ void gather_space_to_depth(const uint16_t* __restrict__ src, int src_h, int src_w, int c, int pad_h,
                                      int pad_w, int block_h, int block_w, uint16_t* __restrict__ dst, int dst_h,
                                      int dst_w, int padded_c, int64_t chunk_count) {
  const int chunks_per_pixel = padded_c / 8;
  const int folded_c = c * block_h * block_w;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t idx = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; idx < chunk_count; idx += stride) {
    const int64_t pixel = idx / chunks_per_pixel;
    const int chunk = static_cast<int>(idx - pixel * chunks_per_pixel);
    const int j = static_cast<int>(pixel % dst_w);
    const int64_t rest = pixel / dst_w;
    const int i = static_cast<int>(rest % dst_h);
    const int64_t n = rest / dst_h;
    alignas(16) uint16_t out[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int q = chunk * 8 + e;
      uint16_t v = 0;
      if (q < folded_c) {
        const int a = q / (block_w * c);
        const int b = (q / c) % block_w;
        const int ch = q % c;
        const int h = i * block_h + a - pad_h;
        const int w = j * block_w + b - pad_w;
        if (h >= 0 && h < src_h && w >= 0 && w < src_w) v = src[((n * src_h + h) * src_w + w) * c + ch];
      }
      out[e] = v;
    }
    *reinterpret_cast<uint4*>(dst + idx * 8) = *reinterpret_cast<const uint4*>(out);
  }
}

void launch_gather(const void* src, int64_t images, int src_h, int src_w, int c, int pad_h, int pad_w, int block_h,
                   int block_w, void* dst, int dst_h, int dst_w, int padded_c, cudaStream_t stream) {
  const int64_t chunks = images * dst_h * dst_w * (padded_c / 8);
  if (chunks == 0) return;
  constexpr int threads = 256;
  // Enough blocks to fill the H200 several times over; the loop strides over the rest.
  const int64_t blocks = std::min<int64_t>(ceil_div(chunks, threads), 132 * 32);
  gather_space_to_depth<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const uint16_t*>(src), src_h, src_w, c, pad_h, pad_w, block_h, block_w,
      static_cast<uint16_t*>(dst), dst_h, dst_w, padded_c, chunks);
}

// The folded problem: its geometry for CUTLASS and its two staged tensors.
struct folded_problem {
  nhwc_geometry original;  // the caller's (C may be any count)
  nhwc_geometry folded;    // stride 1, no padding, C' = round_up(C * sh * sw, 8)
  size_t x_bytes, w_bytes;
};

folded_problem fold(const conv_view& v) {
  folded_problem f;
  f.original = make_geometry(v);
  const nhwc_geometry& g = f.original;
  nhwc_geometry h = g;
  h.c = static_cast<int>(round_up_to_8(int64_t{g.c} * g.stride[0] * g.stride[1]));
  h.r = static_cast<int>(ceil_div(g.r, g.stride[0]));
  h.s = static_cast<int>(ceil_div(g.s, g.stride[1]));
  h.h = g.p + h.r - 1;
  h.w = g.q + h.s - 1;
  for (int i = 0; i < 2; ++i) {
    h.pad_before[i] = h.pad_after[i] = 0;
    h.stride[i] = h.dilation[i] = 1;
  }
  f.folded = h;
  f.x_bytes = static_cast<size_t>(h.n) * h.h * h.w * h.c * 2;
  f.w_bytes = static_cast<size_t>(h.k) * h.r * h.s * h.c * 2;
  return f;
}

// A packed NHWC descriptor with the folded problem's extents, for the generic checks.
tsrpTensor packed_nhwc(int32_t data_type, int64_t n, int64_t c, int64_t h, int64_t w) {
  tsrpTensor t{};
  t.data_type = data_type;
  t.ndims = 4;
  const int64_t dims[4] = {n, c, h, w};
  const int64_t strides[4] = {h * w * c, 1, w * c, c};
  for (int d = 0; d < 4; ++d) {
    t.dims[d] = dims[d];
    t.strides[d] = strides[d];
  }
  return t;
}

struct space_to_depth_layout {
  static constexpr const char* forward_notes =
      "stem convolutions (C not a multiple of 8, C*stride_h*stride_w <= 64) on sm90 tensor cores: x and w folded "
      "by space-to-depth into the workspace, then CUTLASS implicit GEMM (TMA + wgmma), fp32 accumulation, one "
      "rounding of y; packed NHWC x, KRSC w, NPQK y; 2-D; deterministic";
  static constexpr const char* fused_notes =
      "stem convolutions (C not a multiple of 8) folded by space-to-depth, implicit GEMM on sm90 tensor cores with "
      "bias, residual and activation in the fp32 epilogue; packed NHWC x, KRSC w, NPQK y and z; deterministic";

  static std::string support(const conv_view& v, int32_t element) {
    if (v.mode != TSRP_CROSS_CORRELATION) {
      return "flipped-filter (convolution) mode not supported: cross-correlation only";
    }
    if (v.spatial_dims != 2) return std::to_string(v.spatial_dims) + " spatial dims not supported (2-D stems only)";
    const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", v.x}, {"w", v.w}, {"y", v.y}};
    for (const auto& [name, t] : tensors) {
      if (t->data_type != element) {
        return std::string(name) + " data type " + data_type_name(t->data_type) + " not supported: this kernel takes " +
               data_type_name(element) + " x, w and y";
      }
      if (t->ndims != 4) return std::string(name) + " has " + std::to_string(t->ndims) + " dims, expected 4";
      if (!is_packed_channels_last(*t)) return std::string(name) + " is not packed channels-last";
    }
    if (v.groups != 1) return "groups " + std::to_string(v.groups) + " not supported (dense convolution only)";
    const int64_t c = v.x->dims[1];
    if (v.w->dims[1] != c) return "w's channels differ from x's";
    if (c == 0) return "x has 0 channels: nothing for the tensor cores to reduce";
    if (c % 8 == 0) return "C is a multiple of 8: the as-given implicit-GEMM kernels run it without folding";
    for (int i = 0; i < 2; ++i) {
      if (v.dilation[i] != 1) return "dilation not supported (space-to-depth folds undilated filters)";
      if (v.stride[i] < 1 || v.stride[i] > 4) return "stride " + std::to_string(v.stride[i]) + " not supported (1 to 4)";
      if (v.pad_before[i] < 0 || v.pad_after[i] < 0 || v.pad_before[i] > 255) return "padding not supported (0 to 255)";
    }
    const int64_t folded_c = c * v.stride[0] * v.stride[1];
    if (folded_c > k_max_folded_channels) {
      return "C * stride_h * stride_w = " + std::to_string(folded_c) + " folded channels, more than " +
             std::to_string(k_max_folded_channels) + " (a stem kernel)";
    }
    // The folded problem must pass everything the as-given kernels check (extents, TMA limits).
    const folded_problem f = fold(v);
    const nhwc_geometry& h = f.folded;
    const tsrpTensor x2 = packed_nhwc(element, h.n, h.c, h.h, h.w);
    const tsrpTensor w2 = packed_nhwc(element, h.k, h.c, h.r, h.s);
    const int64_t zero[TSRP_MAX_SPATIAL_DIMS] = {};
    const int64_t one[TSRP_MAX_SPATIAL_DIMS] = {1, 1, 1};
    conv_view folded_view = v;
    folded_view.x = &x2;
    folded_view.w = &w2;
    folded_view.pad_before = zero;
    folded_view.pad_after = zero;
    folded_view.stride = one;
    folded_view.dilation = one;
    const std::string why = common_support(folded_view, element);
    return why.empty() ? std::string() : "after space-to-depth: " + why;
  }

  static nhwc_geometry geometry(const conv_view& v) { return fold(v).folded; }

  static size_t staging_bytes(const conv_view& v) {
    const folded_problem f = fold(v);
    return align_workspace(f.x_bytes) + align_workspace(f.w_bytes);
  }

  static staged_operands stage(const conv_view& v, const void* x, const void* w, void* workspace,
                               cudaStream_t stream) {
    const folded_problem f = fold(v);
    const nhwc_geometry& g = f.original;
    const nhwc_geometry& h = f.folded;
    char* base = static_cast<char*>(workspace);
    void* x2 = base;
    void* w2 = base + align_workspace(f.x_bytes);
    void* rest = base + align_workspace(f.x_bytes) + align_workspace(f.w_bytes);
    launch_gather(x, g.n, g.h, g.w, g.c, g.pad_before[0], g.pad_before[1], g.stride[0], g.stride[1], x2, h.h, h.w,
                  h.c, stream);
    launch_gather(w, g.k, g.r, g.s, g.c, 0, 0, g.stride[0], g.stride[1], w2, h.r, h.s, h.c, stream);
    return {h, x2, w2, rest};
  }
};

template <int32_t DataType>
struct s2d_choice;

#define TESSERA_IGEMM_S2D_CHOICE(type, suffix)                                                      \
  template <>                                                                                      \
  struct s2d_choice<type> {                                                                        \
    using config = fprop_sm90<type, 128, 64, 16, 2>;                                               \
    using layout = space_to_depth_layout;                                                          \
    static constexpr const char* forward_name = "conv_fwd_igemm_sm90_s2d_128x64x16_" suffix;       \
    static constexpr const char* fused_name = "conv_bias_act_fwd_igemm_sm90_s2d_128x64x16_" suffix; \
  };
TESSERA_IGEMM_S2D_CHOICE(TSRP_DATA_HALF, "f16")
TESSERA_IGEMM_S2D_CHOICE(TSRP_DATA_BFLOAT16, "bf16")
#undef TESSERA_IGEMM_S2D_CHOICE

}  // namespace
}  // namespace igemm

void add_conv_igemm_space_to_depth_kernels(kernel_list& forward, kernel_list& fused) {
  igemm::add_fprop_choice<igemm::s2d_choice<TSRP_DATA_HALF>>(forward, fused);
  igemm::add_fprop_choice<igemm::s2d_choice<TSRP_DATA_BFLOAT16>>(forward, fused);
}

}  // namespace tessera::cuda
