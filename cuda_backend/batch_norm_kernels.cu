// Batch normalization: training forward, inference forward and backward (cuDNN semantics, see
// plugin_abi_normalization.h), each in three layouts, registered fastest first:
//   *_nhwc_vec  every tensor is one dense rows x columns matrix whose columns are the statistics:
//               NHWC/NDHWC in spatial mode, 2-D (N, C), and per-activation mode on packed
//               row-major or channels-last data. A thread owns one 16-byte vector of columns and
//               walks rows; blocks split the rows.
//   *_nchw_vec  spatial mode with the spatial dims one contiguous run (NCHW/NCDHW, any N and C
//               strides): a block per (channel, chunk of N x spatial), vectors along the run.
//   *_strided   anything else (mixed layouts, padded or permuted strides): index arithmetic per
//               element, with 31-bit multiply-shift division.
// Training and backward make three launches: a reduction that writes one partial per (block,
// statistic) into the workspace, a fold of the partials of each statistic in a fixed order (batch
// statistics, running averages, saved statistics, parameter gradients, and the per-statistic
// coefficients of the last pass), and the elementwise pass. Inference is the elementwise pass
// alone. Statistics are Welford/Chan in fp32 (stable for data far from zero); the fold works in
// double where it touches user-visible statistics. No floating atomics: results are bitwise
// reproducible on a given GPU.
#include "activation_functions.cuh"
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
#include <optional>
#include <string>
#include <type_traits>

namespace tessera::cuda {
namespace {

constexpr int bn_threads = 256;
constexpr int bn_reduce_unroll = 4;  // loads in flight per thread in the reductions
constexpr int bn_sums_unroll = 2;    // per tensor in the backward reductions (2 or 3 tensors)
constexpr int bn_apply_unroll = 4;   // and in the forward elementwise pass
constexpr int bn_dx_unroll = 1;      // dx reads up to four tensors a row: one row at a time
constexpr int bn_plain_dx_unroll = 2;  // dx_fixed without relu or beta reads two: two rows (4 spilled)
// Rows each thread of the columns layout's elementwise pass walks (bn_apply_unroll at a time).
// Each thread first loads the coefficients of its V columns (4 to 8 scattered loads per column,
// a square root and a division in inference), so a thread that walks 4 rows spends as long on
// them as on its data: with 4, the pass moved 61 % of the DRAM peak where relu moves 85 % (ncu,
// H200, 2026-12-03). The most: smaller problems take fewer (down to bn_apply_unroll) to keep four
// fills of the GPU. TESSERA_CUDA_BN_ROWS_PER_THREAD overrides it for measurement.
constexpr int bn_rows_per_thread = 16;
constexpr int64_t bn_max_parts = 1024;
constexpr int64_t bn_max_partial_entries = int64_t{1} << 21;  // per partial array (8 MiB)

enum class bn_op { training, inference, backward };
enum class bn_layout { columns, nchw, strided };

// Data tensor slots: 0 x, 1 y (forward output) or dy, 2 dx, 3 y_in (the forward output read by a
// fused relu's backward).
constexpr int bn_slots = 4;

// ================================ device side ===================================================

// Statistic of column j. The identity except for per-activation channels-last data, whose columns
// run (spatial, C) while the parameters run (C, spatial).
struct stat_map {
  int32_t permuted;
  int64_t c;
  int64_t s;
  __device__ __forceinline__ int64_t operator()(int64_t j) const { return permuted ? (j % c) * s + j / c : j; }
};

// y = alpha * act((x - mean) * inv_std * scale + bias) + beta * y.
struct forward_source {
  const float* mean;
  const float* spread;  // inv_std (training: from the fold) or the variance (inference)
  const float* scale;
  const float* bias;
  float epsilon;
  int32_t spread_is_variance;
  int32_t relu;
  float alpha;
  float beta;
};

struct forward_coefficients {
  float mean, a, b;  // a = inv_std * scale, b = bias
};

__device__ __forceinline__ forward_coefficients load_forward(const forward_source& src, int64_t k) {
  const float spread = src.spread[k];
  const float inv_std = src.spread_is_variance ? 1.0f / sqrtf(spread + src.epsilon) : spread;
  return {src.mean[k], inv_std * src.scale[k], src.bias[k]};
}

// alpha * act(...); the caller adds beta * old. x - mean first keeps the cancellation exact.
__device__ __forceinline__ float forward_value(float x, const forward_coefficients& c, const forward_source& src) {
  float v = fmaf(x - c.mean, c.a, c.b);
  if (src.relu) v = activation_forward<TSRP_ACTIVATION_RELU>(v, 0.0f);
  return src.alpha * v;
}

// dx = a * (g - mean_g - (x - mean) * w) + beta * dx, with g the relu-masked dy, a = alpha * scale *
// inv_std, mean_g = sum(g) / M and w = inv_std * sum(g * xhat) / M, written per statistic by the
// fold. This is the reference's scale * inv / M * (M g - sum(g) - xhat sum(g xhat)).
struct backward_source {
  const float* mean;
  const float* a;
  const float* mean_g;
  const float* w;
  int32_t relu;
  float beta;
};

struct backward_coefficients {
  float mean, a, mean_g, w;
};

__device__ __forceinline__ backward_coefficients load_backward(const backward_source& src, int64_t k) {
  return {src.mean[k], src.a[k], src.mean_g[k], src.w[k]};
}

// cuDNN's BackwardEx: the relu gradient passes where the forward output is positive (NaN blocks).
__device__ __forceinline__ float masked_gradient(float dy, float y, int32_t relu) {
  return relu && !(y > 0.0f) ? 0.0f : dy;
}

__device__ __forceinline__ float backward_value(float x, float g, const backward_coefficients& c) {
  return c.a * (g - c.mean_g - (x - c.mean) * c.w);
}

// ---- columns layout: a rows x cols matrix, column pitch 1, row pitch cols ----------------------

struct column_geometry {
  int64_t rows;
  int64_t cols;
  int64_t groups;    // cols / V: one thread column each
  int64_t part_len;  // rows per partition (reductions)
  stat_map map;
};

// Visits rows first, first + step, ... below end, U at a time: visit(rows, count) receives U row
// indices of which the first `count` are valid, so that U loads are issued before any is used.
template <int U, typename Visit>
__device__ __forceinline__ void walk_rows(int64_t first, int64_t end, int64_t step, Visit&& visit) {
  for (int64_t r = first; r < end; r += U * step) {
    int64_t rows[U];
    int count = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      rows[u] = r + u * step;
      if (rows[u] < end) count = u + 1;
    }
    visit(rows, count);
  }
}

// Folds per-thread column states over threadIdx.y with a fixed binary tree; row 0 ends with the
// block's result. Every thread calls it.
template <int V>
__device__ __forceinline__ void column_tree_welford(float* s_n, float (*s_mean)[bn_threads], float (*s_m2)[bn_threads]) {
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  for (int stride = 1; stride < static_cast<int>(blockDim.y); stride <<= 1) {
    __syncthreads();
    if (threadIdx.y % (2 * stride) == 0 && threadIdx.y + stride < blockDim.y) {
      const int o = t + stride * blockDim.x;
      const float na = s_n[t], nb = s_n[o];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const welford_state r = welford_merge({na, s_mean[j][t], s_m2[j][t]}, {nb, s_mean[j][o], s_m2[j][o]});
        s_mean[j][t] = r.mean;
        s_m2[j][t] = r.m2;
      }
      s_n[t] = na + nb;
    }
  }
  __syncthreads();
}

template <int V>
__device__ __forceinline__ void column_tree_sum2(float (*s_a)[bn_threads], float (*s_b)[bn_threads]) {
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  for (int stride = 1; stride < static_cast<int>(blockDim.y); stride <<= 1) {
    __syncthreads();
    if (threadIdx.y % (2 * stride) == 0 && threadIdx.y + stride < blockDim.y) {
      const int o = t + stride * blockDim.x;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        s_a[j][t] += s_a[j][o];
        s_b[j][t] += s_b[j][o];
      }
    }
  }
  __syncthreads();
}

