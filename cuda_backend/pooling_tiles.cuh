// Tiled channels-last pooling, the fast path of pool_fwd_nhwc_vec and pool_bwd_nhwc_vec
// (pooling_kernels.cu). A thread block owns a tile: one image, one chunk of up to 8 16-byte
// channel vectors (a 128-byte line per pixel) and a box of positions. It copies the input the tile
// needs into shared memory with cp.async (16 bytes per copy, no register round trip, the whole
// patch in flight at once) and computes every result of the tile from there, so an input byte
// crosses from L2 once per tile rather than once per window that covers it, and the window
// arithmetic reads shared memory instead of waiting on a chain of global loads.
//   forward:  the box is outputs; the patch is the union of their windows (clipped to the input).
//   backward: the box is dx elements; the outputs whose windows touch it (a halo of outputs that
//             neighbouring tiles recompute too) are copied with their dy, max pooling recomputes
//             their argmax from an x patch, and each dx element gathers dy over its covering
//             outputs in output order. No atomics and no workspace, and the same fp32 operations
//             in the same order as the two-pass kernels, so the results are bitwise identical.
// A tile is a "program" with phases separated by block barriers (phase 0 issues the copies); the
// phases are __host__ __device__ functions of (thread, block size), so tests can run a tile thread
// by thread on a machine without a GPU (tests/cuda/pooling_tiles_host_test.cpp).
#pragma once

#include "pooling_geometry.cuh"
#include "pooling_reduction.cuh"

#ifdef __CUDACC__
#include "gemm_mma_ptx.cuh"
#endif

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

// `#pragma unroll` where the host compiler, which does not know it, also compiles the code.
#ifdef __CUDA_ARCH__
#define TESSERA_POOL_UNROLL(n) _Pragma(#n)
#else
#define TESSERA_POOL_UNROLL(n)
#endif

