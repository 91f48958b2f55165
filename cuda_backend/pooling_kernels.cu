// Pooling forward and backward, 2-D and 3-D, max / average with or without padding, in fp32,
// fp16 and bf16 with fp32 arithmetic.
//   forward:  y  = alpha * pool(x) + beta * y
//   backward: dx = alpha * dpool(x, dy) + beta * dx
// Three kernels per direction, tried in this order; all share the window arithmetic of
// pooling_reduction.cuh and differ in which layouts they accept and how threads walk the tensors:
//   pool_{fwd,bwd}_nhwc_vec  channels-last tensors (C stride 1, C and the other strides multiples
//                            of 16 bytes): shared-memory tiles (pooling_tiles.cuh) that copy each
//                            tile's input once with cp.async and compute every result of the tile
//                            from there, 16 bytes of channels per thread; where no tile fits (huge
//                            windows, a forward stride beyond its window) or a pointer is not
//                            16-byte aligned, the two kernel bodies below (one thread per 16 bytes
//                            of channels, or per element, at one position); max pooling 3x3 at
//                            stride 2 runs kernels of its own (pooling_max3x3s2.cuh);
//   pool_{fwd,bwd}_nchw      packed NCHW / NCDHW: one thread per element, W fastest (coalesced
//                            over W), with (n, c) merged into one plane number;
//   pool_{fwd,bwd}_strided   any non-negative strides, x and y in different layouts included;
//                            the walk follows the written tensor's layout (C fastest when its C
//                            stride is the smallest, else W fastest).
// Forward: one thread per output (or per 16 bytes of outputs) reduces its window in window order.
// Backward gathers without atomics, so results are bitwise reproducible: each dx element sums over
// the outputs whose windows contain it. Average backward reads only dy. Max backward follows the
// cuDNN rule the reference documents (tests/reference/reference_pooling.cpp): the maximum is
// recomputed from x (y_in is not read), ties go to the first tap in window order and NaN inputs
// never win. Rescanning a whole window for every dx element in it would cost window_size loads
// per output per covered input (about 20 loads per dx element for 3x3 stride 2), so a first pass
// writes each output's winning tap into the workspace (one byte when the window has at most 255
// taps, else four) and the gather compares taps: the backward costs about two forward passes.
// The tiles do the same in shared memory within one launch: the winning taps of the outputs that
// touch a tile never leave the SM, and the workspace goes unused.
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "launch_overrides.hpp"
#include "pooling_geometry.cuh"
#include "pooling_max3x3s2.cuh"
#include "pooling_reduction.cuh"
#include "pooling_tiles.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace tessera::cuda {
namespace {

using namespace pooling;

constexpr int threads_per_block = 256;
constexpr size_t workspace_alignment = 256;  // the tap packs are up to 32 bytes wide
constexpr int64_t int32_limit = std::numeric_limits<int32_t>::max();
constexpr int32_t max_narrow_window = 255;  // uint8 taps; 255 itself means "no tap"

// ---- device side ------------------------------------------------------------------------------

// Forward (Out = T, the blended result) and backward's first pass (Op = argmax, Out = the tap
// type, written unblended to the workspace). One work item is one output position and `Lanes`
// channels; `out` is indexed by `os`.
template <typename T, typename Out, int Lanes, walk W, pool_op Op>
__global__ void __launch_bounds__(threads_per_block)
    pool_window_kernel(const T* __restrict__ x, operand_strides xs, Out* __restrict__ out,
                       operand_strides os, pool_geometry g, int64_t items, float alpha, float beta) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items;
       item += step) {
    const element_coord o = walk_coord<W, Lanes>(item, g.c, g.out);
    const tap_span sd = window_taps(o.d, 0, g);
    const tap_span sh = window_taps(o.h, 1, g);
    const tap_span sw = window_taps(o.w, 2, g);
    const T* plane = x + o.n * xs.n + o.c * xs.c;

    lane_reduction<Op> lanes[Lanes];
#pragma unroll
    for (int l = 0; l < Lanes; ++l) lanes[l].reset();
    for (int32_t id = sd.begin; id < sd.end; ++id) {
      for (int32_t ih = sh.begin; ih < sh.end; ++ih) {
        const T* row = plane + id * xs.d + ih * xs.h;
        // Tap number in window order (depth, height, width), less the width start.
        const int32_t row_tap = ((id - sd.start) * g.window[1] + (ih - sh.start)) * g.window[2] - sw.start;
#pragma unroll 4
        for (int32_t iw = sw.begin; iw < sw.end; ++iw) {
          const lane_pack<T, Lanes> v = load_pack<T, Lanes>(row + iw * xs.w);
#pragma unroll
          for (int l = 0; l < Lanes; ++l) lanes[l].take(to_float(v.v[l]), row_tap + iw);
        }
      }
    }

    Out* at = out + o.n * os.n + o.c * os.c + o.d * os.d + o.h * os.h + o.w * os.w;
    lane_pack<Out, Lanes> result;
    if constexpr (Op == pool_op::argmax) {
#pragma unroll
      for (int l = 0; l < Lanes; ++l) result.v[l] = static_cast<Out>(lanes[l].tap);  // -1: no tap
    } else {
      const int32_t inside = (sd.end - sd.begin) * (sh.end - sh.begin) * (sw.end - sw.begin);
      lane_pack<Out, Lanes> old{};
      if (beta != 0.0f) old = load_pack<Out, Lanes>(at);  // never read when beta is 0 (NaN poison)
#pragma unroll
      for (int l = 0; l < Lanes; ++l)
        result.v[l] = blend(lanes[l].result(inside, g.window_size), alpha, beta, old.v[l]);
    }
    store_pack<Out, Lanes>(at, result);
  }
}