// Grid (column tiles, partitions); block (bx, by), bx * by <= 256.
template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_columns_welford(const T* x, column_geometry g, float* part_mean, float* part_m2) {
  __shared__ float s_n[bn_threads];
  __shared__ float s_mean[V][bn_threads];
  __shared__ float s_m2[V][bn_threads];
  const int64_t group = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = group < g.groups;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.rows, begin + g.part_len);
  float n = 0.0f, mean[V], m2[V];
#pragma unroll
  for (int j = 0; j < V; ++j) mean[j] = m2[j] = 0.0f;
  if (active) {
    const T* column = x + group * V;
    walk_rows<bn_reduce_unroll>(begin + threadIdx.y, end, blockDim.y,
                                [&](const int64_t (&rows)[bn_reduce_unroll], int count) {
                                  norm_word<T, V> w[bn_reduce_unroll];
#pragma unroll
                                  for (int u = 0; u < bn_reduce_unroll; ++u)
                                    if (u < count) w[u] = load_word<T, V>(column + rows[u] * g.cols);
#pragma unroll
                                  for (int u = 0; u < bn_reduce_unroll; ++u) {
                                    if (u < count) {
                                      float v[V];
                                      unpack_floats<T, V>(w[u], v);
                                      n += 1.0f;
                                      const float inv_n = __frcp_rn(n);  // shared by the V columns
#pragma unroll
                                      for (int j = 0; j < V; ++j) welford_add(v[j], inv_n, mean[j], m2[j]);
                                    }
                                  }
                                });
  }
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  s_n[t] = n;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    s_mean[j][t] = mean[j];
    s_m2[j][t] = m2[j];
  }
  column_tree_welford<V>(s_n, s_mean, s_m2);
  if (threadIdx.y == 0 && active) {
    const int64_t at = static_cast<int64_t>(blockIdx.y) * g.cols + group * V;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      part_mean[at + j] = s_mean[j][t];
      part_m2[at + j] = s_m2[j][t];
    }
  }
}

// Partials sum(g) and sum(g * (x - saved_mean)) per column.
template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_columns_backward_sums(const T* x, const T* dy, const T* y, column_geometry g, const float* saved_mean,
                             int32_t relu, float* part_g, float* part_gx) {
  __shared__ float s_g[V][bn_threads];
  __shared__ float s_gx[V][bn_threads];
  const int64_t group = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = group < g.groups;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.rows, begin + g.part_len);
  float sg[V], sgx[V], mean[V];
#pragma unroll
  for (int j = 0; j < V; ++j) sg[j] = sgx[j] = mean[j] = 0.0f;
  if (active) {
#pragma unroll
    for (int j = 0; j < V; ++j) mean[j] = saved_mean[g.map(group * V + j)];
    const int64_t column = group * V;
    walk_rows<bn_sums_unroll>(begin + threadIdx.y, end, blockDim.y,
                              [&](const int64_t (&rows)[bn_sums_unroll], int count) {
                                  norm_word<T, V> xw[bn_sums_unroll], dw[bn_sums_unroll], yw[bn_sums_unroll];
#pragma unroll
                                  for (int u = 0; u < bn_sums_unroll; ++u) {
                                    if (u < count) {
                                      const int64_t at = rows[u] * g.cols + column;
                                      xw[u] = load_word<T, V>(x + at);
                                      dw[u] = load_word<T, V>(dy + at);
                                      if (relu) yw[u] = load_word<T, V>(y + at);
                                    }
                                  }
#pragma unroll
                                  for (int u = 0; u < bn_sums_unroll; ++u) {
                                    if (u < count) {
                                      float xv[V], dv[V], yv[V];
                                      unpack_floats<T, V>(xw[u], xv);
                                      unpack_floats<T, V>(dw[u], dv);
                                      if (relu) unpack_floats<T, V>(yw[u], yv);
#pragma unroll
                                      for (int j = 0; j < V; ++j) {
                                        const float gr = masked_gradient(dv[j], relu ? yv[j] : 1.0f, relu);
                                        sg[j] += gr;
                                        sgx[j] = fmaf(gr, xv[j] - mean[j], sgx[j]);
                                      }
                                    }
                                  }
                                });
  }
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    s_g[j][t] = sg[j];
    s_gx[j][t] = sgx[j];
  }
  column_tree_sum2<V>(s_g, s_gx);
  if (threadIdx.y == 0 && active) {
    const int64_t at = static_cast<int64_t>(blockIdx.y) * g.cols + group * V;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      part_g[at + j] = s_g[j][t];
      part_gx[at + j] = s_gx[j][t];
    }
  }
}

// Grid (column tiles, row blocks); block row b takes rows [b * part_len, (b + 1) * part_len),
// bn_apply_unroll rows of threads in flight. ReadOld is beta != 0: without it, the coefficients
// of 16 bytes of columns and four 16-byte words in flight fit the 85 registers of three blocks
// per SM.
// MinBlocks (per SM) 4 instead of 3 is an experiment (TESSERA_CUDA_BN_FWD_BLOCKS_PER_SM=4): 64
// registers, more warps with fewer loads each in flight.
template <typename T, int V, bool ReadOld, int MinBlocks = 3>
__global__ void __launch_bounds__(bn_threads, ReadOld ? 2 : MinBlocks)
    bn_columns_forward(const T* x, T* y, column_geometry g, forward_source src) {
  const int64_t group = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (group >= g.groups) return;
  forward_coefficients c[V];
#pragma unroll
  for (int j = 0; j < V; ++j) c[j] = load_forward(src, g.map(group * V + j));
  constexpr bool read_old = ReadOld;
  const int64_t column = group * V;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.rows, begin + g.part_len);
  walk_rows<bn_apply_unroll>(begin + threadIdx.y, end, blockDim.y,
                             [&](const int64_t (&rows)[bn_apply_unroll], int count) {
                               norm_word<T, V> xw[bn_apply_unroll], ow[bn_apply_unroll];
#pragma unroll
                               for (int u = 0; u < bn_apply_unroll; ++u) {
                                 if (u < count) {
                                   xw[u] = load_word<T, V>(x + rows[u] * g.cols + column);
                                   if (read_old) ow[u] = load_word<T, V>(y + rows[u] * g.cols + column);
                                 }
                               }
#pragma unroll
                               for (int u = 0; u < bn_apply_unroll; ++u) {
                                 if (u < count) {
                                   float v[V], old[V];
                                   unpack_floats<T, V>(xw[u], v);
                                   if (read_old) unpack_floats<T, V>(ow[u], old);
#pragma unroll
                                   for (int j = 0; j < V; ++j) {
                                     const float r = forward_value(v[j], c[j], src);
                                     v[j] = read_old ? fmaf(src.beta, old[j], r) : r;
                                   }
                                   store_floats<T, V>(y + rows[u] * g.cols + column, v);
                                 }
                               }
                             });
}