namespace tessera::cuda::pooling {

constexpr int tile_threads = 256;
constexpr int tile_blocks_per_sm = 3;
constexpr int32_t tile_max_chunk = 8;  // vectors per pixel and tile: one 128-byte line
// Three blocks of this much fit one SM's 227 KiB (with the 1 KiB each block reserves), so one
// block's copies are in flight while the others compute.
constexpr int32_t tile_shared_budget = 72 * 1024;

// [begin, end) along one spatial dim.
struct span {
  int32_t begin, end;
  __host__ __device__ __forceinline__ int32_t size() const { return end > begin ? end - begin : 0; }
};

struct tile_plan {
  int32_t vectors;                 // 16-byte channel vectors per pixel: C / lanes
  int32_t chunk;                   // vectors per pixel and tile (the last chunk may hold fewer)
  int32_t chunks;                  // ceil(vectors / chunk)
  int32_t extent[spatial_slots];   // tile size: outputs (forward) or dx elements (backward)
  int32_t tiles[spatial_slots];    // tiles along each dim
  int64_t count;                   // n * tiles * chunks; 0: no tiled path for this problem
  int32_t shared_bytes;            // the most any tile uses
};

// One tile: image n, channel vectors [c, c + vectors * lanes) and a box of positions.
struct tile_box {
  int64_t n;
  int32_t c;        // first channel (element index)
  int32_t vectors;  // vectors in this chunk
  span box[spatial_slots];
};

// Tile `index` of `plan` over positions [0, limit): chunks fastest, then width, height, depth and
// image, so that neighbouring tiles (which share halo lines in L2) run at the same time.
__host__ __device__ __forceinline__ tile_box tile_at(const tile_plan& plan, const int32_t (&limit)[spatial_slots],
                                                     int64_t index, int lanes) {
  tile_box t;
  const int32_t chunk = static_cast<int32_t>(index % plan.chunks);
  index /= plan.chunks;
TESSERA_POOL_UNROLL(unroll)
  for (int d = spatial_slots - 1; d >= 0; --d) {
    const int32_t k = static_cast<int32_t>(index % plan.tiles[d]);
    index /= plan.tiles[d];
    const int32_t begin = k * plan.extent[d];  // below limit[d], so no overflow
    t.box[d] = {begin, limit[d] - begin < plan.extent[d] ? limit[d] : begin + plan.extent[d]};
  }
  t.n = index;
  t.c = chunk * plan.chunk * lanes;
  const int32_t left = plan.vectors - chunk * plan.chunk;
  t.vectors = left < plan.chunk ? left : plan.chunk;
  return t;
}

// The input positions the windows of outputs [outputs.begin, outputs.end) read along `dim`
// (outputs not empty; every window has a tap inside the input since pads are below the window).
__host__ __device__ __forceinline__ span window_union(const span& outputs, int dim, const pool_geometry& g) {
  return {window_taps(outputs.begin, dim, g).begin, window_taps(outputs.end - 1, dim, g).end};
}

// The outputs whose windows contain some of the inputs [inputs.begin, inputs.end) along `dim`:
// both ends of covering_outputs grow with the input position, so the union is one range (empty
// where no window reaches these inputs).
__host__ __device__ __forceinline__ span covering_union(const span& inputs, int dim, const pool_geometry& g) {
  return {covering_outputs(inputs.begin, dim, g).first, covering_outputs(inputs.end - 1, dim, g).last + 1};
}

__host__ __device__ __forceinline__ int32_t box_pixels(const span (&box)[spatial_slots]) {
  return box[0].size() * box[1].size() * box[2].size();
}

// Shared memory of a backward tile, in 16-byte units: the x patch (max pooling only) at 0, dy of
// the covering outputs at `dy`, their winning taps at `taps` (32-byte aligned for int32 taps),
// and at `spans` the covering outputs of each dx position of the tile, per dim (`positions` is
// the sum of the tile's extents), so that the gather divides nothing per element.
struct backward_shared {
  int64_t dy, taps, spans, end;
};
__host__ __device__ __forceinline__ backward_shared backward_layout(int64_t x_pixels, int64_t outputs,
                                                                    int64_t positions, int32_t pitch,
                                                                    int32_t tap_pack_bytes) {
  backward_shared s;
  s.dy = x_pixels * pitch;
  s.taps = (s.dy + outputs * pitch + 1) / 2 * 2;
  const int64_t tap_bytes = outputs * pitch * tap_pack_bytes;
  s.spans = s.taps + (tap_bytes + 31) / 32 * 2;
  s.end = s.spans + (positions * static_cast<int64_t>(sizeof(output_span)) + 15) / 16;
  return s;
}

// Positions first, first + step, ... of a box of e0 x e1 x e2 (width fastest) as offsets in the
// box: two divisions at the start, carries after that (step may exceed a row).
struct box_cursor {
  int32_t d, h, w;     // the current position
  int32_t sd, sh, sw;  // the step, split the same way
  int32_t e1, e2;

