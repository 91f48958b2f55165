// What the tensor-operation kernels (tensor_op_kernels.cu, tensor_transform_kernels.cu,
// tensor_reduce_kernels.cu) share: the five storage types as fp32 values (fixed at compile time,
// or read from the problem at run time for rare type mixes), 16-byte vector loads, 32-bit
// division by run-time constants, the walk from a linear index to per-tensor offsets, and the host
// side that builds those walks from tsrpTensor strides.
#pragma once

#include "cuda_errors.hpp"
#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace tessera::cuda::tensor_ops {

// ---- storage types ---------------------------------------------------------------------------

// A tensor whose element type is known only at run time: kernels instantiated with it switch on
// the tsrpDataType_t they are given, so that any mix of types runs without a template per mix.
struct dyn_t {};

template <typename T>
inline constexpr bool is_dyn = std::is_same_v<T, dyn_t>;

__device__ __forceinline__ float value_of(float v) { return v; }
__device__ __forceinline__ float value_of(__half v) { return to_float(v); }
__device__ __forceinline__ float value_of(__nv_bfloat16 v) { return to_float(v); }
__device__ __forceinline__ float value_of(int8_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float value_of(int32_t v) { return __int2float_rn(v); }

// fp32 to storage: round to nearest even; integers saturate and NaN becomes 0 (cvt.rni.s32.f32
// does both for int32, the clamp narrows to int8), as the reference and oneDNN convert.
template <typename T>
__device__ __forceinline__ T stored_as(float v) {
  if constexpr (std::is_same_v<T, int8_t>) {
    return static_cast<int8_t>(::max(-128, ::min(127, __float2int_rn(v))));
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return __float2int_rn(v);
  } else {
    return from_float<T>(v);
  }
}

__device__ __forceinline__ float load_dyn(const void* base, int64_t offset, int32_t type) {
  switch (type) {
    case TSRP_DATA_FLOAT: return static_cast<const float*>(base)[offset];
    case TSRP_DATA_HALF: return value_of(static_cast<const __half*>(base)[offset]);
    case TSRP_DATA_BFLOAT16: return value_of(static_cast<const __nv_bfloat16*>(base)[offset]);
    case TSRP_DATA_INT8: return value_of(static_cast<const int8_t*>(base)[offset]);
    default: return value_of(static_cast<const int32_t*>(base)[offset]);
  }
}

__device__ __forceinline__ void store_dyn(void* base, int64_t offset, int32_t type, float v) {
  switch (type) {
    case TSRP_DATA_FLOAT: static_cast<float*>(base)[offset] = v; break;
    case TSRP_DATA_HALF: static_cast<__half*>(base)[offset] = stored_as<__half>(v); break;
    case TSRP_DATA_BFLOAT16: static_cast<__nv_bfloat16*>(base)[offset] = stored_as<__nv_bfloat16>(v); break;
    case TSRP_DATA_INT8: static_cast<int8_t*>(base)[offset] = stored_as<int8_t>(v); break;
    default: static_cast<int32_t*>(base)[offset] = stored_as<int32_t>(v); break;
  }
}

// One element as fp32; `type` is only looked at for dyn_t.
template <typename T>
__device__ __forceinline__ float load_element(const void* base, int64_t offset, int32_t type) {
  if constexpr (is_dyn<T>) {
    return load_dyn(base, offset, type);
  } else {
    (void)type;
    return value_of(static_cast<const T*>(base)[offset]);
  }
}

template <typename T>
__device__ __forceinline__ void store_element(void* base, int64_t offset, int32_t type, float v) {
  if constexpr (is_dyn<T>) {
    store_dyn(base, offset, type, v);
  } else {
    (void)type;
    static_cast<T*>(base)[offset] = stored_as<T>(v);
  }
}

// ---- vector access: V elements of T as one naturally aligned load/store of at most 16 bytes ----

template <int Bytes>
struct raw_vector;
template <>
struct raw_vector<16> { using type = uint4; };
template <>
struct raw_vector<8> { using type = uint2; };
template <>
struct raw_vector<4> { using type = unsigned int; };
template <>
struct raw_vector<2> { using type = unsigned short; };
template <>
struct raw_vector<1> { using type = unsigned char; };

template <typename T, int V>
__device__ __forceinline__ void load_vector(const T* p, float (&out)[V]) {
  using raw_t = typename raw_vector<static_cast<int>(sizeof(T)) * V>::type;
  const raw_t raw = *reinterpret_cast<const raw_t*>(p);
  T values[V];
  memcpy(values, &raw, sizeof(raw));
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = value_of(values[j]);
}

template <typename T, int V>
__device__ __forceinline__ void store_vector(T* p, const float (&in)[V]) {
  using raw_t = typename raw_vector<static_cast<int>(sizeof(T)) * V>::type;
  T values[V];
#pragma unroll
  for (int j = 0; j < V; ++j) values[j] = stored_as<T>(in[j]);
  raw_t raw;
  memcpy(&raw, values, sizeof(raw));
  *reinterpret_cast<raw_t*>(p) = raw;
}

// Elements per 16-byte access for the widest of the types (1 when one is only known at run time).
template <typename... T>
constexpr int vector_width() {
  if constexpr ((is_dyn<T> || ...)) {
    return 1;
  } else {
    size_t widest = 0;
    ((widest = sizeof(T) > widest ? sizeof(T) : widest), ...);
    return static_cast<int>(16 / widest);
  }
}

// ---- index arithmetic --------------------------------------------------------------------------

// n / d for n < 2^31 and 1 <= d <= 2^31 by a multiply-high and a shift (Granlund-Montgomery, as
// PyTorch's IntDivider): a 64-bit division costs dozens of instructions per dim and element.
struct fast_divmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  fast_divmod() = default;
  explicit fast_divmod(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  __host__ __device__ __forceinline__ uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};

constexpr int64_t max_int32 = 0x7fffffff;

// Unrolling for host-and-device code: the host compiler does not know the pragma.
#ifdef __CUDA_ARCH__
#define TESSERA_TENSOR_OPS_UNROLL _Pragma("unroll")
#else
#define TESSERA_TENSOR_OPS_UNROLL
#endif

// A linear index over a shape (dim 0 fastest) to one element offset per operand. Dims and strides
// are kernel parameters, and every access below uses a constant index after unrolling, so they
// stay in the constant bank instead of spilling to local memory. Host-callable so that the
// index arithmetic can be checked without a GPU.
template <int Operands>
struct index_walker {
  int32_t ndims;  // >= 1
  int64_t extents[TSRP_MAX_DIMS];
  fast_divmod dividers[TSRP_MAX_DIMS];  // valid when every extent fits 32 bits
  int64_t strides[Operands][TSRP_MAX_DIMS];

  // Wide: 64-bit division, for index spaces of 2^31 elements or more. A single dim needs none.
  template <bool Wide>
  __host__ __device__ __forceinline__ void offsets(int64_t index, int64_t (&out)[Operands]) const {
    if (ndims == 1) {
TESSERA_TENSOR_OPS_UNROLL
      for (int o = 0; o < Operands; ++o) out[o] = index * strides[o][0];
      return;
    }
TESSERA_TENSOR_OPS_UNROLL
    for (int o = 0; o < Operands; ++o) out[o] = 0;
    if constexpr (Wide) {
      int64_t rest = index;
TESSERA_TENSOR_OPS_UNROLL
      for (int d = 0; d < TSRP_MAX_DIMS; ++d) {
        if (d < ndims) {
          int64_t coordinate = rest;
          if (d != ndims - 1) {
            coordinate = rest % extents[d];
            rest /= extents[d];
          }
TESSERA_TENSOR_OPS_UNROLL
          for (int o = 0; o < Operands; ++o) out[o] += coordinate * strides[o][d];
        }
      }
    } else {
      uint32_t rest = static_cast<uint32_t>(index);
TESSERA_TENSOR_OPS_UNROLL
      for (int d = 0; d < TSRP_MAX_DIMS; ++d) {
        if (d < ndims) {
          uint32_t coordinate = rest;
          if (d != ndims - 1) {
            const uint32_t quotient = dividers[d].div(rest);
            coordinate = rest - quotient * dividers[d].divisor;
            rest = quotient;
          }
TESSERA_TENSOR_OPS_UNROLL
          for (int o = 0; o < Operands; ++o) out[o] += static_cast<int64_t>(coordinate) * strides[o][d];
        }
      }
    }
  }
};

// ---- host: shapes ------------------------------------------------------------------------------

// Dims after dropping size-1 dims and merging neighbours that are contiguous in every operand;
// dim 0 is the innermost. An operand's stride is 0 along dims it is broadcast over.
template <int Operands>
struct merged_layout {
  int32_t ndims = 1;
  int64_t extents[TSRP_MAX_DIMS] = {1};
  int64_t strides[Operands][TSRP_MAX_DIMS] = {};
};

// `extents` and `strides` list candidate dims from the outermost to the innermost (all longer
// than 1). Dim i merges into the outer neighbour kept before it when, in every operand, stepping
// that neighbour once equals stepping dim i extents[i] times.
template <int Operands>
merged_layout<Operands> merge_dims(int count, const int64_t* extents, const int64_t (&strides)[Operands][TSRP_MAX_DIMS]) {
  merged_layout<Operands> outer_first;
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    if (kept > 0) {
      bool mergeable = true;
      for (int o = 0; o < Operands; ++o) {
        if (outer_first.strides[o][kept - 1] != strides[o][i] * extents[i]) mergeable = false;
      }
      if (mergeable) {
        outer_first.extents[kept - 1] *= extents[i];
        for (int o = 0; o < Operands; ++o) outer_first.strides[o][kept - 1] = strides[o][i];
        continue;
      }
    }
    outer_first.extents[kept] = extents[i];
    for (int o = 0; o < Operands; ++o) outer_first.strides[o][kept] = strides[o][i];
    ++kept;
  }
  merged_layout<Operands> result;
  if (kept == 0) return result;  // one element
  result.ndims = kept;
  for (int d = 0; d < kept; ++d) {
    result.extents[d] = outer_first.extents[kept - 1 - d];
    for (int o = 0; o < Operands; ++o) result.strides[o][d] = outer_first.strides[o][kept - 1 - d];
  }
  return result;
}

