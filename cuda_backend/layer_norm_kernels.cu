// Layer and RMS normalization, forward and backward, over the trailing dims [begin_norm_axis,
// ndims) (semantics in plugin_abi_normalization.h). Two layouts each, registered fastest first:
//   *_rows_vec  the normalized dims are one packed row-major run in every tensor (leading dims
//               may have any strides) and the row has at most 8192 elements: a group of
//               threads per row (a power of two up to 32 lanes, or up to 512 threads) holds the
//               whole row in registers, 16 elements per thread, read once with 16-byte vectors
//               where the row length and alignment allow; the forward of rows of 32 to 1024
//               elements in 16-byte vectors takes a warp per row instead, streaming rows with the
//               next row's loads in flight. Statistics are exact two-pass over the registers.
//               The backward accumulates dscale/dbias per thread across its rows and writes one
//               partial per block; a second kernel folds them in a fixed order.
//   *_strided   anything else (channels-last data, mixed layouts, longer rows): a block per row,
//               per-element index arithmetic, the row re-read from cache for each pass, and a
//               column kernel with fixed partitions for dscale/dbias.
// Layer norm and RMS norm share every kernel: RMS norm is the case mean = 0, no bias, and
// inv_rms = 1 / sqrt(mean(x^2) + eps); both backwards are dx = inv * (g - c1 - xhat * c2) with
// g = dy * scale, xhat = (x - mean) * inv, c2 = mean(g * xhat) and c1 = mean(g) (0 for RMS), and
// dscale = sum over rows of dy * xhat. No floating atomics: results are bitwise reproducible on a
// given GPU.
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

namespace tessera::cuda {
namespace {

constexpr int row_elements_per_thread = 16;  // registers per thread for a row (times 2 backward)
constexpr int row_max_threads = 512;         // backward needs ~100 registers: 512 x 128 fit an SM
constexpr int64_t row_capacity = int64_t{row_max_threads} * row_elements_per_thread;
constexpr int row_block_threads = 256;  // threads per block when several rows share one
constexpr int warp_row_elements = 32;   // forward, one warp per row: elements per lane
constexpr int warp_row_threads = 256;   // 8 warps, each streaming about warp_rows rows
constexpr int warp_rows = 4;
constexpr int strided_threads = 256;
constexpr int64_t max_partial_blocks = 320;  // >= 2 blocks per SM of any current GPU
constexpr int64_t max_partial_entries = int64_t{1} << 21;

// Data tensor slots: 0 x, 1 y (forward) or dy (backward), 2 dx (backward).
constexpr int norm_slots = 3;

// ================================ device side ===================================================

struct rows_params {
  dim_walker<norm_slots> outer;  // row index -> first element of the row in each tensor
  int64_t rows;
  int32_t inner;
  int32_t tpr;        // threads per row (blockDim.x)
  int32_t params_vec; // scale and bias are 16-byte aligned
  float epsilon;
};

// Sum over the threads of one row (blockDim.x of them); every thread of the block calls it, and
// every thread of the row receives the same value. Rows of at most 32 threads are reduced inside
// their warp segment; longer ones go through shared memory (`red`, one slot per warp).
__device__ __forceinline__ float row_sum(float v, int tpr, float* red) {
  if (tpr <= 32) return group_sum_all(v, tpr);
  v = warp_sum_down(v);
  const int linear = threadIdx.y * blockDim.x + threadIdx.x;
  __syncthreads();  // the previous call's readers are done with `red`
  if (linear % 32 == 0) red[linear / 32] = v;
  __syncthreads();
  const int warps = tpr / 32, first = threadIdx.y * warps;
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += red[first + w];
  return total;
}

// Grid-stride over groups of blockDim.y rows; the trip count is uniform across the block, so the
// row reductions' barriers are reached by every thread.
template <typename T, int V, bool Rms>
__global__ void __launch_bounds__(row_max_threads)
    norm_rows_forward(const T* x, T* y, rows_params g, const float* scale, const float* bias, float* mean_out,
                      float* inv_out) {
  constexpr int items = row_elements_per_thread / V;
  __shared__ float red[row_max_threads / 32];
  const int tx = threadIdx.x, tpr = g.tpr;
  const int nvec = g.inner / V;
  const float inv_inner = 1.0f / static_cast<float>(g.inner);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.y; first < g.rows;
       first += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    const int64_t row = first + threadIdx.y;
    const bool live = row < g.rows;
    int64_t base[norm_slots] = {0, 0, 0};
    if (live) g.outer.offsets(row, base);
    float v[items][V];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int vec = tx + i * tpr;
      if (live && vec < nvec) {
        load_floats<T, V>(x + base[0] + static_cast<int64_t>(vec) * V, v[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[i][j] = 0.0f;
      }
    }
    float mean = 0.0f, inv;
    if constexpr (Rms) {
      float sq = 0.0f;
#pragma unroll
      for (int i = 0; i < items; ++i)
#pragma unroll
        for (int j = 0; j < V; ++j) sq = fmaf(v[i][j], v[i][j], sq);
      inv = 1.0f / sqrtf(row_sum(sq, tpr, red) * inv_inner + g.epsilon);
    } else {
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i < items; ++i)
#pragma unroll
        for (int j = 0; j < V; ++j) sum += v[i][j];
      mean = row_sum(sum, tpr, red) * inv_inner;
      // Two-pass variance on the registers; the zero padding must not count.
      float sq = 0.0f;
#pragma unroll
      for (int i = 0; i < items; ++i) {
        if (tx + i * tpr < nvec) {
#pragma unroll
          for (int j = 0; j < V; ++j) {
            const float d = v[i][j] - mean;
            sq = fmaf(d, d, sq);
          }
        }
      }
      inv = 1.0f / sqrtf(row_sum(sq, tpr, red) * inv_inner + g.epsilon);
    }
    if (!live) continue;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int vec = tx + i * tpr;
      if (vec < nvec) {
        const int col = vec * V;
        float s[V], b[V];
        if (scale) load_params<V>(scale + col, g.params_vec, s);
        if (bias) load_params<V>(bias + col, g.params_vec, b);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          float h = (v[i][j] - mean) * inv;
          if (scale) h *= s[j];
          if (bias) h += b[j];
          v[i][j] = h;
        }
        store_floats<T, V>(y + base[1] + col, v[i]);
      }
    }
    if (tx == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_out) inv_out[row] = inv;
    }
  }
}

