// The engine's general GEMM: CUDA-core FMA on shared-memory tiles, any strides (transposes,
// padded or overlapping-free views, broadcast batches), every input type. The exact path: fp32
// inputs multiply-add in fp32 (one FFMA per product, fixed k order), s8 inputs in int32, fp16 and
// bf16 are widened to fp32 on load (used for layouts the tensor-core loader cannot take at all;
// it takes any stride, so in practice only when a caller asks for this kernel).
//
// Tiling: a BM x BN block tile, 256 threads each owning a (BM/16) x (BN/16) micro-tile split in
// two halves per dimension (rows ty*TM/2.. and BM/2 + ty*TM/2..), so a warp's shared-memory
// reads are broadcasts (A) or one contiguous 256-byte row (B). k advances 8 at a time through
// two shared buffers; the next tile's global loads are in flight while the current one is
// multiplied. Global loads walk whichever of the tile's two dims has unit stride in memory, so
// row- and column-major operands are both coalesced; the shared layout is the same either way
// (k-major rows of BM + 4 values: the padding makes both walks bank-conflict free).
//
// Throughput: the 128 x 128 tile does 64 FMA per 4 shared 16-byte loads per thread; expect
// roughly 60-70 % of the H200's ~67 TFLOP/s fp32 peak on large problems (compute bound).
#pragma once

#include "element_types.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_kernel_params.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tessera::cuda::gemm {

constexpr int simt_threads = 256;
constexpr int simt_tile_k = 8;

template <typename Acc, typename In>
__device__ __forceinline__ Acc widen(In v) {
  if constexpr (std::is_same_v<Acc, int32_t>) {
    return static_cast<int32_t>(v);
  } else {
    return to_float(v);
  }
}

template <typename Acc>
__device__ __forceinline__ Acc from_bits(int bits) {
  if constexpr (std::is_same_v<Acc, int32_t>) {
    return bits;
  } else {
    return __int_as_float(bits);
  }
}

// Reads `Count` consecutive accumulator-typed values from shared memory as vectors.
template <int Count, typename Acc>
__device__ __forceinline__ void load_shared_run(const Acc* from, Acc* to) {
  static_assert(sizeof(Acc) == 4, "32-bit accumulators");
  if constexpr (Count % 4 == 0) {
#pragma unroll
    for (int v = 0; v < Count / 4; ++v) {
      const int4 raw = reinterpret_cast<const int4*>(from)[v];
      to[4 * v + 0] = from_bits<Acc>(raw.x);
      to[4 * v + 1] = from_bits<Acc>(raw.y);
      to[4 * v + 2] = from_bits<Acc>(raw.z);
      to[4 * v + 3] = from_bits<Acc>(raw.w);
    }
  } else {
    static_assert(Count % 2 == 0, "micro-tile halves are even");
#pragma unroll
    for (int v = 0; v < Count / 2; ++v) {
      const int2 raw = reinterpret_cast<const int2*>(from)[v];
      to[2 * v + 0] = from_bits<Acc>(raw.x);
      to[2 * v + 1] = from_bits<Acc>(raw.y);
    }
  }
}

