// Tessera's sm90 backward-filter convolution: CUTLASS's implicit-GEMM wgrad collectives (TMA loads
// of dy with K contiguous, TMA im2col loads of x, wgmma with fp32 accumulators, warp-specialized
// pipeline) and CUTLASS's register epilogue dw = alpha * wgrad + beta * dw in fp32 before one
// rounding; with beta == 0 dw is never loaded.
//
// GEMM view (CUTLASS's wgrad): M = K filters, N = C*R*S (tiled by TileN channels of one filter
// tap), K = N*P*Q output pixels. The register epilogue is the one CUTLASS tests for wgrad: dw's
// N mode (C, S, R) is not one TMA box.
//
// One CTA reduces all of N*P*Q for its dw tile, so layers with few filters and channels fill few
// SMs; conv_igemm_wgrad_split_k.cuh splits that reduction over more CTAs (the Fp32Partials
// configuration: each CTA writes its partial sum unrounded, without alpha or beta).
#pragma once

#include "conv_igemm_cutlass.cuh"
#include "conv_igemm_geometry.hpp"

#include <cutlass/epilogue/fusion/operations.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

namespace tessera::cuda::igemm {

// Fp32Partials: dw is an fp32 buffer the epilogue writes alpha * sum without reading it (no C
// operand), for the split-K reduction to add up.
template <int32_t DataType, int TileM, int TileN, int TileK, bool Fp32Partials = false>
struct wgrad_sm90 {
  static constexpr int32_t data_type = DataType;
  static constexpr int tile_m = TileM, tile_n = TileN, tile_k = TileK;
  static constexpr bool fp32_partials = Fp32Partials;
  using element = typename cutlass_element<DataType>::type;
  using element_c = std::conditional_t<Fp32Partials, void, element>;  // void: dw is never read
  using element_d = std::conditional_t<Fp32Partials, float, element>;
  static constexpr int alignment = 128 / cutlass::sizeof_bits<element>::value;  // 16-byte rows
  static constexpr int alignment_d = 128 / cutlass::sizeof_bits<element_d>::value;

  // N tiles the channel sub-mode of (C, S, R); K tiles the linearized output pixels.
  using tile_shape = cute::Shape<cute::Int<TileM>, cute::Shape<cute::Int<TileN>>, cute::Shape<cute::Int<TileK>>>;
  using cluster_shape = cute::Shape<cute::_1, cute::_1, cute::_1>;

  using fusion = cutlass::epilogue::fusion::LinearCombination<element_d, float, element_c, float>;
  using collective_epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, tile_shape, cluster_shape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, element_c, cutlass::layout::TensorKCSR,
      alignment_d, element_d, cutlass::layout::TensorKCSR, alignment_d, cutlass::epilogue::NoSmemWarpSpecialized,
      fusion>::CollectiveOp;

  using collective_mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kWgrad, element,
      cutlass::layout::TensorNHWC, alignment, element, cutlass::layout::TensorNHWC, alignment, float, tile_shape,
      cluster_shape,
      cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename collective_epilogue::SharedStorage))>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

  using problem_shape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kWgrad, 2>;
  using kernel = cutlass::conv::kernel::ConvUniversal<problem_shape, collective_mainloop, collective_epilogue>;
  using device = cutlass::conv::device::ConvUniversalAdapter<kernel>;
  using arguments = typename device::Arguments;
};

// CUTLASS's arguments; null pointers when only checking shapes. dw holds Config::element_d.
template <typename Config>
typename Config::arguments wgrad_arguments(const nhwc_geometry& g, const void* x, const void* dy, void* dw,
                                           float alpha, float beta) {
  using shape_t = typename Config::problem_shape;
  using element = typename Config::element;
  const typename shape_t::TensorExtent activation{g.n, g.h, g.w, g.c};
  const typename shape_t::TensorExtent filter{g.k, g.r, g.s, g.c};
  const typename shape_t::ShapePadding lower{g.pad_before[0], g.pad_before[1]};
  const typename shape_t::ShapePadding upper{g.pad_after[0], g.pad_after[1]};
  const typename shape_t::TraversalStride stride{g.stride[0], g.stride[1]};
  const typename shape_t::ShapeDilation dilation{g.dilation[0], g.dilation[1]};
  const shape_t shape(cutlass::conv::Mode::kCrossCorrelation, activation, filter, lower, upper, stride, dilation, 1);

  // dw as the epilogue sees it: (K, (C, S, R)) with C contiguous.
  using stride_c = typename Config::kernel::StrideC;
  using stride_d = typename Config::kernel::StrideD;
  const int64_t k_stride = int64_t{g.r} * g.s * g.c, s_stride = g.c, r_stride = int64_t{g.s} * g.c;
  stride_c dc{};
  stride_d dd{};
  cute::get<0>(dc) = k_stride;
  cute::get<1, 1>(dc) = s_stride;
  cute::get<1, 2>(dc) = r_stride;
  cute::get<0>(dd) = k_stride;
  cute::get<1, 1>(dd) = s_stride;
  cute::get<1, 2>(dd) = r_stride;

  using element_c = typename Config::element_c;
  using element_d = typename Config::element_d;
  const element_c* source = Config::fp32_partials ? nullptr : static_cast<const element_c*>(dw);
  typename Config::arguments args(shape, {static_cast<const element*>(dy), static_cast<const element*>(x)},
                                  {{}, source, dc, static_cast<element_d*>(dw), dd});
  args.epilogue.thread.alpha = alpha;
  args.epilogue.thread.beta = beta;  // 0: dw is never loaded
  return args;
}

// Empty when the wgrad kernels can run the problem (after common_support); else why not.
template <typename Config>
std::string wgrad_support(const nhwc_geometry& g) {
  if (int64_t{g.n} * g.p * g.q == 0) return "dy has no pixels: nothing for the tensor cores to reduce";
  // TMA walks x as the forward does.
  const int lower[2] = {-g.pad_before[0], -g.pad_before[1]};
  const int upper[2] = {g.pad_after[0] - (g.r - 1) * g.dilation[0], g.pad_after[1] - (g.s - 1) * g.dilation[1]};
  const int filter[2] = {g.r, g.s};
  const std::string why = im2col_corner_support("x", lower, upper, filter, g.dilation);
  if (!why.empty()) return why;
  return cutlass_support<typename Config::device>(wgrad_arguments<Config>(g, nullptr, nullptr, nullptr, 1.0f, 0.0f),
                                                  "wgrad");
}

template <typename Config>
size_t wgrad_workspace(const nhwc_geometry& g) {
  return Config::device::get_workspace_size(wgrad_arguments<Config>(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
}

template <typename Config>
void run_wgrad(const nhwc_geometry& g, const void* x, const void* dy, void* dw, float alpha, float beta,
               void* workspace, cudaStream_t stream) {
  launch<typename Config::device>(wgrad_arguments<Config>(g, x, dy, dw, alpha, beta), workspace, stream, "wgrad");
}

}  // namespace tessera::cuda::igemm
