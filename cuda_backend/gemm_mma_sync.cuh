// The engine's tensor-core GEMM for fp16/bf16 operands: mma.sync.m16n8k16 with fp32
// accumulators, fed by ldmatrix from swizzled shared-memory tiles, the epilogue of
// gemm_epilogue.cuh fused after the mainloop.
//
// Block tile BM x BN x 32 on a WARPS_M x WARPS_N grid of warps, each warp owning a
// (BM/WARPS_M) x (BN/WARPS_N) piece of C as (WM/16) x (WN/8) mma tiles. Each operand tile is kept
// in shared memory in the order its global memory has, so that global -> shared copies are
// straight 16-byte chunks and the transpose (where one is needed) happens in ldmatrix:
//   k-major form  (A row-major, B column-major): Rows x 32 values, 4 chunks of 16 bytes per row,
//                 chunk c of row r stored at chunk c ^ ((r / 2) % 4); ldmatrix reads 8 rows of
//                 one chunk, which this spreads over all 8 bank groups.
//   mn-major form (A column-major, B row-major): 32 x Cols values, chunk c of row r stored at
//                 c ^ (r % 8); ldmatrix.trans reads 8 consecutive rows of one chunk.
// Two loaders fill the tiles:
//   async:   cp.async 16-byte chunks through a STAGES-deep ring (STAGES - 1 tiles in flight while
//            one is multiplied), zero-filling chunks past the matrix edge. Needs a unit stride in
//            one matrix dim, 16-byte aligned base, leading and batch strides.
//   generic: any strides and alignment: each thread loads its elements into registers (the next
//            tile's loads in flight during the current tile's mma), then stores them into the
//            same swizzled forms through two buffers. Slower, still on tensor cores.
//
// Throughput (H200): the 128 x 128 async configuration keeps 4 warps x 32 mma per 16-wide k step
// with 3 tiles in flight; expect roughly 300-400 TFLOP/s for large fp16/bf16 GEMMs (about half of
// what wgmma reaches), bound by mma.sync issue rate rather than memory.
#pragma once

#include "gemm_epilogue.cuh"
#include "gemm_kernel_params.cuh"
#include "gemm_mma_ptx.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tessera::cuda::gemm {

constexpr int mma_tile_k = 32;

template <int Rows>
struct k_major_form {
  static constexpr int elements = Rows * mma_tile_k;
  __device__ static __forceinline__ int offset(int row, int chunk) {
    return row * mma_tile_k + ((chunk ^ ((row >> 1) & 3)) << 3);
  }
};

template <int Cols>
struct mn_major_form {
  static_assert(Cols % 64 == 0, "at least 8 chunks per row for the 3-bit swizzle");
  static constexpr int elements = mma_tile_k * Cols;
  __device__ static __forceinline__ int offset(int krow, int chunk) { return krow * Cols + ((chunk ^ (krow & 7)) << 3); }
};

// One operand as a loader sees it: Rows of the tile run along M (A) or N (B).
//   k-major: element (mn, p) at base[mn * ld + p];  mn-major: at base[mn + p * ld].
template <typename T, int Rows, bool KMajor, int Threads>
struct async_tile_loader {
  using form = std::conditional_t<KMajor, k_major_form<Rows>, mn_major_form<Rows>>;
  static constexpr int chunks = Rows * mma_tile_k / 8;
  static constexpr int per_thread = chunks / Threads;
  static_assert(chunks % Threads == 0, "whole chunks per thread");

  const T* base;
  int64_t ld;
  int32_t k;
  const T* src[per_thread];  // this thread's chunks at k = 0
  int dst[per_thread];       // their element offsets in a stage
  int edge[per_thread];      // k-major: first k of the chunk (huge past the M/N edge); mn-major: k row
  int bytes[per_thread];     // mn-major: bytes of the chunk inside the matrix along M/N

