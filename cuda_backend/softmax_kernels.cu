// Softmax and log-softmax, forward and backward (semantics in plugin_abi_pooling.h, ground truth in
// tests/reference/reference_softmax.cpp), over channels or over whole instances, fp32/fp16/bf16
// with fp32 arithmetic:
//   forward   y  = alpha * softmax(x) + beta * y       accurate: exp(x - max) / sum(exp(x - max))
//                                                      log:      x - max - log(sum(exp(x - max)))
//   backward  dx = alpha * dsoftmax(y, dy) + beta * dx  accurate: y * (dy - sum(dy * y))
//                                                      log:      dy - exp(y) * sum(dy)
// FAST is computed as ACCURATE (the max is always subtracted). A row is what one softmax
// normalizes: the C elements of one (n, spatial) position in channel mode, the C x spatial
// elements of one n in instance mode. Four kernels per direction, registered fastest first:
//   *_rows_warp          every row is one dense run of memory, laid out alike in every tensor
//                        (channel mode on NHWC, 2-D N x C, instance mode on packed data), of at
//                        most 1024 elements: a group of up to 32 lanes per row holds it in
//                        registers, so x is read once and y written once (16-byte vectors when
//                        the row length, the row strides and the pointers allow); exact max, then
//                        the sum of exponentials, each by a shuffle tree.
//   *_rows_block         the same rows, any length: a 512-thread block per row. The first 16
//                        elements of each thread stay in registers (rows up to 8192 are read
//                        once); the rest is streamed with the online max+sum and read again (from
//                        L2) for the output.
//   *_channels_strided   channel mode where a channel stride is not 1 (NCHW): a thread per spatial
//                        position (two positions of 16-bit data: 4-byte accesses, so a warp reads
//                        whole 128-byte lines) walks the channels; the first 32 values stay in
//                        registers, further channels are streamed online and read again.
//   *_strided            anything (mixed layouts in instance mode, padded or permuted strides): a
//                        block per row, per-element index arithmetic, online max+sum, two passes.
// No atomics, fixed reduction shapes: results are bitwise reproducible on a given GPU.
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "launch_overrides.hpp"
#include "norm_index.cuh"
#include "norm_reduction.cuh"
#include "norm_vector_io.cuh"
#include "norm_workspace.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera::cuda {
namespace {

// Tensor slots: 0 the input (x forward, y backward), 1 dy (backward only), 2 the output (y, dx).
constexpr int sm_slots = 3;

constexpr int warp_block_threads = 256;
constexpr int64_t warp_row_limit = 1024;
constexpr int warp_short_elements = 8;  // per lane for rows of up to 256 (groups of 1 to 32 lanes)
constexpr int warp_long_elements = 32;  // per lane for rows of up to 1024 (32 lanes)
constexpr int block_threads = 512;
constexpr int block_cached = 16;        // elements per thread (per tensor) rows_block keeps in registers
constexpr int channel_threads = 256;
constexpr int channel_cached = 32;      // values per thread channels_strided keeps in registers
constexpr int stream_chunk = 4;         // values per online step where rows are streamed
constexpr int strided_threads = 256;

// ================================ device side ===================================================

struct rows_params {
  dim_walker<sm_slots> outer;  // row -> offset of the row's first element in each tensor
  int64_t rows;
  int64_t length;  // elements per row
  int32_t log;     // log-softmax
  float alpha;
  float beta;
};

struct channels_params {
  dim_walker<sm_slots> positions;  // group of V positions -> offsets (the channel dim excluded)
  int64_t groups;
  int64_t channels;
  int64_t channel_stride[sm_slots];
  int32_t log;
  float alpha;
  float beta;
};

struct strided_params {
  dim_walker<sm_slots> outer;  // row -> row base offsets
  dim_walker<sm_slots> inner;  // element of a row -> offsets within the row
  int64_t rows;
  int64_t length;
  int32_t log;
  float alpha;
  float beta;
};

// What the forward outputs are formed with, from the row's sum of exp(x - max): 1 / sum for
// softmax (y = exp(x - max) * scale), log(sum) for log-softmax (y = (x - max) - scale).
__device__ __forceinline__ float softmax_scale(float sum, bool log) { return log ? logf(sum) : 1.0f / sum; }

// The backward's per-element term of the row sum, and the gradient from the row sum.
__device__ __forceinline__ float grad_term(float y, float dy, bool log) { return log ? dy : dy * y; }
__device__ __forceinline__ float grad_value(float y, float dy, float sum, bool log) {
  return log ? dy - expf(y) * sum : y * (dy - sum);
}

// ---- rows_warp ---------------------------------------------------------------------------------
// Blocks (tpr, warp_block_threads / tpr): threadIdx.y picks the row, tpr lanes (a power of two up
// to 32) share it, lane tx holding vectors tx, tx + tpr, ... Grid-stride over groups of rows; the
// trip count is uniform across the block, so every lane reaches the shuffles.
// exp(d) for the forward row kernel, d = x - max <= 0 (or NaN). fp32 data keeps the accurate expf.
// For 16-bit data the hardware's base-2 exponential of d * log2(e) (ex2.approx.ftz: 2 ulp, results
// below 2^-126 flushed): two instructions instead of expf's eight, and its relative error (~1e-6
// for the d > -104 whose exponential is not 0 anyway) is far below half an fp16 or bf16 ulp. The
// kernel is bound by instruction issue on the H200 (ncu, 2026-12-04: 72 % of issue slots busy,
// DRAM at 52 %), so instructions per element are what its speed is made of.
template <typename T>
__device__ __forceinline__ float row_exp(float d) {
  if constexpr (sizeof(T) == 2) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * 1.4426950408889634f));
    return r;
  } else {
    return expf(d);
  }
}