  __host__ __device__ __forceinline__ box_cursor(int32_t first, int32_t step, int32_t e1_, int32_t e2_)
      : e1(e1_), e2(e2_) {
    split(first, d, h, w);
    split(step, sd, sh, sw);
  }
  __host__ __device__ __forceinline__ void split(int32_t q, int32_t& a, int32_t& b, int32_t& c) const {
    const int32_t rest = q / e2;
    c = q - rest * e2;
    a = rest / e1;
    b = rest - a * e1;
  }
  __host__ __device__ __forceinline__ void advance() {
    w += sw;
    int32_t carry = w >= e2 ? 1 : 0;
    w -= carry * e2;
    h += sh + carry;
    carry = h >= e1 ? 1 : 0;
    h -= carry * e1;
    d += sd + carry;
  }
};

// ---- the copy engine ---------------------------------------------------------------------------

// 16 bytes from global to shared memory, asynchronously on the GPU (cp.async.cg: cached in L2
// only, no register round trip); tile_copies_wait() makes this thread's copies visible.
__host__ __device__ __forceinline__ void tile_copy_16(uint4* shared, const void* global) {
#ifdef __CUDA_ARCH__
  gemm::cp_async_16(gemm::shared_address(shared), global, 16);
#else
  std::memcpy(shared, global, 16);
#endif
}

__host__ __device__ __forceinline__ void tile_copies_wait() {
#ifdef __CUDA_ARCH__
  gemm::cp_async_commit();
  gemm::cp_async_wait<0>();
#endif
}

// Thread `tid` of `threads` handles vector `v` of pixels first, first + per_pass, ...; threads
// past the last whole pass or the chunk's vectors sit out.
struct tile_lane {
  int32_t v, first, per_pass;
  bool active;
};
__host__ __device__ __forceinline__ tile_lane lane_of(unsigned tid, unsigned threads, int32_t pitch, int32_t vectors) {
  tile_lane l;
  l.per_pass = static_cast<int32_t>(threads) / pitch;
  l.first = static_cast<int32_t>(tid) / pitch;
  l.v = static_cast<int32_t>(tid) - l.first * pitch;
  l.active = l.first < l.per_pass && l.v < vectors;
  return l;
}

// Copies the positions `box` of a tensor to shared memory, pixel after pixel in box order (width
// fastest), `pitch` vectors per pixel. `src` points at the tile's image and first channel.
template <typename T, int Lanes>
__host__ __device__ __forceinline__ void tile_copy_box(const T* src, const operand_strides& s,
                                                       const span (&box)[spatial_slots], int32_t vectors,
                                                       int32_t pitch, uint4* shared, unsigned tid, unsigned threads) {
  const tile_lane l = lane_of(tid, threads, pitch, vectors);
  const int32_t pixels = box_pixels(box);
  if (!l.active || l.first >= pixels) return;
  const T* base = src + static_cast<int64_t>(l.v) * Lanes * s.c + box[0].begin * s.d + box[1].begin * s.h +
                  box[2].begin * s.w;
  box_cursor at(l.first, l.per_pass, box[1].size(), box[2].size());
  for (int32_t q = l.first; q < pixels; q += l.per_pass, at.advance()) {
    tile_copy_16(shared + q * pitch + l.v, base + at.d * s.d + at.h * s.h + at.w * s.w);
  }
}

// Calls visit(16 bytes of channel vector `v`, tap number) for every tap of output (od, oh, ow)
// inside the input, in window order (depth, height, width) as the two-pass kernels reduce, from a
// patch in shared memory that holds the positions `patch`. Returns the number of such taps.
template <typename Visit>
__host__ __device__ __forceinline__ int32_t for_each_tap(const pool_geometry& g, int32_t od, int32_t oh, int32_t ow,
                                                         const span (&patch)[spatial_slots], int32_t pitch, int32_t v,
                                                         const uint4* shared, Visit&& visit) {
  const tap_span sd = window_taps(od, 0, g);
  const tap_span sh = window_taps(oh, 1, g);
  const tap_span sw = window_taps(ow, 2, g);
  const int32_t p1 = patch[1].size(), p2 = patch[2].size();
  for (int32_t id = sd.begin; id < sd.end; ++id) {
    for (int32_t ih = sh.begin; ih < sh.end; ++ih) {
      // The vector of (id, ih, 0) in the patch, and the tap number of (id, ih, 0) in the window.
      const int32_t row = (((id - patch[0].begin) * p1 + (ih - patch[1].begin)) * p2 - patch[2].begin) * pitch + v;
      const int32_t row_tap = ((id - sd.start) * g.window[1] + (ih - sh.start)) * g.window[2] - sw.start;
TESSERA_POOL_UNROLL(unroll 4)
      for (int32_t iw = sw.begin; iw < sw.end; ++iw) visit(shared[row + iw * pitch], row_tap + iw);
    }
  }
  return (sd.end - sd.begin) * (sh.end - sh.begin) * (sw.end - sw.begin);
}

template <typename T, int Lanes, pool_op Op>
__host__ __device__ __forceinline__ int32_t reduce_window(const pool_geometry& g, int32_t od, int32_t oh, int32_t ow,
                                                          const span (&patch)[spatial_slots], int32_t pitch,
                                                          int32_t v, const uint4* shared,
                                                          lane_reduction<Op> (&lanes)[Lanes]) {
TESSERA_POOL_UNROLL(unroll)
  for (int l = 0; l < Lanes; ++l) lanes[l].reset();
  return for_each_tap(g, od, oh, ow, patch, pitch, v, shared, [&](const uint4& raw, int32_t tap) {
    lane_pack<T, Lanes> x;
    std::memcpy(&x, &raw, sizeof(x));
TESSERA_POOL_UNROLL(unroll)
    for (int l = 0; l < Lanes; ++l) lanes[l].take(to_float(x.v[l]), tap);
  });
}

// The 16-bit pair type whose comparisons work on two lanes at once.
template <typename T>
struct lane_pair;
template <>
struct lane_pair<__half> {
  using type = __half2;
  static constexpr uint32_t minus_infinity = 0xfc00fc00u;
};
template <>
struct lane_pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static constexpr uint32_t minus_infinity = 0xff80ff80u;
};

