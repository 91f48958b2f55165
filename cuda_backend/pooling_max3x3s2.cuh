// Max pooling with the 3x3 window at stride 2 (ResNet's and most CNNs' stem pool) over
// channels-last tensors: kernels of their own for both directions, one launch each, no shared
// memory, barriers or workspace.
//
// Backward. The tiled backward (pooling_tiles.cuh) reached 26 % of the copy bandwidth on the
// H200 (1.1 TB/s, 2026-12-03): each tile copies an x patch and a dy halo through shared memory,
// recomputes its halo's winners and pays a barrier per phase, with at most three 72 KB tiles per
// SM. Here every thread owns the 2x2 block of dx that one stride cell holds:
//   dx rows 2*bh - pad_h + r, columns 2*bw - pad_w + c  (r, c in {0, 1}),
// and with a 3-wide window at stride 2 the outputs covering that block are only
//   (bh-1, bw-1), (bh-1, bw), (bh, bw-1), (bh, bw):
// element (0, 0) of the block is tap (2,2), (2,0), (0,2) and (0,0) of those four windows,
// (0, 1) tap (2,1) of (bh-1, bw) and (0,1) of (bh, bw), (1, 0) tap (1,2) of (bh, bw-1) and
// (1,0) of (bh, bw), and (1, 1) only tap (1,1) of (bh, bw). A thread walks a strip of block rows
// downwards, so the winners and dy of output row bh-1 are the previous step's: each step finds
// the winners of two windows, (bh, bw-1) and (bh, bw), from x (18 vector loads, which L1 and L2
// serve: DRAM sees x about once) and reads two dy vectors. Every dx element is written exactly
// once, sums its dy terms in output order, ties go to the first tap in window order and NaN never
// wins (lane_reduction<argmax>): the same results, bit for bit, as the two-pass and tiled kernels.
//
// Forward. One thread per 16 bytes of channels of a strip of outputs down a column, each output
// its 9 taps straight from global memory (L1 and L2 catch the overlap), the reduction of
// lane_reduction in window order: the tiled forward's results bit for bit.
// H200, N=256 C=64 112x112 fp16 (night run 5 of 2026-12-03): backward 0.699 ms against the
// tiles' 0.914 (1.47 vs 1.12 TB/s), forward 0.172 against 0.193 ms (2.98 vs 2.66 TB/s).
#pragma once

#include "pooling_geometry.cuh"
#include "pooling_reduction.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::pooling {

constexpr int max3x3s2_threads = 256;
constexpr int max3x3s2_strip = 8;  // block rows per thread

// Problems these kernels take: 2-D (the depth slot 1), window 3x3, stride 2x2, padding 0 or 1 on
// the leading side (the trailing side only shapes `out`), C a whole number of vectors.
inline bool max3x3s2_fits(const pool_geometry& g, int lanes) {
  return g.in[0] == 1 && g.out[0] == 1 && g.window[0] == 1 && g.window[1] == 3 && g.window[2] == 3 &&
         g.stride[1] == 2 && g.stride[2] == 2 && g.pad[1] >= 0 && g.pad[1] <= 1 && g.pad[2] >= 0 &&
         g.pad[2] <= 1 && g.c % lanes == 0 && g.c >= lanes;
}

// Block rows (or columns) covering dx's `in` positions from -pad: ceil((in + pad) / 2).
__host__ __device__ __forceinline__ int32_t max3x3s2_blocks(int32_t in, int32_t pad) { return (in + pad + 1) / 2; }

#ifdef __CUDACC__

// The winners and dy of one output for every lane, packed so that the four outputs a step holds
// fit few registers: a tap (0-8 in window order) per lane in 4 bits, 15 for none, and dy as the
// raw vector it was loaded as. (Unpacked, as int and float arrays, the kernel took 112 registers:
// 2 blocks per SM.)
template <typename T, int Lanes>
struct max3x3s2_output {
  static_assert(Lanes <= 8, "one 32-bit word of 4-bit taps");
  uint32_t taps;
  lane_pack<T, Lanes> grad;
  __device__ __forceinline__ bool won(int lane, uint32_t tap) const { return ((taps >> (4 * lane)) & 0xFu) == tap; }
};