// Relu (the fused relu's mask, which reads y) and ReadOld (beta != 0, which reads dx) are
// compile-time: the plain backward reads only x and dy, so its coefficients (4 per column) and U
// rows of two words each fit the 80 registers of three blocks per SM, with 2 * U loads in flight
// per thread (U = 4 spilled). H200, 2026-12-05 (tools/gpu/device_run.sh variants, bn_passes): the
// anchor backward (fp16 NHWC, mb256) 0.509 ms, 4.04 TB/s, where the form with the flags at run time
// (one row at a time, 89 registers, two blocks per SM, since removed) took 0.605 ms, 3.40 TB/s.
template <typename T, int V, int U, bool Relu, bool ReadOld>
__global__ void __launch_bounds__(bn_threads, Relu || ReadOld ? 2 : 3)
    bn_columns_backward_dx(const T* x, const T* dy, const T* y, T* dx, column_geometry g, backward_source src) {
  const int64_t group = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (group >= g.groups) return;
  backward_coefficients c[V];
#pragma unroll
  for (int j = 0; j < V; ++j) c[j] = load_backward(src, g.map(group * V + j));
  const int64_t column = group * V;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.rows, begin + g.part_len);
  walk_rows<U>(begin + threadIdx.y, end, blockDim.y, [&](const int64_t (&rows)[U], int count) {
    norm_word<T, V> xw[U], dw[U], yw[Relu ? U : 1], ow[ReadOld ? U : 1];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (u < count) {
        const int64_t at = rows[u] * g.cols + column;
        xw[u] = load_word<T, V>(x + at);
        dw[u] = load_word<T, V>(dy + at);
        if constexpr (Relu) yw[u] = load_word<T, V>(y + at);
        if constexpr (ReadOld) ow[u] = load_word<T, V>(dx + at);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (u < count) {
        float xv[V], dv[V], yv[V], old[V];
        unpack_floats<T, V>(xw[u], xv);
        unpack_floats<T, V>(dw[u], dv);
        if constexpr (Relu) unpack_floats<T, V>(yw[u], yv);
        if constexpr (ReadOld) unpack_floats<T, V>(ow[u], old);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float gr = Relu ? masked_gradient(dv[j], yv[j], 1) : dv[j];
          const float r = backward_value(xv[j], gr, c[j]);
          xv[j] = ReadOld ? fmaf(src.beta, old[j], r) : r;
        }
        store_floats<T, V>(dx + rows[u] * g.cols + column, xv);
      }
    }
  });
}

// ---- nchw layout: per channel, N runs of S contiguous elements ---------------------------------

struct nchw_geometry {
  int64_t spatial_vectors;  // S / V
  int64_t stride_n;         // elements (0 when N == 1)
  int64_t stride_c;         // elements (0 when C == 1)
  int64_t length;           // N * S, the reduction length of a channel
  int64_t part_len;         // elements per partition, a multiple of V
};

// Visits this thread's vectors q = q_begin + threadIdx.x + i * blockDim.x below q_end, U at a time
// (visit(offsets, count) as in walk_rows; offsets are relative to the channel's first element).
// Vector q lies in run n = q / (S / V); the (n, position) step between a thread's vectors is
// fixed, so only the first position costs a division.
template <int V, int U, typename Visit>
__device__ __forceinline__ void walk_nchw(const nchw_geometry& g, int64_t q_begin, int64_t q_end, Visit&& visit) {
  const int64_t step = blockDim.x;
  const int64_t sv = g.spatial_vectors;
  const int64_t step_n = step / sv, step_s = step - step_n * sv;
  int64_t q = q_begin + threadIdx.x;
  int64_t n = q / sv, s = q - n * sv;
  for (; q < q_end; q += U * step) {
    int64_t offsets[U];
    int count = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      offsets[u] = n * g.stride_n + s * V;
      if (q + u * step < q_end) count = u + 1;
      s += step_s;
      n += step_n;
      if (s >= sv) {
        s -= sv;
        ++n;
      }
    }
    visit(offsets, count);
  }
}

