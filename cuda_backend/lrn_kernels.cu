// Local response normalization across channels, forward and backward (semantics in
// plugin_abi_pooling.h, ground truth in tests/reference/reference_lrn.cpp), fp32/fp16/bf16 with
// fp32 arithmetic. cuDNN's definition: the window of channel c is the n channels
// c - (n - 1) / 2 .. c + n / 2 (integer division, so even n reaches one further up), clipped to
// [0, C), and alpha is divided by n:
//   s_c  = k + alpha / n * sum_{j in window(c)} x_j^2          y_c = x_c * s_c^-beta
//   dx_m = dy_m * s_m^-beta - 2 * alpha * beta / n * x_m * sum_{c : m in window(c)} dy_c * x_c * s_c^(-beta-1)
// and every output is blended, out = blend_alpha * value + blend_beta * out (out not read when
// blend_beta is 0). The backward recomputes s from x (y_in is not read): one more window sum per
// element, instead of a workspace or trust in y.
// Kernels, fastest first:
//   lrn_{fwd,bwd}_channels_sliding  a thread per (n, spatial) position walks its channels once,
//                        keeping the last 16 channels' values in a thread-private ring in shared
//                        memory (registers cannot be indexed by a running channel). Each window sum
//                        is re-added from the ring in channel order, never updated by subtraction,
//                        so large early channels cannot cancel into later ones. Positions walk
//                        row-major (the last spatial dim fastest), so NCHW reads and writes are
//                        coalesced across a warp; loads run 4 channels ahead. n up to 16 (the
//                        ABI's maximum). The forward declines channels-last x, where a walk along
//                        C is not coalesced; the backward takes every layout (its gather needs the
//                        scales of n neighbours of each element, which only the walk has at hand).
//   lrn_fwd_elementwise  a thread per element in y's memory order, the window read straight from
//                        global memory: for channels-last data the neighbours sit in the cache
//                        lines just loaded (L1 hits). Any layout, any n.
// No atomics, no reductions across threads: results are bitwise reproducible on a given GPU.
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "norm_index.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>

