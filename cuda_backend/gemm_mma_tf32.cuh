// The engine's tensor-core GEMM for fp32 operands under TF32 (the handle's math mode allows it):
// mma.sync.m16n8k8 .tf32 with fp32 accumulators, the epilogue of gemm_epilogue.cuh after the
// mainloop (store_accumulators, shared with the fp16/bf16 kernel).
//
// Why its own kernel and not gemm_mma_kernel with a fourth type: that kernel's shared tiles and
// ldmatrix fragments are 16-bit ones (an 8x8 b16 matrix per ldmatrix, and the .trans form its
// mn-major operands need has no 32-bit counterpart). Here both operands are staged as rows along
// M (A) or N (B) with K contiguous, TF32-rounded once when stored (cvt.rna), 4 floats of padding a
// row: the m16n8k8 fragments are then plain 32-bit shared loads (gemm_tf32_layout.hpp, whose
// index functions the host test runs block by block against a naive GEMM).
// Loading is the register-staged kind of the fp16 kernel's generic path, for any strides: each
// thread holds its share of the next K tile in registers during the current tile's mma, walking
// the operand's smaller stride so that global loads coalesce as far as they can. No cp.async
// ring: a first form, kept simple until the H200 says where its time goes.
// Accumulation: each C element is one thread's fixed-order sum (no split-k): bitwise
// reproducible run to run.
#pragma once

#include "gemm_epilogue.cuh"
#include "gemm_kernel_params.cuh"
#include "gemm_mma_ptx.cuh"
#include "gemm_mma_sync.cuh"
#include "gemm_tf32_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::gemm {

// One operand tile as a loader sees it: Rows along M (A) or N (B) by tf32_tile_k along K;
// element (mn, p) of the operand at base[mn * mn_stride + p * k_stride]. WalkK: consecutive
// threads take consecutive k (the operand's K stride is its smaller one), else consecutive mn.
template <int Rows, int Threads, bool WalkK>
struct tf32_tile_loader {
  static constexpr int per_thread = Rows * tf32_tile_k / Threads;
  static_assert(per_thread * Threads == Rows * tf32_tile_k, "whole elements per thread");

  const float* base;
  int64_t mn_stride, k_stride;
  int32_t extent, k, mn0;
  float staged[per_thread];

  __device__ __forceinline__ static void position(int e, int& mn, int& p) {
    tf32_stage_position<Rows, Threads, WalkK>(static_cast<int>(threadIdx.x), e, mn, p);
  }

  // Elements past the matrix's edge (M/N or K) are zero: they add nothing to any sum.
  __device__ __forceinline__ void fetch(int32_t k0) {
#pragma unroll
    for (int e = 0; e < per_thread; ++e) {
      int mn, p;
      position(e, mn, p);
      const int32_t gm = mn0 + mn, gk = k0 + p;
      staged[e] = (gm < extent && gk < k) ? base[gm * mn_stride + gk * k_stride] : 0.0f;
    }
  }

  __device__ __forceinline__ void stash(uint32_t* tile) const {
#pragma unroll
    for (int e = 0; e < per_thread; ++e) {
      int mn, p;
      position(e, mn, p);
      tile[tf32_stage_word(mn, p)] = to_tf32(staged[e]);
    }
  }
};

template <typename Config>
constexpr int tf32_shared_bytes() {
  const int pipeline = 2 * (Config::block_m + Config::block_n) * tf32_pitch * static_cast<int>(sizeof(uint32_t));
  const int c_tile = Config::block_m * mma_c_tile_pitch<Config>() * static_cast<int>(sizeof(float));
  return pipeline > c_tile ? pipeline : c_tile;
}

template <typename Config, bool AWalkK, bool BWalkK>
__global__ void __launch_bounds__(Config::threads) gemm_tf32_kernel(const kernel_params p) {
  constexpr int BM = Config::block_m, BN = Config::block_n, BK = tf32_tile_k;
  constexpr int MI = Config::mma_m, NI = Config::mma_n;
  constexpr int a_words = BM * tf32_pitch, b_words = BN * tf32_pitch;

  extern __shared__ __align__(128) unsigned char shared_raw[];
  uint32_t* const a_tiles = reinterpret_cast<uint32_t*>(shared_raw);  // two buffers each
  uint32_t* const b_tiles = a_tiles + 2 * a_words;

  const mma_block_tile t = mma_block_tile_of<Config, BK>(p);

  float acc[MI][NI][4];
  const auto multiply = [&](const uint32_t* a_tile, const uint32_t* b_tile) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      uint32_t af[MI][4];
      uint32_t bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int r = 0; r < 4; ++r) af[mi][r] = a_tile[tf32_a_fragment_word(t.warp_row + mi * 16, kk, t.lane, r)];
#pragma unroll
      for (int ni = 0; ni < NI; ++ni)
#pragma unroll
        for (int r = 0; r < 2; ++r) bf[ni][r] = b_tile[tf32_b_fragment_word(t.warp_col + ni * 8, kk, t.lane, r)];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) mma_1688_tf32(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  };

  for (int64_t batch = blockIdx.z; batch < p.batch.count; batch += gridDim.z) {
    const batch_offsets o = offsets_of_batch(p.batch, batch);
    clear_accumulators<Config>(acc);

    // A's rows run along M, B's along N (its columns): each loader's mn stride is that one.
    // (staged is filled by the mainloop's first fetch before anything reads it.)
    tf32_tile_loader<BM, Config::threads, AWalkK> load_a{
        static_cast<const float*>(p.a) + o.a, p.a_row_stride, p.a_col_stride, p.m, p.k, t.m0, {}};
    tf32_tile_loader<BN, Config::threads, BWalkK> load_b{
        static_cast<const float*>(p.b) + o.b, p.b_col_stride, p.b_row_stride, p.n, p.k, t.n0, {}};
    register_staged_mainloop<BK>(load_a, load_b, a_tiles, a_words, b_tiles, b_words, t.ktiles, multiply);
    store_accumulators<Config>(acc, shared_raw, p, o, t.m0, t.n0, t.warp_row, t.warp_col);
  }
}

}  // namespace tessera::cuda::gemm
