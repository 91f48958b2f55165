// The block product both persistent RNN kernels run once per step (plan and indices in
// rnn_persistent_layout.hpp): the block's batch rows of a K-long left operand A, written by other
// blocks before the grid barrier, times the block's staged weight columns, into fp32 products.
//   - A streams through a ring of shared-memory chunks (cp.async.cg, 16-byte pieces, a chunk
//     requested ring - 1 chunks ahead of its products; a plain __ldcg copy when K is not a
//     multiple of 8). Other blocks wrote A in the previous step, so it must come from L2, never
//     from a stale L1 line: cp.async.cg and __ldcg both bypass L1.
//   - The products run on mma.sync m16n8k16 with fp32 accumulators, two chains per fragment
//     (alternate k-steps of the warp within each chunk) added at the end in a fixed order; warps
//     that share a tile along K write separate partial products, which the caller adds in group
//     order (persistent_product).
#pragma once

#include "element_types.cuh"
#include "gemm_mma_ptx.cuh"
#include "rnn_persistent_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::rnn {

// cp.async.wait_group takes an immediate: wait until at most ring - 2 groups are in flight, i.e.
// the oldest chunk requested has landed.
__device__ __forceinline__ void persistent_wait_for_oldest_chunk(int32_t ring) {
  static_assert(persistent_max_ring == 4, "one case per ring size");
  if (ring == 2) {
    gemm::cp_async_wait<0>();
  } else if (ring == 3) {
    gemm::cp_async_wait<1>();
  } else {
    gemm::cp_async_wait<2>();
  }
}

// One k-step of one tile: the A fragment once (k_local within the chunk in `slot`), the two B
// fragments of the tile's 16 columns (k of the weights).
template <typename T>
__device__ __forceinline__ void persistent_tile_k_step(const persistent_plan& p, const T* state, const T* weights,
                                                       int32_t slot, int32_t row0, int32_t col0, int32_t k_local,
                                                       int32_t k, int lane, float (&left)[4], float (&right)[4]) {
  uint32_t a[4], b[4];
  gemm::ldmatrix_x4(a, gemm::shared_address(state + persistent_a_address(p, slot, row0, k_local, lane)));
  gemm::ldmatrix_x4(b, gemm::shared_address(weights + persistent_b_address(p, col0, k, lane)));
  gemm::mma_16816<T>(left, a, b[0], b[1]);
  gemm::mma_16816<T>(right, a, b[2], b[3]);
}

// Threads: the block's size (persistent_block_threads(p)), a template parameter so that each block size compiles to
// its own loops.
//
// Once per launch: the block's weight columns (zeros past K and past its columns), and the state
// ring zeroed (rows past the block's batch rows are never written again; a zero row of A keeps NaN
// out of the padded products). `R` is the layer's R of the block's direction. R is read in runs of
// 8 elements that are consecutive in memory: along a gate row (k) for the forward, copied with
// cp.async; across 8 unit columns of one row of R for backward data, loaded as one 16-byte vector
// and stored to 8 rows of the staged columns. A run that is not whole, in range and 16-byte
// aligned goes element by element. (Element by element throughout, each load waited for before
// the next, took ~100 us a launch at the anchor's 128 KB a block.)
template <int Threads, typename T>
__device__ __forceinline__ void persistent_stage_weights(const persistent_plan& p, const persistent_block& block,
                                                         const T* R, T* weights, T* state, int tid) {
  const T zero = from_float<T>(0.0f);
  const bool forward = p.pass == persistent_pass::forward;
  const int32_t runs_per_line = forward ? p.kp / 8 : p.cols / 8;  // runs along k (forward) or c
  const int32_t lines = forward ? p.cols : p.kp;
  for (int32_t i = tid; i < lines * runs_per_line; i += Threads) {
    const int32_t line = i / runs_per_line, run = (i % runs_per_line) * 8;
    const int32_t c0 = forward ? line : run, k0 = forward ? run : line;
    const int64_t first = persistent_weight_offset(p, block, c0, k0);
    // The run's last element must be R's element 7 further along the run, in range.
    const int32_t c7 = forward ? c0 : c0 + 7, k7 = forward ? k0 + 7 : k0;
    const int64_t last = persistent_weight_offset(p, block, c7, k7);
    const bool whole = first >= 0 && last == first + 7 && reinterpret_cast<uintptr_t>(R + first) % 16 == 0;
    if (whole && forward) {
      gemm::cp_async_16(gemm::shared_address(weights + c0 * p.pitch + k0), R + first, 16);
    } else if (whole) {
      const uint4 bits = __ldg(reinterpret_cast<const uint4*>(R + first));
      const T* values = reinterpret_cast<const T*>(&bits);
#pragma unroll
      for (int e = 0; e < 8; ++e) weights[(c0 + e) * p.pitch + k0] = values[e];
    } else {
      for (int e = 0; e < 8; ++e) {
        const int32_t c = forward ? c0 : c0 + e, k = forward ? k0 + e : k0;
        const int64_t offset = persistent_weight_offset(p, block, c, k);
        weights[c * p.pitch + k] = offset >= 0 ? R[offset] : zero;
      }
    }
  }
  gemm::cp_async_commit();
  for (int32_t i = tid; i < p.slots * p.rows16 * p.chunk_pitch; i += Threads) state[i] = zero;
  gemm::cp_async_wait<0>();  // the caller's barrier makes the copies visible
}

