// Pooling geometry for the pooling kernels (pooling_kernels.cu): a problem normalised to three
// spatial dims (a 2-D problem gets a leading depth of extent 1, so one kernel body serves 2-D
// and 3-D), the element strides of each operand, how a thread's work index maps to a tensor
// element, and the window arithmetic of both directions: which input taps an output's window
// covers (forward), and which outputs' windows cover an input element (backward gather). The
// window arithmetic and the vector accesses are host-callable (pooling_tiles.cuh).
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::pooling {

constexpr int spatial_slots = 3;  // depth, height, width

// Every extent, window, stride and pad fits in int32 (pooling_kernels.cu declines the rest), so
// the window arithmetic is 32-bit; only the batch (which may hold batch * channels, see
// merge_planes) and memory offsets are 64-bit.
struct pool_geometry {
  int64_t n;
  int32_t c;
  int32_t in[spatial_slots];
  int32_t out[spatial_slots];
  int32_t window[spatial_slots];
  int32_t stride[spatial_slots];
  int32_t pad[spatial_slots];  // pad_before; pad_after is implied by `out`
  int32_t window_size;         // product of `window`
};

// Element strides of one operand for (n, c, depth, height, width).
struct operand_strides {
  int64_t n, c, d, h, w;
};

inline pool_geometry make_geometry(const tsrpPoolingProblem& p) {
  pool_geometry g{};
  g.n = p.x.dims[0];
  g.c = static_cast<int32_t>(p.x.dims[1]);
  g.window_size = 1;
  const int lead = spatial_slots - p.spatial_dims;  // slots added in front of the problem's dims
  for (int i = 0; i < spatial_slots; ++i) {
    const int s = i - lead;
    const bool added = s < 0;
    g.in[i] = added ? 1 : static_cast<int32_t>(p.x.dims[2 + s]);
    g.out[i] = added ? 1 : static_cast<int32_t>(p.y.dims[2 + s]);
    g.window[i] = added ? 1 : static_cast<int32_t>(p.window[s]);
    g.stride[i] = added ? 1 : static_cast<int32_t>(p.stride[s]);
    g.pad[i] = added ? 0 : static_cast<int32_t>(p.pad_before[s]);
    g.window_size *= g.window[i];
  }
  return g;
}

inline operand_strides strides_of(const tsrpTensor& t, int spatial_dims) {
  const int w = spatial_dims + 1;  // the last dim
  return {t.strides[0], t.strides[1], spatial_dims == 3 ? t.strides[2] : 0, t.strides[w - 1],
          t.strides[w]};
}

// A dense tensor of N x C x `extent` (the workspace), channels-last or channels-first.
inline operand_strides dense_strides(const pool_geometry& g, const int32_t (&extent)[spatial_slots],
                                     bool channels_last) {
  const int64_t c = g.c, d = extent[0], h = extent[1], w = extent[2];
  if (channels_last) return {c * d * h * w, 1, c * h * w, c * w, c};
  return {c * d * h * w, d * h * w, h * w, w, 1};
}

// Packed channels-first tensors index (n, c) as one plane number n * C + c with the plane stride
// (the C stride, or the N stride when C is 1): the walk then splits one digit fewer. Valid when
// N == 1, C == 1 or the N stride is C times the C stride, which packed NCHW guarantees.
inline operand_strides merge_planes(const operand_strides& s, int32_t channels) {
  return {channels == 1 ? s.n : s.c, 0, s.d, s.h, s.w};
}
inline pool_geometry merge_planes(pool_geometry g) {
  g.n *= g.c;
  g.c = 1;
  return g;
}

// ---- device side ------------------------------------------------------------------------------

// The next mixed-radix digit of `rest` (the work index, fastest digit first). Most tensors have
// fewer than 2^32 work items, and a 32-bit division is several times cheaper than a 64-bit one.
__device__ __forceinline__ int32_t split_digit(int64_t& rest, int32_t radix) {
  if (radix == 1) return 0;
  if (static_cast<uint64_t>(rest) <= 0xffffffffull) {
    const uint32_t r = static_cast<uint32_t>(rest);
    const uint32_t q = r / static_cast<uint32_t>(radix);
    rest = q;
    return static_cast<int32_t>(r - q * static_cast<uint32_t>(radix));
  }
  const int64_t q = rest / radix;
  const int32_t digit = static_cast<int32_t>(rest - q * radix);
  rest = q;
  return digit;
}

// How consecutive threads step through a tensor; the launcher picks the walk whose fastest digit
// has the smallest stride in the tensor a thread writes, so stores coalesce.
enum class walk : int {
  channel_vectors,  // C fastest, 16 bytes of channels per thread (channels-last tensors)
  channels,         // C fastest, one element per thread
  planes,           // W fastest, (n, c) merged into one plane number (packed NCHW/NCDHW)
  spatial           // W fastest, then H, D, C, N (any strides)
};

struct element_coord {
  int64_t n;  // the plane number for walk::planes
  int32_t c, d, h, w;
};

// The tensor element (or the first of `Lanes` channels) of work item `item` over a tensor of
// g.n x channels x `extent`.
template <walk W, int Lanes>
__device__ __forceinline__ element_coord walk_coord(int64_t item, int32_t channels,
                                                   const int32_t (&extent)[spatial_slots]) {
  element_coord e;
  if constexpr (W == walk::channel_vectors || W == walk::channels) {
    e.c = split_digit(item, channels / Lanes) * Lanes;
    e.w = split_digit(item, extent[2]);
    e.h = split_digit(item, extent[1]);
    e.d = split_digit(item, extent[0]);
  } else {
    e.w = split_digit(item, extent[2]);
    e.h = split_digit(item, extent[1]);
    e.d = split_digit(item, extent[0]);
    e.c = W == walk::spatial ? split_digit(item, channels) : 0;
  }
  e.n = item;
  return e;
}

// The taps of output `o`'s window along `dim`: the window starts at input position `start`
// (negative inside the front padding); [begin, end) are the positions inside the input. With
// pads smaller than the window the span is never empty for a non-empty input.
struct tap_span {
  int32_t start, begin, end;
};
__host__ __device__ __forceinline__ tap_span window_taps(int32_t o, int dim, const pool_geometry& g) {
  const int32_t start = o * g.stride[dim] - g.pad[dim];
  const int32_t end = start + g.window[dim];
  return {start, start > 0 ? start : 0, end < g.in[dim] ? end : g.in[dim]};
}

// The outputs [first, last] along `dim` whose windows contain input position `i`: those with
// o * stride <= i + pad < o * stride + window. Empty (first > last) where the strides skip `i`.
struct output_span {
  int32_t first, last;
};
__host__ __device__ __forceinline__ output_span covering_outputs(int32_t i, int dim, const pool_geometry& g) {
  const int32_t reach = i + g.pad[dim];
  const int32_t beyond = reach - g.window[dim];  // o * stride must exceed this
  const int32_t first = beyond < 0 ? 0 : beyond / g.stride[dim] + 1;
  const int32_t last = reach / g.stride[dim];
  return {first, last < g.out[dim] - 1 ? last : g.out[dim] - 1};
}

// `Lanes` consecutive elements moved as one access: 16 bytes of data become one ld/st.global.v4.
// The offsets the kernels form are multiples of Lanes (checked on the host), so the alignment
// holds wherever the base pointer is aligned.
template <typename E, int Lanes>
struct alignas(sizeof(E) * Lanes) lane_pack {
  E v[Lanes];
};

template <typename E, int Lanes>
__host__ __device__ __forceinline__ lane_pack<E, Lanes> load_pack(const E* p) {
  return *reinterpret_cast<const lane_pack<E, Lanes>*>(p);
}

template <typename E, int Lanes>
__host__ __device__ __forceinline__ void store_pack(E* p, const lane_pack<E, Lanes>& value) {
  *reinterpret_cast<lane_pack<E, Lanes>*>(p) = value;
}

}  // namespace tessera::cuda::pooling
