// Depthwise convolution over channels-last tensors (MobileNet's 3x3 layers), its own kernels as
// cuDNN and MIOpen have them:
//   "conv_fwd_depthwise_nhwc_<type>"        y = alpha * depthwise_conv(x, w) + beta * y
//   "conv_bwd_data_depthwise_nhwc_<type>"   dx = alpha * its adjoint applied to dy + beta * dx
// groups == C == K (one filter per channel), packed NHWC activations, fp32/fp16/bf16 with fp32
// accumulation, any stride, padding and dilation, cross-correlation.
//
// Why their own kernels: the implicit GEMM needs dense channels (one group), and the direct
// kernel (one thread per output element, filter read per element) ran MobileNet-v2's depthwise
// layers at 0.08-0.6 of cuDNN's speed on the H200. Depthwise is memory-bound (9 multiply-adds per
// output element for 3x3), so these kernels are about bytes: each thread owns 16 bytes of channels
// of one output pixel, reads each tap's 16 bytes of the input (neighbouring threads read
// neighbouring channel chunks of the same pixel: coalesced, and the taps of neighbouring pixels
// overlap in L1), takes the tap's weights from a [tap][channel] table the block stages in shared
// memory once, and writes 16 bytes. Both directions are one loop over the taps; they differ only
// in which input pixel a tap reads (forward: ih = oh * stride - pad + r * dilation; backward data:
// the oh with oh * stride = h + pad - r * dilation, when it exists). Unaligned tensors or a C that
// is not a multiple of the vector width run the same kernels one element at a time.
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