// Sorts candidate dims (given outermost first, all longer than 1) by the |stride| of operand
// `order_by`, largest first and stable, then merges them.
template <int Operands>
merged_layout<Operands> sort_and_merge(int count, const int64_t* extents,
                                       const int64_t (&strides)[Operands][TSRP_MAX_DIMS], int order_by) {
  int order[TSRP_MAX_DIMS] = {};
  for (int i = 0; i < count; ++i) order[i] = i;
  // Insertion sort: at most 8 entries.
  for (int i = 1; i < count; ++i) {
    for (int j = i; j > 0 && std::llabs(strides[order_by][order[j]]) > std::llabs(strides[order_by][order[j - 1]]);
         --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  int64_t sorted_extents[TSRP_MAX_DIMS] = {};
  int64_t sorted_strides[Operands][TSRP_MAX_DIMS] = {};
  for (int i = 0; i < count; ++i) {
    sorted_extents[i] = extents[order[i]];
    for (int o = 0; o < Operands; ++o) sorted_strides[o][i] = strides[o][order[i]];
  }
  return merge_dims<Operands>(count, sorted_extents, sorted_strides);
}

// The layout of an elementwise operation over `out`'s dims: operand o is `tensors[o]` (nullptr:
// unused, stride 0), broadcast along its size-1 dims. Dims are ordered by the stride of operand
// `order_by` (the output), so that consecutive indices write consecutive memory.
template <int Operands>
merged_layout<Operands> elementwise_layout(const tsrpTensor& out, const tsrpTensor* const (&tensors)[Operands],
                                           int order_by) {
  int64_t extents[TSRP_MAX_DIMS] = {};
  int64_t strides[Operands][TSRP_MAX_DIMS] = {};
  int count = 0;
  for (int d = 0; d < out.ndims; ++d) {
    if (out.dims[d] <= 1) continue;
    extents[count] = out.dims[d];
    for (int o = 0; o < Operands; ++o) {
      const tsrpTensor* t = tensors[o];
      strides[o][count] = t != nullptr && t->dims[d] == out.dims[d] ? t->strides[d] : 0;
    }
    ++count;
  }
  return sort_and_merge<Operands>(count, extents, strides, order_by);
}

// The walker for `layout` with dim 0 taken V elements at a time (its extent divided by V, its
// strides multiplied by V: the caller has checked V divides the extent).
template <int Operands>
index_walker<Operands> make_walker(const merged_layout<Operands>& layout, int vector) {
  index_walker<Operands> w{};
  w.ndims = layout.ndims;
  for (int d = 0; d < TSRP_MAX_DIMS; ++d) {
    const int64_t scale = d == 0 ? vector : 1;
    const int64_t extent = d < layout.ndims ? layout.extents[d] / scale : 1;
    w.extents[d] = extent;
    w.dividers[d] = fast_divmod(extent >= 1 && extent <= max_int32 ? static_cast<uint32_t>(extent) : 1u);
    for (int o = 0; o < Operands; ++o) w.strides[o][d] = d < layout.ndims ? layout.strides[o][d] * scale : 0;
  }
  return w;
}

// ---- host: checks ------------------------------------------------------------------------------

inline bool is_tensor_op_type(int32_t data_type) {
  return data_type == TSRP_DATA_FLOAT || data_type == TSRP_DATA_HALF || data_type == TSRP_DATA_BFLOAT16 ||
         data_type == TSRP_DATA_INT8 || data_type == TSRP_DATA_INT32;
}

inline size_t element_size(int32_t data_type) {
  switch (data_type) {
    case TSRP_DATA_HALF:
    case TSRP_DATA_BFLOAT16: return 2;
    case TSRP_DATA_INT8: return 1;
    default: return 4;
  }
}

// Empty, or why tensor `name` cannot be handled at all.
inline std::string tensor_reason(const tsrpTensor& t, const char* name) {
  if (t.ndims < 1 || t.ndims > TSRP_MAX_DIMS) {
    return std::string("tensor ") + name + " has " + std::to_string(t.ndims) + " dims; 1 to " +
           std::to_string(TSRP_MAX_DIMS) + " are supported";
  }
  if (!is_tensor_op_type(t.data_type)) {
    return std::string("tensor ") + name + " has data type " + data_type_name(t.data_type) +
           " (" + std::to_string(t.data_type) + "); float, half, bfloat16, int8 and int32 are supported";
  }
  for (int d = 0; d < t.ndims; ++d) {
    if (t.dims[d] < 0) return std::string("tensor ") + name + " has a negative dim " + std::to_string(d);
  }
  return {};
}

// Empty, or why `small` is not broadcastable to `big` (each dim 1 or big's).
inline std::string broadcast_reason(const tsrpTensor& small, const char* small_name, const tsrpTensor& big,
                                    const char* big_name) {
  if (small.ndims != big.ndims) {
    return std::string("tensor ") + small_name + " has " + std::to_string(small.ndims) + " dims but " + big_name +
           " has " + std::to_string(big.ndims);
  }
  for (int d = 0; d < big.ndims; ++d) {
    if (small.dims[d] != 1 && small.dims[d] != big.dims[d]) {
      return std::string("tensor ") + small_name + "'s dim " + std::to_string(d) + " is " +
             std::to_string(small.dims[d]) + ", neither 1 nor " + big_name + "'s " + std::to_string(big.dims[d]);
    }
  }
  return {};
}

// Empty, or why output `name` has two logical elements at one address: read-modify-write
// (beta, scaling) would then apply twice, and in an order no one chose. Walking the dims from the
// smallest |stride| up, each must step past everything the smaller ones reach.
inline std::string output_overlap_reason(const tsrpTensor& t, const char* name) {
  int dims[TSRP_MAX_DIMS];
  int count = 0;
  for (int d = 0; d < t.ndims; ++d) {
    if (t.dims[d] > 1) dims[count++] = d;
  }
  for (int i = 1; i < count; ++i) {
    for (int j = i; j > 0 && std::llabs(t.strides[dims[j]]) < std::llabs(t.strides[dims[j - 1]]); --j) {
      std::swap(dims[j], dims[j - 1]);
    }
  }
  int64_t reach = 0;  // largest offset distance the dims so far can produce
  for (int i = 0; i < count; ++i) {
    const int64_t stride = std::llabs(t.strides[dims[i]]);
    if (stride <= reach) {
      return std::string("output tensor ") + name + " has overlapping strides (dim " + std::to_string(dims[i]) +
             " has stride " + std::to_string(t.strides[dims[i]]) + ", so two of its elements share memory)";
    }
    reach += stride * (t.dims[dims[i]] - 1);
  }
  return {};
}

inline bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// ---- host: type dispatch ----------------------------------------------------------------------

// Calls f(TA{}, TB{}, TC{}) with the storage types of a, b and c for the mixes worth their own
// instantiation (all equal; fp32 with fp16/bf16 either way; an fp32 b for an fp16/bf16 a and
// c), else f(dyn_t{}, dyn_t{}, dyn_t{}). The caller has checked is_tensor_op_type.
template <typename F>
void dispatch_operand_types(int32_t ta, int32_t tb, int32_t tc, F&& f) {
  if (ta == tb && tb == tc) {
    switch (ta) {
      case TSRP_DATA_FLOAT: f(float{}, float{}, float{}); return;
      case TSRP_DATA_HALF: f(__half{}, __half{}, __half{}); return;
      case TSRP_DATA_BFLOAT16: f(__nv_bfloat16{}, __nv_bfloat16{}, __nv_bfloat16{}); return;
      case TSRP_DATA_INT8: f(int8_t{}, int8_t{}, int8_t{}); return;
      case TSRP_DATA_INT32: f(int32_t{}, int32_t{}, int32_t{}); return;
      default: break;
    }
  }
  if (ta == tb && ta == TSRP_DATA_FLOAT && tc == TSRP_DATA_HALF) return f(float{}, float{}, __half{});
  if (ta == tb && ta == TSRP_DATA_FLOAT && tc == TSRP_DATA_BFLOAT16) return f(float{}, float{}, __nv_bfloat16{});
  if (ta == tb && ta == TSRP_DATA_HALF && tc == TSRP_DATA_FLOAT) return f(__half{}, __half{}, float{});
  if (ta == tb && ta == TSRP_DATA_BFLOAT16 && tc == TSRP_DATA_FLOAT) return f(__nv_bfloat16{}, __nv_bfloat16{}, float{});
  if (ta == tc && tb == TSRP_DATA_FLOAT && ta == TSRP_DATA_HALF) return f(__half{}, float{}, __half{});
  if (ta == tc && tb == TSRP_DATA_FLOAT && ta == TSRP_DATA_BFLOAT16) return f(__nv_bfloat16{}, float{}, __nv_bfloat16{});
  f(dyn_t{}, dyn_t{}, dyn_t{});
}

}  // namespace tessera::cuda::tensor_ops