namespace tessera::cuda {
namespace {

// Tensor slots: 0 x, 1 dy (backward) or the channel index (elementwise forward), 2 y or dx.
constexpr int lrn_slots = 3;

constexpr int ring_slots = 16;  // channels a sliding thread keeps: the largest n
constexpr int64_t max_sliding_window = ring_slots;
constexpr int sliding_threads = 128;
constexpr int prefetch = 4;  // channels a sliding thread loads ahead
constexpr int elementwise_threads = 256;

// ================================ device side ===================================================

struct lrn_params {
  int64_t channels;
  int64_t lo;      // window(c) = [c - lo, c + hi]
  int64_t hi;
  float k;
  float alpha_n;   // alpha / n
  float beta;
  float coef;      // 2 * alpha * beta / n
  float blend_alpha;
  float blend_beta;
};

struct sliding_params {
  dim_walker<lrn_slots> positions;  // position -> offsets (the channel dim excluded)
  int64_t count;
  int64_t channel_stride[lrn_slots];
  lrn_params lrn;
};

struct elementwise_params {
  dim_walker<lrn_slots> walk;  // element (in y's memory order) -> x offset, channel, y offset
  int64_t count;
  int64_t x_channel_stride;
  lrn_params lrn;
};

// Offset of channel a's slot in a thread's ring (the thread's column of a [slot][thread] array:
// consecutive threads in consecutive banks).
__device__ __forceinline__ int ring_at(int64_t a) { return static_cast<int>(a & (ring_slots - 1)) * sliding_threads; }

// s_b from the ring, which holds x of channels b - lo .. b + hi (those inside [0, C)).
__device__ __forceinline__ float ring_scale(const float* ring, int64_t b, const lrn_params& L) {
  const int64_t first = max(int64_t{0}, b - L.lo), last = min(L.channels - 1, b + L.hi);
  float sum = 0.0f;
  for (int64_t j = first; j <= last; ++j) {
    const float v = ring[ring_at(j)];
    sum = fmaf(v, v, sum);
  }
  return fmaf(L.alpha_n, sum, L.k);
}

// Step a reads x_a into the ring; y_b for b = a - hi then has its whole window. Each thread
// touches only its own ring column: no barrier.
template <typename T>
__global__ void __launch_bounds__(sliding_threads)
    lrn_fwd_sliding_kernel(const T* __restrict__ x, T* __restrict__ y, sliding_params g) {
  __shared__ float x_ring[ring_slots * sliding_threads];
  float* xr = x_ring + threadIdx.x;
  const lrn_params& L = g.lrn;
  const int64_t channels = L.channels, xs = g.channel_stride[0], ys = g.channel_stride[2];
  const int64_t steps = channels + L.hi;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < g.count; q += stride) {
    int64_t base[lrn_slots];
    g.positions.offsets(q, base);
    const T* xq = x + base[0];
    T* yq = y + base[2];
    for (int64_t a0 = 0; a0 < steps; a0 += prefetch) {
      float ahead[prefetch];
#pragma unroll
      for (int i = 0; i < prefetch; ++i) ahead[i] = a0 + i < channels ? to_float(xq[(a0 + i) * xs]) : 0.0f;
#pragma unroll
      for (int i = 0; i < prefetch; ++i) {
        const int64_t a = a0 + i;
        if (a < channels) xr[ring_at(a)] = ahead[i];
        const int64_t b = a - L.hi;
        if (b >= 0 && b < channels) {
          const float s = ring_scale(xr, b, L);
          store_blended(yq + b * ys, xr[ring_at(b)] * powf(s, -L.beta), L.blend_alpha, L.blend_beta);
        }
      }
    }
  }
}

// Three rings per thread: x, t_c = dy_c * x_c * s_c^(-beta-1) and u_c = dy_c * s_c^-beta. Step a
// reads x_a; channel b = a - hi then has its window, so t_b and u_b are formed; channel
// m = b - lo then has every c whose window holds it (c <= m + lo = b), so dx_m is complete. The
// rings span n <= 16 channels of each kind, so no slot is overwritten while it is still read.
template <typename T>
__global__ void __launch_bounds__(sliding_threads)
    lrn_bwd_sliding_kernel(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                           sliding_params g) {
  __shared__ float rings[3 * ring_slots * sliding_threads];
  float* xr = rings + threadIdx.x;
  float* tr = xr + ring_slots * sliding_threads;
  float* ur = tr + ring_slots * sliding_threads;
  const lrn_params& L = g.lrn;
  const int64_t channels = L.channels;
  const int64_t xs = g.channel_stride[0], dys = g.channel_stride[1], dxs = g.channel_stride[2];
  const int64_t steps = channels + L.hi + L.lo;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < g.count; q += stride) {
    int64_t base[lrn_slots];
    g.positions.offsets(q, base);
    const T* xq = x + base[0];
    const T* dyq = dy + base[1];
    T* dxq = dx + base[2];
    for (int64_t a0 = 0; a0 < steps; a0 += prefetch) {
      float ahead_x[prefetch], ahead_dy[prefetch];
#pragma unroll
      for (int i = 0; i < prefetch; ++i) {
        const int64_t a = a0 + i, b = a - L.hi;
        ahead_x[i] = a < channels ? to_float(xq[a * xs]) : 0.0f;
        ahead_dy[i] = b >= 0 && b < channels ? to_float(dyq[b * dys]) : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < prefetch; ++i) {
        const int64_t a = a0 + i;
        if (a < channels) xr[ring_at(a)] = ahead_x[i];
        const int64_t b = a - L.hi;
        if (b >= 0 && b < channels) {
          const float s = ring_scale(xr, b, L);
          const float p = powf(s, -L.beta);
          ur[ring_at(b)] = ahead_dy[i] * p;
          tr[ring_at(b)] = ahead_dy[i] * xr[ring_at(b)] * (p / s);
        }
        const int64_t m = b - L.lo;
        if (m >= 0 && m < channels) {
          const int64_t first = max(int64_t{0}, m - L.hi), last = min(channels - 1, m + L.lo);
          float acc = 0.0f;
          for (int64_t c = first; c <= last; ++c) acc += tr[ring_at(c)];
          const float value = ur[ring_at(m)] - L.coef * xr[ring_at(m)] * acc;
          store_blended(dxq + m * dxs, value, L.blend_alpha, L.blend_beta);
        }
      }
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(elementwise_threads)
    lrn_fwd_elementwise_kernel(const T* __restrict__ x, T* __restrict__ y, elementwise_params g) {
  const lrn_params& L = g.lrn;
  const int64_t xs = g.x_channel_stride;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < g.count; e += stride) {
    int64_t off[lrn_slots];
    g.walk.offsets(e, off);
    const int64_t c = off[1];
    const T* xc = x + off[0];
    const int64_t first = max(int64_t{0}, c - L.lo) - c, last = min(L.channels - 1, c + L.hi) - c;
    float sum = 0.0f;
    for (int64_t d = first; d <= last; ++d) {
      const float v = to_float(xc[d * xs]);
      sum = fmaf(v, v, sum);
    }
    const float s = fmaf(L.alpha_n, sum, L.k);
    store_blended(y + off[2], to_float(*xc) * powf(s, -L.beta), L.blend_alpha, L.blend_beta);
  }
}

// ================================ host side =====================================================

enum class lrn_kind { sliding, elementwise };

struct lrn_desc {
  bool backward;
  const tsrpTensor* data[lrn_slots];  // x, dy | null, y | dx
  const char* names[lrn_slots];
};

lrn_desc describe(const tsrpLrnProblem& p, bool backward) {
  lrn_desc d{};
  d.backward = backward;
  d.data[0] = &p.x;
  d.data[1] = backward ? &p.dy : nullptr;
  d.data[2] = backward ? &p.dx : &p.y;
  d.names[0] = "x";
  d.names[1] = "dy";
  d.names[2] = backward ? "dx" : "y";
  return d;
}

std::string quoted(const char* name) { return std::string("tensor '") + name + "'"; }

std::string common_support(const tsrpLrnProblem& p, const lrn_desc& d) {
  if (p.n < 1) return "window n is " + std::to_string(p.n) + ", expected at least 1";
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta) || !std::isfinite(p.k))
    return "alpha, beta and k must be finite";
  const tsrpTensor& x = p.x;
  if (x.ndims < 3 || x.ndims > TSRP_MAX_DIMS)
    return quoted("x") + " has " + std::to_string(x.ndims) + " dims, expected 3 to " + std::to_string(TSRP_MAX_DIMS) +
           " (N, C, spatial...)";
  for (int s = 0; s < lrn_slots; ++s) {
    const tsrpTensor* t = d.data[s];
    if (t == nullptr) continue;
    if (!is_floating_storage(t->data_type))
      return quoted(d.names[s]) + " is " + data_type_name(t->data_type) + ": LRN takes float, half and bfloat16";
    if (t->data_type != x.data_type)
      return quoted(d.names[s]) + " is " + data_type_name(t->data_type) + " but x is " + data_type_name(x.data_type) +
             " (one data type per call)";
    if (!same_dims(*t, x)) return quoted(d.names[s]) + " has other dims than x";
    for (int i = 0; i < t->ndims; ++i) {
      if (t->dims[i] < 0) return quoted(d.names[s]) + " has a negative dim " + std::to_string(i);
      if (t->strides[i] < 0) return quoted(d.names[s]) + " has a negative stride in dim " + std::to_string(i);
    }
  }
  return {};
}