// The winning tap of each lane (-1 where every tap is NaN), by lane_reduction<argmax>'s rule:
// the first tap in window order whose value exceeds every earlier one, where "the first non-NaN
// tap" also counts as exceeding (so a leading -inf wins). For 16-bit types two lanes go through
// one compare: best starts at -inf and a lane takes tap t where v > best, or where it has no tap
// yet and v >= best (v not NaN); 16-bit tap numbers, 0xffff meaning none, so only for windows of
// fewer than 65535 taps (`Narrow`: the uint8 taps of windows of up to 255).
template <typename T, int Lanes, bool Narrow>
__host__ __device__ __forceinline__ void argmax_window(const pool_geometry& g, int32_t od, int32_t oh, int32_t ow,
                                                       const span (&patch)[spatial_slots], int32_t pitch, int32_t v,
                                                       const uint4* shared, int32_t (&taps)[Lanes]) {
  if constexpr (sizeof(T) == 2 && Narrow) {
    using pair = typename lane_pair<T>::type;
    constexpr int pairs = Lanes / 2;
    uint32_t best[pairs], won[pairs], none[pairs];
TESSERA_POOL_UNROLL(unroll)
    for (int j = 0; j < pairs; ++j) {
      best[j] = lane_pair<T>::minus_infinity;
      won[j] = 0xffffffffu;
      none[j] = 0xffffffffu;
    }
    for_each_tap(g, od, oh, ow, patch, pitch, v, shared, [&](const uint4& raw, int32_t tap) {
      const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
      const uint32_t both = static_cast<uint32_t>(tap) * 0x10001u;
TESSERA_POOL_UNROLL(unroll)
      for (int j = 0; j < pairs; ++j) {
        pair x, b;
        std::memcpy(static_cast<void*>(&x), &words[j], sizeof(x));
        std::memcpy(static_cast<void*>(&b), &best[j], sizeof(b));
        const uint32_t take = __hgt2_mask(x, b) | (__hge2_mask(x, b) & none[j]);
        best[j] = (words[j] & take) | (best[j] & ~take);
        won[j] = (both & take) | (won[j] & ~take);
        none[j] &= ~take;
      }
    });
TESSERA_POOL_UNROLL(unroll)
    for (int j = 0; j < pairs; ++j) {
      const uint32_t low = won[j] & 0xffffu, high = won[j] >> 16;
      taps[2 * j] = low == 0xffffu ? -1 : static_cast<int32_t>(low);
      taps[2 * j + 1] = high == 0xffffu ? -1 : static_cast<int32_t>(high);
    }
  } else {
    lane_reduction<pool_op::argmax> lanes[Lanes];
    reduce_window<T, Lanes, pool_op::argmax>(g, od, oh, ow, patch, pitch, v, shared, lanes);
TESSERA_POOL_UNROLL(unroll)
    for (int l = 0; l < Lanes; ++l) taps[l] = lanes[l].tap;
  }
}

// ---- forward -----------------------------------------------------------------------------------

// y = alpha * pool(x) + beta * y over a tile of outputs. Phase 0 copies the patch; phase 1
// reduces each output's window from it and stores 16 bytes per thread and output.
template <typename T, pool_op Op>
struct forward_tile_program {
  static constexpr int lanes = static_cast<int>(16 / sizeof(T));
  static constexpr int phases = 2;

  const T* x;
  operand_strides xs;
  T* y;
  operand_strides ys;
  pool_geometry g;
  tile_plan plan;
  float alpha, beta;

  struct tile {
    tile_box t;
    span patch[spatial_slots];
  };

  __host__ __device__ __forceinline__ tile tile_at(int64_t index) const {
    tile s;
    s.t = pooling::tile_at(plan, g.out, index, lanes);
TESSERA_POOL_UNROLL(unroll)
    for (int d = 0; d < spatial_slots; ++d) s.patch[d] = window_union(s.t.box[d], d, g);
    return s;
  }

