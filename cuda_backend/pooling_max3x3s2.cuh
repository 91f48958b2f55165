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
// Backward, shuffle form (pool_bwd_max3x3s2_shuffle_kernel, the default; the one above stays
// behind TESSERA_CUDA_POOL_BWD_MAX3X3S2_FORM=0). The form above waits on memory about 20 times a
// step (each window's loads and dy one after another, each load used before the next is issued)
// and issues about seven instructions per lane and tap in lane_reduction; two thirds of its loads
// fetch what a neighbour or the thread itself already had. Here:
//   - window (bh, bw-1) is window (bh, bw) of item - vectors, the thread `vectors` lanes lower
//     in the same warp whenever lane >= vectors (items are vector-fastest and a warp's items are
//     consecutive), and that thread has the same image and strip whenever bw > 0 (at bw == 0
//     there is no such window). Five __shfl_up_sync bring its winners and dy; the lanes below
//     `vectors` compute it from its 9 taps, and with vectors >= 32 (no neighbour ever in the
//     warp) every lane does, the shuffles skipped.
//   - the top tap row of window (bh, bw) is the bottom row of window (bh-1, bw). Reduced in window
//     order, a window's state after its top row depends on that row alone, so the thread keeps
//     that row's maximum and first maximal tap (max3x3s2_row) from the step before and loads only
//     the two rows below.
//   - the argmax runs on whole words, two fp16/bf16 lanes per instruction, as "the first tap equal
//     to the maximum, NaN ignored", which is lane_reduction<argmax>'s winner (max3x3s2_max says
//     why), ties, -0 == +0, -inf and all-NaN windows included.
//   - every load of a window, dy too, is issued before any is used: two waits on memory a step
//     (the left window's lanes, then all lanes' own window), not twenty.
// Shuffles need the whole warp, so no thread leaves early: every lane runs the warp's longest
// strip, lanes past `items` or the end of their strip idle through the steps they lack, and a lane
// reads its neighbour's result only in steps where both are active (same strip, same step count).
// The dx sums, their order and the blend are the other form's (max3x3s2_store_block): the results
// are bit for bit the same, checked against it and a CPU model of lane_reduction on 7024 cases
// (ties, +-0, +-inf, NaN, vectors 1 to 66, both paddings, warps across strips and images, beta 0
// over NaN dx). 80 registers, 3 blocks per SM like the other form (4-16 bytes of spill; 2 blocks
// at 107 registers and 4 at 64 were slower). Kernel alone, H200, N=256 C=64 112x112, 2026-12-04:
// fp16 0.394 against 0.681 ms (2.35 vs 1.36 TB/s), bf16 0.401 / 0.723, fp32 0.638 / 0.909; fp16
// N=64 C=256 0.361 / 0.626. What it issues now is about half dx's sums and blend.
//
// Forward. One thread per 16 bytes of channels of a strip of outputs down a column, each output
// its window's rows straight from global memory (L1 and L2 catch the overlap), the maximum on
// packed words (see the kernel).
// H200, N=256 C=64 112x112 fp16 (night run 5 of 2026-12-03): backward 0.699 ms against the
// tiles' 0.914 (1.47 vs 1.12 TB/s), forward 0.172 against 0.193 ms (2.98 vs 2.66 TB/s).
#pragma once

#include "pooling_geometry.cuh"
#include "pooling_packed_max.cuh"
#include "pooling_reduction.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

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
  __device__ __forceinline__ float dy(int lane) const { return to_float(grad.v[lane]); }
};

// The shuffle form's 16-byte vectors (of x, dy and a carried row) as the four 32-bit words they
// were loaded as, each element read out of its word where it is used. Held as lane_pack, nvcc
// gave 16-bit elements registers of their own (the bf16 conversion, inline assembly, takes a
// 16-bit operand), which the loaded rows, the carried row and four outputs' dy cannot afford at
// 80 registers.
using max3x3s2_words = uint32_t[4];