// Grid (C, partitions), 1-D blocks of bn_threads.
template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_nchw_welford(const T* x, nchw_geometry g, float* part_mean, float* part_m2) {
  const int64_t c = blockIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.length, begin + g.part_len);
  const T* base = x + c * g.stride_c;
  welford_state s{0.0f, 0.0f, 0.0f};
  walk_nchw<V, bn_reduce_unroll>(g, begin / V, end / V, [&](const int64_t (&offsets)[bn_reduce_unroll], int count) {
    norm_word<T, V> w[bn_reduce_unroll];
#pragma unroll
    for (int u = 0; u < bn_reduce_unroll; ++u)
      if (u < count) w[u] = load_word<T, V>(base + offsets[u]);
#pragma unroll
    for (int u = 0; u < bn_reduce_unroll; ++u) {
      if (u < count) {
        float v[V];
        unpack_floats<T, V>(w[u], v);
        // The vector's own mean and squared deviations, then one Chan merge: one division per
        // vector instead of one per element.
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < V; ++j) sum += v[j];
        const float vector_mean = sum * (1.0f / V);
        float m2 = 0.0f;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float d = v[j] - vector_mean;
          m2 = fmaf(d, d, m2);
        }
        s = welford_merge(s, welford_state{static_cast<float>(V), vector_mean, m2});
      }
    }
  });
  s = block_merge<bn_threads>(s);
  if (threadIdx.x == 0) {
    const int64_t at = static_cast<int64_t>(blockIdx.y) * gridDim.x + c;
    part_mean[at] = s.mean;
    part_m2[at] = s.m2;
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_nchw_backward_sums(const T* x, const T* dy, const T* y, nchw_geometry g, const float* saved_mean,
                          int32_t relu, float* part_g, float* part_gx) {
  const int64_t c = blockIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.length, begin + g.part_len);
  const int64_t base = c * g.stride_c;
  const float mean = saved_mean[c];
  float sg = 0.0f, sgx = 0.0f;
  walk_nchw<V, bn_sums_unroll>(g, begin / V, end / V, [&](const int64_t (&offsets)[bn_sums_unroll], int count) {
    norm_word<T, V> xw[bn_sums_unroll], dw[bn_sums_unroll], yw[bn_sums_unroll];
#pragma unroll
    for (int u = 0; u < bn_sums_unroll; ++u) {
      if (u < count) {
        xw[u] = load_word<T, V>(x + base + offsets[u]);
        dw[u] = load_word<T, V>(dy + base + offsets[u]);
        if (relu) yw[u] = load_word<T, V>(y + base + offsets[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < bn_sums_unroll; ++u) {
      if (u < count) {
        float xv[V], dv[V], yv[V];
        unpack_floats<T, V>(xw[u], xv);
        unpack_floats<T, V>(dw[u], dv);
        if (relu) unpack_floats<T, V>(yw[u], yv);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float gr = masked_gradient(dv[j], relu ? yv[j] : 1.0f, relu);
          sg += gr;
          sgx = fmaf(gr, xv[j] - mean, sgx);
        }
      }
    }
  });
  block_sum2_to_first<bn_threads>(sg, sgx);
  if (threadIdx.x == 0) {
    const int64_t at = static_cast<int64_t>(blockIdx.y) * gridDim.x + c;
    part_g[at] = sg;
    part_gx[at] = sgx;
  }
}

template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_nchw_forward(const T* x, T* y, nchw_geometry g, forward_source src) {
  const int64_t c = blockIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.length, begin + g.part_len);
  const int64_t base = c * g.stride_c;
  const forward_coefficients k = load_forward(src, c);
  const bool read_old = src.beta != 0.0f;
  walk_nchw<V, bn_apply_unroll>(g, begin / V, end / V, [&](const int64_t (&offsets)[bn_apply_unroll], int count) {
    norm_word<T, V> xw[bn_apply_unroll], ow[bn_apply_unroll];
#pragma unroll
    for (int u = 0; u < bn_apply_unroll; ++u) {
      if (u < count) {
        xw[u] = load_word<T, V>(x + base + offsets[u]);
        if (read_old) ow[u] = load_word<T, V>(y + base + offsets[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < bn_apply_unroll; ++u) {
      if (u < count) {
        float v[V], old[V];
        unpack_floats<T, V>(xw[u], v);
        if (read_old) unpack_floats<T, V>(ow[u], old);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float r = forward_value(v[j], k, src);
          v[j] = read_old ? fmaf(src.beta, old[j], r) : r;
        }
        store_floats<T, V>(y + base + offsets[u], v);
      }
    }
  });
}

template <typename T, int V>
__global__ void __launch_bounds__(bn_threads)
    bn_nchw_backward_dx(const T* x, const T* dy, const T* y, T* dx, nchw_geometry g, backward_source src) {
  const int64_t c = blockIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * g.part_len;
  const int64_t end = min(g.length, begin + g.part_len);
  const int64_t base = c * g.stride_c;
  const backward_coefficients k = load_backward(src, c);
  const bool read_old = src.beta != 0.0f;
  walk_nchw<V, bn_dx_unroll>(g, begin / V, end / V, [&](const int64_t (&offsets)[bn_dx_unroll], int count) {
    norm_word<T, V> xw[bn_dx_unroll], dw[bn_dx_unroll], yw[bn_dx_unroll], ow[bn_dx_unroll];
#pragma unroll
    for (int u = 0; u < bn_dx_unroll; ++u) {
      if (u < count) {
        xw[u] = load_word<T, V>(x + base + offsets[u]);
        dw[u] = load_word<T, V>(dy + base + offsets[u]);
        if (src.relu) yw[u] = load_word<T, V>(y + base + offsets[u]);
        if (read_old) ow[u] = load_word<T, V>(dx + base + offsets[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < bn_dx_unroll; ++u) {
      if (u < count) {
        float xv[V], dv[V], yv[V], old[V];
        unpack_floats<T, V>(xw[u], xv);
        unpack_floats<T, V>(dw[u], dv);
        if (src.relu) unpack_floats<T, V>(yw[u], yv);
        if (read_old) unpack_floats<T, V>(ow[u], old);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float gr = masked_gradient(dv[j], src.relu ? yv[j] : 1.0f, src.relu);
          const float r = backward_value(xv[j], gr, k);
          xv[j] = read_old ? fmaf(src.beta, old[j], r) : r;
        }
        store_floats<T, V>(dx + base + offsets[u], xv);
      }
    }
  });
}

// ---- strided layout: any strides per tensor ----------------------------------------------------

struct strided_geometry {
  dim_walker<bn_slots> walk;  // x's dims, row-major, with every slot's strides
  int64_t c;
  int64_t s;
  int64_t stats;
  int64_t length;
  int64_t part_len;
  index_divider by_s;
  index_divider by_c;
  index_divider by_stats;
  int32_t per_activation;
};

// Row-major linear index of element m of statistic k.
__device__ __forceinline__ int64_t strided_linear(const strided_geometry& g, int64_t k, int64_t m) {
  if (g.per_activation) return m * g.stats + k;
  const int64_t n = g.by_s.quotient(m);
  return (n * g.c + k) * g.s + (m - n * g.s);
}

// Statistic of the element at a row-major linear index.
__device__ __forceinline__ int64_t strided_stat(const strided_geometry& g, int64_t linear) {
  if (g.per_activation) return linear - g.by_stats.quotient(linear) * g.stats;
  const int64_t q = g.by_s.quotient(linear);
  return q - g.by_c.quotient(q) * g.c;
}

// One warp per (statistic, partition) work item w = p * stats + k, the partial's own index.
template <typename T>
__global__ void __launch_bounds__(bn_threads)
    bn_strided_welford(const T* x, strided_geometry g, int64_t items, float* part_mean, float* part_m2) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < items; w += warps) {
    const int64_t p = g.by_stats.quotient(w);
    const int64_t k = w - p * g.stats;
    const int64_t begin = p * g.part_len;
    const int64_t end = min(g.length, begin + g.part_len);
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int64_t m = begin + lane; m < end; m += 32) {
      int64_t off[bn_slots];
      g.walk.offsets(strided_linear(g, k, m), off);
      n += 1.0f;
      welford_add(to_float(x[off[0]]), __frcp_rn(n), mean, m2);
    }
    const welford_state s = warp_merge_down(welford_state{n, mean, m2});
    if (lane == 0) {
      part_mean[w] = s.mean;
      part_m2[w] = s.m2;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(bn_threads)
    bn_strided_backward_sums(const T* x, const T* dy, const T* y, strided_geometry g, int64_t items,
                             const float* saved_mean, int32_t relu, float* part_g, float* part_gx) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < items; w += warps) {
    const int64_t p = g.by_stats.quotient(w);
    const int64_t k = w - p * g.stats;
    const int64_t begin = p * g.part_len;
    const int64_t end = min(g.length, begin + g.part_len);
    const float mean = saved_mean[k];
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t m = begin + lane; m < end; m += 32) {
      int64_t off[bn_slots];
      g.walk.offsets(strided_linear(g, k, m), off);
      const float gr = masked_gradient(to_float(dy[off[1]]), relu ? to_float(y[off[3]]) : 1.0f, relu);
      sg += gr;
      sgx = fmaf(gr, to_float(x[off[0]]) - mean, sgx);
    }
    sg = warp_sum_down(sg);
    sgx = warp_sum_down(sgx);
    if (lane == 0) {
      part_g[w] = sg;
      part_gx[w] = sgx;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(bn_threads)
    bn_strided_forward(const T* x, T* y, strided_geometry g, int64_t count, forward_source src) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const bool read_old = src.beta != 0.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    int64_t off[bn_slots];
    g.walk.offsets(i, off);
    const forward_coefficients c = load_forward(src, strided_stat(g, i));
    float r = forward_value(to_float(x[off[0]]), c, src);
    if (read_old) r = fmaf(src.beta, to_float(y[off[1]]), r);
    y[off[1]] = from_float<T>(r);
  }
}

template <typename T>
__global__ void __launch_bounds__(bn_threads)
    bn_strided_backward_dx(const T* x, const T* dy, const T* y, T* dx, strided_geometry g, int64_t count,
                           backward_source src) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const bool read_old = src.beta != 0.0f;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    int64_t off[bn_slots];
    g.walk.offsets(i, off);
    const backward_coefficients c = load_backward(src, strided_stat(g, i));
    const float gr = masked_gradient(to_float(dy[off[1]]), src.relu ? to_float(y[off[3]]) : 1.0f, src.relu);
    float r = backward_value(to_float(x[off[0]]), gr, c);
    if (read_old) r = fmaf(src.beta, to_float(dx[off[2]]), r);
    dx[off[2]] = from_float<T>(r);
  }
}

// ---- folds of the partials (every layout) ------------------------------------------------------

struct training_fold {
  const float* part_mean;
  const float* part_m2;
  int32_t parts;
  int64_t part_len;
  int64_t length;  // M
  int64_t slots;   // partial columns (statistics, possibly permuted by `map`)
  stat_map map;
  double epsilon;
  double factor;
  double unbias;        // M / (M - 1), 1 when M == 1
  float* ws_mean;       // for the elementwise pass
  float* ws_inv_std;
  float* save_mean;     // null unless write_saved_stats
  float* save_inv_var;
  float* running_mean;  // null unless update_running_stats
  float* running_var;
};

// Blocks (32, fold_lanes), one slot per threadIdx.x.
__global__ void __launch_bounds__(fold_slots_per_block * fold_lanes) bn_fold_training(training_fold f) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * fold_slots_per_block + threadIdx.x;
  const bool active = slot < f.slots;
  const welford_state s =
      fold_partial_welford(f.part_mean, f.part_m2, f.parts, f.part_len, f.length, f.slots, slot, active);
  if (threadIdx.y != 0 || !active) return;
  const int64_t k = f.map(slot);
  const double var = static_cast<double>(s.m2) / static_cast<double>(f.length);  // biased
  const float inv_std = static_cast<float>(1.0 / sqrt(var + f.epsilon));
  f.ws_mean[k] = s.mean;
  f.ws_inv_std[k] = inv_std;
  if (f.save_mean) {
    f.save_mean[k] = s.mean;
    f.save_inv_var[k] = inv_std;
  }
  if (f.running_mean) {
    const double keep = 1.0 - f.factor;
    f.running_mean[k] = static_cast<float>(keep * f.running_mean[k] + f.factor * s.mean);
    f.running_var[k] = static_cast<float>(keep * f.running_var[k] + f.factor * f.unbias * var);
  }
}