  __host__ __device__ __forceinline__ void run_phase(int phase, const tile& s, uint4* shared, unsigned tid,
                                                     unsigned threads) const {
    if (phase == 0) {
      tile_copy_box<T, lanes>(x + s.t.n * xs.n + s.t.c * xs.c, xs, s.patch, s.t.vectors, plan.chunk, shared, tid,
                              threads);
      return;
    }
    const tile_lane l = lane_of(tid, threads, plan.chunk, s.t.vectors);
    const span(&box)[spatial_slots] = s.t.box;
    const int32_t outputs = box_pixels(box);
    if (!l.active || l.first >= outputs) return;
    T* base = y + s.t.n * ys.n + static_cast<int64_t>(s.t.c + l.v * lanes) * ys.c;
    box_cursor at(l.first, l.per_pass, box[1].size(), box[2].size());
    for (int32_t q = l.first; q < outputs; q += l.per_pass, at.advance()) {
      const int32_t od = box[0].begin + at.d, oh = box[1].begin + at.h, ow = box[2].begin + at.w;
      lane_reduction<Op> reductions[lanes];
      const int32_t inside =
          reduce_window<T, lanes, Op>(g, od, oh, ow, s.patch, plan.chunk, l.v, shared, reductions);
      T* out = base + od * ys.d + oh * ys.h + ow * ys.w;
      lane_pack<T, lanes> old{};
      if (beta != 0.0f) old = load_pack<T, lanes>(out);  // never read when beta is 0 (NaN poison)
      lane_pack<T, lanes> result;
TESSERA_POOL_UNROLL(unroll)
      for (int k = 0; k < lanes; ++k)
        result.v[k] = blend(reductions[k].result(inside, g.window_size), alpha, beta, old.v[k]);
      store_pack<T, lanes>(out, result);
    }
  }
};

// ---- backward ----------------------------------------------------------------------------------

// dx = alpha * dpool(x, dy) + beta * dx over a tile of dx elements. Op is argmax (max pooling,
// Tap the winning-tap type: uint8_t for windows of up to 255 taps, else int32_t) or one of the
// averages (x is not read, Tap is unused). Phase 0 copies the x patch (max) and dy of the covering
// outputs; phase 1 finds each covering output's winning tap and tabulates the covering outputs of
// each dx position; phase 2 gathers.
template <typename T, typename Tap, pool_op Op>
struct backward_tile_program {
  static constexpr int lanes = static_cast<int>(16 / sizeof(T));
  static constexpr int phases = 3;
  static constexpr bool max = Op == pool_op::argmax;
  static constexpr int32_t tap_pack_bytes = max ? static_cast<int32_t>(sizeof(lane_pack<Tap, lanes>)) : 0;

  const T* x;
  operand_strides xs;
  const T* dy;
  operand_strides dys;
  T* dx;
  operand_strides dxs;
  pool_geometry g;
  tile_plan plan;
  float alpha, beta;

  struct tile {
    tile_box t;
    span outputs[spatial_slots];  // the covering outputs (empty when no window reaches the tile)
    span patch[spatial_slots];    // the x their windows read (max pooling)
    backward_shared layout;
  };

  __host__ __device__ __forceinline__ tile tile_at(int64_t index) const {
    tile s;
    s.t = pooling::tile_at(plan, g.in, index, lanes);
TESSERA_POOL_UNROLL(unroll)
    for (int d = 0; d < spatial_slots; ++d) s.outputs[d] = covering_union(s.t.box[d], d, g);
    const int32_t outputs = box_pixels(s.outputs);
TESSERA_POOL_UNROLL(unroll)
    for (int d = 0; d < spatial_slots; ++d) s.patch[d] = max && outputs > 0 ? window_union(s.outputs[d], d, g) : span{0, 0};
    const int32_t positions = s.t.box[0].size() + s.t.box[1].size() + s.t.box[2].size();
    s.layout = backward_layout(box_pixels(s.patch), outputs, positions, plan.chunk, tap_pack_bytes);
    return s;
  }

