// The GEMM epilogue, shared by the SIMT and the tensor-core kernels: every value in fp32, C read
// only when beta != 0, rounded once to C's type. Types, bias broadcast, activation and blend
// order are runtime values uniform over the grid: the branches never diverge, and one kernel
// instantiation per mainloop serves every epilogue (the mainloop is where the time goes).
// Both kernels hand over two horizontally adjacent accumulators at a time, which become one
// vector access when C's rows are contiguous.
#pragma once

#include "activation_functions.cuh"
#include "element_types.cuh"
#include "gemm_kernel_params.cuh"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tessera::cuda::gemm {

__device__ __forceinline__ float load_as_float(const void* base, int64_t offset, int32_t type) {
  switch (type) {
    case TSRP_DATA_HALF: return __half2float(static_cast<const __half*>(base)[offset]);
    case TSRP_DATA_BFLOAT16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[offset]);
    case TSRP_DATA_INT32: return static_cast<float>(static_cast<const int32_t*>(base)[offset]);
    default: return static_cast<const float*>(base)[offset];
  }
}

// s32: round to nearest even; cvt.rni saturates to the int32 range (and maps NaN to 0).
__device__ __forceinline__ void store_from_float(void* base, int64_t offset, int32_t type, float v) {
  switch (type) {
    case TSRP_DATA_HALF: static_cast<__half*>(base)[offset] = __float2half_rn(v); break;
    case TSRP_DATA_BFLOAT16: static_cast<__nv_bfloat16*>(base)[offset] = __float2bfloat16_rn(v); break;
    case TSRP_DATA_INT32: static_cast<int32_t*>(base)[offset] = __float2int_rn(v); break;
    default: static_cast<float*>(base)[offset] = v; break;
  }
}

// `offset` is even and the base aligned to two elements (epilogue_params::c_pairs).
__device__ __forceinline__ float2 load_pair_as_float(const void* base, int64_t offset, int32_t type) {
  switch (type) {
    case TSRP_DATA_HALF: return __half22float2(*reinterpret_cast<const __half2*>(static_cast<const __half*>(base) + offset));
    case TSRP_DATA_BFLOAT16:
      return __bfloat1622float2(
          *reinterpret_cast<const __nv_bfloat162*>(static_cast<const __nv_bfloat16*>(base) + offset));
    case TSRP_DATA_INT32: {
      const int2 v = *reinterpret_cast<const int2*>(static_cast<const int32_t*>(base) + offset);
      return make_float2(static_cast<float>(v.x), static_cast<float>(v.y));
    }
    default: return *reinterpret_cast<const float2*>(static_cast<const float*>(base) + offset);
  }
}

__device__ __forceinline__ void store_pair_from_float(void* base, int64_t offset, int32_t type, float v0, float v1) {
  switch (type) {
    case TSRP_DATA_HALF:
      *reinterpret_cast<__half2*>(static_cast<__half*>(base) + offset) = __floats2half2_rn(v0, v1);
      break;
    case TSRP_DATA_BFLOAT16:
      *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(base) + offset) = __floats2bfloat162_rn(v0, v1);
      break;
    case TSRP_DATA_INT32:
      *reinterpret_cast<int2*>(static_cast<int32_t*>(base) + offset) = make_int2(__float2int_rn(v0), __float2int_rn(v1));
      break;
    default: *reinterpret_cast<float2*>(static_cast<float*>(base) + offset) = make_float2(v0, v1); break;
  }
}

// Out of line: inlined, the ten modes' libdevice bodies would be copied into every one of a
// kernel's unrolled store sites, which costs minutes of compile time and instruction cache for
// a call that, when it happens at all, is one per element after the whole mainloop.
inline __device__ __noinline__ float epilogue_activation(int mode, float x, float coef) {
  return activation_by_mode<false>(mode, x, coef);
}

// Everything but the read of C: t = alpha * acc + bias, then the blend with prev = beta * C_old.
__device__ __forceinline__ float finish_value(const epilogue_params& e, float acc, float bias, float prev) {
  const float t = e.alpha * acc + bias;
  if (e.activation == TSRP_ACTIVATION_IDENTITY) return t + prev;
  return e.blend_before_activation ? epilogue_activation(e.activation, t + prev, e.activation_coef)
                                   : epilogue_activation(e.activation, t, e.activation_coef) + prev;
}

// Finishes and stores C(row, col) and, when col + 1 < n, C(row, col + 1). `col` is even.
template <typename Acc>
__device__ __forceinline__ void store_two(const epilogue_params& e, const batch_offsets& o, int32_t m, int32_t n,
                                          int32_t row, int32_t col, Acc v0, Acc v1) {
  if (row >= m || col >= n) return;
  const bool second = col + 1 < n;
  const int64_t c_at = o.c + row * e.c_row_stride + col * e.c_col_stride;
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (e.store_raw_integer) {
      int32_t* c = static_cast<int32_t*>(e.c);
      if (second && e.c_pairs) {
        *reinterpret_cast<int2*>(c + c_at) = make_int2(v0, v1);
      } else {
        c[c_at] = v0;
        if (second) c[c_at + e.c_col_stride] = v1;
      }
      return;
    }
  }
  float bias0 = 0.0f, bias1 = 0.0f;
  if (e.bias != nullptr) {
    const int64_t b_at = o.bias + row * e.bias_row_stride + col * e.bias_col_stride;
    bias0 = load_as_float(e.bias, b_at, e.bias_type);
    if (second) bias1 = load_as_float(e.bias, b_at + e.bias_col_stride, e.bias_type);
  }
  const bool pair = second && e.c_pairs;
  float prev0 = 0.0f, prev1 = 0.0f;
  if (e.beta != 0.0f) {
    if (pair) {
      const float2 old = load_pair_as_float(e.c, c_at, e.c_type);
      prev0 = e.beta * old.x;
      prev1 = e.beta * old.y;
    } else {
      prev0 = e.beta * load_as_float(e.c, c_at, e.c_type);
      if (second) prev1 = e.beta * load_as_float(e.c, c_at + e.c_col_stride, e.c_type);
    }
  }
  const float r0 = finish_value(e, static_cast<float>(v0), bias0, prev0);
  const float r1 = finish_value(e, static_cast<float>(v1), bias1, prev1);
  if (pair) {
    store_pair_from_float(e.c, c_at, e.c_type, r0, r1);
  } else {
    store_from_float(e.c, c_at, e.c_type, r0);
    if (second) store_from_float(e.c, c_at + e.c_col_stride, e.c_type, r1);
  }
}

}  // namespace tessera::cuda::gemm