// The normalized value h times scale plus bias, with whichever of the two the launch has (chosen
// at compile time: no per-element branches), one FMA when both.
template <bool HasScale, bool HasBias>
__device__ __forceinline__ float scale_and_shift(float h, float scale, float bias) {
  if constexpr (HasScale && HasBias) {
    return fmaf(h, scale, bias);
  } else if constexpr (HasScale) {
    return h * scale;
  } else if constexpr (HasBias) {
    return h + bias;
  } else {
    return h;
  }
}

// Forward with one warp per row, for rows of 32 to 32 * 32 elements in 16-byte vectors (the
// transformer case: 1024 halves are 4 vectors per lane). Reductions stay inside the warp (no
// block barrier). Launched with warp_rows rows per warp: short blocks, which the hardware balances
// to the end. The row is widened to fp32 once and kept so (32 registers; 62 in all, so 4 blocks of
// 256 per SM), the sums run as independent chains per word, and scale and bias are chosen per
// launch (HasScale, HasBias: no per-element branches) and folded into one FMA per element.
// H200, 65536 x 1024 fp16, 2026-12-04: 3.17 TB/s against 3.09 for the former form that kept the
// row as raw 16-byte words and widened it in each of its three passes (conformance passed under
// both). ncu on that former form: 64 % of the DRAM peak, 45 % of the warps active; what holds the
// kernel is a warp's row load and its statistics running one after the other. (A form that loaded
// the next row before the current row's statistics took 78-88 registers and ran at 2.69 TB/s
// against 3.15 for the former; night run 2 of 2026-12-03.) A cp.async form (each warp's next row
// copied into shared memory while on the current one) lost on the H200, 2026-12-05: 0.0892 ms
// against 0.0829 for this kernel (3.01 vs 3.24 TB/s), with 8 rows per warp 0.0878 against 0.0837;
// removed.
template <typename T, int V, bool Rms, bool HasScale, bool HasBias>
__global__ void __launch_bounds__(warp_row_threads, 4)
    norm_rows_forward_warp(const T* x, T* y, rows_params g, const float* scale,
                           const float* bias, float* mean_out, float* inv_out) {
  constexpr int words = warp_row_elements / V;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int nvec = g.inner / V;
  const float inv_inner = 1.0f / static_cast<float>(g.inner);
  int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  int64_t base[norm_slots] = {0, 0, 0};
  for (; row < g.rows; row += warps) {
    g.outer.offsets(row, base);
    float v[words][V];
#pragma unroll
    for (int i = 0; i < words; ++i) {
      if (lane + 32 * i < nvec) {
        load_floats<T, V>(x + base[0] + static_cast<int64_t>(lane + 32 * i) * V, v[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[i][j] = 0.0f;  // padding: adds nothing to sum or squares
      }
    }
    float mean = 0.0f;
    if constexpr (!Rms) {
      float sums[words];
#pragma unroll
      for (int i = 0; i < words; ++i) {
        sums[i] = v[i][0];
#pragma unroll
        for (int j = 1; j < V; ++j) sums[i] += v[i][j];
      }
      float sum = sums[0];
#pragma unroll
      for (int i = 1; i < words; ++i) sum += sums[i];
      mean = group_sum_all(sum, 32) * inv_inner;
    }
    // Two-pass (centred) squares for layer norm; padding words are skipped, their (0 - mean)^2
    // is not part of the row.
    float squares[words];
#pragma unroll
    for (int i = 0; i < words; ++i) {
      squares[i] = 0.0f;
      if (lane + 32 * i < nvec) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float d = v[i][j] - mean;
          squares[i] = fmaf(d, d, squares[i]);
        }
      }
    }
    float sq = squares[0];
#pragma unroll
    for (int i = 1; i < words; ++i) sq += squares[i];
    const float inv = 1.0f / sqrtf(group_sum_all(sq, 32) * inv_inner + g.epsilon);
#pragma unroll
    for (int i = 0; i < words; ++i) {
      const int vec = lane + 32 * i;
      if (vec < nvec) {
        const int col = vec * V;
        float s[V] = {}, b[V] = {};  // read only where the launch has them
        if constexpr (HasScale) load_params<V>(scale + col, g.params_vec, s);
        if constexpr (HasBias) load_params<V>(bias + col, g.params_vec, b);
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
          out[j] = scale_and_shift<HasScale, HasBias>((v[i][j] - mean) * inv, s[j], b[j]);
        }
        store_floats<T, V>(y + base[1] + col, out);
      }
    }
    if (lane == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_out) inv_out[row] = inv;
    }
  }
}

// The warp-per-row forward with Pair rows in flight per warp (TESSERA_CUDA_LNORM_PAIR=1; the
// kernel above is the default until the H200 says otherwise). What holds the kernel above is a
// warp's row load and its statistics running one after the other: while a warp reduces, it has
// no bytes in flight, and with 32 warps per SM of 2 KB each the SM has at most 64 KB in flight
// in the load phase. Here a warp loads rows r and r + 1 together (4 KB) and runs their
// reductions interleaved. The rows stay in registers as their raw 16-byte words (4 registers a
// word of halves, against 8 widened), each pass widening them again behind reload_barrier
// (without it nvcc kept the first pass's floats). Even so the second row's offsets and statistics
// spilled 200-260 bytes under 4 blocks of 256 per SM (64 registers), so it runs 3 blocks (80
// registers; ptxas still reports 20-160 bytes of spill for most instantiations): 96 KB in flight
// per SM where the one-row kernel has 64. The former one-row form that widened per pass ran 3.09
// TB/s against the widened form's 3.17: the widening is cheap. Sums run in the one-row kernel's
// order, so both give the same bits.
// An empty asm that claims to change the words: the compiler must widen them again after this
// point instead of keeping the floats it widened before (which for two rows are 64 registers).
template <int Rows, int Words>
__device__ __forceinline__ void reload_barrier(uint4 (&rows)[Rows][Words]) {
#pragma unroll
  for (int r = 0; r < Rows; ++r)
#pragma unroll
    for (int i = 0; i < Words; ++i) asm volatile("" : "+r"(rows[r][i].x), "+r"(rows[r][i].y), "+r"(rows[r][i].z), "+r"(rows[r][i].w));
}