  __host__ __device__ __forceinline__ void run_phase(int phase, const tile& s, uint4* shared, unsigned tid,
                                                     unsigned threads) const {
    const int32_t pitch = plan.chunk;
    output_span* spans = reinterpret_cast<output_span*>(shared + s.layout.spans);
    lane_pack<Tap, lanes>* taps = reinterpret_cast<lane_pack<Tap, lanes>*>(shared + s.layout.taps);
    if (phase == 0) {
      if constexpr (max) {
        tile_copy_box<T, lanes>(x + s.t.n * xs.n + s.t.c * xs.c, xs, s.patch, s.t.vectors, pitch, shared, tid, threads);
      }
      tile_copy_box<T, lanes>(dy + s.t.n * dys.n + s.t.c * dys.c, dys, s.outputs, s.t.vectors, pitch,
                              shared + s.layout.dy, tid, threads);
      return;
    }
    if (phase == 1) {
      // One loop per dim, so that every array is indexed by constants (no local memory).
      int32_t first = 0;
TESSERA_POOL_UNROLL(unroll)
      for (int dim = 0; dim < spatial_slots; ++dim) {
        const int32_t extent = s.t.box[dim].size();
        for (int32_t i = static_cast<int32_t>(tid); i < extent; i += static_cast<int32_t>(threads))
          spans[first + i] = covering_outputs(s.t.box[dim].begin + i, dim, g);
        first += extent;
      }
      if constexpr (max) {
        const tile_lane l = lane_of(tid, threads, pitch, s.t.vectors);
        const int32_t outputs = box_pixels(s.outputs);
        if (!l.active || l.first >= outputs) return;
        box_cursor at(l.first, l.per_pass, s.outputs[1].size(), s.outputs[2].size());
        for (int32_t q = l.first; q < outputs; q += l.per_pass, at.advance()) {
          int32_t winner[lanes];
          argmax_window<T, lanes, sizeof(Tap) == 1>(g, s.outputs[0].begin + at.d, s.outputs[1].begin + at.h, s.outputs[2].begin + at.w,
                                  s.patch, pitch, l.v, shared, winner);
          lane_pack<Tap, lanes> won;
TESSERA_POOL_UNROLL(unroll)
          for (int k = 0; k < lanes; ++k) won.v[k] = static_cast<Tap>(winner[k]);  // -1: no tap
          taps[q * pitch + l.v] = won;
        }
      }
      return;
    }
    gather(s, shared + s.layout.dy, taps, spans, lane_of(tid, threads, pitch, s.t.vectors));
  }