template <typename In, typename Acc, int BM, int BN>
__global__ void __launch_bounds__(simt_threads) gemm_simt_kernel(const kernel_params p) {
  constexpr int BK = simt_tile_k;
  constexpr int TM = BM / 16, TN = BN / 16;
  constexpr int A_PER_THREAD = BM * BK / simt_threads, B_PER_THREAD = BN * BK / simt_threads;
  constexpr int PAD = 4;
  static_assert(A_PER_THREAD >= 1 && B_PER_THREAD >= 1 && TM % 2 == 0 && TN % 2 == 0, "tile too small");
  // 16-byte aligned rows for the vector reads; k-major so one k step is a contiguous row.
  __shared__ __align__(16) Acc a_tile[2][BK][BM + PAD];
  __shared__ __align__(16) Acc b_tile[2][BK][BN + PAD];

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  int32_t tile_m, tile_n;
  tile_of_block(p.tiles_m, p.tiles_n, tile_m, tile_n);
  const int32_t m0 = tile_m * BM, n0 = tile_n * BN;
  // Walk k in the global loads when A's rows (B's columns) are not the contiguous direction.
  const bool a_walk_k = p.a_col_stride == 1 || p.a_row_stride != 1;
  const bool b_walk_n = p.b_col_stride == 1 || p.b_row_stride != 1;
  const int ktiles = (p.k + BK - 1) / BK;

  for (int64_t batch = blockIdx.z; batch < p.batch.count; batch += gridDim.z) {
    const batch_offsets o = offsets_of_batch(p.batch, batch);
    const In* a = static_cast<const In*>(p.a) + o.a;
    const In* b = static_cast<const In*>(p.b) + o.b;

    Acc acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);

    Acc a_next[A_PER_THREAD], b_next[B_PER_THREAD];
    // Position of this thread's e-th element in the tile, for the walk chosen above.
    const auto a_pos = [&](int e, int& mm, int& kk) {
      const int flat = tid + e * simt_threads;
      mm = a_walk_k ? flat / BK : flat % BM;
      kk = a_walk_k ? flat % BK : flat / BM;
    };
    const auto b_pos = [&](int e, int& nn, int& kk) {
      const int flat = tid + e * simt_threads;
      nn = b_walk_n ? flat % BN : flat / BK;
      kk = b_walk_n ? flat / BN : flat % BK;
    };
    const auto fetch = [&](int k0) {
#pragma unroll
      for (int e = 0; e < A_PER_THREAD; ++e) {
        int mm, kk;
        a_pos(e, mm, kk);
        const int32_t gm = m0 + mm, gk = k0 + kk;
        a_next[e] = (gm < p.m && gk < p.k) ? widen<Acc>(a[gm * p.a_row_stride + gk * p.a_col_stride]) : Acc(0);
      }
#pragma unroll
      for (int e = 0; e < B_PER_THREAD; ++e) {
        int nn, kk;
        b_pos(e, nn, kk);
        const int32_t gn = n0 + nn, gk = k0 + kk;
        b_next[e] = (gn < p.n && gk < p.k) ? widen<Acc>(b[gk * p.b_row_stride + gn * p.b_col_stride]) : Acc(0);
      }
    };
    const auto stash = [&](int buffer) {
#pragma unroll
      for (int e = 0; e < A_PER_THREAD; ++e) {
        int mm, kk;
        a_pos(e, mm, kk);
        a_tile[buffer][kk][mm] = a_next[e];
      }
#pragma unroll
      for (int e = 0; e < B_PER_THREAD; ++e) {
        int nn, kk;
        b_pos(e, nn, kk);
        b_tile[buffer][kk][nn] = b_next[e];
      }
    };

    if (ktiles > 0) {
      fetch(0);
      stash(0);
      __syncthreads();
    }
    for (int kt = 0; kt < ktiles; ++kt) {
      const int buffer = kt & 1;
      const bool more = kt + 1 < ktiles;
      if (more) fetch((kt + 1) * BK);
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        Acc af[TM], bf[TN];
        load_shared_run<TM / 2>(&a_tile[buffer][kk][ty * (TM / 2)], af);
        load_shared_run<TM / 2>(&a_tile[buffer][kk][BM / 2 + ty * (TM / 2)], af + TM / 2);
        load_shared_run<TN / 2>(&b_tile[buffer][kk][tx * (TN / 2)], bf);
        load_shared_run<TN / 2>(&b_tile[buffer][kk][BN / 2 + tx * (TN / 2)], bf + TN / 2);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += af[i] * bf[j];
      }
      // The other buffer was last read before the barrier that ended the previous step.
      if (more) stash(buffer ^ 1);
      __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int32_t row = m0 + (i < TM / 2 ? ty * (TM / 2) + i : BM / 2 + ty * (TM / 2) + (i - TM / 2));
#pragma unroll
      for (int j = 0; j < TN; j += 2) {
        const int32_t col = n0 + (j < TN / 2 ? tx * (TN / 2) + j : BN / 2 + tx * (TN / 2) + (j - TN / 2));
        store_two<Acc>(p.epilogue, o, p.m, p.n, row, col, acc[i][j], acc[i][j + 1]);
      }
    }
  }
}

}  // namespace tessera::cuda::gemm
