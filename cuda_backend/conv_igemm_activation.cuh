// The activation of the fused convolution epilogue as a CUTLASS epilogue-visitor compute functor
// whose mode is a runtime argument. One CUTLASS instantiation then serves identity (plain
// forward), relu and every other tsrpActivationMode_t: the mainloop dominates the cost and each
// extra instantiation costs minutes of compile time, while the mode switch is uniform across the
// grid and taken once per fragment, not once per element.
//
// Sm90Compute<Fn, ...> reads Fn<ElementCompute>::Arguments for its host arguments and calls
// Fn<Array<ElementCompute, N>>{}(fragment, arguments) in the epilogue, so both the scalar and the
// array form exist and share one Arguments type.
#pragma once

#include "activation_functions.cuh"

#include <tessera/plugin_abi.h>

#include <cutlass/array.h>
#include <cutlass/cutlass.h>

namespace tessera::cuda::igemm {

struct activation_arguments {
  int mode = TSRP_ACTIVATION_IDENTITY;  // tsrpActivationMode_t
  float coef = 0.0f;                    // as tsrpActivationProblem::coef
};

template <int Mode, int N>
CUTLASS_DEVICE void apply_activation(cutlass::Array<float, N>& v, float coef) {
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < N; ++i) v[i] = activation_forward<Mode>(v[i], coef);
}

template <class T>
struct runtime_activation {
  using Arguments = activation_arguments;
};

template <int N>
struct runtime_activation<cutlass::Array<float, N>> {
  using Arguments = activation_arguments;

  CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> v, Arguments const& a) const {
    switch (a.mode) {
      case TSRP_ACTIVATION_IDENTITY: break;
      case TSRP_ACTIVATION_RELU: apply_activation<TSRP_ACTIVATION_RELU>(v, a.coef); break;
      case TSRP_ACTIVATION_SIGMOID: apply_activation<TSRP_ACTIVATION_SIGMOID>(v, a.coef); break;
      case TSRP_ACTIVATION_TANH: apply_activation<TSRP_ACTIVATION_TANH>(v, a.coef); break;
      case TSRP_ACTIVATION_LEAKY_RELU: apply_activation<TSRP_ACTIVATION_LEAKY_RELU>(v, a.coef); break;
      case TSRP_ACTIVATION_CLIPPED_RELU: apply_activation<TSRP_ACTIVATION_CLIPPED_RELU>(v, a.coef); break;
      case TSRP_ACTIVATION_ELU: apply_activation<TSRP_ACTIVATION_ELU>(v, a.coef); break;
      case TSRP_ACTIVATION_GELU_ERF: apply_activation<TSRP_ACTIVATION_GELU_ERF>(v, a.coef); break;
      case TSRP_ACTIVATION_GELU_TANH: apply_activation<TSRP_ACTIVATION_GELU_TANH>(v, a.coef); break;
      default: apply_activation<TSRP_ACTIVATION_SWISH>(v, a.coef); break;  // support() admits no other mode
    }
    return v;
  }
};

}  // namespace tessera::cuda::igemm