  // Each dx element sums dy over the outputs whose windows contain it, in output order.
  __host__ __device__ __forceinline__ void gather(const tile& s, const uint4* dy_shared,
                                                  const lane_pack<Tap, lanes>* taps, const output_span* spans,
                                                  const tile_lane& l) const {
    const int32_t pitch = plan.chunk;
    const span(&box)[spatial_slots] = s.t.box;
    const int32_t e0 = box[0].size(), e1 = box[1].size(), e2 = box[2].size();
    const int32_t o1 = s.outputs[1].size(), o2 = s.outputs[2].size();
    const int32_t elements = box_pixels(box);
    if (!l.active || l.first >= elements) return;
    T* base = dx + s.t.n * dxs.n + static_cast<int64_t>(s.t.c + l.v * lanes) * dxs.c;
    box_cursor at(l.first, l.per_pass, e1, e2);
    for (int32_t q = l.first; q < elements; q += l.per_pass, at.advance()) {
      const int32_t id = box[0].begin + at.d, ih = box[1].begin + at.h, iw = box[2].begin + at.w;
      const output_span od = spans[at.d], oh = spans[e0 + at.h], ow = spans[e0 + e1 + at.w];
      float sum[lanes];
TESSERA_POOL_UNROLL(unroll)
      for (int k = 0; k < lanes; ++k) sum[k] = 0.0f;
      for (int32_t d = od.first; d <= od.last; ++d) {
        const tap_span sd = window_taps(d, 0, g);
        for (int32_t h = oh.first; h <= oh.last; ++h) {
          const tap_span sh = window_taps(h, 1, g);
          const int32_t row_tap = ((id - sd.start) * g.window[1] + (ih - sh.start)) * g.window[2];
          const int32_t row = ((d - s.outputs[0].begin) * o1 + (h - s.outputs[1].begin)) * o2 - s.outputs[2].begin;
          for (int32_t w = ow.first; w <= ow.last; ++w) {
            const tap_span sw = window_taps(w, 2, g);
            const int32_t at_output = (row + w) * pitch + l.v;
            if constexpr (max) {
              const int32_t tap = row_tap + (iw - sw.start);
              const lane_pack<Tap, lanes> won = taps[at_output];
              bool any = false;
TESSERA_POOL_UNROLL(unroll)
              for (int k = 0; k < lanes; ++k) any |= won.v[k] == tap;
              if (any) {  // most outputs are won by another tap: skip their dy
                const lane_pack<T, lanes> grad = load_pack<T, lanes>(reinterpret_cast<const T*>(dy_shared + at_output));
TESSERA_POOL_UNROLL(unroll)
                for (int k = 0; k < lanes; ++k)
                  if (won.v[k] == tap) sum[k] += to_float(grad.v[k]);
              }
            } else {
              const lane_pack<T, lanes> grad = load_pack<T, lanes>(reinterpret_cast<const T*>(dy_shared + at_output));
              if constexpr (Op == pool_op::avg_exclude_pad) {
                const float inside =
                    static_cast<float>((sd.end - sd.begin) * (sh.end - sh.begin) * (sw.end - sw.begin));
TESSERA_POOL_UNROLL(unroll)
                for (int k = 0; k < lanes; ++k) sum[k] += to_float(grad.v[k]) / inside;
              } else {
TESSERA_POOL_UNROLL(unroll)
                for (int k = 0; k < lanes; ++k) sum[k] += to_float(grad.v[k]);
              }
            }
          }
        }
      }
      T* out = base + id * dxs.d + ih * dxs.h + iw * dxs.w;
      lane_pack<T, lanes> old{};
      if (beta != 0.0f) old = load_pack<T, lanes>(out);  // never read when beta is 0 (NaN poison)
      lane_pack<T, lanes> result;
TESSERA_POOL_UNROLL(unroll)
      for (int k = 0; k < lanes; ++k) {
        // One division by the constant window size, after the sum, keeps integer sums exact.
        const float r = Op == pool_op::avg_include_pad ? sum[k] / static_cast<float>(g.window_size) : sum[k];
        result.v[k] = blend(r, alpha, beta, old.v[k]);
      }
      store_pack<T, lanes>(out, result);
    }
  }
};

// ---- host: choosing the tile -------------------------------------------------------------------

// The plan for tiles of `extent` positions (outputs forward, dx elements backward) and `chunk`
// vectors, with the most shared memory any of its tiles can use: a run of E outputs reads at
// most (E - 1) * stride + window inputs; a run of E inputs is touched by at most
// (E + window - 2) / stride + 1 outputs (both capped by the tensor). tap_pack_bytes is the
// winning-tap bytes per output and vector (0 for average backward, which reads no x).
inline tile_plan make_tile_plan(const pool_geometry& g, int lanes, bool backward, int32_t tap_pack_bytes,
                                const int32_t (&extent)[spatial_slots], int32_t chunk) {
  tile_plan plan{};
  plan.vectors = g.c / lanes;
  plan.chunk = chunk;
  plan.chunks = (plan.vectors + chunk - 1) / chunk;
  int64_t count = g.n * plan.chunks;
  int64_t x_pixels = 1, outputs = 1;
  for (int d = 0; d < spatial_slots; ++d) {
    const int64_t limit = backward ? g.in[d] : g.out[d];
    const int64_t e = extent[d] < limit ? extent[d] : limit;
    plan.extent[d] = static_cast<int32_t>(e);
    plan.tiles[d] = static_cast<int32_t>((limit + e - 1) / e);
    count = count > (int64_t{1} << 62) / plan.tiles[d] ? -1 : count * plan.tiles[d];
    const int64_t o = backward ? (e + g.window[d] - 2) / g.stride[d] + 1 : e;
    const int64_t o_capped = o < g.out[d] ? o : g.out[d];
    const int64_t reach = (o_capped - 1) * g.stride[d] + g.window[d];
    x_pixels *= reach < g.in[d] ? reach : g.in[d];
    outputs *= o_capped;
  }
  int64_t units;  // 16-byte units of shared memory
  if (backward) {
    const int64_t positions = int64_t{plan.extent[0]} + plan.extent[1] + plan.extent[2];
    units = backward_layout(tap_pack_bytes > 0 ? x_pixels : 0, outputs, positions, chunk, tap_pack_bytes).end;
  } else {
    units = x_pixels * chunk;
  }
  if (count < 0 || units * 16 > tile_shared_budget) return tile_plan{};  // count 0: does not fit
  plan.count = count;
  plan.shared_bytes = static_cast<int32_t>(units * 16);
  return plan;
}