struct backward_fold {
  const float* part_g;
  const float* part_gx;
  int32_t parts;
  int64_t slots;
  int64_t length;
  stat_map map;
  const float* saved_mean;
  const float* saved_inv_var;
  const float* scale;
  float alpha;
  float alpha_param;
  float beta_param;
  float* dscale;
  float* dbias;
  float* coef_mean;  // the backward_source arrays
  float* coef_a;
  float* coef_mean_g;
  float* coef_w;
};

__global__ void __launch_bounds__(fold_slots_per_block * fold_lanes) bn_fold_backward(backward_fold f) {
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * fold_slots_per_block + threadIdx.x;
  const bool active = slot < f.slots;
  float sum_g, sum_gx;
  fold_partial_sums(f.part_g, f.part_gx, f.parts, f.slots, slot, active, sum_g, sum_gx);
  if (threadIdx.y != 0 || !active) return;
  const int64_t k = f.map(slot);
  const float inv_std = f.saved_inv_var[k];
  const float sum_gxhat = sum_gx * inv_std;
  // beta_param == 0: dscale and dbias are not read (they may hold NaN).
  float ds = f.alpha_param * sum_gxhat, db = f.alpha_param * sum_g;
  if (f.beta_param != 0.0f) {
    ds = fmaf(f.beta_param, f.dscale[k], ds);
    db = fmaf(f.beta_param, f.dbias[k], db);
  }
  f.dscale[k] = ds;
  f.dbias[k] = db;
  const float inv_m = 1.0f / static_cast<float>(f.length);
  f.coef_mean[k] = f.saved_mean[k];
  f.coef_a[k] = f.alpha * f.scale[k] * inv_std;
  f.coef_mean_g[k] = sum_g * inv_m;
  f.coef_w[k] = inv_std * sum_gxhat * inv_m;
}

// ================================ host side =====================================================

constexpr const char* bn_names[3][3] = {
    {"bnorm_fwd_training_nhwc_vec", "bnorm_fwd_training_nchw_vec", "bnorm_fwd_training_strided"},
    {"bnorm_fwd_inference_nhwc_vec", "bnorm_fwd_inference_nchw_vec", "bnorm_fwd_inference_strided"},
    {"bnorm_bwd_nhwc_vec", "bnorm_bwd_nchw_vec", "bnorm_bwd_strided"}};

constexpr int32_t bn_operations[3] = {TSRP_OP_BATCH_NORM_FORWARD_TRAINING, TSRP_OP_BATCH_NORM_FORWARD_INFERENCE,
                                      TSRP_OP_BATCH_NORM_BACKWARD};

constexpr const char* bn_notes[3] = {
    // columns
    "Dense rows x columns view (NHWC/NDHWC spatial, 2-D, per-activation packed row-major or "
    "channels-last): threads own 16-byte column vectors (8-, 4- or 2-byte when C or alignment "
    "forbids 16) and walk rows. Statistics are fp32 Welford per thread, merged by Chan's formula "
    "in a fixed tree, then per block partial in the workspace folded in a fixed order; running "
    "statistics and inverse std in double. Deterministic on a given GPU.",
    // nchw
    "Spatial mode on contiguous spatial runs (NCHW/NCDHW, any N and C strides): a block per "
    "(channel, chunk), 16-byte (or narrower) vectors along the run. fp32 Welford/Chan statistics "
    "with fixed-order block and partial folds; running statistics and inverse std in double. "
    "Deterministic on a given GPU.",
    // strided
    "Any strides and mixed layouts: per-element index arithmetic (31-bit multiply-shift division). "
    "fp32 Welford/Chan statistics with fixed-order warp and partial folds; running statistics and "
    "inverse std in double. Deterministic on a given GPU."};

struct bn_facts {
  int64_t n;
  int64_t c;
  int64_t s;  // product of the spatial dims (1 for 2-D)
  bool per_activation;
  int64_t stats() const { return per_activation ? c * s : c; }  // K
  int64_t length() const { return per_activation ? n : n * s; }  // M
};

bn_facts facts_of(const tsrpBatchNormProblem& p) {
  bn_facts f{p.x.dims[0], p.x.dims[1], 1, p.mode == TSRP_BATCH_NORM_PER_ACTIVATION};
  for (int d = 2; d < p.x.ndims; ++d) f.s *= p.x.dims[d];
  return f;
}

struct bn_tensors {
  const tsrpTensor* t[bn_slots];
  const char* name[bn_slots];
};

bn_tensors tensors_of(const tsrpBatchNormProblem& p, bn_op op) {
  if (op != bn_op::backward) return {{&p.x, &p.y, nullptr, nullptr}, {"x", "y", nullptr, nullptr}};
  const bool relu = p.activation == TSRP_ACTIVATION_RELU;
  return {{&p.x, &p.dy, &p.dx, relu ? &p.y : nullptr}, {"x", "dy", "dx", "y"}};
}

std::string common_support(const tsrpBatchNormProblem& p, bn_op op) {
  if (p.mode != TSRP_BATCH_NORM_SPATIAL && p.mode != TSRP_BATCH_NORM_PER_ACTIVATION)
    return "batch normalization mode " + std::to_string(p.mode) + " is unknown";
  if (p.activation != TSRP_ACTIVATION_IDENTITY && p.activation != TSRP_ACTIVATION_RELU)
    return "activation " + std::to_string(p.activation) + " is not fused (identity and relu are)";
  if (p.x.ndims < 2 || p.x.ndims > 5)
    return "tensor x has " + std::to_string(p.x.ndims) + " dims, expected 2 to 5 (N, C, spatial)";
  if (!(p.epsilon > 0.0) || !std::isfinite(p.epsilon)) return "epsilon must be finite and > 0";
  if (op == bn_op::training && !(p.exponential_average_factor >= 0.0 && p.exponential_average_factor <= 1.0))
    return "exponential_average_factor must be in [0, 1]";
  for (int d = 0; d < p.x.ndims; ++d)
    if (p.x.dims[d] < 1) return "tensor x has a dim below 1";
  const bn_tensors ts = tensors_of(p, op);
  for (int slot = 0; slot < bn_slots; ++slot) {
    const tsrpTensor* t = ts.t[slot];
    if (t == nullptr) continue;
    const std::string name = ts.name[slot];
    if (!is_floating_storage(t->data_type))
      return "tensor " + name + " is " + data_type_name(t->data_type) + "; float, half and bfloat16 are supported";
    if (t->data_type != p.x.data_type) return "tensor " + name + " has another data type than x";
    if (!same_dims(*t, p.x)) return "tensor " + name + " has other dims than x";
  }
  // The parameter layout: f32, packed, 1 x C x (1.. or spatial).
  const bn_facts f = facts_of(p);
  if (p.param.data_type != TSRP_DATA_FLOAT) return "tensor param is not float";
  if (p.param.ndims != p.x.ndims || element_count(p.param) != f.stats() || p.param.dims[1] != f.c ||
      !is_packed_row_major(p.param))
    return "tensor param is not the packed 1xCx1.. (spatial) or 1xCxspatial (per-activation) layout";
  return {};
}

// ---- layouts -----------------------------------------------------------------------------------

struct column_view {
  int64_t rows;
  int64_t cols;
  stat_map map;
};

std::optional<column_view> column_view_of(const tsrpTensor& x, const bn_facts& f) {
  const bool row_major = is_packed_row_major(x);
  const bool channels_last = x.ndims >= 3 && is_packed_channels_last(x);
  const stat_map identity{0, f.c, f.s};
  if (!f.per_activation) {
    if ((row_major && f.s == 1) || channels_last) return column_view{f.n * f.s, f.c, identity};
  } else {
    if (row_major) return column_view{f.n, f.c * f.s, identity};
    if (channels_last) return column_view{f.n, f.c * f.s, stat_map{f.s > 1 && f.c > 1 ? 1 : 0, f.c, f.s}};
  }
  return std::nullopt;
}

struct nchw_view {
  int64_t stride_n;
  int64_t stride_c;
};