  __device__ __forceinline__ void init(const T* operand, int64_t leading, int32_t extent, int32_t k_extent, int32_t mn0,
                                       int tid) {
    base = operand;
    ld = leading;
    k = k_extent;
#pragma unroll
    for (int i = 0; i < per_thread; ++i) {
      const int q = tid + i * Threads;
      if constexpr (KMajor) {
        const int row = q >> 2, c = q & 3;
        const bool inside = mn0 + row < extent;
        src[i] = inside ? operand + (mn0 + row) * leading + c * 8 : operand;
        dst[i] = form::offset(row, c);
        edge[i] = inside ? c * 8 : (1 << 30);
        bytes[i] = 0;
      } else {
        constexpr int per_row = Rows / 8;
        const int krow = q / per_row, c = q % per_row;
        const int left = extent - (mn0 + c * 8);
        bytes[i] = left >= 8 ? 16 : (left > 0 ? left * static_cast<int>(sizeof(T)) : 0);
        src[i] = bytes[i] > 0 ? operand + krow * leading + mn0 + c * 8 : operand;
        dst[i] = form::offset(krow, c);
        edge[i] = krow;
      }
    }
  }

  __device__ __forceinline__ void load(T* stage, int32_t k0) const {
#pragma unroll
    for (int i = 0; i < per_thread; ++i) {
      int n;
      const T* from;
      if constexpr (KMajor) {
        const int left = k - k0 - edge[i];
        n = left >= 8 ? 16 : (left > 0 ? left * static_cast<int>(sizeof(T)) : 0);
        from = n > 0 ? src[i] + k0 : base;
      } else {
        n = k0 + edge[i] < k ? bytes[i] : 0;
        from = n > 0 ? src[i] + k0 * ld : base;
      }
      cp_async_16(shared_address(stage + dst[i]), from, n);
    }
  }
};

//   element (mn, p) at base[mn * mn_stride + p * k_stride], any strides.
template <typename T, int Rows, bool KMajor, int Threads>
struct generic_tile_loader {
  using form = std::conditional_t<KMajor, k_major_form<Rows>, mn_major_form<Rows>>;
  static constexpr int per_thread = Rows * mma_tile_k / Threads;
  static_assert(per_thread * Threads == Rows * mma_tile_k, "whole elements per thread");

  const uint16_t* base;  // fp16/bf16 moved as raw bits: zero fill is the bit pattern 0
  int64_t mn_stride, k_stride;
  int32_t extent, k, mn0;
  int tid;
  uint16_t staged[per_thread];

  // Threads walk k in the k-major form and M/N in the mn-major one: the direction chosen (by
  // the host) as the one with the smaller stride, so global loads coalesce as far as they can.
  __device__ __forceinline__ void position(int e, int& mn, int& p) const {
    const int flat = tid + e * Threads;
    if constexpr (KMajor) {
      mn = flat / mma_tile_k;
      p = flat % mma_tile_k;
    } else {
      mn = flat % Rows;
      p = flat / Rows;
    }
  }

  __device__ __forceinline__ void fetch(int32_t k0) {
#pragma unroll
    for (int e = 0; e < per_thread; ++e) {
      int mn, p;
      position(e, mn, p);
      const int32_t gm = mn0 + mn, gk = k0 + p;
      staged[e] = (gm < extent && gk < k) ? base[gm * mn_stride + gk * k_stride] : uint16_t{0};
    }
  }

  __device__ __forceinline__ void stash(T* stage) const {
    uint16_t* to = reinterpret_cast<uint16_t*>(stage);
#pragma unroll
    for (int e = 0; e < per_thread; ++e) {
      int mn, p;
      position(e, mn, p);
      if constexpr (KMajor) {
        to[form::offset(mn, p >> 3) + (p & 7)] = staged[e];
      } else {
        to[form::offset(p, mn >> 3) + (mn & 7)] = staged[e];
      }
    }
  }
};

