// Tessera's sm90 backward-data convolution: CUTLASS's implicit-GEMM dgrad collectives (TMA im2col
// loads of dy walking the filter backwards, TMA loads of w with C contiguous, wgmma with fp32
// accumulators, warp-specialized pipeline) and the TMA epilogue dx = alpha * dgrad + beta * dx,
// evaluated in fp32 before one rounding; with beta == 0 the epilogue issues no load of dx.
//
// GEMM view (CUTLASS's dgrad): M = N*H*W input pixels, N = C channels, K = K*R*S, each k-tile
// TileK filters of one filter tap. CUTLASS's sm90 dgrad covers unit strides only (strided dgrad
// would need the sm100 kernels' output-pixel decomposition), so support() declines the rest.
#pragma once

#include "conv_igemm_cutlass.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_wave_model.hpp"

#include <cutlass/epilogue/fusion/operations.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tessera::cuda::igemm {

template <int32_t DataType, int TileM, int TileN, int TileK, int ClusterM>
struct dgrad_sm90 {
  static constexpr int32_t data_type = DataType;
  static constexpr int tile_m = TileM, tile_n = TileN, tile_k = TileK;
  using element = typename cutlass_element<DataType>::type;
  static constexpr int alignment = 128 / cutlass::sizeof_bits<element>::value;  // 16-byte rows

  // The K tile is a one-mode tuple so that it tiles the filter sub-mode of K = (K, S, R).
  using tile_shape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using cluster_shape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;

  using fusion = cutlass::epilogue::fusion::LinearCombination<element, float, element, float>;
  using collective_epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, tile_shape, cluster_shape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, element, cutlass::layout::TensorNHWC, alignment,
      element, cutlass::layout::TensorNHWC, alignment, cutlass::epilogue::TmaWarpSpecialized, fusion>::CollectiveOp;

  using collective_mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kDgrad, element,
      cutlass::layout::TensorNHWC, alignment, element, cutlass::layout::TensorNHWC, alignment, float, tile_shape,
      cluster_shape,
      cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename collective_epilogue::SharedStorage))>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

  using problem_shape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kDgrad, 2>;
  using kernel = cutlass::conv::kernel::ConvUniversal<problem_shape, collective_mainloop, collective_epilogue>;
  using device = cutlass::conv::device::ConvUniversalAdapter<kernel>;
  using arguments = typename device::Arguments;
};

// CUTLASS's arguments; null pointers when only checking shapes.
template <typename Config>
typename Config::arguments dgrad_arguments(const nhwc_geometry& g, const void* w, const void* dy, void* dx,
                                           float alpha, float beta, const dx_strides& dx_view) {
  using shape_t = typename Config::problem_shape;
  using element = typename Config::element;
  // CUTLASS describes dgrad by the forward input (dx) and filter; it derives dy's extents.
  const typename shape_t::TensorExtent activation{g.n, g.h, g.w, g.c};
  const typename shape_t::TensorExtent filter{g.k, g.r, g.s, g.c};
  const typename shape_t::ShapePadding lower{g.pad_before[0], g.pad_before[1]};
  const typename shape_t::ShapePadding upper{g.pad_after[0], g.pad_after[1]};
  const typename shape_t::TraversalStride stride{g.stride[0], g.stride[1]};
  const typename shape_t::ShapeDilation dilation{g.dilation[0], g.dilation[1]};
  const shape_t shape(cutlass::conv::Mode::kCrossCorrelation, activation, filter, lower, upper, stride, dilation, 1);

  // dx as the epilogue sees it: ((W, H, N), C) with C contiguous.
  using stride_c = typename Config::kernel::StrideC;
  using stride_d = typename Config::kernel::StrideD;
  const int64_t w_stride = dx_view.w, h_stride = dx_view.h, n_stride = dx_view.n;
  stride_c dc{};
  stride_d dd{};
  cute::get<0>(dc) = cute::make_stride(w_stride, h_stride, n_stride);
  cute::get<0>(dd) = cute::make_stride(w_stride, h_stride, n_stride);

  typename Config::arguments args(shape, {static_cast<const element*>(dy), static_cast<const element*>(w)},
                                  {{}, static_cast<const element*>(dx), dc, static_cast<element*>(dx), dd});
  args.epilogue.thread.alpha = alpha;
  args.epilogue.thread.beta = beta;  // 0: dx is never loaded
  return args;
}

template <typename Config>
typename Config::arguments dgrad_arguments(const nhwc_geometry& g, const void* w, const void* dy, void* dx,
                                           float alpha, float beta) {
  return dgrad_arguments<Config>(g, w, dy, dx, alpha, beta, packed_dx(g));
}

// Empty when the dgrad kernels can run the problem (after common_support); else why not.
template <typename Config>
std::string dgrad_support(const nhwc_geometry& g, const dx_strides& dx_view) {
  for (int i = 0; i < 2; ++i) {
    if (g.stride[i] != 1) {
      return "strided backward data (stride " + std::to_string(g.stride[i]) +
             ") not supported: CUTLASS's sm90 dgrad handles unit strides only";
    }
  }
  if (g.k == 0) return "w has 0 filters: nothing for the tensor cores to reduce";
  // TMA walks dy with the filter reversed: from pad_before - (filter - 1) * dilation, and as far
  // past dy's end as dx extends beyond it.
  int lower[2], upper[2];
  const int filter[2] = {g.r, g.s};
  const int in[2] = {g.h, g.w}, out[2] = {g.p, g.q};
  for (int i = 0; i < 2; ++i) {
    lower[i] = g.pad_before[i] - (filter[i] - 1) * g.dilation[i];
    upper[i] = lower[i] + in[i] - out[i];
  }
  const std::string why = im2col_corner_support("dy", lower, upper, filter, g.dilation);
  if (!why.empty()) return why;
  return cutlass_support<typename Config::device>(
      dgrad_arguments<Config>(g, nullptr, nullptr, nullptr, 1.0f, 0.0f, dx_view), "dgrad");
}

template <typename Config>
std::string dgrad_support(const nhwc_geometry& g) {
  return dgrad_support<Config>(g, packed_dx(g));
}

// The registry's heuristic (conv_igemm_wave_model.hpp); prefers 128x64 for C <= 64, as measured.
template <typename Config>
double dgrad_estimate_us(const nhwc_geometry& g) {
  return wave_estimate_us(Config::tile_m, Config::tile_n, Config::tile_k, dgrad_work(g, Config::tile_k));
}

template <typename Config>
size_t dgrad_workspace(const nhwc_geometry& g) {
  return Config::device::get_workspace_size(dgrad_arguments<Config>(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
}

template <typename Config>
void run_dgrad(const nhwc_geometry& g, const void* w, const void* dy, void* dx, float alpha, float beta,
               void* workspace, cudaStream_t stream, const dx_strides& dx_view) {
  launch<typename Config::device>(dgrad_arguments<Config>(g, w, dy, dx, alpha, beta, dx_view), workspace, stream,
                                  "dgrad");
}

template <typename Config>
void run_dgrad(const nhwc_geometry& g, const void* w, const void* dy, void* dx, float alpha, float beta,
               void* workspace, cudaStream_t stream) {
  run_dgrad<Config>(g, w, dy, dx, alpha, beta, workspace, stream, packed_dx(g));
}

}  // namespace tessera::cuda::igemm