template <typename T>
__device__ __forceinline__ float max3x3s2_element(const max3x3s2_words& w, int l) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 2, "fp32, fp16 or bf16");
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w[l]);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __uint_as_float(l % 2 == 0 ? w[l / 2] << 16 : w[l / 2] & 0xFFFF0000u);  // exact: bf16 is fp32's top half
  } else {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(l % 2 == 0 ? w[l / 2] : w[l / 2] >> 16)));
  }
}

template <typename T, int Lanes>
__device__ __forceinline__ void max3x3s2_load_words(max3x3s2_words& w, const T* p) {
  static_assert(sizeof(lane_pack<T, Lanes>) == sizeof(uint4), "one 16-byte vector");
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
}

// max3x3s2_output of the shuffle form, its dy as words.
template <typename T, int Lanes>
struct max3x3s2_word_output {
  static_assert(Lanes <= 8, "one 32-bit word of 4-bit taps");
  uint32_t taps;
  max3x3s2_words grad;
  __device__ __forceinline__ bool won(int lane, uint32_t tap) const { return ((taps >> (4 * lane)) & 0xFu) == tap; }
  __device__ __forceinline__ float dy(int lane) const { return max3x3s2_element<T>(grad, lane); }
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

// The 2x2 dx block (bh, bw) from the four outputs that cover it: each element sums, in output
// order (row-major), the dy of the outputs whose winner it is, and is blended into dx once.
template <typename T, int Lanes, typename Output>
__device__ __forceinline__ void max3x3s2_store_block(T* dx_plane, const operand_strides& dxs, const pool_geometry& g,
                                                     int32_t bh, int32_t bw, const Output& up_left, const Output& up,
                                                     const Output& left, const Output& here, float alpha, float beta) {
  const int32_t i0 = 2 * bh - g.pad[1], j0 = 2 * bw - g.pad[2];
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
          if (up_left.won(l, 8)) s += up_left.dy(l);
          if (up.won(l, 6)) s += up.dy(l);
          if (left.won(l, 2)) s += left.dy(l);
          if (here.won(l, 0)) s += here.dy(l);
        } else if (r == 0) {
          if (up.won(l, 7)) s += up.dy(l);
          if (here.won(l, 1)) s += here.dy(l);
        } else if (cc == 0) {
          if (left.won(l, 5)) s += left.dy(l);
          if (here.won(l, 3)) s += here.dy(l);
        } else {
          if (here.won(l, 4)) s += here.dy(l);
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
  for (int32_t bh = first; bh < last; ++bh) {
    const max3x3s2_output<T, Lanes> left = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, bh, bw - 1);
    const max3x3s2_output<T, Lanes> here = max3x3s2_winners<T, Lanes>(x_plane, xs, dy_plane, dys, g, bh, bw);
    max3x3s2_store_block<T, Lanes>(dx_plane, dxs, g, bh, bw, up_left, up, left, here, alpha, beta);
    up_left = left;
    up = here;
  }
}

// ---- the shuffle form ---------------------------------------------------------------------------

// The shuffle form's argmax works on whole words, two fp16/bf16 lanes at a time: with NaN
// ignored, a window's winner under lane_reduction<argmax> (a tap replaces the winner only when
// strictly greater, or when it is the first non-NaN one) is the first tap in window order equal
// to the window's maximum, and none where every tap is NaN: after its first non-NaN tap the
// reduction holds the running maximum and the first tap that reached it. So one packed max per
// tap, then one packed compare and one select per tap, last tap to first; ties, -0 == +0, -inf
// and NaN come out as lane_reduction's. (Lane by lane through lane_reduction, the reductions took seven
// instructions per lane and tap: most of what the form issued.)
template <typename T>
__device__ __forceinline__ uint32_t max3x3s2_max(uint32_t a, uint32_t b) {
  if constexpr (sizeof(T) == 4) {
    return __float_as_uint(fmaxf(__uint_as_float(a), __uint_as_float(b)));  // NaN: the other
  } else {
    using pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    pair x, y;
    memcpy(&x, &a, sizeof a);
    memcpy(&y, &b, sizeof b);
    const pair m = __hmax2(x, y);  // NaN: the other
    uint32_t r;
    memcpy(&r, &m, sizeof r);
    return r;
  }
}