// Backward gather: one work item is one dx position and `Lanes` channels; it sums dy over the
// outputs whose windows contain it, in output order. Op is avg_include_pad, avg_exclude_pad, or
// argmax (max pooling: dy counts where the first pass's winning tap is this element's tap).
template <typename T, typename Tap, int Lanes, walk W, pool_op Op>
__global__ void __launch_bounds__(threads_per_block)
    pool_gather_kernel(const T* __restrict__ dy, operand_strides dys, const Tap* __restrict__ taps,
                       operand_strides ts, T* __restrict__ dx, operand_strides dxs, pool_geometry g,
                       int64_t items, float alpha, float beta) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items;
       item += step) {
    const element_coord e = walk_coord<W, Lanes>(item, g.c, g.in);
    const output_span od = covering_outputs(e.d, 0, g);
    const output_span oh = covering_outputs(e.h, 1, g);
    const output_span ow = covering_outputs(e.w, 2, g);
    const T* dy_plane = dy + e.n * dys.n + e.c * dys.c;

    float sum[Lanes];
#pragma unroll
    for (int l = 0; l < Lanes; ++l) sum[l] = 0.0f;
    for (int32_t d = od.first; d <= od.last; ++d) {
      const tap_span sd = window_taps(d, 0, g);
      for (int32_t h = oh.first; h <= oh.last; ++h) {
        const tap_span sh = window_taps(h, 1, g);
        const int32_t row_tap = ((e.d - sd.start) * g.window[1] + (e.h - sh.start)) * g.window[2];
        for (int32_t w = ow.first; w <= ow.last; ++w) {
          const tap_span sw = window_taps(w, 2, g);
          const int64_t at = d * dys.d + h * dys.h + w * dys.w;
          if constexpr (Op == pool_op::argmax) {
            const int32_t tap = row_tap + (e.w - sw.start);
            const lane_pack<Tap, Lanes> won =
                load_pack<Tap, Lanes>(taps + e.n * ts.n + e.c * ts.c + d * ts.d + h * ts.h + w * ts.w);
            bool any = false;
#pragma unroll
            for (int l = 0; l < Lanes; ++l) any |= won.v[l] == tap;
            if (any) {  // most outputs are won by another tap: skip their dy
              const lane_pack<T, Lanes> grad = load_pack<T, Lanes>(dy_plane + at);
#pragma unroll
              for (int l = 0; l < Lanes; ++l)
                if (won.v[l] == tap) sum[l] += to_float(grad.v[l]);
            }
          } else {
            const lane_pack<T, Lanes> grad = load_pack<T, Lanes>(dy_plane + at);
            if constexpr (Op == pool_op::avg_exclude_pad) {
              const float inside = static_cast<float>((sd.end - sd.begin) * (sh.end - sh.begin) *
                                                      (sw.end - sw.begin));
#pragma unroll
              for (int l = 0; l < Lanes; ++l) sum[l] += to_float(grad.v[l]) / inside;
            } else {
#pragma unroll
              for (int l = 0; l < Lanes; ++l) sum[l] += to_float(grad.v[l]);
            }
          }
        }
      }
    }

    T* out = dx + e.n * dxs.n + e.c * dxs.c + e.d * dxs.d + e.h * dxs.h + e.w * dxs.w;
    lane_pack<T, Lanes> old{};
    if (beta != 0.0f) old = load_pack<T, Lanes>(out);
    lane_pack<T, Lanes> result;
#pragma unroll
    for (int l = 0; l < Lanes; ++l) {
      // One division by the constant window size, after the sum, keeps integer sums exact.
      const float r = Op == pool_op::avg_include_pad ? sum[l] / static_cast<float>(g.window_size) : sum[l];
      result.v[l] = blend(r, alpha, beta, old.v[l]);
    }
    store_pack<T, Lanes>(out, result);
  }
}

// A tiled program (pooling_tiles.cuh) over every tile: its phases with a block barrier after
// each; phase 0 issues the cp.async copies, which each thread waits for before the barrier.
template <typename Program>
__global__ void __launch_bounds__(tile_threads, tile_blocks_per_sm) pool_tiles_kernel(const Program program) {
  extern __shared__ __align__(128) uint4 tile_shared[];
  // The trip count depends on blockIdx only, so every thread reaches every barrier.
  for (int64_t index = blockIdx.x; index < program.plan.count; index += gridDim.x) {
    const typename Program::tile tile = program.tile_at(index);
#pragma unroll
    for (int phase = 0; phase < Program::phases; ++phase) {
      program.run_phase(phase, tile, tile_shared, threadIdx.x, blockDim.x);
      if (phase == 0) tile_copies_wait();
      __syncthreads();
    }
  }
}

