// Depthwise convolution backward filter over channels-last tensors, beside the depthwise forward
// and backward data (conv_depthwise_nhwc.cu):
//   "conv_bwd_filter_depthwise_nhwc_<type>"
//       dw(c, r, s) = alpha * sum over n, p, q of
//                     x(n, p * stride - pad + r * dilation, q * stride - pad + s * dilation, c) * dy(n, p, q, c)
//                     + beta * dw(c, r, s)
// groups == C == K, packed NHWC x and dy, dw K x 1 x R x S (channel-major, as the forward reads
// w), fp32/fp16/bf16 with fp32 accumulation, any stride, padding and dilation, cross-correlation,
// R * S <= 9 taps (larger filters go to conv_bwd_filter_tiled).
//
// Why its own kernel: the tiled kernel gives depthwise one output per 1-32 threads, each walking
// N*P*Q alone; here the reduction over N*P*Q is spread over the whole GPU and every byte of x and
// dy is read once (the taps of neighbouring pixels from L1). Like the forward, it is about bytes:
// each thread owns 16 bytes of channels (8 halves or 4 floats) and a chunk of output pixels (n, p,
// q flattened), reads each pixel's dy vector and its taps' x vectors (neighbouring threads take
// neighbouring channel vectors: coalesced) and keeps every tap's sums in registers (9 x 8 fp32 at
// most). C not a multiple of the vector, or unaligned pointers, run the same kernel one element
// per thread.
//
// Deterministic, no atomics, two launches and no allocation or synchronisation (graph-capturable):
//   pass 1 writes each chunk's sums to the workspace as fp32 partials [chunk][tap][C];
//   pass 2 adds, for each (tap, c), the chunks' partials in a fixed order (below) and blends
//   alpha * sum + beta * dw into dw with one rounding (dw is read only when beta != 0).
// The chunking is a function of the problem alone (planned for the H200, whatever device runs it),
// so the same problem gives the same bits on every GPU and in both the vector and element paths.
#include "conv_depthwise_support.hpp"
#include "conv_depthwise_wgrad_plan.hpp"
#include "cuda_context.hpp"
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "kernel_glue.hpp"
#include "launch_overrides.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace tessera::cuda {
namespace {

using depthwise::direction;

constexpr int max_taps = 9;  // R * S: one fp32 register per tap and channel of the thread
constexpr int threads = depthwise::wgrad_pass1_threads;
constexpr int blocks_per_sm = depthwise::wgrad_pass1_blocks_per_sm;

// Pass 2: a block adds the partials of 8 consecutive (tap, c) slots, one 32-byte sector of each
// chunk's slice per row, over 128 rows of chunks: wide enough that a few blocks (C = 32: 36 of
// them) still keep many loads in flight.
constexpr int reduce_columns = 8;
constexpr int reduce_rows = 128;

// The chunk plan for a problem's geometry (conv_depthwise_wgrad_plan.hpp).
// TESSERA_CUDA_DW_WGRAD_MIN_CHUNK=n: chunks of at least n pixels instead of the plan's minimum (4),
// to measure other minimums; read once, so that the workspace query and the run plan alike.
depthwise::chunk_plan plan_chunks(const depthwise::geometry& g, int vector) {
  static const int min_chunk = launch_override("TESSERA_CUDA_DW_WGRAD_MIN_CHUNK",
                                               static_cast<int>(depthwise::wgrad_min_pixels_per_chunk), 1, 264);
  return depthwise::plan_wgrad_chunks(int64_t{g.n} * g.p * g.q, int64_t{g.r} * g.s, g.c, vector, min_chunk);
}

// Loads Vec elements of T as floats: one 16-byte load on the vector path.
template <typename T, int Vec>
__device__ __forceinline__ void load_floats(const T* source, float (&out)[Vec]) {
  if constexpr (Vec * sizeof(T) == 16) {
    const uint4 bits = __ldg(reinterpret_cast<const uint4*>(source));
    T values[Vec];
    memcpy(values, &bits, sizeof(bits));
#pragma unroll
    for (int v = 0; v < Vec; ++v) out[v] = to_float(values[v]);
  } else {
#pragma unroll
    for (int v = 0; v < Vec; ++v) out[v] = to_float(source[v]);
  }
}

// Pass 1: thread (chunk, channel vector) sums x * dy over the chunk's pixels, in pixel order, for
// every tap, and writes the sums to partials[chunk][tap][channel].
template <typename T, int Vec>
__global__ void __launch_bounds__(threads, blocks_per_sm)
    depthwise_wgrad_partials(const T* __restrict__ x, const T* __restrict__ dy, float* __restrict__ partials,
                             const depthwise::geometry g, int64_t pixels, int pixels_per_chunk, int64_t chunks) {
  const int vectors = g.c / Vec;
  const int64_t item = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (item >= chunks * vectors) return;
  const int channel = static_cast<int>(item % vectors) * Vec;
  const int64_t chunk = item / vectors;
  const int taps = g.r * g.s;

  // Each tap's offset from the pixel's window corner, kept in registers (the loops are unrolled).
  int tap_dh[max_taps], tap_dw[max_taps];
#pragma unroll
  for (int t = 0; t < max_taps; ++t) {
    tap_dh[t] = t < taps ? t / g.s * g.dilation_h : 0;
    tap_dw[t] = t < taps ? t % g.s * g.dilation_w : 0;
  }

  float acc[max_taps][Vec] = {};
  int64_t pixel = chunk * pixels_per_chunk;
  const int64_t end = pixel + pixels_per_chunk < pixels ? pixel + pixels_per_chunk : pixels;
  const int64_t pq = int64_t{g.p} * g.q;
  int n = static_cast<int>(pixel / pq);
  const int rest = static_cast<int>(pixel % pq);
  int oh = rest / g.q, ow = rest % g.q;
  const int64_t image = int64_t{g.h} * g.w * g.c;
  for (; pixel < end; ++pixel) {
    float d[Vec];
    load_floats<T, Vec>(dy + pixel * g.c + channel, d);
    const T* x_image = x + n * image + channel;
    const int h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
#pragma unroll
    for (int t = 0; t < max_taps; ++t) {
      if (t >= taps) break;
      const int ih = h0 + tap_dh[t], iw = w0 + tap_dw[t];
      if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
      float xs[Vec];
      load_floats<T, Vec>(x_image + (int64_t{ih} * g.w + iw) * g.c, xs);
#pragma unroll
      for (int v = 0; v < Vec; ++v) acc[t][v] = fmaf(xs[v], d[v], acc[t][v]);
    }
    if (++ow == g.q) {
      ow = 0;
      if (++oh == g.p) {
        oh = 0;
        ++n;
      }
    }
  }

  float* out = partials + chunk * taps * g.c + channel;
#pragma unroll
  for (int t = 0; t < max_taps; ++t) {
    if (t >= taps) break;
    float* slot = out + int64_t{t} * g.c;
    if constexpr (Vec * sizeof(T) == 16) {
      // C is a multiple of Vec (>= 4) and the workspace 16-byte aligned: whole float4s.
#pragma unroll
      for (int v = 0; v < Vec; v += 4) {
        *reinterpret_cast<float4*>(slot + v) = make_float4(acc[t][v], acc[t][v + 1], acc[t][v + 2], acc[t][v + 3]);
      }
    } else {
#pragma unroll
      for (int v = 0; v < Vec; ++v) slot[v] = acc[t][v];
    }
  }
}

// Pass 2: dw(c, tap) = alpha * sum over chunks of partials[chunk][tap][c] + beta * dw(c, tap).
// The order is fixed by the chunk count alone: row `row` of the block adds chunks row, row + 128,
// row + 256, ... in turn, then the 128 row sums are added pairwise by a fixed tree (row i takes
// row i + 64, then i + 32, ...).
template <typename T>
__global__ void __launch_bounds__(reduce_columns * reduce_rows)
    depthwise_wgrad_reduce(const float* __restrict__ partials, T* __restrict__ dw, int64_t chunks, int taps, int c,
                           float alpha, float beta) {
  __shared__ float sums[reduce_rows][reduce_columns];
  const int column = threadIdx.x % reduce_columns, row = threadIdx.x / reduce_columns;
  const int64_t slice = int64_t{taps} * c;
  const int64_t slot = int64_t{blockIdx.x} * reduce_columns + column;  // tap * C + channel
  float sum = 0.0f;
  if (slot < slice) {
#pragma unroll 8
    for (int64_t chunk = row; chunk < chunks; chunk += reduce_rows) sum += partials[chunk * slice + slot];
  }
  sums[row][column] = sum;
#pragma unroll
  for (int half = reduce_rows / 2; half > 0; half /= 2) {
    __syncthreads();
    if (row < half) sums[row][column] += sums[row + half][column];
  }
  if (row == 0 && slot < slice) {
    const int tap = static_cast<int>(slot / c), channel = static_cast<int>(slot % c);
    store_blended(dw + int64_t{channel} * taps + tap, sums[0][column], alpha, beta);  // dw is [c][tap]
  }
}

template <int32_t DataType>
struct depthwise_wgrad_traits {
  using T = typename storage_type<DataType>::type;
  static constexpr int vector = 16 / sizeof(T);
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = depthwise::kernel_name<DataType, direction::backward_filter>();
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "depthwise (groups == C == K) over packed NHWC x and dy, R * S <= 9; 16 bytes of channels per thread, "
      "every tap's fp32 sums in registers over a chunk of 16-264 output pixels (more when the workspace reaches "
      "64 MiB), fp32 partial sums per chunk in the workspace, added in a fixed order, one rounding of dw; any "
      "stride, padding and dilation; 2-D; deterministic";