std::optional<nchw_view> nchw_view_of(const tsrpTensor& x) {
  int64_t expected = 1;
  for (int d = x.ndims - 1; d >= 2; --d) {
    if (x.dims[d] != 1 && x.strides[d] != expected) return std::nullopt;
    expected *= x.dims[d];
  }
  return nchw_view{x.dims[0] > 1 ? x.strides[0] : 0, x.dims[1] > 1 ? x.strides[1] : 0};
}

std::string same_strides_as_x(const tsrpBatchNormProblem& p, bn_op op) {
  const bn_tensors ts = tensors_of(p, op);
  for (int slot = 1; slot < bn_slots; ++slot) {
    if (ts.t[slot] && !same_strides(*ts.t[slot], p.x))
      return std::string("tensor ") + ts.name[slot] + " has other strides than x (mixed layouts go to " +
             bn_names[static_cast<int>(op)][static_cast<int>(bn_layout::strided)] + ")";
  }
  return {};
}

std::string layout_support(const tsrpBatchNormProblem& p, bn_op op, bn_layout layout) {
  if (layout == bn_layout::strided) return {};
  if (std::string why = same_strides_as_x(p, op); !why.empty()) return why;
  const bn_facts f = facts_of(p);
  if (layout == bn_layout::columns) {
    if (!column_view_of(p.x, f))
      return f.per_activation ? "tensor x is neither packed row-major nor packed channels-last"
                              : "tensor x is not packed channels-last (NHWC/NDHWC) nor a packed N x C matrix";
    return {};
  }
  if (f.per_activation) return "per-activation mode is not run by the per-channel nchw kernel";
  if (!nchw_view_of(p.x)) return "tensor x's spatial dims are not one contiguous run (NCHW-like)";
  return {};
}

// ---- workspace ---------------------------------------------------------------------------------

// Partials of the reductions (two arrays of parts_cap x K floats) and four per-statistic arrays;
// everything but the partition cap depends only on the shape, never on the options of a call.
struct bn_workspace_plan {
  int64_t parts_cap = 0;
  size_t part_a = 0, part_b = 0, stat[4] = {0, 0, 0, 0};
  size_t bytes = 0;
};

bn_workspace_plan workspace_plan(const tsrpBatchNormProblem& p, bn_op op, bn_layout layout) {
  bn_workspace_plan w;
  if (op == bn_op::inference) return w;
  const bn_facts f = facts_of(p);
  const int64_t k = f.stats(), m = f.length();
  const int64_t min_len = layout == bn_layout::columns ? 64 : layout == bn_layout::nchw ? 2048 : 256;
  w.parts_cap = std::max<int64_t>(1, std::min({norm_ceil_div(m, min_len), bn_max_parts, bn_max_partial_entries / k}));
  norm_workspace_layout carve;
  w.part_a = carve.reserve_floats(w.parts_cap * k);
  w.part_b = carve.reserve_floats(w.parts_cap * k);
  for (size_t& s : w.stat) s = carve.reserve_floats(k);
  w.bytes = carve.bytes();
  return w;
}

// ---- launches ----------------------------------------------------------------------------------

// What one run needs besides the layout-specific geometry.
struct bn_call {
  cuda_context& ctx;
  const tsrpBatchNormProblem& p;
  const tsrpBatchNormArgs& a;
  bn_facts f;
  bn_workspace_plan w;
  void* workspace;
  bool relu;
  int64_t target_blocks;  // bn_threads-thread blocks that fill the GPU once
};

// The data pointers of an operation, for alignment checks.
struct bn_pointers {
  const void* p[bn_slots];
};

bn_pointers pointers_of(const bn_call& c, bn_op op) {
  if (op == bn_op::backward) return {{c.a.x, c.a.dy, c.a.dx, c.relu ? c.a.y_in : nullptr}};
  return {{c.a.x, c.a.y, nullptr, nullptr}};
}

bool all_aligned(const bn_pointers& ptrs, size_t bytes) {
  for (const void* q : ptrs.p)
    if (!norm_aligned(q, bytes)) return false;
  return true;
}

forward_source forward_source_of(const bn_call& c, bn_op op) {
  forward_source s{};
  if (op == bn_op::training) {
    s.mean = norm_workspace_floats(c.workspace, c.w.stat[0]);
    s.spread = norm_workspace_floats(c.workspace, c.w.stat[1]);
    s.spread_is_variance = 0;
  } else {
    s.mean = c.a.estimated_mean;
    s.spread = c.a.estimated_variance;
    s.spread_is_variance = 1;
  }
  s.scale = c.a.scale;
  s.bias = c.a.bias;
  s.epsilon = static_cast<float>(c.p.epsilon);
  s.relu = c.relu ? 1 : 0;
  s.alpha = c.a.alpha;
  s.beta = c.a.beta;
  return s;
}

backward_source backward_source_of(const bn_call& c) {
  return {norm_workspace_floats(c.workspace, c.w.stat[0]), norm_workspace_floats(c.workspace, c.w.stat[1]),
          norm_workspace_floats(c.workspace, c.w.stat[2]), norm_workspace_floats(c.workspace, c.w.stat[3]), c.relu ? 1 : 0, c.a.beta};
}

// Partitions of the reduction length: at most `cap` and `wanted`, each at least `min_len` long
// (rounded to a multiple of `multiple`). Returns (parts, part_len) with every partition non-empty.
std::pair<int64_t, int64_t> partitions(int64_t length, int64_t cap, int64_t wanted, int64_t min_len, int64_t multiple) {
  int64_t parts = std::max<int64_t>(1, std::min({cap, wanted, norm_ceil_div(length, min_len)}));
  int64_t len = norm_ceil_div(norm_ceil_div(length, parts), multiple) * multiple;
  parts = norm_ceil_div(length, len);
  return {parts, len};
}

void fold_training(const bn_call& c, int64_t parts, int64_t part_len, int64_t slots, const stat_map& map) {
  training_fold f{};
  f.part_mean = norm_workspace_floats(c.workspace, c.w.part_a);
  f.part_m2 = norm_workspace_floats(c.workspace, c.w.part_b);
  f.parts = static_cast<int32_t>(parts);
  f.part_len = part_len;
  f.length = c.f.length();
  f.slots = slots;
  f.map = map;
  f.epsilon = c.p.epsilon;
  f.factor = c.p.exponential_average_factor;
  f.unbias = f.length > 1 ? static_cast<double>(f.length) / static_cast<double>(f.length - 1) : 1.0;
  f.ws_mean = norm_workspace_floats(c.workspace, c.w.stat[0]);
  f.ws_inv_std = norm_workspace_floats(c.workspace, c.w.stat[1]);
  if (c.p.write_saved_stats) {
    f.save_mean = c.a.save_mean;
    f.save_inv_var = c.a.save_inv_variance;
  }
  if (c.p.update_running_stats) {
    f.running_mean = c.a.running_mean;
    f.running_var = c.a.running_variance;
  }
  const dim3 block(fold_slots_per_block, fold_lanes);
  bn_fold_training<<<static_cast<unsigned int>(norm_ceil_div(slots, fold_slots_per_block)), block, 0, c.ctx.stream()>>>(f);
}

void fold_backward(const bn_call& c, int64_t parts, int64_t slots, const stat_map& map) {
  backward_fold f{};
  f.part_g = norm_workspace_floats(c.workspace, c.w.part_a);
  f.part_gx = norm_workspace_floats(c.workspace, c.w.part_b);
  f.parts = static_cast<int32_t>(parts);
  f.slots = slots;
  f.length = c.f.length();
  f.map = map;
  f.saved_mean = c.a.saved_mean;
  f.saved_inv_var = c.a.saved_inv_variance;
  f.scale = c.a.scale;
  f.alpha = c.a.alpha;
  f.alpha_param = c.a.alpha_param;
  f.beta_param = c.a.beta_param;
  f.dscale = c.a.dscale;
  f.dbias = c.a.dbias;
  f.coef_mean = norm_workspace_floats(c.workspace, c.w.stat[0]);
  f.coef_a = norm_workspace_floats(c.workspace, c.w.stat[1]);
  f.coef_mean_g = norm_workspace_floats(c.workspace, c.w.stat[2]);
  f.coef_w = norm_workspace_floats(c.workspace, c.w.stat[3]);
  const dim3 block(fold_slots_per_block, fold_lanes);
  bn_fold_backward<<<static_cast<unsigned int>(norm_ceil_div(slots, fold_slots_per_block)), block, 0, c.ctx.stream()>>>(f);
}