// h, w: x's (dx's) extents; p, q: y's (dy's).
struct depthwise_geometry {
  int n, h, w, c, r, s, p, q;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

enum class depthwise_direction { forward, backward_data };

// The input coordinate that filter tap `tap` of output coordinate `out` reads along one dim, or -1.
template <depthwise_direction Direction>
__device__ __forceinline__ int depthwise_source(int out, int tap, int stride, int pad, int dilation, int extent) {
  if constexpr (Direction == depthwise_direction::forward) {
    const int in = out * stride - pad + tap * dilation;
    return in >= 0 && in < extent ? in : -1;
  } else {
    const int scaled = out + pad - tap * dilation;  // = oh * stride for the dy row that reached `out`
    if (scaled < 0 || scaled % stride != 0) return -1;
    const int in = scaled / stride;
    return in < extent ? in : -1;
  }
}

// out = alpha * sum over taps of in[source] * w[tap] + beta * out, Vec elements of T per thread
// (16 bytes, or 1 for the unaligned path). Forward: in = x, out = y; backward data: in = dy,
// out = dx.
template <typename T, int Vec, depthwise_direction Direction>
__global__ void __launch_bounds__(threads)
    conv_depthwise_nhwc(const T* __restrict__ in, const T* __restrict__ w, T* __restrict__ out_tensor,
                        const depthwise_geometry g, float alpha, float beta) {
  constexpr bool forward = Direction == depthwise_direction::forward;
  const int out_h = forward ? g.p : g.h, out_w = forward ? g.q : g.w;
  const int in_h = forward ? g.h : g.p, in_w = forward ? g.w : g.q;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* table = reinterpret_cast<T*>(shared_bytes);  // [tap][channel]
  const int taps = g.r * g.s;
  for (int i = threadIdx.x; i < taps * g.c; i += blockDim.x) {
    const int c = i % g.c, tap = i / g.c;
    table[i] = w[int64_t{c} * taps + tap];  // w is K x 1 x R x S: channel-major
  }
  __syncthreads();

  const int vectors = g.c / Vec;
  const int64_t items = int64_t{g.n} * out_h * out_w * vectors;
  for (int64_t item = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; item < items;
       item += int64_t{gridDim.x} * blockDim.x) {
    const int channel = static_cast<int>(item % vectors) * Vec;
    int64_t pixel = item / vectors;
    const int ow = static_cast<int>(pixel % out_w);
    pixel /= out_w;
    const int oh = static_cast<int>(pixel % out_h);
    const int n = static_cast<int>(pixel / out_h);
    float acc[Vec] = {};
    for (int r = 0; r < g.r; ++r) {
      const int ih = depthwise_source<Direction>(oh, r, g.stride_h, g.pad_h, g.dilation_h, in_h);
      if (ih < 0) continue;
      const T* row = in + (int64_t{n} * in_h + ih) * in_w * g.c + channel;
      for (int s = 0; s < g.s; ++s) {
        const int iw = depthwise_source<Direction>(ow, s, g.stride_w, g.pad_w, g.dilation_w, in_w);
        if (iw < 0) continue;
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
    T* out = out_tensor + item * Vec;
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
struct depthwise_element;
template <>
struct depthwise_element<TSRP_DATA_FLOAT> {
  using type = float;
};
template <>
struct depthwise_element<TSRP_DATA_HALF> {
  using type = __half;
};
template <>
struct depthwise_element<TSRP_DATA_BFLOAT16> {
  using type = __nv_bfloat16;
};

// Per direction: the registry's operation and args, and which tensors are read and written.
template <depthwise_direction Direction>
struct depthwise_op;
template <>
struct depthwise_op<depthwise_direction::forward> {
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static const void* input(const args_type& a) { return a.x; }
  static void* output(const args_type& a) { return a.y; }
  static const tsrpTensor& input_tensor(const tsrpConvolutionProblem& p) { return p.x; }
  static const tsrpTensor& output_tensor(const tsrpConvolutionProblem& p) { return p.y; }
  static constexpr const char* input_name = "x";
  static constexpr const char* output_name = "y";
};
template <>
struct depthwise_op<depthwise_direction::backward_data> {
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static const void* input(const args_type& a) { return a.dy; }
  static void* output(const args_type& a) { return a.dx; }
  static const tsrpTensor& input_tensor(const tsrpConvolutionProblem& p) { return p.y; }
  static const tsrpTensor& output_tensor(const tsrpConvolutionProblem& p) { return p.x; }
  static constexpr const char* input_name = "dy";
  static constexpr const char* output_name = "dx";
};

template <int32_t DataType, depthwise_direction Direction>
constexpr const char* depthwise_name() {
  constexpr bool forward = Direction == depthwise_direction::forward;
  switch (DataType) {
    case TSRP_DATA_HALF: return forward ? "conv_fwd_depthwise_nhwc_f16" : "conv_bwd_data_depthwise_nhwc_f16";
    case TSRP_DATA_BFLOAT16: return forward ? "conv_fwd_depthwise_nhwc_bf16" : "conv_bwd_data_depthwise_nhwc_bf16";
    default: return forward ? "conv_fwd_depthwise_nhwc_f32" : "conv_bwd_data_depthwise_nhwc_f32";
  }
}

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

template <int32_t DataType, depthwise_direction Direction>
struct depthwise_traits {
  using T = typename depthwise_element<DataType>::type;
  using op = depthwise_op<Direction>;
  static constexpr int vector = 16 / sizeof(T);
  using problem_type = tsrpConvolutionProblem;
  using args_type = typename op::args_type;
  static constexpr const char* name = depthwise_name<DataType, Direction>();
  static constexpr int32_t operation = op::operation;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "depthwise (groups == C == K) over packed NHWC activations, 16 bytes of channels per thread, the filter "
      "staged in shared memory, fp32 accumulation in tap order, one rounding; any stride, padding and "
      "dilation; 2-D; deterministic";

  static constexpr bool forward = Direction == depthwise_direction::forward;

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
    if (!is_packed_channels_last(p.x)) return std::string(forward ? "x" : "dx") + " is not packed channels-last";
    if (!is_packed_channels_last(p.y)) return std::string(forward ? "y" : "dy") + " is not packed channels-last";
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

  // Memory-bound: the input once (neighbouring pixels' taps from cache), the output written (and
  // read with beta).
  static double estimate_us(const problem_type& p) {
    const double bytes = double(element_count(op::input_tensor(p)) + 2 * element_count(op::output_tensor(p))) *
                         sizeof(T);
    return bytes / 3.0e6 + 4.0;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const tsrpTensor& out_t = op::output_tensor(p);
    if (element_count(out_t) == 0) return;
    const void* in_data = op::input(a);
    void* out_data = op::output(a);
    require_pointer(in_data, element_count(op::input_tensor(p)), op::input_name);
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(out_data, element_count(out_t), op::output_name);
    const depthwise_geometry g = geometry_of(p);
    const size_t table_bytes = size_t(g.c) * g.r * g.s * sizeof(T);
    const bool aligned = g.c % vector == 0 && reinterpret_cast<uintptr_t>(in_data) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(out_data) % 16 == 0;
    const int per_thread = aligned ? vector : 1;
    const int64_t items = element_count(out_t) / per_thread;
    const auto cap = static_cast<unsigned int>(std::max(ctx.sm_count(), 1) * 16);  // grid-stride beyond
    const unsigned int blocks = std::min(cuda_context::share_blocks(items, threads), cap);
    const T* in = static_cast<const T*>(in_data);
    const T* w = static_cast<const T*>(a.w);
    T* out = static_cast<T*>(out_data);
    if (aligned) {
      conv_depthwise_nhwc<T, vector, Direction>
          <<<blocks, threads, table_bytes, ctx.stream()>>>(in, w, out, g, a.alpha, a.beta);
    } else {
      conv_depthwise_nhwc<T, 1, Direction>
          <<<blocks, threads, table_bytes, ctx.stream()>>>(in, w, out, g, a.alpha, a.beta);
    }
    check_cuda(cudaGetLastError(), "launching the depthwise NHWC kernel");
  }
};

}  // namespace

void add_conv_depthwise_kernels(kernel_list& out) {
  constexpr auto fwd = depthwise_direction::forward;
  constexpr auto bwd = depthwise_direction::backward_data;
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_HALF, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_BFLOAT16, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_FLOAT, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_HALF, bwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_BFLOAT16, bwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_FLOAT, bwd>>());
}

}  // namespace tessera::cuda