// The forward row kernel, written lean because it is bound by instruction issue: Log (log-softmax)
// a template parameter, the max and the sum as Items independent chains and then one tree, alpha
// folded into the output factor, and row_exp: per element a conversion, a max, a subtraction, the
// exponential, an add and a multiply (static SASS of the fp16 instantiation: 41 FFMA, 65 FMUL, 71
// FADD against the former kernel's 181, 130, 165; 64 registers against 78, so 4 blocks per SM
// instead of 3). H200, 65536x1024 fp16, 2026-12-04 (the first call of the evening): 3.64 TB/s
// against the former kernel's 2.52 in the same call, conformance passed under both. A cp.async
// form (blocks walking n groups of rows, each thread copying its words of the next group into
// shared memory while on the current) lost on the H200, 2026-12-05: 0.0768 ms (n = 4) and 0.0804
// (n = 8) against 0.0720 for this kernel (3.50 and 3.34 vs 3.73 TB/s); removed.
template <typename T, int V, int Items, bool Log>
__global__ void __launch_bounds__(warp_block_threads)
    softmax_fwd_rows_warp_kernel(const T* __restrict__ x, T* __restrict__ y, rows_params g) {
  const int tx = threadIdx.x, tpr = blockDim.x;
  const int nvec = static_cast<int>(g.length / V);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.y; first < g.rows; first += step) {
    const int64_t row = first + threadIdx.y;
    const bool live = row < g.rows;
    int64_t base[sm_slots] = {0, 0, 0};
    if (live) g.outer.offsets(row, base);
    const T* xr = x + base[0];
    float v[Items][V];
    float maxes[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int vec = tx + i * tpr;
      if (live && vec < nvec) {
        load_floats<T, V>(xr + vec * V, v[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[i][j] = -INFINITY;  // padding: adds exp(-inf) = 0
      }
      maxes[i] = v[i][0];
#pragma unroll
      for (int j = 1; j < V; ++j) maxes[i] = fmaxf(maxes[i], v[i][j]);
    }
    float max = maxes[0];
#pragma unroll
    for (int i = 1; i < Items; ++i) max = fmaxf(max, maxes[i]);
    max = group_max_all(max, tpr);
    // A row of -inf only: exp(-inf - 0) = 0 for every element, as exp_below gives (the sum is 0).
    const float shift = max == -INFINITY ? 0.0f : max;
    float sums[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      sums[i] = 0.0f;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float e = row_exp<T>(v[i][j] - shift);
        sums[i] += e;
        if constexpr (!Log) v[i][j] = e;
      }
    }
    float sum = sums[0];
#pragma unroll
    for (int i = 1; i < Items; ++i) sum += sums[i];
    sum = group_sum_all(sum, tpr);
    if (!live) continue;
    // alpha folded into the softmax's factor: one multiply per element.
    const float scale = softmax_scale(sum, Log);
    const float factor = Log ? g.alpha : scale * g.alpha;
    const bool blend = g.beta != 0.0f;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int vec = tx + i * tpr;
      if (vec < nvec) {
        T* yp = y + base[2] + vec * V;
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = Log ? ((v[i][j] - max) - scale) * factor : v[i][j] * factor;
        if (blend) {
          float old[V];
          load_floats<T, V>(yp, old);  // y is read only when beta != 0 (NaN poison otherwise)
#pragma unroll
          for (int j = 0; j < V; ++j) out[j] = fmaf(g.beta, old[j], out[j]);
        }
        store_floats<T, V>(yp, out);
      }
    }
  }
}

template <typename T, int V, int Items>
__global__ void __launch_bounds__(warp_block_threads, 1)
    softmax_bwd_rows_warp_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                 rows_params g) {
  const int tx = threadIdx.x, tpr = blockDim.x;
  const int nvec = static_cast<int>(g.length / V);
  const bool log = g.log != 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.y; first < g.rows; first += step) {
    const int64_t row = first + threadIdx.y;
    const bool live = row < g.rows;
    int64_t base[sm_slots] = {0, 0, 0};
    if (live) g.outer.offsets(row, base);
    const T* yr = y + base[0];
    const T* dyr = dy + base[1];
    float yv[Items][V], dv[Items][V];
    float partial = 0.0f;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int vec = tx + i * tpr;
      if (live && vec < nvec) {
        load_floats<T, V>(yr + vec * V, yv[i]);
        load_floats<T, V>(dyr + vec * V, dv[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) yv[i][j] = dv[i][j] = 0.0f;  // padding: a zero term
      }
#pragma unroll
      for (int j = 0; j < V; ++j) partial += grad_term(yv[i][j], dv[i][j], log);
    }
    const float sum = group_sum_all(partial, tpr);
    if (!live) continue;
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int vec = tx + i * tpr;
      if (vec < nvec) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = grad_value(yv[i][j], dv[i][j], sum, log);
        store_floats_blended<T, V>(dx + base[2] + vec * V, out, g.alpha, g.beta);
      }
    }
  }
}