// ---- launch ------------------------------------------------------------------------------------

template <typename T, walk W>
constexpr int lanes_of() {
  return W == walk::channel_vectors ? static_cast<int>(16 / sizeof(T)) : 1;
}

int64_t work_items(const pool_geometry& g, const int32_t (&extent)[spatial_slots], int lanes) {
  return g.n * (g.c / lanes) * extent[0] * extent[1] * static_cast<int64_t>(extent[2]);
}

template <typename F>
void with_walk(walk w, F&& f) {
  switch (w) {
    case walk::channel_vectors: f(std::integral_constant<walk, walk::channel_vectors>{}); return;
    case walk::channels: f(std::integral_constant<walk, walk::channels>{}); return;
    case walk::planes: f(std::integral_constant<walk, walk::planes>{}); return;
    case walk::spatial: f(std::integral_constant<walk, walk::spatial>{}); return;
  }
  throw status_error(TSRP_STATUS_INTERNAL_ERROR, "pooling: unknown walk");
}

template <typename F>
void with_op(pool_op op, F&& f) {
  switch (op) {
    case pool_op::max_skip_nan: f(std::integral_constant<pool_op, pool_op::max_skip_nan>{}); return;
    case pool_op::max_propagate_nan: f(std::integral_constant<pool_op, pool_op::max_propagate_nan>{}); return;
    case pool_op::avg_include_pad: f(std::integral_constant<pool_op, pool_op::avg_include_pad>{}); return;
    case pool_op::avg_exclude_pad: f(std::integral_constant<pool_op, pool_op::avg_exclude_pad>{}); return;
    case pool_op::argmax: f(std::integral_constant<pool_op, pool_op::argmax>{}); return;
  }
  throw status_error(TSRP_STATUS_INTERNAL_ERROR, "pooling: unknown operation");
}

// One pass of pool_window_kernel over every output.
template <typename T, typename Out, pool_op Op>
void launch_window(const cuda_context& ctx, walk w, const pool_geometry& g, const T* x,
                   const operand_strides& xs, Out* out, const operand_strides& os, float alpha,
                   float beta) {
  with_walk(w, [&](auto walk_tag) {
    constexpr walk W = decltype(walk_tag)::value;
    constexpr int lanes = lanes_of<T, W>();
    const int64_t items = work_items(g, g.out, lanes);
    if (items == 0) return;
    const unsigned int blocks = ctx.grid_stride_blocks(items, threads_per_block);
    pool_window_kernel<T, Out, lanes, W, Op>
        <<<blocks, threads_per_block, 0, ctx.stream()>>>(x, xs, out, os, g, items, alpha, beta);
  });
}

// One pass of pool_gather_kernel over every dx element.
template <typename T, typename Tap, pool_op Op>
void launch_gather(const cuda_context& ctx, walk w, const pool_geometry& g, const T* dy,
                   const operand_strides& dys, const Tap* taps, const operand_strides& ts, T* dx,
                   const operand_strides& dxs, float alpha, float beta) {
  with_walk(w, [&](auto walk_tag) {
    constexpr walk W = decltype(walk_tag)::value;
    constexpr int lanes = lanes_of<T, W>();
    const int64_t items = work_items(g, g.in, lanes);
    if (items == 0) return;
    const unsigned int blocks = ctx.grid_stride_blocks(items, threads_per_block);
    pool_gather_kernel<T, Tap, lanes, W, Op><<<blocks, threads_per_block, 0, ctx.stream()>>>(
        dy, dys, taps, ts, dx, dxs, g, items, alpha, beta);
  });
}

// One launch of pool_tiles_kernel: a block per tile while the grid allows.
template <typename Program>
void launch_tiles(const cuda_context& ctx, const Program& program) {
  const auto kernel = pool_tiles_kernel<Program>;
  // Always the budget, never the plan's own size, so calls from several threads cannot lower
  // the limit under each other's launch. Per device and cheap, and not a stream operation, so it
  // is allowed during graph capture; the carveout asks for the shared memory of three blocks.
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, tile_shared_budget),
             "cudaFuncSetAttribute(max dynamic shared memory) of the pooling tiles");
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
             "cudaFuncSetAttribute(shared memory carveout) of the pooling tiles");
  const unsigned int blocks =
      static_cast<unsigned int>(std::min<int64_t>(program.plan.count, std::numeric_limits<int32_t>::max()));
  kernel<<<blocks, tile_threads, program.plan.shared_bytes, ctx.stream()>>>(program);
}

template <typename T, pool_op Op>
void launch_forward_tiles(const cuda_context& ctx, const tile_plan& plan, const pool_geometry& g, const T* x,
                          const operand_strides& xs, T* y, const operand_strides& ys, float alpha, float beta) {
  forward_tile_program<T, Op> program{x, xs, y, ys, g, plan, alpha, beta};
  launch_tiles(ctx, program);
}