// All ones in each element of a word where a == b (never for NaN; -0 == +0).
template <typename T>
__device__ __forceinline__ uint32_t max3x3s2_equal(uint32_t a, uint32_t b) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(a) == __uint_as_float(b) ? 0xFFFFFFFFu : 0u;
  } else {
    using pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    pair x, y;
    memcpy(&x, &a, sizeof a);
    memcpy(&y, &b, sizeof b);
    return __heq2_mask(x, y);
  }
}

// While a window is reduced, the taps of a word's elements sit in the elements' own bits (the low
// four of each), where max3x3s2_equal's masks select them: tap t of every element is t * spread.
template <typename T>
constexpr uint32_t max3x3s2_spread = sizeof(T) == 4 ? 1u : 0x00010001u;

// Word k's taps into their 4-bit lane slots of an output's `taps`, and back.
template <typename T>
__device__ __forceinline__ uint32_t max3x3s2_pack_taps(uint32_t t, int k) {
  if constexpr (sizeof(T) == 4) {
    return t << (4 * k);
  } else {
    return ((t & 0xFu) | ((t >> 12) & 0xF0u)) << (8 * k);
  }
}
template <typename T>
__device__ __forceinline__ uint32_t max3x3s2_unpack_taps(uint32_t taps, int k) {
  if constexpr (sizeof(T) == 4) {
    return (taps >> (4 * k)) & 0xFu;
  } else {
    const uint32_t b = taps >> (8 * k);
    return (b & 0xFu) | ((b & 0xF0u) << 12);
  }
}

// `t` with the elements of a word where `v` equals the maximum `m` set to tap `tap`. Called last
// tap to first, it leaves the first equal tap.
template <typename T>
__device__ __forceinline__ uint32_t max3x3s2_take_if_max(uint32_t t, uint32_t v, uint32_t m, uint32_t tap) {
  const uint32_t equal = max3x3s2_equal<T>(v, m);
  return (equal & (tap * max3x3s2_spread<T>)) | (~equal & t);
}

// The argmax state of one tap row of a window taken on its own (three taps, column order): what
// a window's reduction holds after its top row, so that the window below, whose top row it is,
// need not load it again. Per lane the row's maximum (NaN ignored; NaN where every tap is) and
// the first tap equal to it, 0-2 in 4 bits (15 for none, as max3x3s2_output's taps): 5 registers.
template <typename T, int Lanes>
struct max3x3s2_row {
  uint32_t taps;
  max3x3s2_words value;
};

template <typename T, int Lanes>
__device__ __forceinline__ max3x3s2_word_output<T, Lanes> max3x3s2_no_output() {
  max3x3s2_word_output<T, Lanes> o;
  o.taps = 0xFFFFFFFFu;
#pragma unroll
  for (int k = 0; k < 4; ++k) o.grad[k] = 0;
  return o;
}

template <typename T, int Lanes>
__device__ __forceinline__ max3x3s2_row<T, Lanes> max3x3s2_no_row() {
  max3x3s2_row<T, Lanes> r;
  r.taps = 0xFFFFFFFFu;
#pragma unroll
  for (int k = 0; k < 4; ++k) r.value[k] = 0xFFFFFFFFu;  // NaN
  return r;
}

// The three taps of row `ih` of a window starting at column w0, NaN where a tap lies outside x:
// NaN never wins, so a NaN tap is a skipped one, and the loads need no branch around the
// reduction. All ones is a NaN in fp32, fp16 and bf16 alike.
template <typename T, int Lanes>
__device__ __forceinline__ void max3x3s2_load_row(max3x3s2_words (&row)[3], const T* x_plane,
                                                  const operand_strides& xs, const pool_geometry& g, int32_t ih,
                                                  int32_t w0) {
  const bool inside = ih >= 0 && ih < g.in[1];
#pragma unroll
  for (int kw = 0; kw < 3; ++kw) {
    const int32_t iw = w0 + kw;
    if (inside && iw >= 0 && iw < g.in[2]) {
      max3x3s2_load_words<T, Lanes>(row[kw], x_plane + ih * xs.h + iw * xs.w);
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) row[kw][k] = 0xFFFFFFFFu;
    }
  }
}