template <typename T, int V, bool Rms, bool HasScale, bool HasBias>
__global__ void __launch_bounds__(warp_row_threads, 3)
    norm_rows_forward_warp_pair(const T* x, T* y, rows_params g, const float* scale,
                                const float* bias, float* mean_out, float* inv_out) {
  static_assert(sizeof(T) * V == sizeof(uint4), "16-byte words (reload_barrier)");
  constexpr int words = warp_row_elements / V;
  constexpr int pair = 2;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const int nvec = g.inner / V;
  const float inv_inner = 1.0f / static_cast<float>(g.inner);
  for (int64_t first = (static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * pair;
       first < g.rows; first += warps * pair) {
    int64_t base[pair][norm_slots] = {};
    bool live[pair];
    norm_word<T, V> raw[pair][words];
#pragma unroll
    for (int r = 0; r < pair; ++r) {
      live[r] = first + r < g.rows;
      if (live[r]) g.outer.offsets(first + r, base[r]);
#pragma unroll
      for (int i = 0; i < words; ++i) {
        // Padding and a missing second row hold zero words: zeros in every element type.
        raw[r][i] = norm_word<T, V>{};
        if (live[r] && lane + 32 * i < nvec)
          raw[r][i] = load_word<T, V>(x + base[r][0] + static_cast<int64_t>(lane + 32 * i) * V);
      }
    }
    float mean[pair] = {};
    if constexpr (!Rms) {
#pragma unroll
      for (int r = 0; r < pair; ++r) {
        // Summed in norm_rows_forward_warp's order (a chain per word, then the words in order):
        // the two kernels give the same bits.
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < words; ++i) {
          float v[V];
          unpack_floats<T, V>(raw[r][i], v);
          float word_sum = v[0];
#pragma unroll
          for (int j = 1; j < V; ++j) word_sum += v[j];
          sum = i == 0 ? word_sum : sum + word_sum;
        }
        mean[r] = sum;
      }
#pragma unroll
      for (int r = 0; r < pair; ++r) mean[r] = group_sum_all(mean[r], 32) * inv_inner;
    }
    float inv[pair];
    reload_barrier(raw);
#pragma unroll
    for (int r = 0; r < pair; ++r) {
      float sq = 0.0f;
#pragma unroll
      for (int i = 0; i < words; ++i) {
        float word_sq = 0.0f;
        if (lane + 32 * i < nvec) {  // padding's (0 - mean)^2 is not part of the row
          float v[V];
          unpack_floats<T, V>(raw[r][i], v);
#pragma unroll
          for (int j = 0; j < V; ++j) {
            const float d = v[j] - mean[r];
            word_sq = fmaf(d, d, word_sq);
          }
        }
        sq = i == 0 ? word_sq : sq + word_sq;
      }
      inv[r] = sq;
    }
#pragma unroll
    for (int r = 0; r < pair; ++r) inv[r] = 1.0f / sqrtf(group_sum_all(inv[r], 32) * inv_inner + g.epsilon);
    reload_barrier(raw);
#pragma unroll
    for (int r = 0; r < pair; ++r) {
      if (!live[r]) continue;
#pragma unroll
      for (int i = 0; i < words; ++i) {
        const int vec = lane + 32 * i;
        if (vec < nvec) {
          const int col = vec * V;
          float v[V], s[V] = {}, b[V] = {}, out[V];
          unpack_floats<T, V>(raw[r][i], v);
          if constexpr (HasScale) load_params<V>(scale + col, g.params_vec, s);
          if constexpr (HasBias) load_params<V>(bias + col, g.params_vec, b);
#pragma unroll
          for (int j = 0; j < V; ++j) {
            out[j] = scale_and_shift<HasScale, HasBias>((v[j] - mean[r]) * inv[r], s[j], b[j]);
          }
          store_floats<T, V>(y + base[r][1] + col, out);
        }
      }
      if (lane == 0) {
        if (mean_out) mean_out[first + r] = mean[r];
        if (inv_out) inv_out[first + r] = inv[r];
      }
    }
  }
}

