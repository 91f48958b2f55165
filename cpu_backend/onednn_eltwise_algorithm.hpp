// Tessera's activation modes as oneDNN eltwise algorithms: the one table the eltwise kernels
// and every fused epilogue (convolution, matmul) share.
#pragma once

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <optional>

namespace tessera::onednn {

// oneDNN's algorithm and its own alpha/beta parameters (not Tessera's alpha/beta blend).
struct eltwise_op {
  dnnl::algorithm algorithm;
  float alg_alpha;
  float alg_beta;
};

// The eltwise for `mode` (identity is eltwise_linear(1, 0)); nullopt for an unknown mode.
inline std::optional<eltwise_op> eltwise_op_for(int32_t mode, double coef) {
  using alg = dnnl::algorithm;
  const float c = static_cast<float>(coef);
  switch (mode) {
    case TSRP_ACTIVATION_IDENTITY: return eltwise_op{alg::eltwise_linear, 1.0f, 0.0f};
    case TSRP_ACTIVATION_RELU: return eltwise_op{alg::eltwise_relu, 0.0f, 0.0f};
    case TSRP_ACTIVATION_SIGMOID: return eltwise_op{alg::eltwise_logistic, 0.0f, 0.0f};
    case TSRP_ACTIVATION_TANH: return eltwise_op{alg::eltwise_tanh, 0.0f, 0.0f};
    case TSRP_ACTIVATION_LEAKY_RELU: return eltwise_op{alg::eltwise_relu, c, 0.0f};
    case TSRP_ACTIVATION_CLIPPED_RELU: return eltwise_op{alg::eltwise_clip, 0.0f, c};
    case TSRP_ACTIVATION_ELU: return eltwise_op{alg::eltwise_elu, c, 0.0f};
    case TSRP_ACTIVATION_GELU_ERF: return eltwise_op{alg::eltwise_gelu_erf, 0.0f, 0.0f};
    case TSRP_ACTIVATION_GELU_TANH: return eltwise_op{alg::eltwise_gelu_tanh, 0.0f, 0.0f};
    case TSRP_ACTIVATION_SWISH: return eltwise_op{alg::eltwise_swish, c, 0.0f};
    default: return std::nullopt;
  }
}

// The same as a post-op of a fused epilogue: identity needs none, so it is nullopt too.
inline std::optional<eltwise_op> eltwise_post_op_for(int32_t mode, double coef) {
  if (mode == TSRP_ACTIVATION_IDENTITY) return std::nullopt;
  return eltwise_op_for(mode, coef);
}

}  // namespace tessera::onednn