// Word k of a loaded row on its own into `row` (whose taps start all ones).
template <typename T, int Lanes>
__device__ __forceinline__ void max3x3s2_keep_row(max3x3s2_row<T, Lanes>& row, int k, const max3x3s2_words (&taps)[3]) {
  const uint32_t m = max3x3s2_max<T>(max3x3s2_max<T>(taps[0][k], taps[1][k]), taps[2][k]);
  uint32_t t = 0xFu * max3x3s2_spread<T>;
#pragma unroll
  for (int kw = 2; kw >= 0; --kw) t = max3x3s2_take_if_max<T>(t, taps[kw][k], m, kw);
  row.value[k] = m;
  row.taps &= max3x3s2_pack_taps<T>(t, k) | ~max3x3s2_pack_taps<T>(0xFu * max3x3s2_spread<T>, k);
}

// Row `ih` of the windows of output column ow on its own; none for a column outside y (whose
// windows are never reduced).
template <typename T, int Lanes>
__device__ __forceinline__ max3x3s2_row<T, Lanes> max3x3s2_row_alone(const T* x_plane, const operand_strides& xs,
                                                                     const pool_geometry& g, int32_t ih, int32_t ow) {
  max3x3s2_row<T, Lanes> r = max3x3s2_no_row<T, Lanes>();
  if (ow < 0 || ow >= g.out[2] || ih < 0 || ih >= g.in[1]) return r;
  max3x3s2_words row[3];
  max3x3s2_load_row<T, Lanes>(row, x_plane, xs, g, ih, 2 * ow - g.pad[2]);
#pragma unroll
  for (int k = 0; k < 4; ++k) max3x3s2_keep_row<T, Lanes>(r, k, row);
  return r;
}

// Output (oh, ow)'s winners and dy, as max3x3s2_winners finds them. Carried: from `top` (its top
// tap row on its own) and loads of its other two rows only, and `top` becomes its bottom row on
// its own, the next window's top; otherwise from all three rows, `top` untouched. An output
// outside y has no winner; one above y (oh < 0, the strip's first step at the image's top) still
// updates `top`, whose row may lie inside x, while one below y or in a column outside y loads
// nothing (every later window of the thread is outside too, so `top` is no longer needed).
// Every load (dy too) is issued before any is used, so that a window waits for memory once.
// With `top`, the maximum includes the top row's, and the top row's tap is the first equal one
// when its maximum equals the window's (then no later row can hold an earlier equal tap).
template <typename T, int Lanes, bool Carried>
__device__ __forceinline__ max3x3s2_word_output<T, Lanes> max3x3s2_window(
    max3x3s2_row<T, Lanes>& top, const T* x_plane, const operand_strides& xs, const T* dy_plane,
    const operand_strides& dys, const pool_geometry& g, int32_t oh, int32_t ow) {
  max3x3s2_word_output<T, Lanes> o = max3x3s2_no_output<T, Lanes>();
  if (oh >= g.out[1] || ow < 0 || ow >= g.out[2]) return o;
  if (oh >= 0) max3x3s2_load_words<T, Lanes>(o.grad, dy_plane + oh * dys.h + ow * dys.w);
  const int32_t h0 = 2 * oh - g.pad[1], w0 = 2 * ow - g.pad[2];
  max3x3s2_words upper[3], middle[3], bottom[3];
  if constexpr (!Carried) max3x3s2_load_row<T, Lanes>(upper, x_plane, xs, g, h0, w0);
  max3x3s2_load_row<T, Lanes>(middle, x_plane, xs, g, h0 + 1, w0);
  max3x3s2_load_row<T, Lanes>(bottom, x_plane, xs, g, h0 + 2, w0);
  const max3x3s2_row<T, Lanes> above = top;
  if constexpr (Carried) top.taps = 0xFFFFFFFFu;
  uint32_t taps = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint32_t m;
    if constexpr (Carried) {
      m = above.value[k];
    } else {
      m = max3x3s2_max<T>(max3x3s2_max<T>(upper[0][k], upper[1][k]), upper[2][k]);
    }
#pragma unroll
    for (int kw = 0; kw < 3; ++kw) m = max3x3s2_max<T>(m, middle[kw][k]);
#pragma unroll
    for (int kw = 0; kw < 3; ++kw) m = max3x3s2_max<T>(m, bottom[kw][k]);
    uint32_t t = 0xFu * max3x3s2_spread<T>;
#pragma unroll
    for (int kw = 2; kw >= 0; --kw) t = max3x3s2_take_if_max<T>(t, bottom[kw][k], m, 6 + kw);
#pragma unroll
    for (int kw = 2; kw >= 0; --kw) t = max3x3s2_take_if_max<T>(t, middle[kw][k], m, 3 + kw);
    if constexpr (Carried) {
      const uint32_t equal = max3x3s2_equal<T>(above.value[k], m);
      t = (equal & max3x3s2_unpack_taps<T>(above.taps, k)) | (~equal & t);
      max3x3s2_keep_row<T, Lanes>(top, k, bottom);
    } else {
#pragma unroll
      for (int kw = 2; kw >= 0; --kw) t = max3x3s2_take_if_max<T>(t, upper[kw][k], m, kw);
    }
    taps |= max3x3s2_pack_taps<T>(t, k);
  }
  if (oh < 0) return o;
  if constexpr (Lanes < 8) taps |= 0xFFFFFFFFu << (4 * Lanes);  // unused lanes: no tap
  o.taps = taps;
  return o;
}

