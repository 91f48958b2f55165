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

  static size_t filter_bytes(const nhwc_geometry& gp) { return size_t(gp.k) * gp.r * gp.s * gp.c * sizeof(T); }
  static size_t dx_bytes(const nhwc_geometry& gp) { return size_t(gp.n) * gp.h * gp.w * gp.c * sizeof(T); }

  static std::string support(const conv_view& v, int32_t element) {
    const std::string why = padded_channels_support(v, element);
    if (!why.empty()) return why;
    if (element_count(*v.x) == 0) return {};
    const std::string inner = inner_support(padded_geometry(v));
    return inner.empty() ? inner : "with C padded to a multiple of 8: " + inner;
  }

  static size_t workspace(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    return align_workspace(filter_bytes(gp)) + align_workspace(dx_bytes(gp)) + inner_workspace(gp);
  }

  static double estimate_us(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    const bool unit = gp.stride[0] == 1 && gp.stride[1] == 1;
    const double inner = unit ? dgrad_estimate_us<Config>(gp) : strided::estimate_us(gp);
    // dx' written and read back, dx read and written.
    return inner + (2.0 * dx_bytes(gp) + 2.0 * dx_bytes(gp) * v.x->dims[1] / gp.c) / 3.5e6;
  }

  static void run(const conv_view& v, const void* w, const void* dy, void* dx, float alpha, float beta,
                  void* workspace, int sms, cudaStream_t stream) {
    const nhwc_geometry g = make_geometry(v), gp = padded_geometry(v);
    auto* base = static_cast<uint8_t*>(workspace);
    T* filters = reinterpret_cast<T*>(base);
    T* padded_dx = reinterpret_cast<T*>(base + align_workspace(filter_bytes(gp)));
    void* inner_workspace = base + align_workspace(filter_bytes(gp)) + align_workspace(dx_bytes(gp));
    const int64_t filter_rows = int64_t{g.k} * g.r * g.s;
    pad_channels<T><<<padding_blocks(filter_rows * gp.c, sms), 256, 0, stream>>>(static_cast<const T*>(w), filters,
                                                                                 filter_rows, g.c, gp.c);
    check_cuda(cudaGetLastError(), "launching the filter's channel padding");
    if (gp.stride[0] == 1 && gp.stride[1] == 1) {
      run_dgrad<Config>(gp, filters, dy, padded_dx, 1.0f, 0.0f, inner_workspace, stream);
    } else {
      strided::run(gp, filters, dy, padded_dx, 1.0f, 0.0f, inner_workspace, stream);
    }
    const int64_t pixels = int64_t{g.n} * g.h * g.w;
    unpad_channels_blended<T><<<padding_blocks(pixels * g.c, sms), 256, 0, stream>>>(
        padded_dx, static_cast<T*>(dx), pixels, g.c, gp.c, alpha, beta);
    check_cuda(cudaGetLastError(), "launching dx's channel unpadding");
  }
};

}  // namespace tessera::cuda::igemm