// ---- rows_block --------------------------------------------------------------------------------
// A block per row (grid-stride over rows: the trip count is uniform, so every thread reaches the
// block reductions). Thread t holds vectors t, t + block_threads, ... of the row's first
// block_threads * Items vectors in registers and streams the rest.
template <typename T, int V>
__global__ void __launch_bounds__(block_threads)
    softmax_fwd_rows_block_kernel(const T* __restrict__ x, T* __restrict__ y, rows_params g) {
  constexpr int items = block_cached / V;
  const int tx = threadIdx.x;
  const int64_t nvec = g.length / V;
  const int64_t streamed = static_cast<int64_t>(items) * block_threads;  // first streamed vector
  const bool log = g.log != 0;
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[sm_slots];
    g.outer.offsets(row, base);
    const T* xr = x + base[0];
    T* yr = y + base[2];
    // Registers: this thread's exact max, then its sum of exp(v - max).
    float v[items][V];
    float local_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int64_t vec = tx + static_cast<int64_t>(i) * block_threads;
      if (vec < nvec) {
        load_floats<T, V>(xr + vec * V, v[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[i][j] = -INFINITY;
      }
#pragma unroll
      for (int j = 0; j < V; ++j) local_max = fmaxf(local_max, v[i][j]);
    }
    max_exp_sum s{local_max, 0.0f};
#pragma unroll
    for (int i = 0; i < items; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float e = exp_below(v[i][j], local_max);
        s.sum += e;
        if (!log) v[i][j] = e;
      }
    // The rest: online, one vector per step.
    for (int64_t vec = streamed + tx; vec < nvec; vec += block_threads) {
      float t[V];
      load_floats<T, V>(xr + vec * V, t);
      s = max_exp_absorb(s, t);
    }
    const max_exp_sum r = block_max_exp_all<block_threads>(s);
    const float scale = softmax_scale(r.sum, log);
    const float rescale = exp_below(local_max, r.max) * scale;  // registers hold exp(v - local_max)
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int64_t vec = tx + static_cast<int64_t>(i) * block_threads;
      if (vec < nvec) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = log ? (v[i][j] - r.max) - scale : v[i][j] * rescale;
        store_floats_blended<T, V>(yr + vec * V, out, g.alpha, g.beta);
      }
    }
    for (int64_t vec = streamed + tx; vec < nvec; vec += block_threads) {
      float t[V];
      load_floats<T, V>(xr + vec * V, t);
#pragma unroll
      for (int j = 0; j < V; ++j) t[j] = log ? (t[j] - r.max) - scale : exp_below(t[j], r.max) * scale;
      store_floats_blended<T, V>(yr + vec * V, t, g.alpha, g.beta);
    }
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(block_threads, 1)
    softmax_bwd_rows_block_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                  rows_params g) {
  constexpr int items = block_cached / V;
  const int tx = threadIdx.x;
  const int64_t nvec = g.length / V;
  const int64_t streamed = static_cast<int64_t>(items) * block_threads;
  const bool log = g.log != 0;
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[sm_slots];
    g.outer.offsets(row, base);
    const T* yr = y + base[0];
    const T* dyr = dy + base[1];
    T* dxr = dx + base[2];
    float yv[items][V], dv[items][V];
    float partial = 0.0f;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int64_t vec = tx + static_cast<int64_t>(i) * block_threads;
      if (vec < nvec) {
        load_floats<T, V>(yr + vec * V, yv[i]);
        load_floats<T, V>(dyr + vec * V, dv[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) yv[i][j] = dv[i][j] = 0.0f;
      }
#pragma unroll
      for (int j = 0; j < V; ++j) partial += grad_term(yv[i][j], dv[i][j], log);
    }
    for (int64_t vec = streamed + tx; vec < nvec; vec += block_threads) {
      float a[V], b[V];
      load_floats<T, V>(yr + vec * V, a);
      load_floats<T, V>(dyr + vec * V, b);
#pragma unroll
      for (int j = 0; j < V; ++j) partial += grad_term(a[j], b[j], log);
    }
    const float sum = block_sum_all<block_threads>(partial);
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int64_t vec = tx + static_cast<int64_t>(i) * block_threads;
      if (vec < nvec) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = grad_value(yv[i][j], dv[i][j], sum, log);
        store_floats_blended<T, V>(dxr + vec * V, out, g.alpha, g.beta);
      }
    }
    for (int64_t vec = streamed + tx; vec < nvec; vec += block_threads) {
      float a[V], b[V];
      load_floats<T, V>(yr + vec * V, a);
      load_floats<T, V>(dyr + vec * V, b);
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = grad_value(a[j], b[j], sum, log);
      store_floats_blended<T, V>(dxr + vec * V, a, g.alpha, g.beta);
    }
  }
}