std::string sliding_support(const tsrpLrnProblem& p, bool backward) {
  if (p.n > max_sliding_window)
    return "window n = " + std::to_string(p.n) + " exceeds the " + std::to_string(max_sliding_window) +
           " channels a thread's ring holds" + (backward ? " (16 is the ABI's maximum)" : " (lrn_fwd_elementwise takes it)");
  if (!backward && p.x.dims[1] > 1 && p.x.strides[1] == 1)
    return "tensor 'x' is channels-last (channel stride 1), where a walk along C is not coalesced "
           "(lrn_fwd_elementwise reads each window from the cache lines it just loaded)";
  return {};
}

lrn_params parameters_of(const tsrpLrnProblem& p, float blend_alpha, float blend_beta) {
  lrn_params L{};
  L.channels = p.x.dims[1];
  L.lo = (p.n - 1) / 2;
  L.hi = p.n / 2;
  L.k = static_cast<float>(p.k);
  L.alpha_n = static_cast<float>(p.alpha / static_cast<double>(p.n));
  L.beta = static_cast<float>(p.beta);
  L.coef = static_cast<float>(2.0 * p.alpha * p.beta / static_cast<double>(p.n));
  L.blend_alpha = blend_alpha;
  L.blend_beta = blend_beta;
  return L;
}

template <typename T>
void run_sliding(cuda_context& ctx, const tsrpLrnProblem& p, const lrn_desc& d, const tsrpLrnArgs& a) {
  sliding_params g{};
  tsrpTensor positions = p.x;
  positions.dims[1] = 1;  // make_dim_walker skips size-1 dims
  g.positions = make_dim_walker<lrn_slots>(positions, 0, positions.ndims, d.data);
  g.count = element_count(positions);
  for (int s = 0; s < lrn_slots; ++s) g.channel_stride[s] = d.data[s] ? d.data[s]->strides[1] : 0;
  g.lrn = parameters_of(p, a.alpha, a.beta);
  const unsigned int blocks = ctx.grid_stride_blocks(g.count, sliding_threads);
  if (d.backward) {
    lrn_bwd_sliding_kernel<T><<<blocks, sliding_threads, 0, ctx.stream()>>>(
        static_cast<const T*>(a.x), static_cast<const T*>(a.dy), static_cast<T*>(a.dx), g);
  } else {
    lrn_fwd_sliding_kernel<T><<<blocks, sliding_threads, 0, ctx.stream()>>>(static_cast<const T*>(a.x),
                                                                            static_cast<T*>(a.y), g);
  }
}