// Columns: block (bx, by) with bx threads across column groups and by across rows.
struct column_launch {
  dim3 block;
  int64_t tiles;
};

column_launch column_blocks(int64_t groups) {
  const int bx = static_cast<int>(std::min<int64_t>(groups, bn_threads));
  const int by = std::max(1, bn_threads / bx);
  return {dim3(bx, by), norm_ceil_div(groups, bx)};
}

template <typename T>
void run_columns(const bn_call& c, bn_op op) {
  const column_view view = *column_view_of(c.p.x, c.f);
  const bn_pointers ptrs = pointers_of(c, op);
  const auto fits = [&](int v) { return view.cols % v == 0 && all_aligned(ptrs, static_cast<size_t>(v) * sizeof(T)); };
  const cudaStream_t stream = c.ctx.stream();
  with_vector_width<T>(fits, [&](auto width) {
    constexpr int V = decltype(width)::value;
    column_geometry g{view.rows, view.cols, view.cols / V, 0, view.map};
    const column_launch launch = column_blocks(g.groups);
    const unsigned int tiles = static_cast<unsigned int>(launch.tiles);
    const T* x = static_cast<const T*>(c.a.x);
    if (op == bn_op::training || op == bn_op::backward) {
      const auto [parts, len] = partitions(g.rows, c.w.parts_cap, norm_ceil_div(c.target_blocks, launch.tiles),
                                           static_cast<int64_t>(launch.block.y) * 8, 1);
      g.part_len = len;
      const dim3 grid(tiles, static_cast<unsigned int>(parts));
      float* part_a = norm_workspace_floats(c.workspace, c.w.part_a);
      float* part_b = norm_workspace_floats(c.workspace, c.w.part_b);
      if (op == bn_op::training) {
        bn_columns_welford<T, V><<<grid, launch.block, 0, stream>>>(x, g, part_a, part_b);
        fold_training(c, parts, len, g.cols, g.map);
      } else {
        bn_columns_backward_sums<T, V><<<grid, launch.block, 0, stream>>>(
            x, static_cast<const T*>(c.a.dy), static_cast<const T*>(c.a.y_in), g, c.a.saved_mean, c.relu ? 1 : 0,
            part_a, part_b);
        fold_backward(c, parts, g.cols, g.map);
      }
    }
    // The elementwise pass: each block row takes a contiguous share of g.part_len rows,
    // bn_rows_per_thread rows of threads unless there are more than 65535 shares: many short
    // blocks, which keep every SM busy to the end (a grid of a few waves of long grid-stride
    // blocks leaves its last partial wave running alone), each long enough to pay for loading
    // its coefficients.
    static const int most_rows_per_thread =
        launch_override("TESSERA_CUDA_BN_ROWS_PER_THREAD", bn_rows_per_thread, 1, 1024);
    const int64_t thread_rows = norm_ceil_div(g.rows, launch.block.y);
    // Fewer rows per thread where the longer share would leave under four fills of the GPU.
    const int64_t rows_per_thread =
        std::clamp<int64_t>(thread_rows * launch.tiles / (4 * c.target_blocks), std::min(bn_apply_unroll, most_rows_per_thread),
                            most_rows_per_thread);
    const int64_t row_blocks = std::min<int64_t>(norm_ceil_div(thread_rows, rows_per_thread), 65535);
    g.part_len = norm_ceil_div(thread_rows, row_blocks) * launch.block.y;
    const dim3 grid(tiles, static_cast<unsigned int>(norm_ceil_div(g.rows, g.part_len)));
    if (op == bn_op::backward) {
      const backward_source src = backward_source_of(c);
      const auto launch_dx = [&](auto unroll, auto relu, auto read_old) {
        bn_columns_backward_dx<T, V, decltype(unroll)::value, decltype(relu)::value, decltype(read_old)::value>
            <<<grid, launch.block, 0, stream>>>(x, static_cast<const T*>(c.a.dy), static_cast<const T*>(c.a.y_in),
                                                static_cast<T*>(c.a.dx), g, src);
      };
      using yes = std::true_type;
      using no = std::false_type;
      using one = std::integral_constant<int, 1>;
      // TESSERA_CUDA_BN_DX_UNROLL=1 runs the plain case one row at a time (the two instantiated
      // choices: 1 and bn_plain_dx_unroll).
      static const int plain_unroll =
          launch_override("TESSERA_CUDA_BN_DX_UNROLL", bn_plain_dx_unroll, 1, bn_plain_dx_unroll);
      if (src.relu && src.beta != 0.0f) {
        launch_dx(one{}, yes{}, yes{});
      } else if (src.relu) {
        launch_dx(one{}, yes{}, no{});
      } else if (src.beta != 0.0f) {
        launch_dx(one{}, no{}, yes{});
      } else if (plain_unroll == 1) {
        launch_dx(one{}, no{}, no{});
      } else {
        launch_dx(std::integral_constant<int, bn_plain_dx_unroll>{}, no{}, no{});
      }
    } else {
      const forward_source src = forward_source_of(c, op);
      const auto launch_forward = [&](auto read_old, auto min_blocks) {
        bn_columns_forward<T, V, decltype(read_old)::value, decltype(min_blocks)::value>
            <<<grid, launch.block, 0, stream>>>(x, static_cast<T*>(c.a.y), g, src);
      };
      static const int fwd_blocks_per_sm = launch_override("TESSERA_CUDA_BN_FWD_BLOCKS_PER_SM", 3, 3, 4);
      if (src.beta != 0.0f) {
        launch_forward(std::true_type{}, std::integral_constant<int, 2>{});
      } else if (fwd_blocks_per_sm == 4) {
        launch_forward(std::false_type{}, std::integral_constant<int, 4>{});
      } else {
        launch_forward(std::false_type{}, std::integral_constant<int, 3>{});
      }
    }
  });
}

template <typename T>
void run_nchw(const bn_call& c, bn_op op) {
  const nchw_view view = *nchw_view_of(c.p.x);
  const bn_pointers ptrs = pointers_of(c, op);
  const int64_t s = c.f.s, channels = c.f.c, length = c.f.length();
  const auto fits = [&](int v) {
    return s % v == 0 && view.stride_n % v == 0 && view.stride_c % v == 0 &&
           all_aligned(ptrs, static_cast<size_t>(v) * sizeof(T));
  };
  const cudaStream_t stream = c.ctx.stream();
  with_vector_width<T>(fits, [&](auto width) {
    constexpr int V = decltype(width)::value;
    nchw_geometry g{s / V, view.stride_n, view.stride_c, length, 0};
    const T* x = static_cast<const T*>(c.a.x);
    const unsigned int grid_c = static_cast<unsigned int>(channels);
    if (op == bn_op::training || op == bn_op::backward) {
      const auto [parts, len] = partitions(length, c.w.parts_cap, norm_ceil_div(c.target_blocks, channels),
                                           int64_t{bn_threads} * bn_reduce_unroll * V, V);
      g.part_len = len;
      const dim3 grid(grid_c, static_cast<unsigned int>(parts));
      float* part_a = norm_workspace_floats(c.workspace, c.w.part_a);
      float* part_b = norm_workspace_floats(c.workspace, c.w.part_b);
      const stat_map identity{0, channels, s};
      if (op == bn_op::training) {
        bn_nchw_welford<T, V><<<grid, bn_threads, 0, stream>>>(x, g, part_a, part_b);
        fold_training(c, parts, len, channels, identity);
      } else {
        bn_nchw_backward_sums<T, V><<<grid, bn_threads, 0, stream>>>(
            x, static_cast<const T*>(c.a.dy), static_cast<const T*>(c.a.y_in), g, c.a.saved_mean, c.relu ? 1 : 0,
            part_a, part_b);
        fold_backward(c, parts, channels, identity);
      }
    }
    const auto [parts, len] = partitions(length, 65535, norm_ceil_div(2 * c.target_blocks, channels),
                                         int64_t{bn_threads} * bn_apply_unroll * V, V);
    g.part_len = len;
    const dim3 grid(grid_c, static_cast<unsigned int>(parts));
    if (op == bn_op::backward) {
      bn_nchw_backward_dx<T, V><<<grid, bn_threads, 0, stream>>>(x, static_cast<const T*>(c.a.dy),
                                                                 static_cast<const T*>(c.a.y_in),
                                                                 static_cast<T*>(c.a.dx), g, backward_source_of(c));
    } else {
      bn_nchw_forward<T, V><<<grid, bn_threads, 0, stream>>>(x, static_cast<T*>(c.a.y), g, forward_source_of(c, op));
    }
  });
}