template <typename T, typename Tap, pool_op Op>
void launch_backward_tiles(const cuda_context& ctx, const tile_plan& plan, const pool_geometry& g, const T* x,
                           const operand_strides& xs, const T* dy, const operand_strides& dys, T* dx,
                           const operand_strides& dxs, float alpha, float beta) {
  backward_tile_program<T, Tap, Op> program{x, xs, dy, dys, dx, dxs, g, plan, alpha, beta};
  launch_tiles(ctx, program);
}

// ---- host checks -------------------------------------------------------------------------------

enum class pool_path { nhwc_vec, nchw, strided };

bool aligned_16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int vector_lanes(int32_t data_type) { return data_type == TSRP_DATA_FLOAT ? 4 : 8; }

bool narrow_taps(const tsrpPoolingProblem& p) { return make_geometry(p).window_size <= max_narrow_window; }

std::string quoted(const char* name) { return std::string("tensor '") + name + "'"; }

std::string tensor_reason(const tsrpPoolingProblem& p, const tsrpTensor& t, const char* name) {
  if (t.ndims != p.spatial_dims + 2)
    return quoted(name) + " has " + std::to_string(t.ndims) + " dims, expected spatial_dims + 2 = " +
           std::to_string(p.spatial_dims + 2);
  if (!is_floating_storage(t.data_type))
    return quoted(name) + " is " + data_type_name(t.data_type) + ": pooling takes float, half and bfloat16";
  if (t.data_type != p.x.data_type)
    return quoted(name) + " is " + data_type_name(t.data_type) + " but x is " +
           data_type_name(p.x.data_type) + " (one data type per call)";
  for (int d = 0; d < t.ndims; ++d) {
    if (t.dims[d] < 0) return quoted(name) + " has a negative dim " + std::to_string(d);
    if (t.dims[d] > int32_limit)
      return quoted(name) + " dim " + std::to_string(d) + " is " + std::to_string(t.dims[d]) +
             ", more than 2^31 - 1";
    if (t.strides[d] < 0) return quoted(name) + " has a negative stride in dim " + std::to_string(d);
  }
  return {};
}

// Everything every pooling kernel needs, whatever the layout.
std::string problem_reason(const tsrpPoolingProblem& p, bool backward) {
  if (p.mode != TSRP_POOLING_MAX && p.mode != TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING &&
      p.mode != TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)
    return "unknown pooling mode " + std::to_string(p.mode);
  if (p.nan_propagation != TSRP_NOT_PROPAGATE_NAN && p.nan_propagation != TSRP_PROPAGATE_NAN)
    return "unknown nan_propagation " + std::to_string(p.nan_propagation);
  if (p.spatial_dims != 2 && p.spatial_dims != 3)
    return "spatial_dims is " + std::to_string(p.spatial_dims) + ", expected 2 or 3";
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {&p.y, "y"}, {&p.dy, "dy"}, {&p.dx, "dx"}};
  for (int i = 0; i < (backward ? 4 : 2); ++i) {
    const std::string why = tensor_reason(p, *tensors[i].first, tensors[i].second);
    if (!why.empty()) return why;
  }
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.x.dims[1])
    return "tensor 'y' must have x's N and C";
  int64_t window_size = 1;
  for (int i = 0; i < p.spatial_dims; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    if (p.window[i] < 1 || p.window[i] > int32_limit)
      return "window" + at + " is " + std::to_string(p.window[i]) + ", expected 1 to 2^31 - 1";
    if (p.stride[i] < 1 || p.stride[i] > int32_limit)
      return "stride" + at + " is " + std::to_string(p.stride[i]) + ", expected 1 to 2^31 - 1";
    if (p.pad_before[i] < 0 || p.pad_before[i] >= p.window[i] || p.pad_after[i] < 0 ||
        p.pad_after[i] >= p.window[i])
      return "pad_before" + at + " = " + std::to_string(p.pad_before[i]) + " or pad_after" + at + " = " +
             std::to_string(p.pad_after[i]) + " is outside [0, window" + at + ")";
    const int64_t padded = p.x.dims[2 + i] + p.pad_before[i] + p.pad_after[i];
    if (padded > int32_limit)
      return "padded spatial dim " + std::to_string(i) + " of x is " + std::to_string(padded) +
             ", more than 2^31 - 1";
    const int64_t expected = padded >= p.window[i] ? (padded - p.window[i]) / p.stride[i] + 1 : 0;
    if (p.y.dims[2 + i] != expected)
      return "tensor 'y' spatial dim " + std::to_string(i) + " is " + std::to_string(p.y.dims[2 + i]) +
             ", expected " + std::to_string(expected);
    window_size *= p.window[i];
    if (window_size > int32_limit) return "the window has more than 2^31 - 1 taps";
  }
  if (backward) {
    if (!same_dims(p.dy, p.y)) return "tensor 'dy' must have y's dims";
    if (!same_dims(p.dx, p.x)) return "tensor 'dx' must have x's dims";
  }
  return {};
}