// The elementwise walk: every tensor's dims reordered so that y's strides decrease (a row-major
// walk then writes y in memory order), with slot 1 a made-up tensor of stride 1 along C and 0
// elsewhere, so that its offset is the channel index.
template <typename T>
void run_elementwise(cuda_context& ctx, const tsrpLrnProblem& p, const tsrpLrnArgs& a) {
  const int nd = p.x.ndims;
  int order[TSRP_MAX_DIMS];
  std::iota(order, order + nd, 0);
  std::stable_sort(order, order + nd, [&](int u, int v) { return p.y.strides[u] > p.y.strides[v]; });
  tsrpTensor x = p.x, channel = p.x, y = p.y;
  for (int i = 0; i < nd; ++i) {
    const int from = order[i];
    x.dims[i] = channel.dims[i] = y.dims[i] = p.x.dims[from];
    x.strides[i] = p.x.strides[from];
    y.strides[i] = p.y.strides[from];
    channel.strides[i] = from == 1 ? 1 : 0;
  }
  const tsrpTensor* tensors[lrn_slots] = {&x, &channel, &y};
  elementwise_params g{};
  g.walk = make_dim_walker<lrn_slots>(x, 0, nd, tensors);
  g.count = element_count(p.x);
  g.x_channel_stride = p.x.strides[1];
  g.lrn = parameters_of(p, a.alpha, a.beta);
  const unsigned int blocks = ctx.grid_stride_blocks(g.count, elementwise_threads);
  lrn_fwd_elementwise_kernel<T><<<blocks, elementwise_threads, 0, ctx.stream()>>>(static_cast<const T*>(a.x),
                                                                                  static_cast<T*>(a.y), g);
}

// ---- traits ------------------------------------------------------------------------------------

constexpr const char* sliding_forward_notes =
    "A thread per (n, spatial) position walks the channels once (x read once, coalesced for NCHW-like "
    "layouts); window sums of squares re-added in channel order from a per-thread ring in fp32, then "
    "x * powf(k + alpha / n * sum, -beta). cuDNN's window for odd and even n, n <= 16. Deterministic.";
constexpr const char* sliding_backward_notes =
    "Exact derivative of cuDNN's LRN, any layout, n <= 16: a thread per (n, spatial) position walks the "
    "channels once, recomputing each scale s from x (y is not read) and gathering dy_c * x_c * s_c^(-beta-1) "
    "over the channels whose window holds each element from per-thread rings, in fp32. Deterministic.";
constexpr const char* elementwise_forward_notes =
    "A thread per element in y's memory order, the window of squares summed in channel order in fp32 "
    "straight from memory (cache hits for channels-last data), any layout and any n. Deterministic.";

template <lrn_kind Kind, bool Backward>
struct lrn_traits {
  static_assert(!(Backward && Kind == lrn_kind::elementwise), "the backward has no elementwise kernel");
  using problem_type = tsrpLrnProblem;
  using args_type = tsrpLrnArgs;
  static constexpr const char* name = Kind == lrn_kind::elementwise ? "lrn_fwd_elementwise"
                                      : Backward                     ? "lrn_bwd_channels_sliding"
                                                                     : "lrn_fwd_channels_sliding";
  static constexpr int32_t operation = Backward ? TSRP_OP_LRN_BACKWARD : TSRP_OP_LRN_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = Kind == lrn_kind::elementwise ? elementwise_forward_notes
                                       : Backward                     ? sliding_backward_notes
                                                                      : sliding_forward_notes;

  static std::string support(const problem_type& p) {
    const lrn_desc d = describe(p, Backward);
    if (std::string why = common_support(p, d); !why.empty()) return why;
    if (Kind == lrn_kind::sliding) return sliding_support(p, Backward);
    return {};
  }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const lrn_desc d = describe(p, Backward);
    const int64_t elements = element_count(p.x);
    require_pointer(a.x, elements, "x");
    if (Backward) {
      require_pointer(a.dy, elements, "dy");
      require_pointer(a.dx, elements, "dx");
    } else {
      require_pointer(a.y, elements, "y");
    }
    if (elements == 0) return;
    dispatch_storage_type(p.x.data_type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Kind == lrn_kind::sliding) {
        run_sliding<T>(ctx, p, d, a);
      } else {
        run_elementwise<T>(ctx, p, a);
      }
    });
  }
};

}  // namespace

void add_lrn_kernels(kernel_list& out) {
  out.push_back(make_kernel<lrn_traits<lrn_kind::sliding, false>>());
  out.push_back(make_kernel<lrn_traits<lrn_kind::elementwise, false>>());
  out.push_back(make_kernel<lrn_traits<lrn_kind::sliding, true>>());
}

}  // namespace tessera::cuda
