// A warp's ring of row buffers in shared memory, filled by the Hopper copy engine's bulk copies
// (cp.async.bulk, completion counted in bytes on an mbarrier per buffer), for row kernels that
// read each row once and are bound by DRAM bandwidth.
//
// Why: the row-per-warp kernels that load rows into registers (softmax, layer norm) held at 60-74 %
// of the copy bandwidth on the H200 (2026-12-03): a warp's loads are in flight only between the
// row's start and its reductions, and raising occupancy (48 registers, 5 blocks per SM) or
// prefetching the next row into registers did not help. Here the next `stages` rows of every
// warp are in flight while the warp computes, without registers: one instruction per row issued
// by lane 0, the bytes land in shared memory, the lanes read them from there.
//
// Protocol per warp (no block-wide barriers: warps share nothing):
//   ring.init()                     lane 0 initializes one mbarrier per stage
//   ring.issue(k, src)              lane 0: row k of this warp's sequence into stage k % stages
//   const void* r = ring.wait(k)    every lane: waits until row k's bytes have arrived
//   ... read r into registers ..., ring.release()   (__syncwarp, then lane 0 may refill the stage)
// Each stage's barrier completes one phase per row it receives, so row k waits on parity
// (k / stages) & 1.
// Requirements: sm_90; `row_bytes` and every source address 16-byte aligned; every row that is
// issued is also waited for before the block exits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::cuda {

// The shared memory one block of `warps` warps needs: the barriers, then the row buffers, each
// 16-byte aligned (bulk copies need it; 128-byte rows of 16-byte vectors read without conflicts).
__host__ __device__ constexpr size_t bulk_ring_barrier_bytes(int warps, int stages) {
  return (static_cast<size_t>(warps) * stages * sizeof(uint64_t) + 127) / 128 * 128;
}
__host__ __device__ constexpr size_t bulk_ring_shared_bytes(int warps, int stages, uint32_t row_bytes) {
  return bulk_ring_barrier_bytes(warps, stages) + static_cast<size_t>(warps) * stages * row_bytes;
}

#if defined(__CUDACC__)

struct warp_row_ring {
  uint32_t barriers;  // shared-space address of this warp's first mbarrier
  unsigned char* buffers;
  int stages;
  uint32_t row_bytes;
  int lane;

  // This warp's slice of the block's dynamic shared memory.
  __device__ __forceinline__ warp_row_ring(unsigned char* shared, int warps, int warp, int stages_, uint32_t row_bytes_)
      : stages(stages_), row_bytes(row_bytes_), lane(static_cast<int>(threadIdx.x & 31)) {
    barriers = static_cast<uint32_t>(__cvta_generic_to_shared(shared)) +
               static_cast<uint32_t>(warp * stages * sizeof(uint64_t));
    buffers = shared + bulk_ring_barrier_bytes(warps, stages) + static_cast<size_t>(warp) * stages * row_bytes;
  }

  __device__ __forceinline__ uint32_t barrier(int stage) const {
    return barriers + static_cast<uint32_t>(stage * sizeof(uint64_t));
  }

  __device__ __forceinline__ void init() const {
#if __CUDA_ARCH__ >= 900
    if (lane == 0) {
      for (int s = 0; s < stages; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier(s)) : "memory");
      // The initialized barriers must be visible to the copy engine before its first complete_tx.
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncwarp();
#endif
  }

  // Lane 0 only: row k of the warp's sequence, `row_bytes` from src, into stage k % stages.
  __device__ __forceinline__ void issue(int64_t k, const void* src) const {
#if __CUDA_ARCH__ >= 900
    const int s = static_cast<int>(k % stages);
    const uint32_t bar = barrier(s);
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(buffers + static_cast<size_t>(s) * row_bytes));
    // The stage's previous contents were read through the generic proxy (release() ordered those
    // reads before this point); the bulk copy writes through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(row_bytes) : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
        "l"(src), "r"(row_bytes), "r"(bar)
        : "memory");
#endif
  }

  // Every lane: row k's bytes, once they have arrived.
  __device__ __forceinline__ const unsigned char* wait(int64_t k) const {
    const int s = static_cast<int>(k % stages);
#if __CUDA_ARCH__ >= 900
    const uint32_t parity = static_cast<uint32_t>((k / stages) & 1);
    uint32_t done = 0;
    do {
      asm volatile(
          "{\n"
          "  .reg .pred p;\n"
          "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          "  selp.u32 %0, 1, 0, p;\n"
          "}\n"
          : "=r"(done)
          : "r"(barrier(s)), "r"(parity)
          : "memory");
    } while (done == 0);
#endif
    return buffers + static_cast<size_t>(s) * row_bytes;
  }

  // Every lane, after its reads of the stage just waited for: the stage may be refilled.
  __device__ __forceinline__ void release() const { __syncwarp(); }
};

#endif  // __CUDACC__

}  // namespace tessera::cuda