// pool_*_nhwc_vec: every offset a thread forms is a multiple of the vector's lanes.
std::string channel_vector_reason(const tsrpTensor& t, const char* name) {
  const int lanes = vector_lanes(t.data_type);
  if (t.dims[1] % lanes != 0)
    return quoted(name) + " has C = " + std::to_string(t.dims[1]) + ", not a multiple of the " +
           std::to_string(lanes) + " " + data_type_name(t.data_type) + " channels of a 16-byte vector";
  if (t.dims[1] > 1 && t.strides[1] != 1)
    return quoted(name) + " is not channels-last: its C stride is " + std::to_string(t.strides[1]) +
           ", not 1";
  for (int d = 0; d < t.ndims; ++d) {
    if (d != 1 && t.dims[d] > 1 && t.strides[d] % lanes != 0)
      return quoted(name) + " has stride " + std::to_string(t.strides[d]) + " in dim " + std::to_string(d) +
             ", not a multiple of " + std::to_string(lanes) + " (16-byte vectors)";
  }
  return {};
}

std::string packed_nchw_reason(const tsrpTensor& t, const char* name) {
  if (!is_packed_row_major(t)) return quoted(name) + " is not packed NCHW / NCDHW";
  return {};
}

std::string layout_reason(pool_path path, const tsrpTensor& t, const char* name) {
  switch (path) {
    case pool_path::nhwc_vec: return channel_vector_reason(t, name);
    case pool_path::nchw: return packed_nchw_reason(t, name);
    case pool_path::strided: return {};
  }
  return "unknown pooling path";
}

std::string forward_support(pool_path path, const tsrpPoolingProblem& p) {
  std::string why = problem_reason(p, false);
  if (why.empty()) why = layout_reason(path, p.x, "x");
  if (why.empty()) why = layout_reason(path, p.y, "y");
  return why;
}

std::string backward_support(pool_path path, const tsrpPoolingProblem& p) {
  std::string why = problem_reason(p, true);
  if (why.empty()) why = layout_reason(path, p.dy, "dy");
  if (why.empty()) why = layout_reason(path, p.dx, "dx");
  // Only max pooling reads x (to find each window's winner); y is never read.
  if (why.empty() && p.mode == TSRP_POOLING_MAX) why = layout_reason(path, p.x, "x");
  return why;
}

// C fastest keeps accesses to `t` coalesced when its C stride is smaller than every other stride
// that matters.
bool channels_innermost(const tsrpTensor& t) {
  if (t.dims[1] <= 1) return false;
  for (int d = 0; d < t.ndims; ++d) {
    if (d != 1 && t.dims[d] > 1 && t.strides[d] <= t.strides[1]) return false;
  }
  return true;
}

pool_op forward_op(const tsrpPoolingProblem& p) {
  switch (p.mode) {
    case TSRP_POOLING_MAX:
      return p.nan_propagation == TSRP_PROPAGATE_NAN ? pool_op::max_propagate_nan : pool_op::max_skip_nan;
    case TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING: return pool_op::avg_include_pad;
    default: return pool_op::avg_exclude_pad;
  }
}

// ---- host runs ---------------------------------------------------------------------------------

