// The maximum of two 16-byte vectors of fp32, fp16 or bf16 elements, lane by lane, in the
// hardware's packed min/max instructions: one instruction per two 16-bit lanes (or one fp32 lane)
// instead of a conversion, a comparison and a select per lane. Two NaN rules, the two of max
// pooling:
//   packed_max_skip_nan   IEEE maxNum: a NaN operand loses to a number; NaN only when both are.
//                         Starting from packed_nan_word, a chain over a window's taps is NaN only
//                         when every tap was (the reference's NOT_PROPAGATE rule, and what
//                         lane_reduction<max_skip_nan> gives).
//   packed_max_keep_nan   NaN when either operand is; starting from packed_lowest_word, a chain
//                         over a window's taps is NaN when any tap was.
// The maximum of numbers is exact in any of these types, so widening to fp32 first (what the
// lane_reduction path does) gives the same values; only the sign of a zero maximum of +0 and -0
// may differ between the two, which compares equal.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tessera::cuda::pooling {

#ifdef __CUDACC__

// Element bits of the two chain starts.
template <typename T>
struct packed_max_bits;
template <>
struct packed_max_bits<float> {
  static constexpr uint32_t nan = 0x7FC00000u, lowest = 0xFF800000u;  // quiet NaN, -inf
};
template <>
struct packed_max_bits<__half> {
  static constexpr uint32_t nan = 0x7E007E00u, lowest = 0xFC00FC00u;  // two lanes per word
};
template <>
struct packed_max_bits<__nv_bfloat16> {
  static constexpr uint32_t nan = 0x7FC07FC0u, lowest = 0xFF80FF80u;
};

template <typename T>
__device__ __forceinline__ uint4 packed_nan_word() {
  constexpr uint32_t b = packed_max_bits<T>::nan;
  return make_uint4(b, b, b, b);
}

template <typename T>
__device__ __forceinline__ uint4 packed_lowest_word() {
  constexpr uint32_t b = packed_max_bits<T>::lowest;
  return make_uint4(b, b, b, b);
}

// One 32-bit word: one fp32 lane or two 16-bit lanes.
template <typename T, bool KeepNan>
__device__ __forceinline__ uint32_t packed_max_32(uint32_t a, uint32_t b) {
  uint32_t r;
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (KeepNan) {
      asm("max.NaN.f32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    } else {
      asm("max.f32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    }
  } else if constexpr (std::is_same_v<T, __half>) {
    if constexpr (KeepNan) {
      asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    } else {
      asm("max.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    }
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "fp32, fp16 or bf16");
    if constexpr (KeepNan) {
      asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    } else {
      asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    }
  }
  return r;
}

template <typename T, bool KeepNan>
__device__ __forceinline__ uint4 packed_max(const uint4& a, const uint4& b) {
  return make_uint4(packed_max_32<T, KeepNan>(a.x, b.x), packed_max_32<T, KeepNan>(a.y, b.y),
                    packed_max_32<T, KeepNan>(a.z, b.z), packed_max_32<T, KeepNan>(a.w, b.w));
}

#endif  // __CUDACC__

}  // namespace tessera::cuda::pooling
