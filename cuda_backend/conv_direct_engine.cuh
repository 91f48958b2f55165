// The one loop nest behind every direct convolution kernel of this family. Each direction of the
// convolution (forward, backward data, backward filter) is, per group, a product
//     out[m][n] = sum over r of A(m, r) * B(r, n)
// whose operands are gathered from the tensors through index decoders (an implicit GEMM); only
// what A, B, m, n and r mean differs. A direction supplies an "Ops" value:
//
//   using acc_type = float or int32_t;              // the accumulator (fp32, or s32 for int8)
//   int32_t groups, rows, cols, depth;              // per group: m < rows, n < cols, r < depth
//   row_type row(int32_t g, int32_t m) const;       // what A needs of m (decoded once per block)
//   col_type col(int32_t g, int32_t n) const;       // what B needs of n
//   red_type red(int32_t g, int32_t r) const;       // what both need of r
//   acc_type load_a(const row_type&, const red_type&) const;  // 0 where the gather leaves the tensor
//   acc_type load_b(const red_type&, const col_type&) const;
//   void store(int32_t g, int32_t m, int32_t n, acc_type acc) const;  // the epilogue
//
// Two loop nests run it:
//  - gemm_tiled: 64 x 64 output tiles, the operands staged through shared memory 16 reduction
//    steps at a time (double-buffered, one barrier per step, the next step's global loads in
//    flight while the current one is multiplied), 4 x 4 outputs per thread. For groups whose
//    rows and columns both reach 16.
//  - gemm_lanes: one output per `Lanes` threads (1, 8 or 32, by reduction length) that stride the
//    reduction and combine by a fixed shuffle tree. For narrow groups (depthwise and the like),
//    where a 64 x 64 tile would mostly idle.
// Both sum every output in an order fixed by the problem alone, and a long reduction may be split
// into a fixed number of chunks whose partial sums go to the workspace and are added in chunk order
// by gemm_finalize: no atomics anywhere, so results are bitwise reproducible.
#pragma once

#include "conv_direct_geometry.cuh"
#include "cuda_context.hpp"
#include "cuda_errors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace tessera::cuda::conv_direct {

// Loaded values in the accumulator's type.
__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ int32_t widen(int8_t v) { return v; }

template <typename T>
struct accumulator_of {
  using type = float;
};
template <>
struct accumulator_of<int8_t> {
  using type = int32_t;
};

constexpr int tile_m = 64;
constexpr int tile_n = 64;
constexpr int tile_k = 16;
constexpr int thread_m = 4;
constexpr int thread_n = 4;
constexpr int tile_threads = (tile_m / thread_m) * (tile_n / thread_n);
// Rows of the staged tiles are padded so that the transposing stores of a layout whose reduction
// index is fastest spread over banks; 4 keeps every row 16-byte aligned for the vector reads.
constexpr int tile_pad = 4;
constexpr int a_loads = tile_m * tile_k / tile_threads;
constexpr int b_loads = tile_n * tile_k / tile_threads;
static_assert(tile_m * tile_k % tile_threads == 0 && tile_n * tile_k % tile_threads == 0, "whole loads per thread");
static_assert(thread_m == 4 && thread_n == 4, "the fragment reads are one 16-byte access each");

constexpr int lanes_threads = 256;

// Which index runs fastest across the threads that load a tile: m (or n) when the operand is
// contiguous along it, else r. Only coalescing depends on it.
struct tile_flags {
  bool a_rows_fast;
  bool b_cols_fast;
};