void run_forward(pool_path path, cuda_context& ctx, const tsrpPoolingProblem& p, const tsrpPoolingArgs& a) {
  const int64_t x_count = element_count(p.x), y_count = element_count(p.y);
  require_pointer(a.x, x_count, "x");
  require_pointer(a.y, y_count, "y");
  if (x_count == 0 || y_count == 0) return;

  pool_geometry g = make_geometry(p);
  operand_strides xs = strides_of(p.x, p.spatial_dims), ys = strides_of(p.y, p.spatial_dims);
  walk w = walk::spatial;
  switch (path) {
    case pool_path::nhwc_vec:
      // Misaligned pointers keep the channels-fastest walk, one element per thread.
      w = aligned_16(a.x) && aligned_16(a.y) ? walk::channel_vectors : walk::channels;
      break;
    case pool_path::nchw:
      w = walk::planes;
      xs = merge_planes(xs, g.c);
      ys = merge_planes(ys, g.c);
      g = merge_planes(g);
      break;
    case pool_path::strided: w = channels_innermost(p.y) ? walk::channels : walk::spatial; break;
  }
  // Channel vectors go through shared-memory tiles unless no tile fits (huge windows) or a
  // stride exceeds its window; then one thread per output reads its window from global memory.
  // Windows that do not overlap at all (stride = window in some dims, beyond it in the others: the
  // 3-D U-Net's 2x2x2/2) go to the direct kernel too: each input is read by one window only, so a
  // tile's staging in shared memory saves no reads. On the H200 (2026-12-05, ~12:00 UTC,
  // tools/gpu/device_run.sh variants pool_disjoint; cuDNN's time / ours in the same process) the
  // U-Net's three fp16 pools ran at 1.89, 1.07 and 0.98 on the direct kernel against 0.11, 0.36
  // and 0.74 on the tiles. TESSERA_CUDA_POOL_DISJOINT_DIRECT=0 sends them to the tiles, to measure.
  static const bool disjoint_direct = launch_override("TESSERA_CUDA_POOL_DISJOINT_DIRECT", 1, 0, 1) == 1;
  // Max pooling only: the measurement was of max pools; average pooling keeps the tiles.
  bool disjoint = p.mode == TSRP_POOLING_MAX;
  for (int d = 0; d < spatial_slots; ++d) disjoint = disjoint && g.stride[d] >= g.window[d];
  const tile_plan plan = w == walk::channel_vectors && !(disjoint_direct && disjoint)
                             ? choose_tile_plan(g, vector_lanes(p.x.data_type), false, 0, ctx.sm_count())
                             : tile_plan{};
  // Max pooling 3x3 at stride 2 runs its own kernel (pooling_max3x3s2.cuh): 2.98 against the
  // tiles' 2.66 TB/s on the H200 (night run 5 of 2026-12-03). TESSERA_CUDA_POOL_FWD_MAX3X3S2=0
  // sends it to the tiles, to measure.
  static const bool own_max3x3s2 = launch_override("TESSERA_CUDA_POOL_FWD_MAX3X3S2", 1, 0, 1) != 0;
  const bool max3x3s2 = own_max3x3s2 && p.mode == TSRP_POOLING_MAX && w == walk::channel_vectors &&
                        max3x3s2_fits(g, vector_lanes(p.x.data_type));
  dispatch_storage_type(p.x.data_type, [&](auto type_tag) {
    using T = decltype(type_tag);
    with_op(forward_op(p), [&](auto op_tag) {
      constexpr pool_op Op = decltype(op_tag)::value;
      if constexpr (Op != pool_op::argmax) {
        const T* x = static_cast<const T*>(a.x);
        T* y = static_cast<T*>(a.y);
        if constexpr (Op == pool_op::max_skip_nan || Op == pool_op::max_propagate_nan) {
          if (max3x3s2) {
            constexpr int lanes = static_cast<int>(16 / sizeof(T));
            const int64_t strips = (g.out[1] + max3x3s2_strip - 1) / max3x3s2_strip;
            // The kernel's columns (bit 0: 2) and rows (bit 1: 2) per step, to measure.
            static const int form = launch_override("TESSERA_CUDA_POOL_FWD_MAX3X3S2_FORM", 0, 0, 3);
            const auto launch_form = [&](auto cols, auto rows) {
              constexpr int Cols = decltype(cols)::value, Rows = decltype(rows)::value;
              const int64_t items = g.n * strips * ((g.out[2] + Cols - 1) / Cols) * (g.c / lanes);
              const unsigned int blocks =
                  static_cast<unsigned int>((items + max3x3s2_threads - 1) / max3x3s2_threads);
              pool_fwd_max3x3s2_kernel<T, lanes, Op, Cols, Rows>
                  <<<blocks, max3x3s2_threads, 0, ctx.stream()>>>(x, xs, y, ys, g, items, a.alpha, a.beta);
            };
            using one = std::integral_constant<int, 1>;
            using two = std::integral_constant<int, 2>;
            switch (form) {
              case 1: launch_form(two{}, one{}); break;
              case 2: launch_form(one{}, two{}); break;
              case 3: launch_form(two{}, two{}); break;
              default: launch_form(one{}, one{}); break;
            }
            return;
          }
        }
        if (plan.count > 0) {
          launch_forward_tiles<T, Op>(ctx, plan, g, x, xs, y, ys, a.alpha, a.beta);
        } else {
          launch_window<T, T, Op>(ctx, w, g, x, xs, y, ys, a.alpha, a.beta);
        }
      }
    });
  });
}

size_t backward_workspace(const tsrpPoolingProblem& p) {
  if (p.mode != TSRP_POOLING_MAX) return 0;
  const int64_t outputs = element_count(p.dy);
  if (outputs == 0 || element_count(p.dx) == 0) return 0;
  const size_t tap_bytes = narrow_taps(p) ? sizeof(uint8_t) : sizeof(int32_t);
  return static_cast<size_t>(outputs) * tap_bytes + workspace_alignment;
}