// `o` of the lane `delta` lanes lower (a lane below `delta` gets its own back); the whole warp
// must call it.
template <typename T, int Lanes>
__device__ __forceinline__ max3x3s2_word_output<T, Lanes> max3x3s2_shuffle_up(const max3x3s2_word_output<T, Lanes>& o,
                                                                              uint32_t delta) {
  max3x3s2_word_output<T, Lanes> r;
  r.taps = __shfl_up_sync(0xFFFFFFFFu, o.taps, delta);
#pragma unroll
  for (int k = 0; k < 4; ++k) r.grad[k] = __shfl_up_sync(0xFFFFFFFFu, o.grad[k], delta);
  return r;
}

// The items of pool_bwd_max3x3s2_kernel, in the same order; the header says what differs.
template <typename T, int Lanes>
__global__ void __launch_bounds__(max3x3s2_threads, 3)
    pool_bwd_max3x3s2_shuffle_kernel(const T* __restrict__ x, operand_strides xs, const T* __restrict__ dy,
                                     operand_strides dys, T* __restrict__ dx, operand_strides dxs, pool_geometry g,
                                     int64_t items, float alpha, float beta) {
  static_assert(max3x3s2_threads % 32 == 0, "whole warps, so that a warp's items are consecutive");
  const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Threads past the end stay for the shuffles: they run no step, load and store nothing.
  const bool live = item < items;
  const int32_t vectors = g.c / Lanes;
  const int32_t block_cols = max3x3s2_blocks(g.in[2], g.pad[2]);
  const int32_t block_rows = max3x3s2_blocks(g.in[1], g.pad[1]);
  const int32_t strips = (block_rows + max3x3s2_strip - 1) / max3x3s2_strip;
  int64_t rest = live ? item : 0;
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
  const int32_t steps = live ? min(max3x3s2_strip, block_rows - first) : 0;
  // Every lane runs the warp's longest strip, so that all of them reach every shuffle.
  const int32_t warp_steps = static_cast<int32_t>(__reduce_max_sync(0xFFFFFFFFu, static_cast<uint32_t>(steps)));
  // Item - vectors is (n, strip, bw - 1, v) whenever bw > 0: same strip, same steps. With
  // vectors >= 32 it is never in the warp (uniform over the grid, so the shuffles are skipped
  // by whole warps).
  const bool shuffles = vectors < 32;
  const uint32_t delta = shuffles ? static_cast<uint32_t>(vectors) : 0u;
  const bool left_shuffled = shuffles && bw > 0 && static_cast<int32_t>(threadIdx.x % 32) >= vectors;
  const bool left_computed = live && bw > 0 && !left_shuffled;

  // Output row first - 1 (the row above the strip's first block), from its top row on its own.
  const int32_t top_row = 2 * (first - 1) - g.pad[1];
  max3x3s2_row<T, Lanes> top = max3x3s2_no_row<T, Lanes>();
  max3x3s2_word_output<T, Lanes> up = max3x3s2_no_output<T, Lanes>(), up_left = max3x3s2_no_output<T, Lanes>();
  if (live) {
    top = max3x3s2_row_alone<T, Lanes>(x_plane, xs, g, top_row, bw);
    up = max3x3s2_window<T, Lanes, true>(top, x_plane, xs, dy_plane, dys, g, first - 1, bw);
  }
  if (left_computed) up_left = max3x3s2_window<T, Lanes, false>(top, x_plane, xs, dy_plane, dys, g, first - 1, bw - 1);
  if (shuffles) {
    const max3x3s2_word_output<T, Lanes> neighbour = max3x3s2_shuffle_up<T, Lanes>(up, delta);
    if (left_shuffled) up_left = neighbour;
  }
  for (int32_t step = 0; step < warp_steps; ++step) {
    const bool active = step < steps;
    const int32_t bh = first + step;
    max3x3s2_word_output<T, Lanes> here = max3x3s2_no_output<T, Lanes>(), left = max3x3s2_no_output<T, Lanes>();
    // All 9 taps: a second carried row cost more registers than 3 blocks per SM leave. Before
    // `here`, whose registers would otherwise be held through these 10 loads.
    if (active && left_computed)
      left = max3x3s2_window<T, Lanes, false>(top, x_plane, xs, dy_plane, dys, g, bh, bw - 1);
    if (active) here = max3x3s2_window<T, Lanes, true>(top, x_plane, xs, dy_plane, dys, g, bh, bw);
    if (shuffles) {
      // The neighbour is active exactly when this lane is (same strip): this is its step bh.
      const max3x3s2_word_output<T, Lanes> neighbour = max3x3s2_shuffle_up<T, Lanes>(here, delta);
      if (left_shuffled) left = neighbour;
    }
    if (active) max3x3s2_store_block<T, Lanes>(dx_plane, dxs, g, bh, bw, up_left, up, left, here, alpha, beta);
    up_left = left;
    up = here;
  }
}

