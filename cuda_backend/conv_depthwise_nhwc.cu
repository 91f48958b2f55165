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
// is not a multiple of the vector width run the same kernels one element at a time. What these
// kernels share with the backward filter (conv_depthwise_wgrad_nhwc.cu) is in
// conv_depthwise_support.hpp.
#include "conv_depthwise_support.hpp"
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
#include <string>

namespace tessera::cuda {
namespace {

using depthwise::direction;

constexpr int threads = 256;
constexpr size_t max_weight_table_bytes = 32 * 1024;  // shared memory for C * R * S weights

// The input coordinate that filter tap `tap` of output coordinate `out` reads along one dim, or -1.
template <direction Direction>
__device__ __forceinline__ int depthwise_source(int out, int tap, int stride, int pad, int dilation, int extent) {
  static_assert(Direction != direction::backward_filter, "the backward filter has its own kernel");
  if constexpr (Direction == direction::forward) {
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
template <typename T, int Vec, direction Direction>
__global__ void __launch_bounds__(threads)
    conv_depthwise_nhwc(const T* __restrict__ in, const T* __restrict__ w, T* __restrict__ out_tensor,
                        const depthwise::geometry g, float alpha, float beta) {
  constexpr bool forward = Direction == direction::forward;
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

// Per direction: the registry's operation and args, and which tensors are read and written.
template <direction Direction>
struct depthwise_op;
template <>
struct depthwise_op<direction::forward> {
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
struct depthwise_op<direction::backward_data> {
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static const void* input(const args_type& a) { return a.dy; }
  static void* output(const args_type& a) { return a.dx; }
  static const tsrpTensor& input_tensor(const tsrpConvolutionProblem& p) { return p.y; }
  static const tsrpTensor& output_tensor(const tsrpConvolutionProblem& p) { return p.x; }
  static constexpr const char* input_name = "dy";
  static constexpr const char* output_name = "dx";
};

template <int32_t DataType, direction Direction>
struct depthwise_traits {
  using T = typename storage_type<DataType>::type;
  using op = depthwise_op<Direction>;
  using problem_type = tsrpConvolutionProblem;
  using args_type = typename op::args_type;
  static constexpr const char* name = depthwise::kernel_name<DataType, Direction>();
  static constexpr int32_t operation = op::operation;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "depthwise (groups == C == K) over packed NHWC activations, 16 bytes of channels per thread, the filter "
      "staged in shared memory, fp32 accumulation in tap order, one rounding; any stride, padding and "
      "dilation; 2-D; deterministic";

  static std::string support(const problem_type& p) {
    const std::string why = depthwise::support(p, DataType, Direction);
    if (!why.empty()) return why;
    if (size_t(p.x.dims[1]) * p.w.dims[2] * p.w.dims[3] * sizeof(T) > max_weight_table_bytes) {
      return "the filter (C * R * S) is larger than this kernel's shared-memory table of 32 KB";
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
    const depthwise::geometry g = depthwise::geometry_of(p);
    const size_t table_bytes = size_t(g.c) * g.r * g.s * sizeof(T);
    const T* in = static_cast<const T*>(in_data);
    const T* w = static_cast<const T*>(a.w);
    T* out = static_cast<T*>(out_data);
    depthwise::dispatch_vector_width<T>(g.c, {in_data, out_data}, [&](auto width) {
      constexpr int per_thread = decltype(width)::value;
      const int64_t items = element_count(out_t) / per_thread;
      const auto cap = static_cast<unsigned int>(std::max(ctx.sm_count(), 1) * 16);  // grid-stride beyond
      const unsigned int blocks = std::min(cuda_context::share_blocks(items, threads), cap);
      conv_depthwise_nhwc<T, per_thread, Direction>
          <<<blocks, threads, table_bytes, ctx.stream()>>>(in, w, out, g, a.alpha, a.beta);
    });
    check_cuda(cudaGetLastError(), "launching the depthwise NHWC kernel");
  }
};

}  // namespace

void add_conv_depthwise_kernels(kernel_list& out) {
  constexpr auto fwd = direction::forward;
  constexpr auto bwd = direction::backward_data;
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_HALF, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_BFLOAT16, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_FLOAT, fwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_HALF, bwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_BFLOAT16, bwd>>());
  out.push_back(make_kernel<depthwise_traits<TSRP_DATA_FLOAT, bwd>>());
}

}  // namespace tessera::cuda
