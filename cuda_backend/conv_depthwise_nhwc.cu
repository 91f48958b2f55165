// Depthwise forward convolution over channels-last tensors (MobileNet's 3x3 layers), its own
// kernel as cuDNN and MIOpen have one:
//   "conv_fwd_depthwise_nhwc_<type>"   y = alpha * depthwise_conv(x, w) + beta * y
// groups == C == K (one filter per channel), packed NHWC x and y, fp32/fp16/bf16 with fp32
// accumulation, any stride, padding and dilation, cross-correlation.
//
// Why its own kernel: the implicit GEMM needs dense channels (one group), and the direct kernel
// (one thread per output element, filter read per element) ran MobileNet-v2's depthwise layers at
// 0.08-0.6 of cuDNN's speed on the H200. Depthwise is memory-bound (9 multiply-adds per output
// element for 3x3), so this kernel is about bytes: each thread owns 16 bytes of channels of one
// output pixel, reads each tap's 16 bytes of x (neighbouring threads read neighbouring channel
// chunks of the same pixel: coalesced, and the taps of neighbouring pixels overlap in L1), takes
// the tap's weights from a [tap][channel] table the block stages in shared memory once, and
// writes 16 bytes of y. Unaligned tensors or a C that is not a multiple of the vector width run
// the same kernel one element at a time.
#include "cuda_context.hpp"
#include "element_types.cuh"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

constexpr int threads = 256;
constexpr size_t max_weight_table_bytes = 32 * 1024;  // shared memory for C * R * S weights

struct depthwise_geometry {
  int n, h, w, c, r, s, p, q;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

// Vec elements of T per thread (16 bytes, or 1 for the unaligned path).
template <typename T, int Vec>
__global__ void __launch_bounds__(threads)
    conv_fwd_depthwise_nhwc(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                            const depthwise_geometry g, float alpha, float beta) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* table = reinterpret_cast<T*>(shared_bytes);  // [tap][channel]
  const int taps = g.r * g.s;
  for (int i = threadIdx.x; i < taps * g.c; i += blockDim.x) {
    const int c = i % g.c, tap = i / g.c;
    table[i] = w[int64_t{c} * taps + tap];  // w is K x 1 x R x S: channel-major
  }
  __syncthreads();

  const int vectors = g.c / Vec;
  const int64_t items = int64_t{g.n} * g.p * g.q * vectors;
  for (int64_t item = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; item < items;
       item += int64_t{gridDim.x} * blockDim.x) {
    const int channel = static_cast<int>(item % vectors) * Vec;
    int64_t pixel = item / vectors;
    const int ow = static_cast<int>(pixel % g.q);
    pixel /= g.q;
    const int oh = static_cast<int>(pixel % g.p);
    const int n = static_cast<int>(pixel / g.p);
    float acc[Vec] = {};
    for (int r = 0; r < g.r; ++r) {
      const int ih = oh * g.stride_h - g.pad_h + r * g.dilation_h;
      if (ih < 0 || ih >= g.h) continue;
      const T* row = x + (int64_t{n} * g.h + ih) * g.w * g.c + channel;
      for (int s = 0; s < g.s; ++s) {
        const int iw = ow * g.stride_w - g.pad_w + s * g.dilation_w;
        if (iw < 0 || iw >= g.w) continue;
        T xs[Vec], ws[Vec];
        const T* weights = table + (r * g.s + s) * g.c + channel;
        if constexpr (Vec * sizeof(T) == 16) {
          const uint4 xv = __ldg(reinterpret_cast<const uint4*>(row + int64_t{iw} * g.c));
          const uint4 wv = *reinterpret_cast<const uint4*>(weights);
          memcpy(xs, &xv, sizeof(xv));
          memcpy(ws, &wv, sizeof(wv));
        } else {
#pragma unroll
          for (int v = 0; v < Vec; ++v) {
            xs[v] = row[int64_t{iw} * g.c + v];
            ws[v] = weights[v];
          }
        }
#pragma unroll
        for (int v = 0; v < Vec; ++v) acc[v] = fmaf(to_float(xs[v]), to_float(ws[v]), acc[v]);
      }
    }
    T* out = y + item * Vec;
    if constexpr (Vec * sizeof(T) == 16) {
      T result[Vec];
      if (beta != 0.0f) {
        const uint4 old = *reinterpret_cast<const uint4*>(out);
        memcpy(result, &old, sizeof(old));
      }
#pragma unroll
      for (int v = 0; v < Vec; ++v) store_blended(result + v, acc[v], alpha, beta);
      uint4 packed;
      memcpy(&packed, result, sizeof(packed));
      *reinterpret_cast<uint4*>(out) = packed;
    } else {
#pragma unroll
      for (int v = 0; v < Vec; ++v) store_blended(out + v, acc[v], alpha, beta);
    }
  }
}

template <int32_t DataType>
struct depthwise_choice;
template <>
struct depthwise_choice<TSRP_DATA_FLOAT> {
  using type = float;
  static constexpr const char* name = "conv_fwd_depthwise_nhwc_f32";
};
template <>
struct depthwise_choice<TSRP_DATA_HALF> {
  using type = __half;
  static constexpr const char* name = "conv_fwd_depthwise_nhwc_f16";
};
template <>
struct depthwise_choice<TSRP_DATA_BFLOAT16> {
  using type = __nv_bfloat16;
  static constexpr const char* name = "conv_fwd_depthwise_nhwc_bf16";
};