__device__ __forceinline__ void read4(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ __forceinline__ void read4(const int32_t* p, int32_t (&v)[4]) {
  const int4 q = *reinterpret_cast<const int4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

// Where output (g, m, n) of split `split` keeps its partial sum.
__device__ __forceinline__ int64_t partial_index(int32_t split, int64_t outputs, int32_t g, int32_t m, int32_t n,
                                                 int32_t rows, int32_t cols) {
  return split * outputs + (static_cast<int64_t>(g) * rows + m) * cols + n;
}

// grid: x = row tiles, y = column tiles, z = groups * splits (group fastest).
template <class Ops>
__global__ void __launch_bounds__(tile_threads)
    gemm_tiled(const Ops ops, int32_t chunk, typename Ops::acc_type* partials, tile_flags flags) {
  using Acc = typename Ops::acc_type;
  __shared__ __align__(16) Acc a_tile[2][tile_k][tile_m + tile_pad];
  __shared__ __align__(16) Acc b_tile[2][tile_k][tile_n + tile_pad];

  const int t = threadIdx.x;
  const int32_t group = blockIdx.z % ops.groups;
  const int32_t split = blockIdx.z / ops.groups;
  const int32_t m0 = blockIdx.x * tile_m;
  const int32_t n0 = blockIdx.y * tile_n;
  const int32_t r_begin = split * chunk;
  const int32_t r_end = static_cast<int32_t>(min(static_cast<int64_t>(ops.depth), static_cast<int64_t>(r_begin) + chunk));

  // Each thread loads the same tile positions at every step, so what depends on m or n alone is
  // decoded once here.
  int a_m[a_loads], a_r[a_loads];
  bool a_ok[a_loads];
  typename Ops::row_type rows[a_loads];
#pragma unroll
  for (int j = 0; j < a_loads; ++j) {
    const int idx = t + j * tile_threads;
    a_m[j] = flags.a_rows_fast ? idx % tile_m : idx / tile_k;
    a_r[j] = flags.a_rows_fast ? idx / tile_m : idx % tile_k;
    a_ok[j] = m0 + a_m[j] < ops.rows;
    rows[j] = ops.row(group, a_ok[j] ? m0 + a_m[j] : 0);
  }
  int b_n[b_loads], b_r[b_loads];
  bool b_ok[b_loads];
  typename Ops::col_type cols[b_loads];
#pragma unroll
  for (int j = 0; j < b_loads; ++j) {
    const int idx = t + j * tile_threads;
    b_n[j] = flags.b_cols_fast ? idx % tile_n : idx / tile_k;
    b_r[j] = flags.b_cols_fast ? idx / tile_n : idx % tile_k;
    b_ok[j] = n0 + b_n[j] < ops.cols;
    cols[j] = ops.col(group, b_ok[j] ? n0 + b_n[j] : 0);
  }

  Acc a_next[a_loads], b_next[b_loads];
  auto fetch = [&](int32_t k0) {
#pragma unroll
    for (int j = 0; j < a_loads; ++j) {
      const int32_t r = k0 + a_r[j];
      a_next[j] = (a_ok[j] && r < r_end) ? ops.load_a(rows[j], ops.red(group, r)) : Acc(0);
    }
#pragma unroll
    for (int j = 0; j < b_loads; ++j) {
      const int32_t r = k0 + b_r[j];
      b_next[j] = (b_ok[j] && r < r_end) ? ops.load_b(ops.red(group, r), cols[j]) : Acc(0);
    }
  };

  Acc acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = Acc(0);
  }
  const int32_t steps = r_end > r_begin ? (r_end - r_begin + tile_k - 1) / tile_k : 0;
  if (steps > 0) fetch(r_begin);
  const int tr = t / (tile_n / thread_n);
  const int tc = t % (tile_n / thread_n);
  for (int32_t s = 0; s < steps; ++s) {
    // Buffer s & 1 was last read in step s - 2; every thread has since passed step s - 1's
    // barrier, so one barrier per step is enough.
    const int buf = s & 1;
#pragma unroll
    for (int j = 0; j < a_loads; ++j) a_tile[buf][a_r[j]][a_m[j]] = a_next[j];
#pragma unroll
    for (int j = 0; j < b_loads; ++j) b_tile[buf][b_r[j]][b_n[j]] = b_next[j];
    __syncthreads();
    if (s + 1 < steps) fetch(r_begin + (s + 1) * tile_k);
#pragma unroll
    for (int kk = 0; kk < tile_k; ++kk) {
      Acc af[thread_m], bf[thread_n];
      read4(&a_tile[buf][kk][tr * thread_m], af);
      read4(&b_tile[buf][kk][tc * thread_n], bf);
#pragma unroll
      for (int i = 0; i < thread_m; ++i) {
#pragma unroll
        for (int j = 0; j < thread_n; ++j) acc[i][j] += af[i] * bf[j];
      }
    }
  }

  const int64_t outputs = static_cast<int64_t>(ops.groups) * ops.rows * ops.cols;
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const int32_t m = m0 + tr * thread_m + i;
    if (m >= ops.rows) continue;
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      const int32_t n = n0 + tc * thread_n + j;
      if (n >= ops.cols) continue;
      if (partials != nullptr) {
        partials[partial_index(split, outputs, group, m, n, ops.rows, ops.cols)] = acc[i][j];
      } else {
        ops.store(group, m, n, acc[i][j]);
      }
    }
  }
}