// ---- channels_strided --------------------------------------------------------------------------
// A thread per V adjacent positions (V = 2 for 16-bit data whose positions are contiguous, else
// 1); lane j of each vector belongs to position j, each with its own statistics. The first
// `cached` channels stay in registers, the rest is streamed in chunks of stream_chunk channels.
template <typename T, int V>
__global__ void __launch_bounds__(channel_threads)
    softmax_fwd_channels_kernel(const T* __restrict__ x, T* __restrict__ y, channels_params g) {
  constexpr int cached = channel_cached / V;
  const int64_t channels = g.channels, xs = g.channel_stride[0], ys = g.channel_stride[2];
  const bool log = g.log != 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < g.groups; q += step) {
    int64_t base[sm_slots];
    g.positions.offsets(q, base);
    const T* xq = x + base[0];
    T* yq = y + base[2];
    float v[cached][V];
    float local_max[V];
#pragma unroll
    for (int j = 0; j < V; ++j) local_max[j] = -INFINITY;
#pragma unroll
    for (int c = 0; c < cached; ++c) {
      if (c < channels) {
        load_floats<T, V>(xq + c * xs, v[c]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[c][j] = -INFINITY;
      }
#pragma unroll
      for (int j = 0; j < V; ++j) local_max[j] = fmaxf(local_max[j], v[c][j]);
    }
    max_exp_sum s[V];
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = {local_max[j], 0.0f};
#pragma unroll
    for (int c = 0; c < cached; ++c)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float e = exp_below(v[c][j], local_max[j]);
        s[j].sum += e;
        if (!log) v[c][j] = e;
      }
    for (int64_t c0 = cached; c0 < channels; c0 += stream_chunk) {
      float t[stream_chunk][V];
#pragma unroll
      for (int k = 0; k < stream_chunk; ++k) {
        if (c0 + k < channels) {
          load_floats<T, V>(xq + (c0 + k) * xs, t[k]);
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) t[k][j] = -INFINITY;
        }
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        float lane[stream_chunk];
#pragma unroll
        for (int k = 0; k < stream_chunk; ++k) lane[k] = t[k][j];
        s[j] = max_exp_absorb(s[j], lane);
      }
    }
    float scale[V], rescale[V];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      scale[j] = softmax_scale(s[j].sum, log);
      rescale[j] = exp_below(local_max[j], s[j].max) * scale[j];
    }
#pragma unroll
    for (int c = 0; c < cached; ++c) {
      if (c < channels) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = log ? (v[c][j] - s[j].max) - scale[j] : v[c][j] * rescale[j];
        store_floats_blended<T, V>(yq + c * ys, out, g.alpha, g.beta);
      }
    }
    for (int64_t c = cached; c < channels; ++c) {
      float t[V];
      load_floats<T, V>(xq + c * xs, t);
#pragma unroll
      for (int j = 0; j < V; ++j) t[j] = log ? (t[j] - s[j].max) - scale[j] : exp_below(t[j], s[j].max) * scale[j];
      store_floats_blended<T, V>(yq + c * ys, t, g.alpha, g.beta);
    }
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(channel_threads)
    softmax_bwd_channels_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                                channels_params g) {
  constexpr int cached = channel_cached / (2 * V);  // y and dy share the register budget
  const int64_t channels = g.channels;
  const int64_t ys = g.channel_stride[0], dys = g.channel_stride[1], dxs = g.channel_stride[2];
  const bool log = g.log != 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < g.groups; q += step) {
    int64_t base[sm_slots];
    g.positions.offsets(q, base);
    const T* yq = y + base[0];
    const T* dyq = dy + base[1];
    T* dxq = dx + base[2];
    float yv[cached][V], dv[cached][V], sum[V];
#pragma unroll
    for (int j = 0; j < V; ++j) sum[j] = 0.0f;
#pragma unroll
    for (int c = 0; c < cached; ++c) {
      if (c < channels) {
        load_floats<T, V>(yq + c * ys, yv[c]);
        load_floats<T, V>(dyq + c * dys, dv[c]);
#pragma unroll
        for (int j = 0; j < V; ++j) sum[j] += grad_term(yv[c][j], dv[c][j], log);
      }
    }
    for (int64_t c = cached; c < channels; ++c) {
      float a[V], b[V];
      load_floats<T, V>(yq + c * ys, a);
      load_floats<T, V>(dyq + c * dys, b);
#pragma unroll
      for (int j = 0; j < V; ++j) sum[j] += grad_term(a[j], b[j], log);
    }
#pragma unroll
    for (int c = 0; c < cached; ++c) {
      if (c < channels) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) out[j] = grad_value(yv[c][j], dv[c][j], sum[j], log);
        store_floats_blended<T, V>(dxq + c * dxs, out, g.alpha, g.beta);
      }
    }
    for (int64_t c = cached; c < channels; ++c) {
      float a[V], b[V];
      load_floats<T, V>(yq + c * ys, a);
      load_floats<T, V>(dyq + c * dys, b);
#pragma unroll
      for (int j = 0; j < V; ++j) a[j] = grad_value(a[j], b[j], sum[j], log);
      store_floats_blended<T, V>(dxq + c * dxs, a, g.alpha, g.beta);
    }
  }
}

