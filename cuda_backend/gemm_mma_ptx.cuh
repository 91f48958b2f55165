// The few PTX instructions the tensor-core GEMM is built from, one inline-asm wrapper each:
// cp.async (global -> shared without a register round trip, zero-filling what lies outside the
// matrix), ldmatrix (shared -> the mma fragment layout, optionally transposed) and
// mma.sync.m16n8k16 (fp16/bf16) and m16n8k8 (TF32) with fp32 accumulators. All exist from sm_80 on, so the same code is valid
// for the sm_90a SASS and the compute_90 PTX this plugin ships.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tessera::cuda::gemm {

__device__ __forceinline__ uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// Copies `bytes` (0..16, a multiple of 2) from `global` and zero-fills the rest of the 16-byte
// shared chunk; with 0 bytes nothing is read. Both addresses are 16-byte aligned.
// Only whole chunks go through cp.async. The hardware reads just src-size bytes of a partial one,
// but compute-sanitizer's memcheck counts every cp.async as a 16-byte read and reported the
// chunk at a matrix's edge (a 1-element operand, 2026-12-03) as out of bounds, killing the
// context; a clean memcheck is worth more than the edge chunks' speed. So edge chunks are read as
// 2-byte elements into registers and stored with st.shared, which the pipeline's wait and barrier
// order as they order the asynchronous copies.
__device__ __forceinline__ void cp_async_16(uint32_t shared, const void* global, int bytes) {
  if (bytes >= 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(global));
    return;
  }
  const uint16_t* element = static_cast<const uint16_t*>(global);
  uint32_t word[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t low = 4 * i < bytes ? element[2 * i] : 0u;
    const uint32_t high = 4 * i + 2 < bytes ? element[2 * i + 1] : 0u;
    word[i] = low | (high << 16);
  }
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(shared), "r"(word[0]), "r"(word[1]),
               "r"(word[2]), "r"(word[3]));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `Pending` committed groups of this thread are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, which lands in r[i].
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared));
}

// As ldmatrix_x4, each matrix transposed: lane l receives column l/4, rows 2(l%4) and 2(l%4)+1.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared));
}

// d += a * b for one 16x8x16 tile: a row-major (4 registers), b column-major (2), d fp32 (4).
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16 operands");
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// fp32 -> the TF32 bits an mma .tf32 operand takes (round to nearest, ties away from zero; the
// low 13 bits of the result are zero).
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// d += a * b for one 16x8x8 TF32 tile: a row-major (4 registers), b column-major (2), d fp32 (4),
// the accumulator layout of mma_16816.
__device__ __forceinline__ void mma_1688_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace tessera::cuda::gemm