// grid: x = a grid-stride over outputs, y = splits. Outputs are numbered with m fastest or n
// fastest, whichever is contiguous in the output tensor, so that neighbouring lane groups store
// (and mostly load) neighbouring elements.
template <class Ops, int Lanes>
__global__ void __launch_bounds__(lanes_threads)
    gemm_lanes(const Ops ops, int32_t chunk, typename Ops::acc_type* partials, fast_divmod rows_div,
               fast_divmod cols_div, bool m_fastest) {
  using Acc = typename Ops::acc_type;
  const int32_t split = blockIdx.y;
  const int32_t r_begin = split * chunk;
  const int32_t r_end = static_cast<int32_t>(min(static_cast<int64_t>(ops.depth), static_cast<int64_t>(r_begin) + chunk));
  const int64_t outputs = static_cast<int64_t>(ops.groups) * ops.rows * ops.cols;
  const int lane = threadIdx.x % Lanes;
  // A lane group is Lanes consecutive threads of one warp; only they take part in its shuffles.
  const unsigned mask = Lanes == 32 ? 0xffffffffu : ((1u << Lanes) - 1u) << (threadIdx.x % 32 / Lanes * Lanes);
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / Lanes;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x / Lanes;
  for (int64_t item = first; item < outputs; item += step) {
    int32_t group, m, n, rest;
    if (m_fastest) {  // item = (group * cols + n) * rows + m
      rows_div.divmod(static_cast<int32_t>(item), rest, m);
      cols_div.divmod(rest, group, n);
    } else {  // item = (group * rows + m) * cols + n
      cols_div.divmod(static_cast<int32_t>(item), rest, n);
      rows_div.divmod(rest, group, m);
    }
    const typename Ops::row_type row = ops.row(group, m);
    const typename Ops::col_type col = ops.col(group, n);
    Acc acc = Acc(0);
    for (int32_t r = r_begin + lane; r < r_end; r += Lanes) {
      const typename Ops::red_type red = ops.red(group, r);
      acc += ops.load_a(row, red) * ops.load_b(red, col);
    }
    if constexpr (Lanes > 1) {
#pragma unroll
      for (int offset = Lanes / 2; offset > 0; offset /= 2) acc += __shfl_down_sync(mask, acc, offset, Lanes);
    }
    if (lane == 0) {
      if (partials != nullptr) {
        partials[partial_index(split, outputs, group, m, n, ops.rows, ops.cols)] = acc;
      } else {
        ops.store(group, m, n, acc);
      }
    }
  }
}

// The split partial sums of every output, added in split order, then the epilogue.
template <class Ops>
__global__ void __launch_bounds__(lanes_threads)
    gemm_finalize(const Ops ops, const typename Ops::acc_type* partials, int32_t splits, fast_divmod rows_div,
                  fast_divmod cols_div) {
  using Acc = typename Ops::acc_type;
  const int64_t outputs = static_cast<int64_t>(ops.groups) * ops.rows * ops.cols;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = first; e < outputs; e += step) {
    Acc sum = partials[e];
    for (int32_t s = 1; s < splits; ++s) sum += partials[s * outputs + e];
    int32_t group, m, n, rest;
    cols_div.divmod(static_cast<int32_t>(e), rest, n);
    rows_div.divmod(rest, group, m);
    ops.store(group, m, n, sum);
  }
}

// ---- host side ---------------------------------------------------------------------------------

// How a problem is run: which loop nest, and how its reduction is split. A pure function of the
// problem's sizes (never of the device), so that the workspace query and the run agree and the
// summation order is the same on every GPU.
struct gemm_plan {
  bool tiled = false;
  int lanes = 1;
  int32_t splits = 1;
  int32_t chunk = 0;  // reduction indices per split
  int64_t outputs = 0;
};