// Output (oh, ow)'s winners from x and its dy; an output outside y has no winner.
template <typename T, int Lanes>
__device__ __forceinline__ max3x3s2_output<T, Lanes> max3x3s2_winners(const T* x_plane, const operand_strides& xs,
                                                                      const T* dy_plane, const operand_strides& dys,
                                                                      const pool_geometry& g, int32_t oh, int32_t ow) {
  max3x3s2_output<T, Lanes> o;
  o.taps = 0xFFFFFFFFu;
  o.grad = lane_pack<T, Lanes>{};
  if (oh < 0 || oh >= g.out[1] || ow < 0 || ow >= g.out[2]) return o;
  lane_reduction<pool_op::argmax> lanes[Lanes];
#pragma unroll
  for (int l = 0; l < Lanes; ++l) lanes[l].reset();
  const int32_t h0 = 2 * oh - g.pad[1], w0 = 2 * ow - g.pad[2];
#pragma unroll
  for (int kh = 0; kh < 3; ++kh) {
    const int32_t ih = h0 + kh;
    if (ih < 0 || ih >= g.in[1]) continue;
#pragma unroll
    for (int kw = 0; kw < 3; ++kw) {
      const int32_t iw = w0 + kw;
      if (iw < 0 || iw >= g.in[2]) continue;
      const lane_pack<T, Lanes> v = load_pack<T, Lanes>(x_plane + ih * xs.h + iw * xs.w);
#pragma unroll
      for (int l = 0; l < Lanes; ++l) lanes[l].take(to_float(v.v[l]), kh * 3 + kw);
    }
  }
  uint32_t taps = 0;
#pragma unroll
  for (int l = 0; l < Lanes; ++l) taps |= (lanes[l].tap < 0 ? 0xFu : static_cast<uint32_t>(lanes[l].tap)) << (4 * l);
  if constexpr (Lanes < 8) taps |= 0xFFFFFFFFu << (4 * Lanes);  // unused lanes: no tap
  o.taps = taps;
  o.grad = load_pack<T, Lanes>(dy_plane + oh * dys.h + ow * dys.w);
  return o;
}

// One item: image n, channel vector v, block column bw, a strip of max3x3s2_strip block rows.
// Vectors fastest, then columns, so that a warp's loads of x, dy and dx fall in few lines.
template <typename T, int Lanes>
__global__ void __launch_bounds__(max3x3s2_threads, 3)
    pool_bwd_max3x3s2_kernel(const T* __restrict__ x, operand_strides xs, const T* __restrict__ dy,
                             operand_strides dys, T* __restrict__ dx, operand_strides dxs, pool_geometry g,
                             int64_t items, float alpha, float beta) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= items) return;
  const int32_t vectors = g.c / Lanes;
  const int32_t block_cols = max3x3s2_blocks(g.in[2], g.pad[2]);
  const int32_t block_rows = max3x3s2_blocks(g.in[1], g.pad[1]);
  const int32_t strips = (block_rows + max3x3s2_strip - 1) / max3x3s2_strip;
  int64_t rest = item;
  const int32_t v = static_cast<int32_t>(rest % vectors);
  rest /= vectors;
  const int32_t bw = static_cast<int32_t>(rest % block_cols);
  rest /= block_cols;
  const int32_t strip = static_cast<int32_t>(rest % strips);
  const int64_t n = rest / strips;
  const int32_t c = v * Lanes;
  const T* x_plane = x + n * xs.n + c * xs.c;
  const T* dy_plane = dy + n * dys.n + c * dys.c;
  T* dx_plane = dx + n * dxs.n + c * dxs.c;

  const int32_t first = strip * max3x3s2_strip;
  const int32_t last = min(first + max3x3s2_strip, block_rows);
  // Output row first - 1: the row above the strip's first block.
  max3x3s2_output<T, Lanes> up_left = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, first - 1, bw - 1);
  max3x3s2_output<T, Lanes> up = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, first - 1, bw);
  const int32_t j0 = 2 * bw - g.pad[2];
  for (int32_t bh = first; bh < last; ++bh) {
    const max3x3s2_output<T, Lanes> left = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, bh, bw - 1);
    const max3x3s2_output<T, Lanes> here = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, bh, bw);
    const int32_t i0 = 2 * bh - g.pad[1];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int32_t i = i0 + r;
      if (i < 0 || i >= g.in[1]) continue;
