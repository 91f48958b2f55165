// Vector access for the normalization kernels: V consecutive elements of T moved as one aligned
// load or store of V * sizeof(T) bytes (16, 8, 4 or 2), widened to or narrowed from fp32
// registers. The raw word types are CUDA's own vector types, which the compiler always turns into
// one ld/st.global.v4/v2 (a struct of T[V] may be split into element accesses).
#pragma once

#include "element_types.cuh"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tessera::cuda {

template <int Bytes>
struct norm_raw_word;
template <>
struct norm_raw_word<16> {
  using type = uint4;
};
template <>
struct norm_raw_word<8> {
  using type = uint2;
};
template <>
struct norm_raw_word<4> {
  using type = unsigned int;
};
template <>
struct norm_raw_word<2> {
  using type = unsigned short;
};

template <typename T, int V>
using norm_word = typename norm_raw_word<sizeof(T) * V>::type;

// `p` must be aligned to V * sizeof(T) bytes (the host checks before choosing V). Kernels that
// keep several loads in flight hold the raw words and unpack them when used: a 16-byte word of
// halves is 4 registers, its floats 8.
template <typename T, int V>
__device__ __forceinline__ norm_word<T, V> load_word(const T* p) {
  return *reinterpret_cast<const norm_word<T, V>*>(p);
}

template <typename T, int V>
__device__ __forceinline__ void unpack_floats(const norm_word<T, V>& raw, float (&out)[V]) {
  T values[V];
  memcpy(values, &raw, sizeof(raw));
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = to_float(values[j]);
}

template <typename T, int V>
__device__ __forceinline__ void load_floats(const T* p, float (&out)[V]) {
  unpack_floats<T, V>(load_word<T, V>(p), out);
}

template <typename T, int V>
__device__ __forceinline__ void store_floats(T* p, const float (&in)[V]) {
  T values[V];
#pragma unroll
  for (int j = 0; j < V; ++j) values[j] = from_float<T>(in[j]);
  norm_word<T, V> raw;
  memcpy(&raw, values, sizeof(raw));
  *reinterpret_cast<norm_word<T, V>*>(p) = raw;
}

// store_floats with the ABI's blend: p = alpha * in + beta * p, p read only when beta != 0.
template <typename T, int V>
__device__ __forceinline__ void store_floats_blended(T* p, const float (&in)[V], float alpha, float beta) {
  float out[V];
  if (beta != 0.0f) {
    load_floats<T, V>(p, out);
#pragma unroll
    for (int j = 0; j < V; ++j) out[j] = fmaf(beta, out[j], alpha * in[j]);
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) out[j] = alpha * in[j];
  }
  store_floats<T, V>(p, out);
}

// V consecutive f32 parameters (scale, bias) at p: float4 loads when V is a multiple of 4 and the
// caller knows p is 16-byte aligned, else scalar loads. Both go through the read-only path: the
// parameters are re-read for every row and stay in L1.
template <int V>
__device__ __forceinline__ void load_params(const float* p, bool vector_ok, float (&out)[V]) {
  if constexpr (V % 4 == 0) {
    if (vector_ok) {
#pragma unroll
      for (int q = 0; q < V / 4; ++q) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(p) + q);
        out[4 * q] = f.x;
        out[4 * q + 1] = f.y;
        out[4 * q + 2] = f.z;
        out[4 * q + 3] = f.w;
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = __ldg(p + j);
}

// The widest vector a kernel may use: 16 bytes.
template <typename T>
constexpr int norm_max_vector = static_cast<int>(16 / sizeof(T));

inline bool norm_aligned(const void* p, size_t bytes) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Host side: calls f(std::integral_constant<int, V>{}) with the widest V of {16 bytes' worth, 2,
// 1} that `fits(V)` accepts (divisibility of the extents and strides, pointer alignment). Three
// widths keep the number of instantiations small while odd-but-even extents (C = 10, S = 14 * 14)
// still get 4-byte accesses for 16-bit types.
template <typename T, typename Fits, typename F>
void with_vector_width(Fits&& fits, F&& f) {
  constexpr int wide = norm_max_vector<T>;
  if (fits(wide)) {
    f(std::integral_constant<int, wide>{});
  } else if (fits(2)) {
    f(std::integral_constant<int, 2>{});
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

}  // namespace tessera::cuda
