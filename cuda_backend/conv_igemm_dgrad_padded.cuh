// Backward data on the tensor cores with C padded to a multiple of 8
// (conv_igemm_padded_channels.cuh says how and why).
#pragma once

#include "conv_igemm_dgrad_sm90.cuh"
#include "conv_igemm_dgrad_strided.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_padded_channels.cuh"
#include "conv_igemm_wave_model.hpp"
#include "cuda_errors.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::igemm {

// Backward data with zero channels; Config is a unit-stride dgrad configuration, run directly for
// unit strides and phase by phase (strided_dgrad) otherwise.
template <typename Config, typename T>
struct padded_channels_dgrad {
  using strided = strided_dgrad<Config, T>;

  static std::string inner_support(const nhwc_geometry& gp) {
    return gp.stride[0] == 1 && gp.stride[1] == 1 ? dgrad_support<Config>(gp) : strided::support(gp);
  }
  static size_t inner_workspace(const nhwc_geometry& gp) {
    return gp.stride[0] == 1 && gp.stride[1] == 1 ? dgrad_workspace<Config>(gp) : strided::workspace(gp);
  }

  static std::string support(const conv_view& v, int32_t element) {
    const std::string why = padded_channels_support(v, element);
    if (!why.empty()) return why;
    if (element_count(*v.x) == 0) return {};
    const std::string inner = inner_support(padded_geometry(v));
    return inner.empty() ? inner : "with C padded to a multiple of 8: " + inner;
  }

  static size_t workspace(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    return padded_dgrad_space<T>::bytes(gp, inner_workspace(gp));
  }

  static double estimate_us(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    const bool unit = gp.stride[0] == 1 && gp.stride[1] == 1;
    const double inner = unit ? dgrad_estimate_us<Config>(gp) : strided::estimate_us(gp);
    return inner + padded_dgrad_staging_us<T>(gp, v.x->dims[1]);
  }

  static void run(const conv_view& v, const void* w, const void* dy, void* dx, float alpha, float beta,
                  void* workspace, int sms, cudaStream_t stream) {
    const nhwc_geometry g = make_geometry(v), gp = padded_geometry(v);
    const padded_dgrad_space<T> space(workspace, gp);
    stage_zero_channels<T>(w, space.filters, int64_t{g.k} * g.r * g.s, g.c, gp.c, sms, stream,
                           "launching the filter's channel padding");
    if (gp.stride[0] == 1 && gp.stride[1] == 1) {
      run_dgrad<Config>(gp, space.filters, dy, space.dx, 1.0f, 0.0f, space.inner, stream);
    } else {
      strided::run(gp, space.filters, dy, space.dx, 1.0f, 0.0f, space.inner, stream);
    }
    blend_unpadded_dx<T>(space.dx, dx, int64_t{g.n} * g.h * g.w, g.c, gp.c, alpha, beta, sms, stream);
  }
};

}  // namespace tessera::cuda::igemm