depthwise_geometry geometry_of(const tsrpConvolutionProblem& p) {
  depthwise_geometry g{};
  g.n = static_cast<int>(p.x.dims[0]);
  g.c = static_cast<int>(p.x.dims[1]);
  g.h = static_cast<int>(p.x.dims[2]);
  g.w = static_cast<int>(p.x.dims[3]);
  g.r = static_cast<int>(p.w.dims[2]);
  g.s = static_cast<int>(p.w.dims[3]);
  g.p = static_cast<int>(p.y.dims[2]);
  g.q = static_cast<int>(p.y.dims[3]);
  g.stride_h = static_cast<int>(p.stride[0]);
  g.stride_w = static_cast<int>(p.stride[1]);
  g.pad_h = static_cast<int>(p.pad_before[0]);
  g.pad_w = static_cast<int>(p.pad_before[1]);
  g.dilation_h = static_cast<int>(p.dilation[0]);
  g.dilation_w = static_cast<int>(p.dilation[1]);
  return g;
}

template <int32_t DataType>
struct depthwise_traits {
  using T = typename depthwise_choice<DataType>::type;
  static constexpr int vector = 16 / sizeof(T);
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr const char* name = depthwise_choice<DataType>::name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "depthwise (groups == C == K) over packed NHWC x and y, 16 bytes of channels per thread, the filter "
      "staged in shared memory, fp32 accumulation in tap order, one rounding; any stride, padding and "
      "dilation; 2-D; deterministic";

  static std::string support(const problem_type& p) {
    if (p.mode != TSRP_CROSS_CORRELATION) {
      return "flipped-filter (convolution) mode not supported: cross-correlation only";
    }
    if (p.spatial_dims != 2) return std::to_string(p.spatial_dims) + " spatial dims not supported (2-D only)";
    const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", &p.x}, {"w", &p.w}, {"y", &p.y}};
    for (const auto& [label, t] : tensors) {
      if (t->data_type != DataType) {
        return std::string(label) + " data type " + data_type_name(t->data_type) +
               " not supported: this kernel takes " + data_type_name(DataType) + " x, w and y";
      }
      if (t->ndims != 4) return std::string(label) + " has " + std::to_string(t->ndims) + " dims, expected 4";
      for (int d = 0; d < 4; ++d) {
        if (t->dims[d] < 0 || t->dims[d] > std::numeric_limits<int32_t>::max() / 4) {
          return std::string(label) + " dim " + std::to_string(d) + " is outside this kernel's int32 extents";
        }
      }
    }
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " not supported (fp32 accumulation)";
    }
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    const int64_t c = p.x.dims[1];
    if (p.groups != c || p.w.dims[0] != c || p.w.dims[1] != 1) {
      return "not depthwise: needs groups == C == K with one input channel per filter (groups " +
             std::to_string(p.groups) + ", C " + std::to_string(c) + ", K " + std::to_string(p.w.dims[0]) + ")";
    }
    if (!is_packed_channels_last(p.x)) return "x is not packed channels-last (NHWC)";
    if (!is_packed_channels_last(p.y)) return "y is not packed channels-last (NHWC)";
    // w is K x 1 x R x S: packed channel-major whether its tag says NCHW or NHWC.
    if (p.w.dims[0] > 1 && p.w.strides[0] != p.w.dims[2] * p.w.dims[3]) return "w is not packed";
    if (p.w.dims[3] > 1 && p.w.strides[3] != 1) return "w is not packed";
    if (p.w.dims[2] > 1 && p.w.strides[2] != p.w.dims[3]) return "w is not packed";
    if (size_t(c) * p.w.dims[2] * p.w.dims[3] * sizeof(T) > max_weight_table_bytes) {
      return "the filter (C * R * S) is larger than this kernel's shared-memory table of 32 KB";
    }
    for (int i = 0; i < 2; ++i) {
      if (p.stride[i] < 1 || p.dilation[i] < 1) return "strides and dilations must be at least 1";
      if (p.pad_before[i] < 0 || p.pad_before[i] > 1024) return "padding outside 0..1024 not supported";
    }
    return {};
  }

  // Memory-bound: x once (neighbouring pixels' taps from cache), y written (and read with beta).
  static double estimate_us(const problem_type& p) {
    const double bytes = double(element_count(p.x) + 2 * element_count(p.y)) * sizeof(T);
    return bytes / 3.0e6 + 4.0;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    const depthwise_geometry g = geometry_of(p);
    const size_t table_bytes = size_t(g.c) * g.r * g.s * sizeof(T);
    const bool aligned = g.c % vector == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(a.y) % 16 == 0;
    const int per_thread = aligned ? vector : 1;
    const int64_t items = int64_t{g.n} * g.p * g.q * (g.c / per_thread);
    const auto cap = static_cast<unsigned int>(std::max(ctx.sm_count(), 1) * 16);  // grid-stride beyond
    const unsigned int blocks = std::min(cuda_context::share_blocks(items, threads), cap);
    const T* x = static_cast<const T*>(a.x);
    const T* w = static_cast<const T*>(a.w);
    T* y = static_cast<T*>(a.y);
    if (aligned) {
      conv_fwd_depthwise_nhwc<T, vector>
          <<<blocks, threads, table_bytes, ctx.stream()>>>(x, w, y, g, a.alpha, a.beta);
    } else {
      conv_fwd_depthwise_nhwc<T, 1><<<blocks, threads, table_bytes, ctx.stream()>>>(x, w, y, g, a.alpha, a.beta);
    }
    check_cuda(cudaGetLastError(), "launching conv_fwd_depthwise_nhwc");
  }
};

}  // namespace

void add_conv_depthwise_kernels(kernel_list& out) {
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_HALF>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_BFLOAT16>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_FLOAT>>());
}

}  // namespace tessera::cuda