// The tile for a problem on `sms` multiprocessors, or a plan with count 0 when no tile fits the
// shared-memory budget (huge windows) or, forward, when a stride exceeds its window (a patch
// would hold inputs no window reads). Among the tiles of 1, 2, 4, ... 128 or all positions per
// spatial dim (one depth position per tile), with channel chunks of 8 vectors or as many as fit,
// it takes the one that moves the fewest bytes through L2 per result (patch and halo included)
// among those that give every SM several tiles, or the most tiles for small problems.
inline tile_plan choose_tile_plan(const pool_geometry& g, int lanes, bool backward, int32_t tap_pack_bytes, int sms) {
  if (g.c % lanes != 0 || g.c < lanes) return tile_plan{};
  if (!backward) {
    for (int d = 0; d < spatial_slots; ++d)
      if (g.stride[d] > g.window[d]) return tile_plan{};
  }
  const int64_t enough = static_cast<int64_t>(sms > 0 ? sms : 1) * tile_blocks_per_sm * 2;
  const int32_t vectors = g.c / lanes;
  for (int32_t chunk = vectors < tile_max_chunk ? vectors : tile_max_chunk; chunk >= 1; chunk /= 2) {
    tile_plan best{};
    double best_cost = 0.0;
    const auto consider = [&](int32_t eh, int32_t ew) {
      const int32_t extent[spatial_slots] = {1, eh, ew};
      const tile_plan plan = make_tile_plan(g, lanes, backward, tap_pack_bytes, extent, chunk);
      if (plan.count == 0) return;
      // Pixels moved per result pixel: the patch (forward) or x patch plus dy (backward), over
      // the tile's outputs or dx elements.
      int64_t moved = 1, results = 1, outputs = 1;
      for (int d = 0; d < spatial_slots; ++d) {
        const int64_t e = plan.extent[d];
        const int64_t o = backward ? (e + g.window[d] - 2) / g.stride[d] + 1 : e;
        const int64_t o_capped = o < g.out[d] ? o : g.out[d];
        const int64_t reach = (o_capped - 1) * g.stride[d] + g.window[d];
        moved *= reach < g.in[d] ? reach : g.in[d];
        results *= e;
        outputs *= o_capped;
      }
      if (backward) moved = (tap_pack_bytes > 0 ? moved : 0) + outputs;
      const double cost = static_cast<double>(moved) / static_cast<double>(results);
      const bool plan_enough = plan.count >= enough, best_enough = best.count >= enough;
      bool better;
      if (best.count == 0) {
        better = true;
      } else if (plan_enough != best_enough) {
        better = plan_enough;
      } else if (plan_enough) {
        better = cost < best_cost * (1 - 1e-9) ||
                 (cost <= best_cost * (1 + 1e-9) && plan.shared_bytes < best.shared_bytes);
      } else {
        better = plan.count > best.count || (plan.count == best.count && cost < best_cost * (1 - 1e-9));
      }
      if (better) {
        best = plan;
        best_cost = cost;
      }
    };
    const int32_t limit_h = backward ? g.in[1] : g.out[1], limit_w = backward ? g.in[2] : g.out[2];
    for (int32_t eh = 1;; eh *= 2) {
      const int32_t h = eh < limit_h ? eh : limit_h;
      for (int32_t ew = 1;; ew *= 2) {
        consider(h, ew < limit_w ? ew : limit_w);
        if (ew >= limit_w || ew >= 128) break;
      }
      if (limit_w > 128 && limit_w <= 256) consider(h, limit_w);
      if (eh >= limit_h || eh >= 128) break;
    }
    if (best.count > 0) return best;
  }
  return tile_plan{};
}

}  // namespace tessera::cuda::pooling