// dscale/dbias partials: part_ds[blockIdx.x * inner + col] (null when not asked for).
template <typename T, int V, bool Rms>
__global__ void __launch_bounds__(row_max_threads)
    norm_rows_backward(const T* x, const T* dy, T* dx, rows_params g, const float* scale, const float* saved_mean,
                       const float* saved_inv, float* part_ds, float* part_db) {
  constexpr int items = row_elements_per_thread / V;
  __shared__ float red[row_max_threads / 32];
  const int tx = threadIdx.x, tpr = g.tpr;
  const int nvec = g.inner / V;
  const float inv_inner = 1.0f / static_cast<float>(g.inner);
  float acc_ds[items][V], acc_db[items][V];
#pragma unroll
  for (int i = 0; i < items; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) acc_ds[i][j] = acc_db[i][j] = 0.0f;

  for (int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.y; first < g.rows;
       first += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    const int64_t row = first + threadIdx.y;
    const bool live = row < g.rows;
    int64_t base[norm_slots] = {0, 0, 0};
    if (live) g.outer.offsets(row, base);
    float xv[items][V], dv[items][V];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int vec = tx + i * tpr;
      if (live && vec < nvec) {
        load_floats<T, V>(x + base[0] + static_cast<int64_t>(vec) * V, xv[i]);
        load_floats<T, V>(dy + base[1] + static_cast<int64_t>(vec) * V, dv[i]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) xv[i][j] = dv[i][j] = 0.0f;
      }
    }
    const float mean = Rms || !live ? 0.0f : saved_mean[row];
    float inv;
    if (Rms && saved_inv == nullptr) {  // uniform: the barrier inside is reached by all
      float sq = 0.0f;
#pragma unroll
      for (int i = 0; i < items; ++i)
#pragma unroll
        for (int j = 0; j < V; ++j) sq = fmaf(xv[i][j], xv[i][j], sq);
      inv = 1.0f / sqrtf(row_sum(sq, tpr, red) * inv_inner + g.epsilon);
    } else {
      inv = live ? saved_inv[row] : 0.0f;
    }
    // Padding has dy = 0, hence g = 0: it adds nothing to either sum.
    float sg = 0.0f, sgx = 0.0f;
    float gv[items][V];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int col = (tx + i * tpr) * V;
      float s[V];
      if (scale && tx + i * tpr < nvec) {
        load_params<V>(scale + col, g.params_vec, s);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) s[j] = 1.0f;
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        gv[i][j] = dv[i][j] * s[j];
        xv[i][j] = (xv[i][j] - mean) * inv;  // xv holds xhat from here on
        sg += gv[i][j];
        sgx = fmaf(gv[i][j], xv[i][j], sgx);
      }
    }
    const float c2 = row_sum(sgx, tpr, red) * inv_inner;
    float c1 = 0.0f;
    if constexpr (!Rms) c1 = row_sum(sg, tpr, red) * inv_inner;
    if (!live) continue;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int vec = tx + i * tpr;
      if (vec < nvec) {
        float out[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
          out[j] = inv * (gv[i][j] - c1 - xv[i][j] * c2);
          acc_ds[i][j] = fmaf(dv[i][j], xv[i][j], acc_ds[i][j]);
          acc_db[i][j] += dv[i][j];
        }
        store_floats<T, V>(dx + base[2] + static_cast<int64_t>(vec) * V, out);
      }
    }
  }

  if (part_ds == nullptr && part_db == nullptr) return;  // uniform
  // Rows of one block share their columns: fold the blockDim.y accumulators with a fixed tree
  // (a block of several rows has at most row_block_threads threads).
  __shared__ float fold[2][row_elements_per_thread][row_block_threads];
  const int t = threadIdx.y * tpr + tx;
  const int rows_here = blockDim.y;
  if (rows_here > 1) {
#pragma unroll
    for (int i = 0; i < items; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        fold[0][i * V + j][t] = acc_ds[i][j];
        fold[1][i * V + j][t] = acc_db[i][j];
      }
    for (int stride = 1; stride < rows_here; stride <<= 1) {
      __syncthreads();
      if (threadIdx.y % (2 * stride) == 0 && threadIdx.y + stride < rows_here) {
        const int o = t + stride * tpr;
#pragma unroll
        for (int e = 0; e < row_elements_per_thread; ++e) {
          fold[0][e][t] += fold[0][e][o];
          fold[1][e][t] += fold[1][e][o];
        }
      }
    }
    __syncthreads();
    if (threadIdx.y != 0) return;
#pragma unroll
    for (int i = 0; i < items; ++i)
#pragma unroll
      for (int j = 0; j < V; ++j) {
        acc_ds[i][j] = fold[0][i * V + j][t];
        acc_db[i][j] = fold[1][i * V + j][t];
      }
  }
  const int64_t at = static_cast<int64_t>(blockIdx.x) * g.inner;
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const int vec = tx + i * tpr;
    if (vec < nvec) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (part_ds) part_ds[at + vec * V + j] = acc_ds[i][j];
        if (part_db) part_db[at + vec * V + j] = acc_db[i][j];
      }
    }
  }
}

// dscale[c] / dbias[c] = the partials of column c summed in partial order; blocks (32, fold_lanes).
__global__ void __launch_bounds__(fold_slots_per_block * fold_lanes)
    norm_fold_param_grads(const float* part_ds, const float* part_db, int parts, int64_t inner, float* dscale,
                          float* dbias) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * fold_slots_per_block + threadIdx.x;
  const bool active = col < inner;
  float ds, db;
  fold_partial_sums(part_ds, part_db, parts, inner, col, active, ds, db);
  if (threadIdx.y != 0 || !active) return;
  if (dscale) dscale[col] = ds;
  if (dbias) dbias[col] = db;
}

// ---- strided layout ----------------------------------------------------------------------------

struct strided_params {
  dim_walker<norm_slots> outer;  // row index -> row base offsets
  dim_walker<norm_slots> inner;  // column index -> offsets within the row
  int64_t rows;
  int64_t inner_size;
  float epsilon;
};

// One block per row (grid-stride). Three passes for layer norm (mean, centred squares, output),
// two for RMS; the re-reads hit L1/L2.
template <typename T, bool Rms>
__global__ void __launch_bounds__(strided_threads)
    norm_strided_forward(const T* x, T* y, strided_params g, const float* scale, const float* bias, float* mean_out,
                         float* inv_out) {
  const float inv_inner = 1.0f / static_cast<float>(g.inner_size);
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[norm_slots];
    g.outer.offsets(row, base);
    float mean = 0.0f;
    if constexpr (!Rms) {
      float sum = 0.0f;
      for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
        int64_t off[norm_slots];
        g.inner.offsets(c, off);
        sum += to_float(x[base[0] + off[0]]);
      }
      mean = block_sum_all<strided_threads>(sum) * inv_inner;
    }
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
      int64_t off[norm_slots];
      g.inner.offsets(c, off);
      const float d = to_float(x[base[0] + off[0]]) - mean;
      sq = fmaf(d, d, sq);
    }
    const float inv = 1.0f / sqrtf(block_sum_all<strided_threads>(sq) * inv_inner + g.epsilon);
    for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
      int64_t off[norm_slots];
      g.inner.offsets(c, off);
      float h = (to_float(x[base[0] + off[0]]) - mean) * inv;
      if (scale) h *= __ldg(scale + c);
      if (bias) h += __ldg(bias + c);
      y[base[1] + off[1]] = from_float<T>(h);
    }
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_out) inv_out[row] = inv;
    }
  }
}