// ---- strided -----------------------------------------------------------------------------------
// A block per row (grid-stride; uniform trip count), element e of the row at inner.offsets(e).
template <typename T>
__global__ void __launch_bounds__(strided_threads)
    softmax_fwd_strided_kernel(const T* __restrict__ x, T* __restrict__ y, strided_params g) {
  const bool log = g.log != 0;
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[sm_slots];
    g.outer.offsets(row, base);
    max_exp_sum s = max_exp_empty();
    for (int64_t e0 = threadIdx.x; e0 < g.length; e0 += int64_t{strided_threads} * stream_chunk) {
      float t[stream_chunk];
#pragma unroll
      for (int k = 0; k < stream_chunk; ++k) {
        const int64_t e = e0 + int64_t{k} * strided_threads;
        t[k] = -INFINITY;
        if (e < g.length) {
          int64_t off[sm_slots];
          g.inner.offsets(e, off);
          t[k] = to_float(x[base[0] + off[0]]);
        }
      }
      s = max_exp_absorb(s, t);
    }
    const max_exp_sum r = block_max_exp_all<strided_threads>(s);
    const float scale = softmax_scale(r.sum, log);
    for (int64_t e = threadIdx.x; e < g.length; e += strided_threads) {
      int64_t off[sm_slots];
      g.inner.offsets(e, off);
      const float v = to_float(x[base[0] + off[0]]);
      store_blended(y + base[2] + off[2], log ? (v - r.max) - scale : exp_below(v, r.max) * scale, g.alpha, g.beta);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(strided_threads)
    softmax_bwd_strided_kernel(const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ dx,
                               strided_params g) {
  const bool log = g.log != 0;
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[sm_slots];
    g.outer.offsets(row, base);
    float partial = 0.0f;
    for (int64_t e = threadIdx.x; e < g.length; e += strided_threads) {
      int64_t off[sm_slots];
      g.inner.offsets(e, off);
      partial += grad_term(to_float(y[base[0] + off[0]]), to_float(dy[base[1] + off[1]]), log);
    }
    const float sum = block_sum_all<strided_threads>(partial);
    for (int64_t e = threadIdx.x; e < g.length; e += strided_threads) {
      int64_t off[sm_slots];
      g.inner.offsets(e, off);
      const float v = grad_value(to_float(y[base[0] + off[0]]), to_float(dy[base[1] + off[1]]), sum, log);
      store_blended(dx + base[2] + off[2], v, g.alpha, g.beta);
    }
  }
}

// ================================ host side =====================================================

enum class sm_kind { rows_warp, rows_block, channels, strided };

// One view of a forward or backward problem: the tensors by slot, and the rows.
struct sm_desc {
  bool backward;
  bool log;
  int32_t mode;
  const tsrpTensor* in;                // x forward, y backward: the shape of every tensor
  const tsrpTensor* data[sm_slots];    // in, dy | null, out
  const char* names[sm_slots];
  int64_t rows;
  int64_t length;
};

bool is_reduced(int32_t mode, int d) { return mode == TSRP_SOFTMAX_MODE_INSTANCE ? d >= 1 : d == 1; }

sm_desc describe(const tsrpSoftmaxProblem& p, bool backward) {
  sm_desc d{};
  d.backward = backward;
  d.log = p.algorithm == TSRP_SOFTMAX_LOG;
  d.mode = p.mode;
  d.in = backward ? &p.y : &p.x;
  d.data[0] = d.in;
  d.data[1] = backward ? &p.dy : nullptr;
  d.data[2] = backward ? &p.dx : &p.y;
  d.names[0] = backward ? "y" : "x";
  d.names[1] = "dy";
  d.names[2] = backward ? "dx" : "y";
  d.rows = 1;
  d.length = 1;
  for (int i = 0; i < d.in->ndims && i < TSRP_MAX_DIMS; ++i) (is_reduced(p.mode, i) ? d.length : d.rows) *= d.in->dims[i];
  return d;
}

std::string quoted(const char* name) { return std::string("tensor '") + name + "'"; }

std::string common_support(const tsrpSoftmaxProblem& p, const sm_desc& d) {
  if (p.algorithm != TSRP_SOFTMAX_FAST && p.algorithm != TSRP_SOFTMAX_ACCURATE && p.algorithm != TSRP_SOFTMAX_LOG)
    return "unknown softmax algorithm " + std::to_string(p.algorithm);
  if (p.mode != TSRP_SOFTMAX_MODE_INSTANCE && p.mode != TSRP_SOFTMAX_MODE_CHANNEL)
    return "unknown softmax mode " + std::to_string(p.mode);
  const tsrpTensor& in = *d.in;
  if (in.ndims < 2 || in.ndims > TSRP_MAX_DIMS)
    return quoted(d.names[0]) + " has " + std::to_string(in.ndims) + " dims, expected 2 to " +
           std::to_string(TSRP_MAX_DIMS) + " (N, C, spatial...)";
  for (int s = 0; s < sm_slots; ++s) {
    const tsrpTensor* t = d.data[s];
    if (t == nullptr) continue;
    if (!is_floating_storage(t->data_type))
      return quoted(d.names[s]) + " is " + data_type_name(t->data_type) + ": softmax takes float, half and bfloat16";
    if (t->data_type != in.data_type)
      return quoted(d.names[s]) + " is " + data_type_name(t->data_type) + " but " + quoted(d.names[0]) + " is " +
             data_type_name(in.data_type) + " (one data type per call)";
    if (!same_dims(*t, in)) return quoted(d.names[s]) + " has other dims than " + quoted(d.names[0]);
    for (int i = 0; i < t->ndims; ++i) {
      if (t->dims[i] < 0) return quoted(d.names[s]) + " has a negative dim " + std::to_string(i);
      if (t->strides[i] < 0) return quoted(d.names[s]) + " has a negative stride in dim " + std::to_string(i);
    }
  }
  return {};
}

// The row dims of t (those of size > 1), ordered by stride, are packed: the smallest stride is 1
// and each next one is the product of the dims before it. Then every row is one dense run of
// `length` elements from its first element, whatever the order of the dims inside it (the order
// does not matter to a softmax, as long as every tensor uses the same one).
bool row_is_dense(const tsrpTensor& t, int32_t mode) {
  std::vector<std::pair<int64_t, int64_t>> run;  // (stride, dim)
  for (int i = 0; i < t.ndims; ++i)
    if (is_reduced(mode, i) && t.dims[i] > 1) run.emplace_back(t.strides[i], t.dims[i]);
  std::sort(run.begin(), run.end());
  int64_t expected = 1;
  for (const auto& [stride, dim] : run) {
    if (stride != expected) return false;
    expected *= dim;
  }
  return true;
}

constexpr const char* kernel_name(sm_kind kind, bool backward) {
  switch (kind) {
    case sm_kind::rows_warp: return backward ? "softmax_bwd_rows_warp" : "softmax_fwd_rows_warp";
    case sm_kind::rows_block: return backward ? "softmax_bwd_rows_block" : "softmax_fwd_rows_block";
    case sm_kind::channels: return backward ? "softmax_bwd_channels_strided" : "softmax_fwd_channels_strided";
    case sm_kind::strided: return backward ? "softmax_bwd_strided" : "softmax_fwd_strided";
  }
  return "softmax";
}

std::string rows_support(const sm_desc& d, sm_kind kind) {
  const char* fallback = kernel_name(sm_kind::strided, d.backward);
  for (int s = 0; s < sm_slots; ++s) {
    const tsrpTensor* t = d.data[s];
    if (t == nullptr) continue;
    if (!row_is_dense(*t, d.mode)) {
      if (d.mode == TSRP_SOFTMAX_MODE_CHANNEL)
        return quoted(d.names[s]) + " has channel stride " + std::to_string(t->strides[1]) +
               ", so a row's C elements are not one dense run of memory (" +
               kernel_name(sm_kind::channels, d.backward) + " takes it)";
      return "the C x spatial elements of " + quoted(d.names[s]) +
             " are not one dense run of memory per n (" + fallback + " takes any strides)";
    }
    for (int i = 0; i < t->ndims; ++i) {
      if (is_reduced(d.mode, i) && t->dims[i] > 1 && t->strides[i] != d.in->strides[i])
        return quoted(d.names[s]) + " lays its rows out with other strides than " + quoted(d.names[0]) +
               " (dim " + std::to_string(i) + ": " + std::to_string(t->strides[i]) + " vs " +
               std::to_string(d.in->strides[i]) + "; " + fallback + " takes mixed layouts)";
    }
  }
  if (kind == sm_kind::rows_warp && d.length > warp_row_limit)
    return "rows of " + std::to_string(d.length) + " elements exceed the " + std::to_string(warp_row_limit) +
           " a warp holds in registers (" + kernel_name(sm_kind::rows_block, d.backward) + " takes them)";
  return {};
}

std::string channels_support(const sm_desc& d) {
  const char* rows_name = kernel_name(sm_kind::rows_warp, d.backward);
  if (d.mode != TSRP_SOFTMAX_MODE_CHANNEL)
    return std::string("instance mode: a row is all of C x spatial, not a column of channels (") + rows_name +
           " or " + kernel_name(sm_kind::strided, d.backward) + " take it)";
  if (d.in->dims[1] <= 1) return std::string("C is 1: a row is one element (") + rows_name + " takes it)";
  bool any_strided = false;
  for (const tsrpTensor* t : d.data)
    if (t != nullptr && t->strides[1] != 1) any_strided = true;
  if (!any_strided)
    return std::string("every tensor has channel stride 1 (channels-last): ") + rows_name + " and " +
           kernel_name(sm_kind::rows_block, d.backward) + " read each row as one contiguous run";
  return {};
}

// A shape whose dims outside the walked part are 1 (make_dim_walker skips those).
tsrpTensor walked_part(const tsrpTensor& t, int32_t mode, bool reduced_part) {
  tsrpTensor s = t;
  for (int i = 0; i < s.ndims; ++i)
    if (is_reduced(mode, i) != reduced_part) s.dims[i] = 1;
  return s;
}

struct sm_pointers {
  const void* in;
  const void* dy;  // backward only
  void* out;
  const void* at(int slot) const { return slot == 0 ? in : slot == 1 ? dy : out; }
};

sm_pointers pointers_of(const sm_desc& d, const tsrpSoftmaxArgs& a) {
  const int64_t elements = element_count(*d.in);
  sm_pointers q{};
  q.in = d.backward ? a.y_in : a.x;
  q.dy = d.backward ? a.dy : nullptr;
  q.out = d.backward ? a.dx : a.y;
  require_pointer(q.in, elements, d.names[0]);
  if (d.backward) require_pointer(q.dy, elements, "dy");
  require_pointer(q.out, elements, d.names[2]);
  return q;
}

int sm_count_of(const cuda_context& ctx) { return std::max(ctx.sm_count(), 1); }

// Lanes per row of rows_warp and the elements each lane holds: short rows share a warp.
std::pair<int, int> warp_shape(int64_t length) {
  const int64_t short_lanes = norm_ceil_div(length, warp_short_elements);
  if (short_lanes > 32) return {32, warp_long_elements};
  int lanes = 1;
  while (lanes < short_lanes) lanes <<= 1;
  return {lanes, warp_short_elements};
}

template <typename T>
void run_rows(cuda_context& ctx, const sm_desc& d, const sm_pointers& q, sm_kind kind, float alpha, float beta) {
  rows_params g{};
  const tsrpTensor outer_shape = walked_part(*d.in, d.mode, false);
  g.outer = make_dim_walker<sm_slots>(outer_shape, 0, outer_shape.ndims, d.data);
  g.rows = d.rows;
  g.length = d.length;
  g.log = d.log ? 1 : 0;
  g.alpha = alpha;
  g.beta = beta;
  const auto fits = [&](int v) {
    if (d.length % v != 0) return false;
    for (int s = 0; s < sm_slots; ++s) {
      if (!norm_aligned(q.at(s), static_cast<size_t>(v) * sizeof(T))) return false;
      for (int i = 0; i < g.outer.ndims; ++i)
        if (g.outer.strides[s][i] % v != 0) return false;
    }
    return true;
  };
  const int sms = sm_count_of(ctx);
  const auto launch = [&](auto width) {
    constexpr int V = decltype(width)::value;
    if (kind == sm_kind::rows_block) {
      const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>(d.rows, int64_t{sms} * 8));
      if (d.backward) {
        softmax_bwd_rows_block_kernel<T, V><<<blocks, block_threads, 0, ctx.stream()>>>(
            static_cast<const T*>(q.in), static_cast<const T*>(q.dy), static_cast<T*>(q.out), g);
      } else {
        softmax_fwd_rows_block_kernel<T, V><<<blocks, block_threads, 0, ctx.stream()>>>(
            static_cast<const T*>(q.in), static_cast<T*>(q.out), g);
      }
      return;
    }
    const std::pair<int, int> shape = warp_shape(d.length);
    const dim3 block(shape.first, warp_block_threads / shape.first);
    // One group of rows per block by default: many short blocks, which the hardware balances to
    // the end. The former cap of 8 blocks per SM left the kernel grid-striding in 2.7 waves of
    // 78-register blocks (the last wave partly alone) at 50 % of the DRAM peak (ncu, H200,
    // 2026-12-03). TESSERA_CUDA_SOFTMAX_BLOCKS_PER_SM=n restores a cap of n per SM, to measure.
    static const int blocks_per_sm = launch_override("TESSERA_CUDA_SOFTMAX_BLOCKS_PER_SM", 0, 0, 1 << 16);
    const unsigned int wanted = cuda_context::share_blocks(d.rows, block.y);
    const unsigned int blocks =
        blocks_per_sm > 0 ? static_cast<unsigned int>(std::min<int64_t>(wanted, int64_t{sms} * blocks_per_sm)) : wanted;
    const auto warp_launch = [&](auto items_tag) {
      constexpr int Items = decltype(items_tag)::value;
      if (d.backward) {
        softmax_bwd_rows_warp_kernel<T, V, Items><<<blocks, block, 0, ctx.stream()>>>(
            static_cast<const T*>(q.in), static_cast<const T*>(q.dy), static_cast<T*>(q.out), g);
      } else if (d.log) {
        softmax_fwd_rows_warp_kernel<T, V, Items, true><<<blocks, block, 0, ctx.stream()>>>(
            static_cast<const T*>(q.in), static_cast<T*>(q.out), g);
      } else {
        softmax_fwd_rows_warp_kernel<T, V, Items, false><<<blocks, block, 0, ctx.stream()>>>(
            static_cast<const T*>(q.in), static_cast<T*>(q.out), g);
      }
    };
    if (shape.second == warp_short_elements) {
      warp_launch(std::integral_constant<int, warp_short_elements / V>{});
    } else {
      warp_launch(std::integral_constant<int, warp_long_elements / V>{});
    }
  };
  if (fits(norm_max_vector<T>)) {
    launch(std::integral_constant<int, norm_max_vector<T>>{});
  } else {
    launch(std::integral_constant<int, 1>{});
  }
}