// Forward: one item is image n, channel vector v, output column ow and a strip of output rows,
// with
//   - the maximum taken on whole 16-byte words in the packed min/max instructions
//     (pooling_packed_max.cuh): per output vector 9 x 4 instructions where widening each lane
//     to fp32 took a conversion and a maximum per lane and tap, 9 x 16 of them for fp16/bf16;
//   - the bottom tap row of window oh, which is the top row of window oh + 1, reduced once and
//     carried: 6 loads a step instead of 9 after the first;
//   - alpha = 1 and beta = 0 storing the word as it is (the maximum is exact), any other blend
//     widened to fp32 as blend() does.
// H200, N=256 C=64 112x112 fp16 (2026-12-04): 0.1675 ms against 0.1723 for the lane-by-lane form
// (3.07 vs 2.98 TB/s; conformance passed under both, NaN rules included).
// A window is never empty (pad_before and pad_after are below the window: the API checks), so a
// chain starting from NaN (skip) or -inf (keep) always takes at least one tap; that start is the
// maximum's identity, so a tap in the padding may as well be read as it.
// Cols output columns and Rows output rows per step and thread (TESSERA_CUDA_POOL_FWD_MAX3X3S2_FORM
// picks them, to measure; 1 x 1 is the form measured above). With Cols = 2 a thread reads the 5
// input columns of two neighbouring windows once each, where two threads read the shared column
// twice (L1 catches it, but it is a sixth of the loads); with Rows = 2 a step issues the loads of
// two output rows before it reduces either, twice the bytes in flight per thread.
template <typename T, int Lanes, pool_op Op, int Cols = 1, int Rows = 1>
__global__ void __launch_bounds__(max3x3s2_threads)
    pool_fwd_max3x3s2_kernel(const T* __restrict__ x, operand_strides xs, T* __restrict__ y, operand_strides ys,
                             pool_geometry g, int64_t items, float alpha, float beta) {
  static_assert(Op == pool_op::max_skip_nan || Op == pool_op::max_propagate_nan, "max pooling only");
  static_assert(Lanes * sizeof(T) == sizeof(uint4), "one 16-byte vector per item");
  constexpr bool keep_nan = Op == pool_op::max_propagate_nan;
  constexpr int taps = 2 * Cols + 1;  // input columns of Cols neighbouring windows
  const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= items) return;
  const int32_t vectors = g.c / Lanes;
  const int32_t strips = (g.out[1] + max3x3s2_strip - 1) / max3x3s2_strip;
  const int32_t col_groups = (g.out[2] + Cols - 1) / Cols;
  int64_t rest = item;
  const int32_t v = static_cast<int32_t>(rest % vectors);
  rest /= vectors;
  const int32_t ow0 = static_cast<int32_t>(rest % col_groups) * Cols;
  rest /= col_groups;
  const int32_t strip = static_cast<int32_t>(rest % strips);
  const int64_t n = rest / strips;
  const int32_t c = v * Lanes;
  const T* x_plane = x + n * xs.n + c * xs.c;
  T* y_plane = y + n * ys.n + c * ys.c;
  const int32_t w0 = 2 * ow0 - g.pad[2];
  const uint4 start = keep_nan ? packed_lowest_word<T>() : packed_nan_word<T>();
  // The maxima of one tap row of the Cols windows (start where the row lies in the padding).
  const auto row_max = [&](int32_t ih, uint4 (&m)[Cols]) {
    uint4 px[taps];
#pragma unroll
    for (int k = 0; k < taps; ++k) {
      const int32_t iw = w0 + k;
      px[k] = ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2]
                  ? *reinterpret_cast<const uint4*>(x_plane + ih * xs.h + iw * xs.w)
                  : start;
    }