void run_backward(pool_path path, cuda_context& ctx, const tsrpPoolingProblem& p, const tsrpPoolingArgs& a,
                  void* workspace) {
  const bool max = p.mode == TSRP_POOLING_MAX;
  const int64_t x_count = element_count(p.x), dy_count = element_count(p.dy);
  const int64_t dx_count = element_count(p.dx);
  if (max) require_pointer(a.x, x_count, "x");
  require_pointer(a.dy, dy_count, "dy");
  require_pointer(a.dx, dx_count, "dx");
  if (dx_count == 0 || dy_count == 0) return;

  pool_geometry g = make_geometry(p);
  operand_strides xs = strides_of(p.x, p.spatial_dims), dys = strides_of(p.dy, p.spatial_dims);
  operand_strides dxs = strides_of(p.dx, p.spatial_dims);
  // The winning taps are laid out like dy, so the gather reads both with one pattern; the first
  // pass walks them in memory order.
  bool taps_channels_last = true;
  walk first_pass = walk::channels, gather = walk::channels;
  switch (path) {
    case pool_path::nhwc_vec: {
      const bool vectors = aligned_16(a.dy) && aligned_16(a.dx) && (!max || aligned_16(a.x));
      first_pass = gather = vectors ? walk::channel_vectors : walk::channels;
      break;
    }
    case pool_path::nchw:
      taps_channels_last = false;
      first_pass = gather = walk::planes;
      break;
    case pool_path::strided:
      taps_channels_last = channels_innermost(p.dy);
      first_pass = taps_channels_last ? walk::channels : walk::spatial;
      gather = channels_innermost(p.dx) ? walk::channels : walk::spatial;
      break;
  }
  operand_strides ts = dense_strides(g, g.out, taps_channels_last);
  if (path == pool_path::nchw) {
    xs = merge_planes(xs, g.c);
    dys = merge_planes(dys, g.c);
    dxs = merge_planes(dxs, g.c);
    ts = merge_planes(ts, g.c);
    g = merge_planes(g);
  }
  // Max pooling 3x3 at stride 2 over channel vectors has a kernel of its own (its header says
  // why): 1.47 against the tiles' 1.12 TB/s on the H200 (night run 5 of 2026-12-03).
  // TESSERA_CUDA_POOL_MAX3X3S2=0 sends it to the tiles instead, to measure.
  static const bool own_max3x3s2 = launch_override("TESSERA_CUDA_POOL_MAX3X3S2", 1, 0, 1) != 0;
  // Its form (the header says how they differ; same results, bit for bit): 1, the shuffle form,
  // takes the left window from the neighbouring lane, carries the shared tap row and reduces two
  // lanes per instruction: 0.394 against 0.681 ms for 0, which finds both windows of a step from
  // x (kernels alone, fp16 N=256 C=64 112x112, H200, 2026-12-04).
  // TESSERA_CUDA_POOL_BWD_MAX3X3S2_FORM=0 picks the other, to measure.
  static const bool shuffle_form = launch_override("TESSERA_CUDA_POOL_BWD_MAX3X3S2_FORM", 1, 0, 1) != 0;
  if (max && own_max3x3s2 && first_pass == walk::channel_vectors &&
      max3x3s2_fits(g, vector_lanes(p.x.data_type))) {
    dispatch_storage_type(p.x.data_type, [&](auto type_tag) {
      using T = decltype(type_tag);
      constexpr int lanes = static_cast<int>(16 / sizeof(T));
      const int64_t strips = (max3x3s2_blocks(g.in[1], g.pad[1]) + max3x3s2_strip - 1) / max3x3s2_strip;
      const int64_t items = g.n * strips * max3x3s2_blocks(g.in[2], g.pad[2]) * (g.c / lanes);
      const unsigned int blocks = static_cast<unsigned int>((items + max3x3s2_threads - 1) / max3x3s2_threads);
      const T* x = static_cast<const T*>(a.x);
      const T* dy = static_cast<const T*>(a.dy);
      T* dx = static_cast<T*>(a.dx);
      if (shuffle_form) {
        pool_bwd_max3x3s2_shuffle_kernel<T, lanes>
            <<<blocks, max3x3s2_threads, 0, ctx.stream()>>>(x, xs, dy, dys, dx, dxs, g, items, a.alpha, a.beta);
      } else {
        pool_bwd_max3x3s2_kernel<T, lanes>
            <<<blocks, max3x3s2_threads, 0, ctx.stream()>>>(x, xs, dy, dys, dx, dxs, g, items, a.alpha, a.beta);
      }
    });
    return;
  }
  // Channel vectors go through shared-memory tiles (one launch, no workspace) unless no tile
  // fits; then the two passes below, with the winners in the workspace.
  tile_plan plan{};
  if (first_pass == walk::channel_vectors) {
    const int lanes = vector_lanes(p.x.data_type);
    const int32_t tap_pack_bytes = !max ? 0 : lanes * static_cast<int32_t>(narrow_taps(p) ? 1 : 4);
    plan = choose_tile_plan(g, lanes, true, tap_pack_bytes, ctx.sm_count());
  }
  if (plan.count > 0) {
    dispatch_storage_type(p.x.data_type, [&](auto type_tag) {
      using T = decltype(type_tag);
      const T* x = static_cast<const T*>(a.x);
      const T* dy = static_cast<const T*>(a.dy);
      T* dx = static_cast<T*>(a.dx);
      if (!max) {
        with_op(forward_op(p), [&](auto op_tag) {
          constexpr pool_op Op = decltype(op_tag)::value;
          if constexpr (Op == pool_op::avg_include_pad || Op == pool_op::avg_exclude_pad)
            launch_backward_tiles<T, uint8_t, Op>(ctx, plan, g, x, xs, dy, dys, dx, dxs, a.alpha, a.beta);
        });
      } else if (narrow_taps(p)) {
        launch_backward_tiles<T, uint8_t, pool_op::argmax>(ctx, plan, g, x, xs, dy, dys, dx, dxs, a.alpha, a.beta);
      } else {
        launch_backward_tiles<T, int32_t, pool_op::argmax>(ctx, plan, g, x, xs, dy, dys, dx, dxs, a.alpha, a.beta);
      }
    });
    return;
  }

  void* taps = nullptr;
  if (max) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(workspace);
    taps = reinterpret_cast<void*>((base + workspace_alignment - 1) & ~(uintptr_t{workspace_alignment} - 1));
  }

  dispatch_storage_type(p.x.data_type, [&](auto type_tag) {
    using T = decltype(type_tag);
    const T* dy = static_cast<const T*>(a.dy);
    T* dx = static_cast<T*>(a.dx);
    const auto route_max = [&](auto tap_tag) {
      using Tap = decltype(tap_tag);
      Tap* winners = static_cast<Tap*>(taps);
      launch_window<T, Tap, pool_op::argmax>(ctx, first_pass, g, static_cast<const T*>(a.x), xs, winners,
                                             ts, 1.0f, 0.0f);
      launch_gather<T, Tap, pool_op::argmax>(ctx, gather, g, dy, dys, winners, ts, dx, dxs, a.alpha, a.beta);
    };
    if (!max) {
      // Average backward reads dy only: no taps, no workspace.
      with_op(forward_op(p), [&](auto op_tag) {
        constexpr pool_op Op = decltype(op_tag)::value;
        if constexpr (Op == pool_op::avg_include_pad || Op == pool_op::avg_exclude_pad) {
          const uint8_t* no_taps = nullptr;
          launch_gather<T, uint8_t, Op>(ctx, gather, g, dy, dys, no_taps, ts, dx, dxs, a.alpha, a.beta);
        }
      });
    } else if (narrow_taps(p)) {
      route_max(uint8_t{});
    } else {
      route_max(int32_t{});
    }
  });
}