template <typename T>
void run_channels(cuda_context& ctx, const sm_desc& d, const sm_pointers& q, float alpha, float beta) {
  channels_params g{};
  const tsrpTensor positions = walked_part(*d.in, d.mode, false);
  g.positions = make_dim_walker<sm_slots>(positions, 0, positions.ndims, d.data);
  g.groups = d.rows;
  g.channels = d.length;
  for (int s = 0; s < sm_slots; ++s) g.channel_stride[s] = d.data[s] ? d.data[s]->strides[1] : 0;
  g.log = d.log ? 1 : 0;
  g.alpha = alpha;
  g.beta = beta;
  // Two 16-bit positions per thread when the positions' fastest walked dim is contiguous in
  // every tensor and every other offset stays even: one 4-byte access per channel.
  bool pairs = sizeof(T) == 2 && g.positions.ndims > 0;
  const int last = g.positions.ndims - 1;
  if (pairs) {
    pairs = g.positions.dims[last].divisor % 2 == 0;
    for (int s = 0; s < sm_slots && pairs; ++s) {
      if (d.data[s] == nullptr) continue;
      pairs = norm_aligned(q.at(s), 2 * sizeof(T)) && g.positions.strides[s][last] == 1 && g.channel_stride[s] % 2 == 0;
      for (int i = 0; i < last && pairs; ++i) pairs = g.positions.strides[s][i] % 2 == 0;
    }
  }
  const auto launch = [&](auto width) {
    constexpr int V = decltype(width)::value;
    if constexpr (V > 1) {
      g.positions.dims[last] = make_index_divider(g.positions.dims[last].divisor / V);
      for (int s = 0; s < sm_slots; ++s) g.positions.strides[s][last] *= V;
      g.groups = d.rows / V;
    }
    const unsigned int blocks = ctx.grid_stride_blocks(g.groups, channel_threads);
    if (d.backward) {
      softmax_bwd_channels_kernel<T, V><<<blocks, channel_threads, 0, ctx.stream()>>>(
          static_cast<const T*>(q.in), static_cast<const T*>(q.dy), static_cast<T*>(q.out), g);
    } else {
      softmax_fwd_channels_kernel<T, V><<<blocks, channel_threads, 0, ctx.stream()>>>(
          static_cast<const T*>(q.in), static_cast<T*>(q.out), g);
    }
  };
  if constexpr (sizeof(T) == 2) {
    if (pairs) {
      launch(std::integral_constant<int, 2>{});
      return;
    }
  }
  launch(std::integral_constant<int, 1>{});
}