#pragma unroll
    for (int cc = 0; cc < Cols; ++cc)
      m[cc] = packed_max<T, keep_nan>(packed_max<T, keep_nan>(px[2 * cc], px[2 * cc + 1]), px[2 * cc + 2]);
  };
  const int32_t first = strip * max3x3s2_strip;
  const int32_t last = min(first + max3x3s2_strip, g.out[1]);
  uint4 carried[Cols];
  row_max(2 * first - g.pad[1], carried);  // the top row of the strip's first windows
  const bool plain = alpha == 1.0f && beta == 0.0f;
  for (int32_t oh = first; oh < last; oh += Rows) {
    uint4 middle[Rows][Cols], bottom[Rows][Cols];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      // Rows past `last` read rows inside the image or none (row_max checks): never stored.
      const int32_t h0 = 2 * (oh + r) - g.pad[1];
      row_max(h0 + 1, middle[r]);
      row_max(h0 + 2, bottom[r]);
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
#pragma unroll
      for (int cc = 0; cc < Cols; ++cc) {
        const uint4 m = packed_max<T, keep_nan>(packed_max<T, keep_nan>(carried[cc], middle[r][cc]), bottom[r][cc]);
        carried[cc] = bottom[r][cc];
        if (oh + r >= last || ow0 + cc >= g.out[2]) continue;
        T* out = y_plane + (oh + r) * ys.h + (ow0 + cc) * ys.w;
        if (plain) {
          *reinterpret_cast<uint4*>(out) = m;
          continue;
        }
        lane_pack<T, Lanes> res, old{};
        memcpy(&res, &m, sizeof(m));
        if (beta != 0.0f) old = load_pack<T, Lanes>(out);  // never read when beta is 0 (NaN poison)
#pragma unroll
        for (int l = 0; l < Lanes; ++l) res.v[l] = blend(to_float(res.v[l]), alpha, beta, old.v[l]);
        store_pack<T, Lanes>(out, res);
      }
    }
  }
}

#endif  // __CUDACC__

}  // namespace tessera::cuda::pooling