// One step's product: a_rows is row 0 of the block's `rows` rows of A (row stride K); products
// get [kgroup][row][column]. Ends with every thread's copies complete; the caller's barrier
// makes the products visible.
template <int Threads, typename T>
__device__ __forceinline__ void persistent_block_product(const persistent_plan& p, const T* weights, T* state,
                                                         float* products, const T* a_rows, int32_t rows, int tid) {
  const int lane = tid % 32, warp = tid / 32;
  const int32_t K = p.K;
  const bool vector_a = K % 8 == 0;
  const T zero = from_float<T>(0.0f);
  // Chunk c of A into its ring slot: 16-byte cp.async (zeros stored for the pieces past K) where
  // K is a multiple of 8, else element copies; nothing past the last chunk.
  auto request = [&](int32_t c) {
    if (c >= p.chunks) return;
    int32_t k_begin, k_end;
    persistent_chunk_range(p, c, k_begin, k_end);
    const int32_t slot = persistent_chunk_slot(p, c);
    if (vector_a) {
      const int32_t pieces = (k_end - k_begin) / 8;
      for (int32_t i = tid; i < rows * pieces; i += Threads) {
        const int32_t r = i / pieces, k = k_begin + (i % pieces) * 8;
        T* piece = state + persistent_state_index(p, slot, r, k - k_begin);
        if (k < K) {
          gemm::cp_async_16(gemm::shared_address(piece), a_rows + int64_t{r} * K + k, 16);
        } else {
          *reinterpret_cast<uint4*>(piece) = make_uint4(0u, 0u, 0u, 0u);
        }
      }
    } else {
      const int32_t width = k_end - k_begin;
      for (int32_t i = tid; i < rows * width; i += Threads) {
        const int32_t r = i / width, k = k_begin + i % width;
        state[persistent_state_index(p, slot, r, k - k_begin)] = k < K ? __ldcg(a_rows + int64_t{r} * K + k) : zero;
      }
    }
  };
  for (int32_t c = 0; c + 1 < p.ring; ++c) {
    request(c);
    gemm::cp_async_commit();
  }

  float acc[persistent_tiles_per_warp][2][2][4] = {};  // [tile][8 columns][alternate k-steps]
  for (int32_t c = 0; c < p.chunks; ++c) {
    // Chunk c landed (this thread's copies) and every thread's copies and element stores are
    // visible; every warp is done with chunk c - 1, whose slot the next request takes.
    persistent_wait_for_oldest_chunk(p.ring);
    __syncthreads();
    request(c + p.ring - 1);
    gemm::cp_async_commit();
    int32_t k_begin, k_end;
    persistent_chunk_range(p, c, k_begin, k_end);
    const int32_t slot = persistent_chunk_slot(p, c);
#pragma unroll
    for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
      int32_t row0, col0, kgroup;
      if (!persistent_warp_tile<Threads / 32>(p, warp, lt, row0, col0, kgroup)) break;
      const int32_t step_end = k_end / 16, stride = p.kgroups;
      for (int32_t ks = persistent_first_step(p, k_begin / 16, kgroup); ks < step_end; ks += 2 * stride) {
        persistent_tile_k_step(p, state, weights, slot, row0, col0, ks * 16 - k_begin, ks * 16, lane, acc[lt][0][0],
                               acc[lt][1][0]);
        if (ks + stride < step_end)
          persistent_tile_k_step(p, state, weights, slot, row0, col0, (ks + stride) * 16 - k_begin, (ks + stride) * 16,
                                 lane, acc[lt][0][1], acc[lt][1][1]);
      }
    }
  }
  gemm::cp_async_wait<0>();  // only empty groups can be left; none may carry into the next step
#pragma unroll
  for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
    int32_t row0, col0, kgroup;
    if (!persistent_warp_tile<Threads / 32>(p, warp, lt, row0, col0, kgroup)) break;
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int reg = 0; reg < 4; ++reg)
        products[persistent_product_index(p, kgroup, row0, col0 + 8 * half, lane, reg)] =
            acc[lt][half][0][reg] + acc[lt][half][1][reg];
  }
}

}  // namespace tessera::cuda::rnn