template <typename T>
void run_strided(cuda_context& ctx, const sm_desc& d, const sm_pointers& q, float alpha, float beta) {
  strided_params g{};
  const tsrpTensor outer_shape = walked_part(*d.in, d.mode, false);
  const tsrpTensor inner_shape = walked_part(*d.in, d.mode, true);
  g.outer = make_dim_walker<sm_slots>(outer_shape, 0, outer_shape.ndims, d.data);
  g.inner = make_dim_walker<sm_slots>(inner_shape, 0, inner_shape.ndims, d.data);
  g.rows = d.rows;
  g.length = d.length;
  g.log = d.log ? 1 : 0;
  g.alpha = alpha;
  g.beta = beta;
  const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>(d.rows, int64_t{sm_count_of(ctx)} * 8));
  if (d.backward) {
    softmax_bwd_strided_kernel<T><<<blocks, strided_threads, 0, ctx.stream()>>>(
        static_cast<const T*>(q.in), static_cast<const T*>(q.dy), static_cast<T*>(q.out), g);
  } else {
    softmax_fwd_strided_kernel<T><<<blocks, strided_threads, 0, ctx.stream()>>>(
        static_cast<const T*>(q.in), static_cast<T*>(q.out), g);
  }
}

// ---- traits ------------------------------------------------------------------------------------