template <int BM, int BN, int WarpsM, int WarpsN, int Stages>
struct mma_config {
  static constexpr int block_m = BM, block_n = BN, warps_m = WarpsM, warps_n = WarpsN, stages = Stages;
  static constexpr int threads = WarpsM * WarpsN * 32;
  static constexpr int warp_m = BM / WarpsM, warp_n = BN / WarpsN;
  static constexpr int mma_m = warp_m / 16, mma_n = warp_n / 8;
  static_assert(warp_m % 16 == 0 && warp_n % 16 == 0, "warp tiles of whole x4 ldmatrix loads");
};

template <typename Config, bool Async>
constexpr int mma_stages() {
  return Async ? Config::stages : 2;
}

// fp32 C tile staged for the epilogue: rows padded by 8 floats so that the float2 writes of the
// accumulator layout (8 rows x 4 lanes per half-warp phase) hit 16 different bank pairs.
template <typename Config>
constexpr int mma_c_tile_pitch() {
  return Config::block_n + 8;
}

template <typename T, typename Config, bool Async>
constexpr int mma_shared_bytes() {
  const int pipeline =
      mma_stages<Config, Async>() * (Config::block_m + Config::block_n) * mma_tile_k * static_cast<int>(sizeof(T));
  const int c_tile = Config::block_m * mma_c_tile_pitch<Config>() * static_cast<int>(sizeof(float));
  return pipeline > c_tile ? pipeline : c_tile;
}

// Where this block and this thread's warp work: the block's C tile (m0, n0), the warp's piece of
// it, and the number of BK-wide K tiles.
struct mma_block_tile {
  int lane, warp_row, warp_col;
  int32_t m0, n0;
  int ktiles;
};

template <typename Config, int BK>
__device__ __forceinline__ mma_block_tile mma_block_tile_of(const kernel_params& p) {
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32;
  int32_t tile_m, tile_n;
  tile_of_block(p.tiles_m, p.tiles_n, tile_m, tile_n);
  return {tid % 32,
          (warp / Config::warps_n) * Config::warp_m,
          (warp % Config::warps_n) * Config::warp_n,
          tile_m * Config::block_m,
          tile_n * Config::block_n,
          static_cast<int>((int64_t{p.k} + BK - 1) / BK)};  // k may be up to 2^31 - 1
}

