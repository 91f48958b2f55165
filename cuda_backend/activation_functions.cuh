// The activation functions and their derivatives, in fp32, as device functions templated on the
// mode so that the packed kernels compile one branch-free body per mode. Conventions:
//  - NaN inputs propagate through the forward functions (comparisons are written so that NaN
//    takes the pass-through branch), as in PyTorch.
//  - Derivatives are in terms of x. At a kink the derivative of the left piece is used: relu'(0)
//    is 0, leaky'(0) is the slope, elu'(0) is alpha; clipped relu's derivative is 1 only on the
//    open interval (0, coef).
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::cuda {

// sqrt(2/pi) and 1/sqrt(2*pi), and the cubic coefficient of the tanh approximation of gelu.
constexpr float gelu_tanh_scale = 0.7978845608028654f;
constexpr float inv_sqrt_2pi = 0.3989422804014327f;
constexpr float inv_sqrt_2 = 0.7071067811865476f;
constexpr float gelu_tanh_cubic = 0.044715f;

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

template <int Mode>
__device__ __forceinline__ float activation_forward(float x, float coef) {
  if constexpr (Mode == TSRP_ACTIVATION_IDENTITY) {
    return x;
  } else if constexpr (Mode == TSRP_ACTIVATION_RELU) {
    return x < 0.0f ? 0.0f : x;
  } else if constexpr (Mode == TSRP_ACTIVATION_SIGMOID) {
    return sigmoid(x);
  } else if constexpr (Mode == TSRP_ACTIVATION_TANH) {
    return tanhf(x);
  } else if constexpr (Mode == TSRP_ACTIVATION_LEAKY_RELU) {
    return x < 0.0f ? coef * x : x;
  } else if constexpr (Mode == TSRP_ACTIVATION_CLIPPED_RELU) {
    return x < 0.0f ? 0.0f : (x > coef ? coef : x);
  } else if constexpr (Mode == TSRP_ACTIVATION_ELU) {
    return x < 0.0f ? coef * expm1f(x) : x;
  } else if constexpr (Mode == TSRP_ACTIVATION_GELU_ERF) {
    return 0.5f * x * (1.0f + erff(x * inv_sqrt_2));
  } else if constexpr (Mode == TSRP_ACTIVATION_GELU_TANH) {
    return 0.5f * x * (1.0f + tanhf(gelu_tanh_scale * (x + gelu_tanh_cubic * x * x * x)));
  } else {
    static_assert(Mode == TSRP_ACTIVATION_SWISH, "unknown activation mode");
    return x * sigmoid(coef * x);
  }
}

template <int Mode>
__device__ __forceinline__ float activation_derivative(float x, float coef) {
  if constexpr (Mode == TSRP_ACTIVATION_IDENTITY) {
    return 1.0f;
  } else if constexpr (Mode == TSRP_ACTIVATION_RELU) {
    return x > 0.0f ? 1.0f : 0.0f;
  } else if constexpr (Mode == TSRP_ACTIVATION_SIGMOID) {
    const float s = sigmoid(x);
    return s * (1.0f - s);
  } else if constexpr (Mode == TSRP_ACTIVATION_TANH) {
    const float t = tanhf(x);
    return 1.0f - t * t;
  } else if constexpr (Mode == TSRP_ACTIVATION_LEAKY_RELU) {
    return x > 0.0f ? 1.0f : coef;
  } else if constexpr (Mode == TSRP_ACTIVATION_CLIPPED_RELU) {
    return (x > 0.0f && x < coef) ? 1.0f : 0.0f;
  } else if constexpr (Mode == TSRP_ACTIVATION_ELU) {
    return x > 0.0f ? 1.0f : coef * expf(x);
  } else if constexpr (Mode == TSRP_ACTIVATION_GELU_ERF) {
    // d/dx x*Phi(x) = Phi(x) + x*phi(x)
    return 0.5f * (1.0f + erff(x * inv_sqrt_2)) + x * inv_sqrt_2pi * expf(-0.5f * x * x);
  } else if constexpr (Mode == TSRP_ACTIVATION_GELU_TANH) {
    const float x2 = x * x;
    const float t = tanhf(gelu_tanh_scale * (x + gelu_tanh_cubic * x2 * x));
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * gelu_tanh_scale * (1.0f + 3.0f * gelu_tanh_cubic * x2);
  } else {
    static_assert(Mode == TSRP_ACTIVATION_SWISH, "unknown activation mode");
    // d/dx x*s(cx) = s + c*x*s*(1-s)
    const float s = sigmoid(coef * x);
    return s + coef * x * s * (1.0f - s);
  }
}

// Runtime mode for the strided kernels, whose cost is in index arithmetic, not in this switch
// (the mode is uniform across the grid, so the branch never diverges).
template <bool Backward>
__device__ __forceinline__ float activation_by_mode(int mode, float x, float coef) {
#define TESSERA_ACTIVATION_CASE(m) \
  case m: return Backward ? activation_derivative<m>(x, coef) : activation_forward<m>(x, coef);
  switch (mode) {
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_IDENTITY)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_RELU)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_SIGMOID)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_TANH)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_LEAKY_RELU)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_CLIPPED_RELU)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_ELU)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_GELU_ERF)
    TESSERA_ACTIVATION_CASE(TSRP_ACTIVATION_GELU_TANH)
    default: return Backward ? activation_derivative<TSRP_ACTIVATION_SWISH>(x, coef)
                             : activation_forward<TSRP_ACTIVATION_SWISH>(x, coef);
  }
#undef TESSERA_ACTIVATION_CASE
}

}  // namespace tessera::cuda
