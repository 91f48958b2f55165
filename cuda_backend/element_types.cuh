// Storage types the kernels read and write; all arithmetic is fp32, so each type only needs a
// conversion to and from float, and a host-side mapping from tsrpDataType_t. The conversions are
// host-callable too (cuda_fp16.h and cuda_bf16.h convert on the host), so that kernel phases
// written as __host__ __device__ functions can be checked on a machine without a GPU.
#pragma once

#include "cuda_errors.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

namespace tessera::cuda {

__host__ __device__ __forceinline__ float to_float(float v) { return v; }
__host__ __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__host__ __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__host__ __device__ __forceinline__ T from_float(float v);
template <>
__host__ __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__host__ __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// out = alpha * r + beta * out in fp32, rounded once to T. out is not read when beta is 0 (it may
// hold NaN then, which must not reach the result): the blend every ABI output follows.
template <typename T>
__device__ __forceinline__ void store_blended(T* out, float r, float alpha, float beta) {
  float v = alpha * r;
  if (beta != 0.0f) v = fmaf(beta, to_float(*out), v);
  *out = from_float<T>(v);
}

inline bool is_floating_storage(int32_t data_type) {
  return data_type == TSRP_DATA_FLOAT || data_type == TSRP_DATA_HALF || data_type == TSRP_DATA_BFLOAT16;
}

inline const char* data_type_name(int32_t data_type) {
  switch (data_type) {
    case TSRP_DATA_FLOAT: return "float";
    case TSRP_DATA_HALF: return "half";
    case TSRP_DATA_BFLOAT16: return "bfloat16";
    case TSRP_DATA_INT8: return "int8";
    case TSRP_DATA_INT32: return "int32";
    default: return "unknown";
  }
}

// The storage type of a floating data type known at compile time (kernel traits templated on it):
// the same mapping as dispatch_storage_type below.
template <int32_t DataType>
struct storage_type;
template <>
struct storage_type<TSRP_DATA_FLOAT> {
  using type = float;
};
template <>
struct storage_type<TSRP_DATA_HALF> {
  using type = __half;
};
template <>
struct storage_type<TSRP_DATA_BFLOAT16> {
  using type = __nv_bfloat16;
};

// Calls f(T{}) with T the storage type of `data_type`; the caller has checked is_floating_storage.
template <typename F>
void dispatch_storage_type(int32_t data_type, F&& f) {
  switch (data_type) {
    case TSRP_DATA_FLOAT: f(float{}); break;
    case TSRP_DATA_HALF: f(__half{}); break;
    case TSRP_DATA_BFLOAT16: f(__nv_bfloat16{}); break;
    default:
      throw status_error(TSRP_STATUS_INTERNAL_ERROR,
                         std::string("no storage type for data type ") + data_type_name(data_type));
  }
}

}  // namespace tessera::cuda