template <typename T>
void run_strided(const bn_call& c, bn_op op) {
  const bn_tensors ts = tensors_of(c.p, op);
  strided_geometry g{};
  g.walk = make_dim_walker<bn_slots>(c.p.x, 0, c.p.x.ndims, ts.t);
  g.c = c.f.c;
  g.s = c.f.s;
  g.stats = c.f.stats();
  g.length = c.f.length();
  g.by_s = make_index_divider(g.s);
  g.by_c = make_index_divider(g.c);
  g.by_stats = make_index_divider(g.stats);
  g.per_activation = c.f.per_activation ? 1 : 0;
  const cudaStream_t stream = c.ctx.stream();
  const T* x = static_cast<const T*>(c.a.x);
  if (op == bn_op::training || op == bn_op::backward) {
    const int64_t warps_wanted = c.target_blocks * (bn_threads / 32) * 4;
    const auto [parts, len] = partitions(g.length, c.w.parts_cap, norm_ceil_div(warps_wanted, g.stats), 32, 1);
    g.part_len = len;
    const int64_t items = parts * g.stats;
    const unsigned int blocks = static_cast<unsigned int>(
        std::max<int64_t>(1, std::min(norm_ceil_div(items, bn_threads / 32), 2 * c.target_blocks)));
    float* part_a = norm_workspace_floats(c.workspace, c.w.part_a);
    float* part_b = norm_workspace_floats(c.workspace, c.w.part_b);
    const stat_map identity{0, g.c, g.s};
    if (op == bn_op::training) {
      bn_strided_welford<T><<<blocks, bn_threads, 0, stream>>>(x, g, items, part_a, part_b);
      fold_training(c, parts, len, g.stats, identity);
    } else {
      bn_strided_backward_sums<T><<<blocks, bn_threads, 0, stream>>>(x, static_cast<const T*>(c.a.dy),
                                                                     static_cast<const T*>(c.a.y_in), g, items,
                                                                     c.a.saved_mean, c.relu ? 1 : 0, part_a, part_b);
      fold_backward(c, parts, g.stats, identity);
    }
  }
  const int64_t count = element_count(c.p.x);
  const unsigned int blocks = c.ctx.grid_stride_blocks(count, bn_threads);
  if (op == bn_op::backward) {
    bn_strided_backward_dx<T><<<blocks, bn_threads, 0, stream>>>(x, static_cast<const T*>(c.a.dy),
                                                                 static_cast<const T*>(c.a.y_in),
                                                                 static_cast<T*>(c.a.dx), g, count,
                                                                 backward_source_of(c));
  } else {
    bn_strided_forward<T><<<blocks, bn_threads, 0, stream>>>(x, static_cast<T*>(c.a.y), g, count,
                                                             forward_source_of(c, op));
  }
}

void check_arguments(const tsrpBatchNormProblem& p, const tsrpBatchNormArgs& a, bn_op op, const bn_facts& f) {
  const int64_t elements = element_count(p.x), stats = f.stats();
  require_pointer(a.x, elements, "x");
  require_pointer(a.scale, stats, "scale");
  if (op == bn_op::backward) {
    require_pointer(a.dy, elements, "dy");
    require_pointer(a.dx, elements, "dx");
    if (p.activation == TSRP_ACTIVATION_RELU) require_pointer(a.y_in, elements, "y (the forward output)");
    require_pointer(a.saved_mean, stats, "saved_mean");
    require_pointer(a.saved_inv_variance, stats, "saved_inv_variance");
    require_pointer(a.dscale, stats, "dscale");
    require_pointer(a.dbias, stats, "dbias");
    return;
  }
  require_pointer(a.y, elements, "y");
  require_pointer(a.bias, stats, "bias");
  if (op == bn_op::inference) {
    require_pointer(a.estimated_mean, stats, "estimated_mean");
    require_pointer(a.estimated_variance, stats, "estimated_variance");
    return;
  }
  if (p.write_saved_stats) {
    require_pointer(a.save_mean, stats, "save_mean");
    require_pointer(a.save_inv_variance, stats, "save_inv_variance");
  }
  if (p.update_running_stats) {
    require_pointer(a.running_mean, stats, "running_mean");
    require_pointer(a.running_variance, stats, "running_variance");
  }
}

void run_batch_norm(cuda_context& ctx, const tsrpBatchNormProblem& p, const tsrpBatchNormArgs& a, void* workspace,
                    bn_op op, bn_layout layout) {
  const bn_facts f = facts_of(p);
  check_arguments(p, a, op, f);
  const bn_workspace_plan w = workspace_plan(p, op, layout);
  if (w.bytes > 0 && !norm_aligned(workspace, alignof(float)))
    throw status_error(TSRP_STATUS_BAD_PARAM, "workspace is not aligned to 4 bytes");
  const bn_call c{ctx,
                  p,
                  a,
                  f,
                  w,
                  workspace,
                  p.activation == TSRP_ACTIVATION_RELU,
                  static_cast<int64_t>(std::max(ctx.sm_count(), 1)) * (2048 / bn_threads)};
  dispatch_storage_type(p.x.data_type, [&](auto tag) {
    using T = decltype(tag);
    switch (layout) {
      case bn_layout::columns: run_columns<T>(c, op); break;
      case bn_layout::nchw: run_nchw<T>(c, op); break;
      case bn_layout::strided: run_strided<T>(c, op); break;
    }
  });
}

template <bn_op Op, bn_layout Layout>
struct bn_traits {
  using problem_type = tsrpBatchNormProblem;
  using args_type = tsrpBatchNormArgs;
  static constexpr const char* name = bn_names[static_cast<int>(Op)][static_cast<int>(Layout)];
  static constexpr int32_t operation = bn_operations[static_cast<int>(Op)];
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = bn_notes[static_cast<int>(Layout)];

  static std::string support(const problem_type& p) {
    if (std::string why = common_support(p, Op); !why.empty()) return why;
    return layout_support(p, Op, Layout);
  }
  static size_t workspace(const problem_type& p) { return workspace_plan(p, Op, Layout).bytes; }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    run_batch_norm(ctx, p, a, workspace, Op, Layout);
  }
};

template <bn_op Op>
void add_op(kernel_list& out) {
  out.push_back(make_kernel<bn_traits<Op, bn_layout::columns>>());
  out.push_back(make_kernel<bn_traits<Op, bn_layout::nchw>>());
  out.push_back(make_kernel<bn_traits<Op, bn_layout::strided>>());
}

}  // namespace

void add_batch_norm_kernels(kernel_list& out) {
  add_op<bn_op::training>(out);
  add_op<bn_op::inference>(out);
  add_op<bn_op::backward>(out);
}

}  // namespace tessera::cuda