#pragma unroll
      for (int cc = 0; cc < 2; ++cc) {
        const int32_t j = j0 + cc;
        if (j < 0 || j >= g.in[2]) continue;
        float sum[Lanes];
#pragma unroll
        for (int l = 0; l < Lanes; ++l) {
          // Covering outputs in output order (row-major), each with the tap this element is.
          float s = 0.0f;
          if (r == 0 && cc == 0) {
            if (up_left.won(l, 8)) s += to_float(up_left.grad.v[l]);
            if (up.won(l, 6)) s += to_float(up.grad.v[l]);
            if (left.won(l, 2)) s += to_float(left.grad.v[l]);
            if (here.won(l, 0)) s += to_float(here.grad.v[l]);
          } else if (r == 0) {
            if (up.won(l, 7)) s += to_float(up.grad.v[l]);
            if (here.won(l, 1)) s += to_float(here.grad.v[l]);
          } else if (cc == 0) {
            if (left.won(l, 5)) s += to_float(left.grad.v[l]);
            if (here.won(l, 3)) s += to_float(here.grad.v[l]);
          } else {
            if (here.won(l, 4)) s += to_float(here.grad.v[l]);
          }
          sum[l] = s;
        }
        T* out = dx_plane + i * dxs.h + j * dxs.w;
        lane_pack<T, Lanes> old{};
        if (beta != 0.0f) old = load_pack<T, Lanes>(out);  // never read when beta is 0 (NaN poison)
        lane_pack<T, Lanes> result;
#pragma unroll
        for (int l = 0; l < Lanes; ++l) result.v[l] = blend(sum[l], alpha, beta, old.v[l]);
        store_pack<T, Lanes>(out, result);
      }
    }
    up_left = left;
    up = here;
  }
}

// Forward: one item is image n, channel vector v, output column ow and a strip of output rows.
template <typename T, int Lanes, pool_op Op>
__global__ void __launch_bounds__(max3x3s2_threads)
    pool_fwd_max3x3s2_kernel(const T* __restrict__ x, operand_strides xs, T* __restrict__ y, operand_strides ys,
                             pool_geometry g, int64_t items, float alpha, float beta) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= items) return;
  const int32_t vectors = g.c / Lanes;
  const int32_t strips = (g.out[1] + max3x3s2_strip - 1) / max3x3s2_strip;
  int64_t rest = item;
  const int32_t v = static_cast<int32_t>(rest % vectors);
  rest /= vectors;
  const int32_t ow = static_cast<int32_t>(rest % g.out[2]);
  rest /= g.out[2];
  const int32_t strip = static_cast<int32_t>(rest % strips);
  const int64_t n = rest / strips;
  const int32_t c = v * Lanes;
  const T* x_plane = x + n * xs.n + c * xs.c;
  T* y_plane = y + n * ys.n + c * ys.c;
  const int32_t w0 = 2 * ow - g.pad[2];
  const int32_t last = min((strip + 1) * max3x3s2_strip, g.out[1]);
  for (int32_t oh = strip * max3x3s2_strip; oh < last; ++oh) {
    lane_reduction<Op> lanes[Lanes];
#pragma unroll
    for (int l = 0; l < Lanes; ++l) lanes[l].reset();
    const int32_t h0 = 2 * oh - g.pad[1];
#pragma unroll
    for (int kh = 0; kh < 3; ++kh) {
      const int32_t ih = h0 + kh;
      if (ih < 0 || ih >= g.in[1]) continue;
#pragma unroll
      for (int kw = 0; kw < 3; ++kw) {
        const int32_t iw = w0 + kw;
        if (iw < 0 || iw >= g.in[2]) continue;
        const lane_pack<T, Lanes> val = load_pack<T, Lanes>(x_plane + ih * xs.h + iw * xs.w);
#pragma unroll
        for (int l = 0; l < Lanes; ++l) lanes[l].take(to_float(val.v[l]), kh * 3 + kw);
      }
    }
    T* out = y_plane + oh * ys.h + ow * ys.w;
    lane_pack<T, Lanes> old{};
    if (beta != 0.0f) old = load_pack<T, Lanes>(out);  // never read when beta is 0 (NaN poison)
    lane_pack<T, Lanes> result;
#pragma unroll
    for (int l = 0; l < Lanes; ++l) result.v[l] = blend(lanes[l].result(9, 9), alpha, beta, old.v[l]);
    store_pack<T, Lanes>(out, result);
  }
}

#endif  // __CUDACC__

}  // namespace tessera::cuda::pooling