// inv_keep (RMS without saved statistics only): the recomputed inv_rms per row, for the
// parameter-gradient kernel.
template <typename T, bool Rms>
__global__ void __launch_bounds__(strided_threads)
    norm_strided_backward(const T* x, const T* dy, T* dx, strided_params g, const float* scale,
                          const float* saved_mean, const float* saved_inv, float* inv_keep) {
  const float inv_inner = 1.0f / static_cast<float>(g.inner_size);
  for (int64_t row = blockIdx.x; row < g.rows; row += gridDim.x) {
    int64_t base[norm_slots];
    g.outer.offsets(row, base);
    const float mean = Rms ? 0.0f : saved_mean[row];
    float inv;
    if (Rms && saved_inv == nullptr) {
      float sq = 0.0f;
      for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
        int64_t off[norm_slots];
        g.inner.offsets(c, off);
        const float v = to_float(x[base[0] + off[0]]);
        sq = fmaf(v, v, sq);
      }
      inv = 1.0f / sqrtf(block_sum_all<strided_threads>(sq) * inv_inner + g.epsilon);
      if (inv_keep && threadIdx.x == 0) inv_keep[row] = inv;
    } else {
      inv = saved_inv[row];
    }
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
      int64_t off[norm_slots];
      g.inner.offsets(c, off);
      const float gr = to_float(dy[base[1] + off[1]]) * (scale ? __ldg(scale + c) : 1.0f);
      const float xhat = (to_float(x[base[0] + off[0]]) - mean) * inv;
      sg += gr;
      sgx = fmaf(gr, xhat, sgx);
    }
    const float c2 = block_sum_all<strided_threads>(sgx) * inv_inner;
    float c1 = 0.0f;
    if constexpr (!Rms) c1 = block_sum_all<strided_threads>(sg) * inv_inner;
    for (int64_t c = threadIdx.x; c < g.inner_size; c += strided_threads) {
      int64_t off[norm_slots];
      g.inner.offsets(c, off);
      const float gr = to_float(dy[base[1] + off[1]]) * (scale ? __ldg(scale + c) : 1.0f);
      const float xhat = (to_float(x[base[0] + off[0]]) - mean) * inv;
      dx[base[2] + off[2]] = from_float<T>(inv * (gr - c1 - xhat * c2));
    }
  }
}

// dscale/dbias partials over row partitions: grid (column tiles, partitions), a thread per column
// walking the rows of its partition.
template <typename T>
__global__ void __launch_bounds__(strided_threads)
    norm_strided_param_partials(const T* x, const T* dy, strided_params g, const float* mean, const float* inv,
                                int64_t part_len, float* part_ds, float* part_db) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * strided_threads + threadIdx.x;
  if (col >= g.inner_size) return;
  int64_t off[norm_slots];
  g.inner.offsets(col, off);
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * part_len;
  const int64_t end = min(g.rows, begin + part_len);
  float ds = 0.0f, db = 0.0f;
  for (int64_t row = begin; row < end; ++row) {
    int64_t base[norm_slots];
    g.outer.offsets(row, base);
    const float d = to_float(dy[base[1] + off[1]]);
    const float xhat = (to_float(x[base[0] + off[0]]) - (mean ? mean[row] : 0.0f)) * inv[row];
    ds = fmaf(d, xhat, ds);
    db += d;
  }
  const int64_t at = static_cast<int64_t>(blockIdx.y) * g.inner_size + col;
  part_ds[at] = ds;
  part_db[at] = db;
}

// ================================ host side =====================================================

// One view of both problem structs.
struct norm_desc {
  bool rms;
  bool backward;
  int axis;
  double epsilon;
  const tsrpTensor* x;
  const tsrpTensor* data[norm_slots];  // x, y | dy, dx
  const char* names[norm_slots];
  const tsrpTensor* scale;
  bool uses_scale;
  const tsrpTensor* stats;
  bool uses_stats;
  int64_t rows;
  int64_t inner;
};

norm_desc describe_common(const tsrpTensor& x, int axis, double epsilon, bool rms, bool backward) {
  norm_desc d{};
  d.rms = rms;
  d.backward = backward;
  d.axis = axis;
  d.epsilon = epsilon;
  d.x = &x;
  d.rows = 1;
  d.inner = 1;
  for (int i = 0; i < x.ndims; ++i) (i < axis ? d.rows : d.inner) *= x.dims[i];
  return d;
}

norm_desc describe(const tsrpLayerNormProblem& p, bool backward) {
  norm_desc d = describe_common(p.x, p.begin_norm_axis, p.epsilon, false, backward);
  d.data[0] = &p.x;
  d.data[1] = backward ? &p.dy : &p.y;
  d.data[2] = backward ? &p.dx : nullptr;
  d.names[0] = "x";
  d.names[1] = backward ? "dy" : "y";
  d.names[2] = "dx";
  d.scale = &p.scale;
  d.uses_scale = p.has_scale || p.has_bias || p.has_dscale;
  d.stats = &p.stats;
  d.uses_stats = backward || p.write_saved_stats;
  return d;
}

norm_desc describe(const tsrpRmsNormProblem& p, bool backward) {
  norm_desc d = describe_common(p.x, p.begin_norm_axis, p.epsilon, true, backward);
  d.data[0] = &p.x;
  d.data[1] = backward ? &p.dy : &p.y;
  d.data[2] = backward ? &p.dx : nullptr;
  d.names[0] = "x";
  d.names[1] = backward ? "dy" : "y";
  d.names[2] = "dx";
  d.scale = &p.scale;
  d.uses_scale = true;
  d.stats = &p.stats;
  d.uses_stats = p.has_saved_stats != 0;
  return d;
}

std::string common_support(const norm_desc& d) {
  const tsrpTensor& x = *d.x;
  if (x.ndims < 2 || x.ndims > TSRP_MAX_DIMS)
    return "tensor x has " + std::to_string(x.ndims) + " dims, expected 2 to " + std::to_string(TSRP_MAX_DIMS);
  if (d.axis < 1 || d.axis > x.ndims - 1)
    return "begin_norm_axis " + std::to_string(d.axis) + " does not split x's " + std::to_string(x.ndims) + " dims";
  if (!(d.epsilon > 0.0) || !std::isfinite(d.epsilon)) return "epsilon must be finite and > 0";
  for (int i = 0; i < x.ndims; ++i)
    if (x.dims[i] < 1) return "tensor x has a dim below 1";
  for (int s = 0; s < norm_slots; ++s) {
    const tsrpTensor* t = d.data[s];
    if (t == nullptr) continue;
    const std::string name = d.names[s];
    if (!is_floating_storage(t->data_type))
      return "tensor " + name + " is " + data_type_name(t->data_type) + "; float, half and bfloat16 are supported";
    if (t->data_type != x.data_type) return "tensor " + name + " has another data type than x";
    if (!same_dims(*t, x)) return "tensor " + name + " has other dims than x";
  }
  // Parameters and statistics are indexed as packed vectors. A workspace query may come without
  // their descriptors (ndims 0): the host derives them from x, so only given ones are checked.
  if (d.uses_scale && d.scale->ndims > 0 &&
      (d.scale->data_type != TSRP_DATA_FLOAT || element_count(*d.scale) != d.inner || !is_packed_row_major(*d.scale)))
    return "tensor scale is not a packed float tensor of the normalized dims";
  if (d.uses_stats && d.stats->ndims > 0 &&
      (d.stats->data_type != TSRP_DATA_FLOAT || element_count(*d.stats) != d.rows || !is_packed_row_major(*d.stats)))
    return "tensor stats is not a packed float tensor of the leading dims";
  return {};
}