// ---- kernel table ------------------------------------------------------------------------------

constexpr const char* forward_notes =
    "fp32 arithmetic (fp16/bf16 widened, rounded once to nearest even on store). Max: NaN taps are "
    "skipped unless nan_propagation is PROPAGATE or the whole window is NaN. Average sums in window "
    "order in fp32 and divides once. One thread per output, no atomics: bitwise reproducible.";

constexpr const char* backward_notes =
    "Gather without atomics (bitwise reproducible): each dx element sums, in fp32 and output order, "
    "dy of the outputs whose windows contain it. Max recomputes each window's winner from x (y is not "
    "read): the first maximal tap in window order, NaN never wins; a first pass writes the winners to "
    "the workspace (1 byte per output for windows of up to 255 taps, else 4), or, for aligned "
    "channels-last tensors, shared-memory tiles keep them on chip. Average exclude-padding "
    "adds dy / taps inside; include-padding divides the sum once by the window size.";

constexpr const char* forward_name(pool_path path) {
  switch (path) {
    case pool_path::nhwc_vec: return "pool_fwd_nhwc_vec";
    case pool_path::nchw: return "pool_fwd_nchw";
    case pool_path::strided: return "pool_fwd_strided";
  }
  return "pool_fwd";
}

constexpr const char* backward_name(pool_path path) {
  switch (path) {
    case pool_path::nhwc_vec: return "pool_bwd_nhwc_vec";
    case pool_path::nchw: return "pool_bwd_nchw";
    case pool_path::strided: return "pool_bwd_strided";
  }
  return "pool_bwd";
}

template <pool_path Path>
struct pool_forward_traits {
  using problem_type = tsrpPoolingProblem;
  using args_type = tsrpPoolingArgs;
  static constexpr const char* name = forward_name(Path);
  static constexpr int32_t operation = TSRP_OP_POOLING_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = forward_notes;
  static std::string support(const problem_type& p) { return forward_support(Path, p); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    run_forward(Path, ctx, p, a);
  }
};

template <pool_path Path>
struct pool_backward_traits {
  using problem_type = tsrpPoolingProblem;
  using args_type = tsrpPoolingArgs;
  static constexpr const char* name = backward_name(Path);
  static constexpr int32_t operation = TSRP_OP_POOLING_BACKWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = backward_notes;
  static std::string support(const problem_type& p) { return backward_support(Path, p); }
  static size_t workspace(const problem_type& p) { return backward_workspace(p); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    run_backward(Path, ctx, p, a, workspace);
  }
};

}  // namespace

void add_pooling_kernels(kernel_list& out) {
  out.push_back(make_kernel<pool_forward_traits<pool_path::nhwc_vec>>());
  out.push_back(make_kernel<pool_forward_traits<pool_path::nchw>>());
  out.push_back(make_kernel<pool_forward_traits<pool_path::strided>>());
  out.push_back(make_kernel<pool_backward_traits<pool_path::nhwc_vec>>());
  out.push_back(make_kernel<pool_backward_traits<pool_path::nchw>>());
  out.push_back(make_kernel<pool_backward_traits<pool_path::strided>>());
}

}  // namespace tessera::cuda