constexpr const char* notes_of(sm_kind kind) {
  switch (kind) {
    case sm_kind::rows_warp:
      return "Rows that are one dense run in every tensor (NHWC channel mode, N x C, packed instance mode), "
             "up to 1024 elements: 1 to 32 lanes per row hold it in registers, one read and one write (16-byte "
             "vectors when aligned). fp32: exact max, then sum of expf by fixed shuffle trees; output "
             "exp(x - max) * (1 / sum) or x - max - logf(sum). Backward one fixed-tree sum. Deterministic.";
    case sm_kind::rows_block:
      return "Rows that are one dense run in every tensor, any length: a 512-thread block per row, 16 "
             "elements per thread in registers (rows up to 8192 read once), the rest streamed with the "
             "online max+sum in fp32 and re-read for the output. Fixed-shape block reductions: deterministic.";
    case sm_kind::channels:
      return "Channel mode with a channel stride other than 1 (NCHW): a thread per spatial position (two for "
             "16-bit data) walks the channels, coalesced across positions; 32 values per thread in "
             "registers, more channels streamed with the online max+sum in fp32 and re-read. Deterministic.";
    case sm_kind::strided:
      return "Any strides, either mode: a block per row with per-element index arithmetic, online max+sum in "
             "fp32, a second pass for the output. Fixed-shape block reductions: deterministic.";
  }
  return "";
}

template <sm_kind Kind, bool Backward>
struct softmax_traits {
  using problem_type = tsrpSoftmaxProblem;
  using args_type = tsrpSoftmaxArgs;
  static constexpr const char* name = kernel_name(Kind, Backward);
  static constexpr int32_t operation = Backward ? TSRP_OP_SOFTMAX_BACKWARD : TSRP_OP_SOFTMAX_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = notes_of(Kind);

  static std::string support(const problem_type& p) {
    const sm_desc d = describe(p, Backward);
    if (std::string why = common_support(p, d); !why.empty()) return why;
    switch (Kind) {
      case sm_kind::rows_warp:
      case sm_kind::rows_block: return rows_support(d, Kind);
      case sm_kind::channels: return channels_support(d);
      case sm_kind::strided: return {};
    }
    return {};
  }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const sm_desc d = describe(p, Backward);
    const sm_pointers q = pointers_of(d, a);
    if (d.rows == 0 || d.length == 0) return;
    dispatch_storage_type(d.in->data_type, [&](auto tag) {
      using T = decltype(tag);
      switch (Kind) {
        case sm_kind::rows_warp:
        case sm_kind::rows_block: run_rows<T>(ctx, d, q, Kind, a.alpha, a.beta); break;
        case sm_kind::channels: run_channels<T>(ctx, d, q, a.alpha, a.beta); break;
        case sm_kind::strided: run_strided<T>(ctx, d, q, a.alpha, a.beta); break;
      }
    });
  }
};

template <bool Backward>
void add_direction(kernel_list& out) {
  out.push_back(make_kernel<softmax_traits<sm_kind::rows_warp, Backward>>());
  out.push_back(make_kernel<softmax_traits<sm_kind::rows_block, Backward>>());
  out.push_back(make_kernel<softmax_traits<sm_kind::channels, Backward>>());
  out.push_back(make_kernel<softmax_traits<sm_kind::strided, Backward>>());
}

}  // namespace

void add_softmax_kernels(kernel_list& out) {
  add_direction<false>(out);
  add_direction<true>(out);
}

}  // namespace tessera::cuda