// Enough threads to fill a large GPU several times over: the split stops there.
constexpr int64_t split_target_threads = int64_t{1024} * 256;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// rows, cols, depth are per group; `may_split` only where the epilogue can run from the
// workspace (a split output is a sum of partials).
inline gemm_plan plan_gemm(int64_t groups, int64_t rows, int64_t cols, int64_t depth, bool may_split) {
  gemm_plan plan;
  plan.outputs = groups * rows * cols;
  const int64_t tiles_m = ceil_div(rows, tile_m), tiles_n = ceil_div(cols, tile_n);
  plan.tiled = rows >= 16 && cols >= 16 && tiles_n <= 65535 && groups <= 65535;
  int64_t splits = 1;
  int64_t granule = 1;
  if (plan.tiled) {
    granule = tile_k;
    if (may_split) {
      const int64_t blocks = tiles_m * tiles_n * groups;
      const int64_t wanted = ceil_div(split_target_threads / tile_threads, blocks);
      const int64_t longest = std::max<int64_t>(1, depth / (tile_k * 8));  // at least 8 steps per split
      splits = std::clamp<int64_t>(std::min(wanted, longest), 1, 65535 / groups);
    }
  } else {
    plan.lanes = depth < 64 ? 1 : depth < 512 ? 8 : 32;
    if (may_split) {
      const int64_t wanted = ceil_div(split_target_threads, std::max<int64_t>(1, plan.outputs * plan.lanes));
      const int64_t longest = std::max<int64_t>(1, depth / (plan.lanes * 16));
      splits = std::clamp<int64_t>(std::min(wanted, longest), 1, 65535);
    }
  }
  if (depth == 0) {
    plan.splits = 1;
    plan.chunk = 0;
    return plan;
  }
  const int64_t chunk = ceil_div(ceil_div(depth, splits), granule) * granule;
  plan.chunk = static_cast<int32_t>(chunk);
  plan.splits = static_cast<int32_t>(ceil_div(depth, chunk));  // no empty split
  return plan;
}

template <typename Acc>
size_t plan_workspace(const gemm_plan& plan) {
  return plan.splits > 1 ? static_cast<size_t>(plan.splits) * static_cast<size_t>(plan.outputs) * sizeof(Acc) : 0;
}

// Enqueues the plan on the context's stream. `workspace` holds plan_workspace bytes (or is unused).
template <class Ops>
void launch_gemm(const Ops& ops, const gemm_plan& plan, tile_flags flags, bool m_fastest, void* workspace,
                 const cuda_context& ctx) {
  using Acc = typename Ops::acc_type;
  if (plan.outputs == 0) return;
  Acc* partials = nullptr;
  if (plan.splits > 1) {
    if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % alignof(Acc) != 0) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "the workspace is null or not aligned to " +
                                                    std::to_string(alignof(Acc)) + " bytes");
    }
    partials = static_cast<Acc*>(workspace);
  }
  const cudaStream_t stream = ctx.stream();
  const fast_divmod rows_div(ops.rows), cols_div(ops.cols);
  if (plan.tiled) {
    const dim3 grid(static_cast<unsigned>(ceil_div(ops.rows, tile_m)), static_cast<unsigned>(ceil_div(ops.cols, tile_n)),
                    static_cast<unsigned>(ops.groups * plan.splits));
    gemm_tiled<Ops><<<grid, tile_threads, 0, stream>>>(ops, plan.chunk, partials, flags);
  } else {
    const dim3 grid(ctx.grid_stride_blocks(plan.outputs * plan.lanes, lanes_threads), static_cast<unsigned>(plan.splits));
    switch (plan.lanes) {
      case 1:
        gemm_lanes<Ops, 1><<<grid, lanes_threads, 0, stream>>>(ops, plan.chunk, partials, rows_div, cols_div, m_fastest);
        break;
      case 8:
        gemm_lanes<Ops, 8><<<grid, lanes_threads, 0, stream>>>(ops, plan.chunk, partials, rows_div, cols_div, m_fastest);
        break;
      default:
        gemm_lanes<Ops, 32><<<grid, lanes_threads, 0, stream>>>(ops, plan.chunk, partials, rows_div, cols_div, m_fastest);
        break;
    }
  }
  if (partials != nullptr) {
    gemm_finalize<Ops><<<ctx.grid_stride_blocks(plan.outputs, lanes_threads), lanes_threads, 0, stream>>>(
        ops, partials, plan.splits, rows_div, cols_div);
  }
}

}  // namespace tessera::cuda::conv_direct