// The normalized dims of t are one packed row-major run.
bool inner_packed(const tsrpTensor& t, int axis) {
  int64_t expected = 1;
  for (int d = t.ndims - 1; d >= axis; --d) {
    if (t.dims[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.dims[d];
  }
  return true;
}

std::string rows_support(const norm_desc& d, const char* strided_name) {
  for (int s = 0; s < norm_slots; ++s) {
    if (d.data[s] && !inner_packed(*d.data[s], d.axis))
      return std::string("the normalized dims of tensor ") + d.names[s] + " are not one packed row-major run (" +
             strided_name + " takes any strides)";
  }
  if (d.inner > row_capacity)
    return "rows of " + std::to_string(d.inner) + " elements exceed the register-resident limit of " +
           std::to_string(row_capacity) + " (" + strided_name + " takes them)";
  return {};
}

// Threads per row: a power of two up to a warp, else whole warps, 16 elements each.
int threads_per_row(int64_t inner) {
  const int64_t needed = norm_ceil_div(inner, row_elements_per_thread);
  if (needed <= 32) {
    int t = 1;
    while (t < needed) t <<= 1;
    return t;
  }
  return static_cast<int>(norm_ceil_div(needed, 32) * 32);
}

int rows_per_block(int tpr) { return std::max(1, row_block_threads / tpr); }

// ---- workspace ---------------------------------------------------------------------------------

// Backward only: dscale/dbias partials (two arrays of parts_cap x inner floats) and, for the
// strided layout, the recomputed inv_rms per row. Sized for every option a call may bring.
struct norm_workspace_plan {
  int64_t parts_cap = 0;
  size_t part_ds = 0, part_db = 0, inv_keep = 0;
  size_t bytes = 0;
};

norm_workspace_plan workspace_plan(const norm_desc& d, bool rows_layout) {
  norm_workspace_plan w;
  if (!d.backward) return w;
  if (rows_layout) {
    w.parts_cap = std::max<int64_t>(1, std::min(max_partial_blocks, norm_ceil_div(d.rows, rows_per_block(threads_per_row(d.inner)))));
  } else {
    w.parts_cap = std::max<int64_t>(
        1, std::min({max_partial_blocks, norm_ceil_div(d.rows, 16), max_partial_entries / d.inner}));
  }
  norm_workspace_layout layout;
  w.part_ds = layout.reserve_floats(w.parts_cap * d.inner);
  w.part_db = layout.reserve_floats(w.parts_cap * d.inner);
  if (!rows_layout && d.rms) w.inv_keep = layout.reserve_floats(d.rows);
  w.bytes = layout.bytes();
  return w;
}

// ---- run ---------------------------------------------------------------------------------------

// The pointers of both argument structs, by role.
struct norm_pointers {
  const void* x;
  void* y;
  const void* dy;
  void* dx;
  const float* scale;
  const float* bias;
  float* mean_out;
  float* inv_out;
  const float* saved_mean;
  const float* saved_inv;
  float* dscale;
  float* dbias;
};

norm_pointers pointers_of(const tsrpLayerNormProblem& p, const tsrpLayerNormArgs& a, bool backward) {
  const int64_t elements = element_count(p.x), rows = describe(p, backward).rows,
                inner = describe(p, backward).inner;
  require_pointer(a.x, elements, "x");
  if (p.has_scale) require_pointer(a.scale, inner, "scale");
  norm_pointers q{};
  q.x = a.x;
  q.scale = p.has_scale ? a.scale : nullptr;
  if (backward) {
    require_pointer(a.dy, elements, "dy");
    require_pointer(a.dx, elements, "dx");
    require_pointer(a.saved_mean, rows, "saved_mean");
    require_pointer(a.saved_inv_std, rows, "saved_inv_std");
    if (p.has_dscale) {
      if (!p.has_scale) throw status_error(TSRP_STATUS_BAD_PARAM, "dscale asked for without a scale");
      require_pointer(a.dscale, inner, "dscale");
    }
    if (p.has_bias) require_pointer(a.dbias, inner, "dbias");
    q.dy = a.dy;
    q.dx = a.dx;
    q.saved_mean = a.saved_mean;
    q.saved_inv = a.saved_inv_std;
    q.dscale = p.has_dscale ? a.dscale : nullptr;
    q.dbias = p.has_bias ? a.dbias : nullptr;
  } else {
    require_pointer(a.y, elements, "y");
    if (p.has_bias) require_pointer(a.bias, inner, "bias");
    if (p.write_saved_stats) {
      require_pointer(a.mean, rows, "mean");
      require_pointer(a.inv_std, rows, "inv_std");
    }
    q.y = a.y;
    q.bias = p.has_bias ? a.bias : nullptr;
    q.mean_out = p.write_saved_stats ? a.mean : nullptr;
    q.inv_out = p.write_saved_stats ? a.inv_std : nullptr;
  }
  return q;
}

norm_pointers pointers_of(const tsrpRmsNormProblem& p, const tsrpRmsNormArgs& a, bool backward) {
  const int64_t elements = element_count(p.x), rows = describe(p, backward).rows,
                inner = describe(p, backward).inner;
  require_pointer(a.x, elements, "x");
  require_pointer(a.scale, inner, "scale");
  norm_pointers q{};
  q.x = a.x;
  q.scale = a.scale;
  if (backward) {
    require_pointer(a.dy, elements, "dy");
    require_pointer(a.dx, elements, "dx");
    if (p.has_saved_stats) require_pointer(a.saved_inv_rms, rows, "saved_inv_rms");
    if (p.has_dscale) require_pointer(a.dscale, inner, "dscale");
    q.dy = a.dy;
    q.dx = a.dx;
    q.saved_inv = p.has_saved_stats ? a.saved_inv_rms : nullptr;
    q.dscale = p.has_dscale ? a.dscale : nullptr;
  } else {
    require_pointer(a.y, elements, "y");
    if (p.has_saved_stats) require_pointer(a.inv_rms, rows, "inv_rms");
    q.y = a.y;
    q.inv_out = p.has_saved_stats ? a.inv_rms : nullptr;
  }
  return q;
}

void fold_param_grads(cuda_context& ctx, const norm_desc& d, const norm_pointers& q, const norm_workspace_plan& w,
                      void* workspace, int64_t parts) {
  if (!q.dscale && !q.dbias) return;
  const float* part_ds = norm_workspace_floats(workspace, q.dscale ? w.part_ds : w.part_db);
  const float* part_db = norm_workspace_floats(workspace, q.dbias ? w.part_db : w.part_ds);
  const dim3 block(fold_slots_per_block, fold_lanes);
  norm_fold_param_grads<<<static_cast<unsigned int>(norm_ceil_div(d.inner, fold_slots_per_block)), block, 0,
                          ctx.stream()>>>(part_ds, part_db, static_cast<int>(parts), d.inner, q.dscale, q.dbias);
}

template <typename T, int V, bool Rms>
void launch_rows_forward_warp(cuda_context& ctx, const rows_params& g, const norm_pointers& q) {
  // TESSERA_CUDA_LNORM_ROWS_PER_WARP overrides warp_rows, to measure (launch_overrides.hpp).
  static const int rows_per_warp = launch_override("TESSERA_CUDA_LNORM_ROWS_PER_WARP", warp_rows, 1, 1 << 16);
  // TESSERA_CUDA_LNORM_PAIR=1: two rows in flight per warp (norm_rows_forward_warp_pair), to measure.
  static const bool pair = launch_override("TESSERA_CUDA_LNORM_PAIR", 0, 0, 1) == 1;
  const unsigned int blocks = cuda_context::share_blocks(g.rows, int64_t{warp_row_threads / 32} * rows_per_warp);
  const T* x = static_cast<const T*>(q.x);
  T* y = static_cast<T*>(q.y);
  const auto launch = [&](auto has_scale, auto has_bias) {
    constexpr bool s = decltype(has_scale)::value, b = decltype(has_bias)::value;
    if (pair) {
      norm_rows_forward_warp_pair<T, V, Rms, s, b>
          <<<blocks, warp_row_threads, 0, ctx.stream()>>>(x, y, g, q.scale, q.bias, q.mean_out, q.inv_out);
    } else {
      norm_rows_forward_warp<T, V, Rms, s, b>
          <<<blocks, warp_row_threads, 0, ctx.stream()>>>(x, y, g, q.scale, q.bias, q.mean_out, q.inv_out);
    }
  };
  using yes = std::true_type;
  using no = std::false_type;
  if (q.scale && q.bias) {
    launch(yes{}, yes{});
  } else if (q.scale) {
    launch(yes{}, no{});
  } else if (q.bias) {
    launch(no{}, yes{});
  } else {
    launch(no{}, no{});
  }
}

template <typename T, bool Rms>
void run_rows(cuda_context& ctx, const norm_desc& d, const norm_pointers& q, const norm_workspace_plan& w,
              void* workspace) {
  rows_params g{};
  g.outer = make_dim_walker<norm_slots>(*d.x, 0, d.axis, d.data);
  g.rows = d.rows;
  g.inner = static_cast<int32_t>(d.inner);
  g.tpr = threads_per_row(d.inner);
  g.params_vec = norm_aligned(q.scale, 16) && norm_aligned(q.bias, 16) ? 1 : 0;
  g.epsilon = static_cast<float>(d.epsilon);
  const dim3 block(g.tpr, rows_per_block(g.tpr));
  const int64_t row_groups = norm_ceil_div(d.rows, block.y);
  const int sms = std::max(ctx.sm_count(), 1);
  const void* data[norm_slots] = {q.x, d.backward ? q.dy : q.y, q.dx};
  const auto fits = [&](int v) {
    if (d.inner % v != 0) return false;
    for (const void* p : data)
      if (!norm_aligned(p, static_cast<size_t>(v) * sizeof(T))) return false;
    for (int i = 0; i < g.outer.ndims; ++i)
      for (int s = 0; s < norm_slots; ++s)
        if (g.outer.strides[s][i] % v != 0) return false;
    return true;
  };
  // Rows kernels use 16 bytes or single elements: 16 elements per thread either way.
  const auto launch = [&](auto width) {
    constexpr int V = decltype(width)::value;
    if (!d.backward) {
      if constexpr (V == norm_max_vector<T>) {
        // A warp per row when the row fills 1 to 4 vectors per lane.
        if (d.inner >= 32 * V && d.inner <= 32 * warp_row_elements) {
          launch_rows_forward_warp<T, V, Rms>(ctx, g, q);
          return;
        }
      }
      const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>(row_groups, int64_t{sms} * 16));
      norm_rows_forward<T, V, Rms><<<blocks, block, 0, ctx.stream()>>>(static_cast<const T*>(q.x), static_cast<T*>(q.y), g,
                                                                     q.scale, q.bias, q.mean_out, q.inv_out);
      return;
    }
    const bool grads = q.dscale || q.dbias;
    const int64_t blocks =
        grads ? std::min({w.parts_cap, row_groups, int64_t{sms} * 2}) : std::min<int64_t>(row_groups, int64_t{sms} * 16);
    norm_rows_backward<T, V, Rms><<<static_cast<unsigned int>(blocks), block, 0, ctx.stream()>>>(
        static_cast<const T*>(q.x), static_cast<const T*>(q.dy), static_cast<T*>(q.dx), g, q.scale, q.saved_mean,
        q.saved_inv, q.dscale ? norm_workspace_floats(workspace, w.part_ds) : nullptr,
        q.dbias ? norm_workspace_floats(workspace, w.part_db) : nullptr);
    fold_param_grads(ctx, d, q, w, workspace, blocks);
  };
  if (fits(norm_max_vector<T>)) {
    launch(std::integral_constant<int, norm_max_vector<T>>{});
  } else {
    launch(std::integral_constant<int, 1>{});
  }
}

template <typename T, bool Rms>
void run_strided(cuda_context& ctx, const norm_desc& d, const norm_pointers& q, const norm_workspace_plan& w,
                 void* workspace) {
  strided_params g{};
  g.outer = make_dim_walker<norm_slots>(*d.x, 0, d.axis, d.data);
  g.inner = make_dim_walker<norm_slots>(*d.x, d.axis, d.x->ndims, d.data);
  g.rows = d.rows;
  g.inner_size = d.inner;
  g.epsilon = static_cast<float>(d.epsilon);
  const int sms = std::max(ctx.sm_count(), 1);
  const unsigned int row_blocks = static_cast<unsigned int>(std::min<int64_t>(d.rows, int64_t{sms} * 8));
  if (!d.backward) {
    norm_strided_forward<T, Rms><<<row_blocks, strided_threads, 0, ctx.stream()>>>(
        static_cast<const T*>(q.x), static_cast<T*>(q.y), g, q.scale, q.bias, q.mean_out, q.inv_out);
    return;
  }
  const bool grads = q.dscale || q.dbias;
  float* inv_keep = Rms && q.saved_inv == nullptr && grads ? norm_workspace_floats(workspace, w.inv_keep) : nullptr;
  norm_strided_backward<T, Rms><<<row_blocks, strided_threads, 0, ctx.stream()>>>(
      static_cast<const T*>(q.x), static_cast<const T*>(q.dy), static_cast<T*>(q.dx), g, q.scale, q.saved_mean,
      q.saved_inv, inv_keep);
  if (!grads) return;
  const int64_t tiles = norm_ceil_div(d.inner, strided_threads);
  const int64_t wanted = norm_ceil_div(int64_t{sms} * 2048, d.inner);
  int64_t parts = std::max<int64_t>(1, std::min(w.parts_cap, wanted));
  const int64_t len = norm_ceil_div(d.rows, parts);
  parts = norm_ceil_div(d.rows, len);
  const dim3 grid(static_cast<unsigned int>(tiles), static_cast<unsigned int>(parts));
  norm_strided_param_partials<T><<<grid, strided_threads, 0, ctx.stream()>>>(
      static_cast<const T*>(q.x), static_cast<const T*>(q.dy), g, Rms ? nullptr : q.saved_mean,
      inv_keep ? inv_keep : q.saved_inv, len, norm_workspace_floats(workspace, w.part_ds), norm_workspace_floats(workspace, w.part_db));
  fold_param_grads(ctx, d, q, w, workspace, parts);
}

// ---- traits ------------------------------------------------------------------------------------

constexpr const char* norm_names[2][2][2] = {
    // [rms][backward][strided]
    {{"lnorm_fwd_rows_vec", "lnorm_fwd_strided"}, {"lnorm_bwd_rows_vec", "lnorm_bwd_strided"}},
    {{"rms_norm_fwd_rows_vec", "rms_norm_fwd_strided"}, {"rms_norm_bwd_rows_vec", "rms_norm_bwd_strided"}}};

constexpr int32_t norm_operations[2][2] = {{TSRP_OP_LAYER_NORM_FORWARD, TSRP_OP_LAYER_NORM_BACKWARD},
                                           {TSRP_OP_RMS_NORM_FORWARD, TSRP_OP_RMS_NORM_BACKWARD}};

constexpr const char* norm_notes[2] = {
    "Row-major normalized dims (leading dims any strides), rows up to 8192 elements: the row is "
    "read once into registers (16-byte vectors when the row length and alignment allow), fp32 "
    "exact two-pass statistics, fixed-shape warp/shared-memory reductions. Backward dscale/dbias: "
    "per-thread fp32 accumulation across rows, per-block partials folded in a fixed order. "
    "Deterministic on a given GPU.",
    "Any strides, any row length: a block per row with per-element index arithmetic, fp32 "
    "statistics with fixed-order block reductions; dscale/dbias by a column kernel over fixed row "
    "partitions folded in a fixed order. Deterministic on a given GPU."};

template <bool Rms, bool Backward, bool Strided>
struct norm_traits {
  using problem_type = std::conditional_t<Rms, tsrpRmsNormProblem, tsrpLayerNormProblem>;
  using args_type = std::conditional_t<Rms, tsrpRmsNormArgs, tsrpLayerNormArgs>;
  static constexpr const char* name = norm_names[Rms][Backward][Strided];
  static constexpr int32_t operation = norm_operations[Rms][Backward];
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = norm_notes[Strided];

  static std::string support(const problem_type& p) {
    const norm_desc d = describe(p, Backward);
    if (std::string why = common_support(d); !why.empty()) return why;
    if constexpr (!Rms && Backward) {
      if (p.has_dscale && !p.has_scale) return "dscale asked for without a scale";
    }
    if constexpr (!Strided) return rows_support(d, norm_names[Rms][Backward][1]);
    return {};
  }
  static size_t workspace(const problem_type& p) { return workspace_plan(describe(p, Backward), !Strided).bytes; }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    const norm_desc d = describe(p, Backward);
    const norm_pointers q = pointers_of(p, a, Backward);
    const norm_workspace_plan w = workspace_plan(d, !Strided);
    if (w.bytes > 0 && !norm_aligned(workspace, alignof(float)))
      throw status_error(TSRP_STATUS_BAD_PARAM, "workspace is not aligned to 4 bytes");
    dispatch_storage_type(p.x.data_type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Strided) {
        run_strided<T, Rms>(ctx, d, q, w, workspace);
      } else {
        run_rows<T, Rms>(ctx, d, q, w, workspace);
      }
    });
  }
};

template <bool Rms, bool Backward>
void add_op(kernel_list& out) {
  out.push_back(make_kernel<norm_traits<Rms, Backward, false>>());
  out.push_back(make_kernel<norm_traits<Rms, Backward, true>>());
}

}  // namespace

void add_layer_norm_kernels(kernel_list& out) {
  add_op<false, false>(out);
  add_op<false, true>(out);
  add_op<true, false>(out);
  add_op<true, true>(out);
}

}  // namespace tessera::cuda
