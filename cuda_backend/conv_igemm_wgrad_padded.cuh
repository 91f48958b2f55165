// Backward filter on the tensor cores with C padded to a multiple of 8
// (conv_igemm_padded_channels.cuh says how and why).
#pragma once

#include "conv_igemm_wgrad_split_k.cuh"
#include "conv_wgrad_split_plan.hpp"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_padded_channels.cuh"
#include "conv_igemm_wave_model.hpp"
#include "cuda_errors.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::igemm {

// Backward filter with zero channels of x, on the split-K kernels (any split count, one included:
// there is no unpadded kernel to leave the small reductions to).
template <typename Config, typename T>
struct padded_channels_wgrad {
  using split = wgrad_split_k<Config, T>;

  static size_t partial_bytes(const nhwc_geometry& gp) {
    const wgrad_split_plan plan = plan_wgrad_split<Config>(gp, split_planning_sms);
    return static_cast<size_t>(plan.splits) * plan.slice_elements * sizeof(float);
  }

  static std::string support(const conv_view& v, int32_t element) {
    const std::string why = padded_channels_support(v, element);
    if (!why.empty()) return why;
    if (element_count(*v.w) == 0) return {};
    const std::string inner = wgrad_support<Config>(padded_geometry(v));
    return inner.empty() ? inner : "with C padded to a multiple of 8: " + inner;
  }

  static size_t workspace(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    return align_workspace(padded_image_bytes<T>(gp)) + partial_bytes(gp);
  }

  static double estimate_us(const conv_view& v) {
    const nhwc_geometry gp = padded_geometry(v);
    const int splits = plan_wgrad_split<Config>(gp, model_sms).splits;
    return wave_estimate_us(Config::tile_m, Config::tile_n, Config::tile_k,
                            wgrad_work(gp, Config::tile_n, Config::tile_k, splits, true)) +
           padded_wgrad_staging_us<T>(gp);
  }

  static void run(const conv_view& v, const void* x, const void* dy, void* dw, float alpha, float beta,
                  void* workspace, int sms, cudaStream_t stream) {
    const nhwc_geometry g = make_geometry(v), gp = padded_geometry(v);
    auto* base = static_cast<uint8_t*>(workspace);
    T* padded_x = reinterpret_cast<T*>(base);
    stage_zero_channels<T>(x, padded_x, int64_t{g.n} * g.h * g.w, g.c, gp.c, sms, stream,
                           "launching x's channel padding");
    void* partials = base + align_workspace(padded_image_bytes<T>(gp));
    split::run_dropping_channels(gp, g.c, padded_x, dy, dw, alpha, beta, partials, sms, stream);
  }
};

}  // namespace tessera::cuda::igemm