  // problem.w describes dw, problem.y describes dy.
  static std::string support(const problem_type& p) {
    const std::string why = depthwise::support(p, DataType, direction::backward_filter);
    if (!why.empty()) return why;
    const int64_t taps = p.w.dims[2] * p.w.dims[3];
    if (taps > max_taps) {
      return "the filter has R * S = " + std::to_string(taps) + " taps, more than this kernel's " +
             std::to_string(max_taps) + " (its sums live in registers; conv_bwd_filter_tiled takes larger filters)";
    }
    constexpr int64_t int_max = std::numeric_limits<int32_t>::max();
    const int64_t images_rows = p.y.dims[0] * p.y.dims[2];  // each factor below 2^29: no overflow
    if (p.y.dims[3] > 0 && images_rows > int_max / p.y.dims[3]) return "dy has more than 2^31 pixels (N * P * Q)";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return plan_chunks(depthwise::geometry_of(p), vector).workspace_bytes();
  }

  // Memory-bound: x and dy once (the taps of neighbouring pixels from cache), the partials written
  // and read, dw written (and read with beta); two launches.
  static double estimate_us(const problem_type& p) {
    const depthwise::chunk_plan plan = plan_chunks(depthwise::geometry_of(p), vector);
    const double bytes = double(element_count(p.x) + element_count(p.y) + 2 * element_count(p.w)) * sizeof(T) +
                         2.0 * double(plan.workspace_bytes());
    return bytes / 3.0e6 + 8.0;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    const depthwise::geometry g = depthwise::geometry_of(p);
    const depthwise::chunk_plan plan = plan_chunks(g, vector);
    auto* partials = static_cast<float*>(workspace);
    if (plan.chunks > 0) {
      // The glue has checked the size against workspace(); the partials are fp32.
      require_pointer(workspace, 1, "workspace");
      if (reinterpret_cast<uintptr_t>(workspace) % alignof(float) != 0) {
        throw status_error(TSRP_STATUS_BAD_PARAM, "workspace is not 4-byte aligned (it holds fp32 partial sums)");
      }
      const T* x = static_cast<const T*>(a.x);
      const T* dy = static_cast<const T*>(a.dy);
      // The partials take float4 stores on the 16-byte path: the workspace must allow them too.
      depthwise::dispatch_vector_width<T>(g.c, {a.x, a.dy, workspace}, [&](auto width) {
        constexpr int per_thread = decltype(width)::value;
        const int64_t items = plan.chunks * (g.c / per_thread);
        depthwise_wgrad_partials<T, per_thread>
            <<<cuda_context::share_blocks(items, threads), threads, 0, ctx.stream()>>>(
                x, dy, partials, g, plan.pixels, static_cast<int>(plan.pixels_per_chunk), plan.chunks);
      });
      check_cuda(cudaGetLastError(), "launching the depthwise wgrad partial sums");
    }
    const auto blocks = cuda_context::share_blocks(plan.slice, reduce_columns);
    depthwise_wgrad_reduce<T><<<blocks, reduce_columns * reduce_rows, 0, ctx.stream()>>>(
        partials, static_cast<T*>(a.dw), plan.chunks, g.r * g.s, g.c, a.alpha, a.beta);
    check_cuda(cudaGetLastError(), "launching the depthwise wgrad reduction");
  }
};

}  // namespace

void add_conv_depthwise_wgrad_kernels(kernel_list& out) {
  out.push_back(make_kernel<depthwise_wgrad_traits<TSRP_DATA_HALF>>());
  out.push_back(make_kernel<depthwise_wgrad_traits<TSRP_DATA_BFLOAT16>>());
  out.push_back(make_kernel<depthwise_wgrad_traits<TSRP_DATA_FLOAT>>());
}

}  // namespace tessera::cuda