template <typename Config>
__device__ __forceinline__ void clear_accumulators(float (&acc)[Config::mma_m][Config::mma_n][4]) {
#pragma unroll
  for (int mi = 0; mi < Config::mma_m; ++mi)
#pragma unroll
    for (int ni = 0; ni < Config::mma_n; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;
}

// The mainloop of the register-staged loaders (this file's generic_tile_loader, the TF32 kernel's
// tf32_tile_loader): each thread fetches its share of K tile kt + 1 into registers while the
// block multiplies tile kt from one of two shared buffers, then stashes it into the other. Ends
// with a barrier (store_accumulators' precondition).
template <int BK, typename LoadA, typename LoadB, typename Tile, typename Multiply>
__device__ __forceinline__ void register_staged_mainloop(LoadA& load_a, LoadB& load_b, Tile* a_buffers, int a_elements,
                                                         Tile* b_buffers, int b_elements, int ktiles,
                                                         const Multiply& multiply) {
  if (ktiles > 0) {
    load_a.fetch(0);
    load_b.fetch(0);
    load_a.stash(a_buffers);
    load_b.stash(b_buffers);
    __syncthreads();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    const int buffer = kt & 1;
    const bool more = kt + 1 < ktiles;
    if (more) {
      load_a.fetch((kt + 1) * BK);
      load_b.fetch((kt + 1) * BK);
    }
    multiply(a_buffers + buffer * a_elements, b_buffers + buffer * b_elements);
    // The other buffer was last read before the barrier that ended the previous step.
    if (more) {
      load_a.stash(a_buffers + (buffer ^ 1) * a_elements);
      load_b.stash(b_buffers + (buffer ^ 1) * b_elements);
    }
    __syncthreads();
  }
}

// The accumulators of one block tile, in the m16n8 layout both mma shapes share, through the
// epilogue into C. They go through shared memory (the pipeline's, idle once the mainloop is done;
// at least mma_shared_bytes' C tile) so that the epilogue walks C row by row: consecutive threads
// store consecutive column pairs (coalesced), and the epilogue's code exists once per kernel
// instead of once per accumulator. Accumulator (mi, ni) of lane l: rows l/4 and l/4 + 8, columns
// 2(l%4) and 2(l%4) + 1. The caller's mainloop ends with a barrier (no warp still reads the
// pipeline's tiles) and no copy in flight; this ends with one too: the next batch's first loads
// overwrite the tile.
template <typename Config>
__device__ __forceinline__ void store_accumulators(const float (&acc)[Config::mma_m][Config::mma_n][4],
                                                   unsigned char* shared_raw, const kernel_params& p,
                                                   const batch_offsets& o, int32_t m0, int32_t n0, int warp_row,
                                                   int warp_col) {
  constexpr int pitch = mma_c_tile_pitch<Config>();
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32;
  float* const c_tile = reinterpret_cast<float*>(shared_raw);
  const int group = lane >> 2, pair = (lane & 3) * 2;
#pragma unroll
  for (int mi = 0; mi < Config::mma_m; ++mi) {
    const int row = warp_row + mi * 16 + group;
#pragma unroll
    for (int ni = 0; ni < Config::mma_n; ++ni) {
      const int col = warp_col + ni * 8 + pair;
      *reinterpret_cast<float2*>(c_tile + row * pitch + col) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(c_tile + (row + 8) * pitch + col) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
  __syncthreads();
  constexpr int pairs_per_row = Config::block_n / 2;
#pragma unroll 1
  for (int i = tid; i < Config::block_m * pairs_per_row; i += Config::threads) {
    const int row = i / pairs_per_row, col = (i % pairs_per_row) * 2;
    const float2 v = *reinterpret_cast<const float2*>(c_tile + row * pitch + col);
    store_two<float>(p.epilogue, o, p.m, p.n, m0 + row, n0 + col, v.x, v.y);
  }
  __syncthreads();
}

template <typename T, typename Config, bool AKMajor, bool BKMajor, bool Async>
__global__ void __launch_bounds__(Config::threads) gemm_mma_kernel(const kernel_params p) {
  constexpr int BM = Config::block_m, BN = Config::block_n, BK = mma_tile_k;
  constexpr int threads = Config::threads;
  constexpr int MI = Config::mma_m, NI = Config::mma_n;
  constexpr int stages = mma_stages<Config, Async>();
  using a_form = std::conditional_t<AKMajor, k_major_form<BM>, mn_major_form<BM>>;
  using b_form = std::conditional_t<BKMajor, k_major_form<BN>, mn_major_form<BN>>;

  extern __shared__ __align__(128) unsigned char shared_raw[];
  T* const a_stages = reinterpret_cast<T*>(shared_raw);
  T* const b_stages = a_stages + stages * a_form::elements;

  const int tid = static_cast<int>(threadIdx.x);
  const mma_block_tile t = mma_block_tile_of<Config, BK>(p);
  const int lane = t.lane, warp_row = t.warp_row, warp_col = t.warp_col;
  const int32_t m0 = t.m0, n0 = t.n0;
  const int ktiles = t.ktiles;

  // One k-tile in shared memory times the accumulators: two 16-wide k steps.
  float acc[MI][NI][4];
  const auto multiply = [&](const T* a_tile, const T* b_tile) {
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t af[MI][4];
      uint32_t bf[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        if constexpr (AKMajor) {
          const int row = warp_row + mi * 16 + (lane & 15);
          const int chunk = kk * 2 + (lane >> 4);
          ldmatrix_x4(af[mi], shared_address(a_tile + a_form::offset(row, chunk)));
        } else {
          const int krow = kk * 16 + (lane & 7) + ((lane >> 4) << 3);
          const int chunk = (warp_row + mi * 16) / 8 + ((lane >> 3) & 1);
          ldmatrix_x4_trans(af[mi], shared_address(a_tile + a_form::offset(krow, chunk)));
        }
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {
        uint32_t r[4];
        if constexpr (BKMajor) {
          const int row = warp_col + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
          const int chunk = kk * 2 + ((lane >> 3) & 1);
          ldmatrix_x4(r, shared_address(b_tile + b_form::offset(row, chunk)));
        } else {
          const int krow = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
          const int chunk = (warp_col + nj * 16) / 8 + (lane >> 4);
          ldmatrix_x4_trans(r, shared_address(b_tile + b_form::offset(krow, chunk)));
        }
        bf[2 * nj][0] = r[0];
        bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2];
        bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) mma_16816<T>(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  };

  for (int64_t batch = blockIdx.z; batch < p.batch.count; batch += gridDim.z) {
    const batch_offsets o = offsets_of_batch(p.batch, batch);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;
    clear_accumulators<Config>(acc);

    if constexpr (Async) {
      async_tile_loader<T, BM, AKMajor, threads> load_a;
      async_tile_loader<T, BN, BKMajor, threads> load_b;
      load_a.init(a, AKMajor ? p.a_row_stride : p.a_col_stride, p.m, p.k, m0, tid);
      load_b.init(b, BKMajor ? p.b_col_stride : p.b_row_stride, p.n, p.k, n0, tid);
#pragma unroll
      for (int s = 0; s < stages - 1; ++s) {
        if (s < ktiles) {
          load_a.load(a_stages + s * a_form::elements, s * BK);
          load_b.load(b_stages + s * b_form::elements, s * BK);
        }
        cp_async_commit();  // empty groups too: the wait counts below assume one group per tile
      }
      cp_async_wait<stages - 2>();
      __syncthreads();
      for (int kt = 0; kt < ktiles; ++kt) {
        // Refill the stage the previous step read: every thread is past it (the barrier below).
        const int next = kt + stages - 1;
        if (next < ktiles) {
          load_a.load(a_stages + (next % stages) * a_form::elements, next * BK);
          load_b.load(b_stages + (next % stages) * b_form::elements, next * BK);
        }
        cp_async_commit();
        const int stage = kt % stages;
        multiply(a_stages + stage * a_form::elements, b_stages + stage * b_form::elements);
        cp_async_wait<stages - 2>();  // tile kt + 1 has landed
        __syncthreads();
      }
      cp_async_wait<0>();
    } else {
      generic_tile_loader<T, BM, AKMajor, threads> load_a;
      generic_tile_loader<T, BN, BKMajor, threads> load_b;
      load_a.base = reinterpret_cast<const uint16_t*>(a);
      load_a.mn_stride = p.a_row_stride;
      load_a.k_stride = p.a_col_stride;
      load_a.extent = p.m;
      load_a.k = p.k;
      load_a.mn0 = m0;
      load_a.tid = tid;
      load_b.base = reinterpret_cast<const uint16_t*>(b);
      load_b.mn_stride = p.b_col_stride;
      load_b.k_stride = p.b_row_stride;
      load_b.extent = p.n;
      load_b.k = p.k;
      load_b.mn0 = n0;
      load_b.tid = tid;
      register_staged_mainloop<BK>(load_a, load_b, a_stages, a_form::elements, b_stages, b_form::elements, ktiles,
                                   multiply);
    }

    store_accumulators<Config>(acc, shared_raw, p, o, m0, n0, warp_row, warp_col);
  }
}

}  // namespace tessera::cuda::gemm
