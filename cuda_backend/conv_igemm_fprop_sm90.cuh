// Tessera's sm90 forward convolution: CUTLASS's implicit-GEMM collectives (TMA im2col loads of x,
// TMA loads of w, wgmma with fp32 accumulators, a warp-specialized producer/consumer pipeline)
// assembled into one kernel type per element type, tile and cluster, with one fused epilogue
//     y = act(beta * c + (alpha * conv(x, w) + bias[k]))
// evaluated in fp32 before the single rounding to y's type. The plain forward uses it with the
// identity and no bias (c = y, beta = the caller's beta); the bias+activation forward with c = z
// and beta = alpha2. When beta is 0 the epilogue never issues the loads of c, so an output poisoned
// with NaN is never read.
//
// GEMM view (CUTLASS's fprop): M = N*P*Q output pixels, N = K filters, K = C*R*S. Each k-tile is
// TileK channels of one filter tap, so C that is not a multiple of TileK costs zero-filled MMA
// work but stays exact (TMA fills out-of-range channels with zeros).
#pragma once

#include "conv_igemm_activation.cuh"
#include "conv_igemm_cutlass.cuh"
#include "conv_igemm_geometry.hpp"

#include <cutlass/epilogue/fusion/operations.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tessera::cuda::igemm {

// One forward kernel: element type, CTA tile M x N x K (K in channels) and cluster size along M
// (CTAs of one cluster share the filter tile through TMA multicast).
template <int32_t DataType, int TileM, int TileN, int TileK, int ClusterM>
struct fprop_sm90 {
  static constexpr int32_t data_type = DataType;
  static constexpr int tile_m = TileM, tile_n = TileN, tile_k = TileK;
  using element = typename cutlass_element<DataType>::type;
  static constexpr int alignment = 128 / cutlass::sizeof_bits<element>::value;  // 16-byte rows

  // The K tile is a one-mode tuple so that it tiles the channel sub-mode of K = (C, S, R).
  using tile_shape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using cluster_shape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;

  using fusion = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<runtime_activation, element, float, element,
                                                                    element, float>;
  using collective_epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, tile_shape, cluster_shape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, element, cutlass::layout::TensorNHWC, alignment,
      element, cutlass::layout::TensorNHWC, alignment, cutlass::epilogue::TmaWarpSpecialized, fusion>::CollectiveOp;

  // Every byte of shared memory the epilogue does not need goes to mainloop stages: the ~140-220
  // registers per thread of these tiles allow one CTA per SM anyway.
  using collective_mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop, element,
      cutlass::layout::TensorNHWC, alignment, element, cutlass::layout::TensorNHWC, alignment, float, tile_shape,
      cluster_shape,
      cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename collective_epilogue::SharedStorage))>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

  using problem_shape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, 2>;
  using kernel = cutlass::conv::kernel::ConvUniversal<problem_shape, collective_mainloop, collective_epilogue>;
  using device = cutlass::conv::device::ConvUniversalAdapter<kernel>;
  using arguments = typename device::Arguments;
};

// What the epilogue computes beyond alpha * conv: y = act(beta * source + alpha * conv + bias).
struct fprop_epilogue {
  float alpha = 1.0f;
  float beta = 0.0f;
  const void* source = nullptr;  // c: y itself or z; read only when beta != 0
  const void* bias = nullptr;    // K contiguous values of y's type; null: no bias
  activation_arguments activation{};
};

// CUTLASS's arguments for the problem. Pointers may be null when only checking (can_implement
// and the workspace size look at shapes only).
template <typename Config>
typename Config::arguments fprop_arguments(const nhwc_geometry& g, const void* x, const void* w, void* y,
                                           const fprop_epilogue& e) {
  using shape_t = typename Config::problem_shape;
  using element = typename Config::element;
  const typename shape_t::TensorExtent activation{g.n, g.h, g.w, g.c};
  const typename shape_t::TensorExtent filter{g.k, g.r, g.s, g.c};
  const typename shape_t::ShapePadding lower{g.pad_before[0], g.pad_before[1]};
  const typename shape_t::ShapePadding upper{g.pad_after[0], g.pad_after[1]};
  const typename shape_t::TraversalStride stride{g.stride[0], g.stride[1]};
  const typename shape_t::ShapeDilation dilation{g.dilation[0], g.dilation[1]};
  // Packed strides are derived from the extents, which is what packed channels-last means.
  const shape_t shape(cutlass::conv::Mode::kCrossCorrelation, activation, filter, lower, upper, stride, dilation, 1);

  // y as the epilogue sees it: ((Q, P, N), K) with K contiguous.
  using stride_c = typename Config::kernel::StrideC;
  using stride_d = typename Config::kernel::StrideD;
  const int64_t q_stride = g.k, p_stride = int64_t{g.q} * g.k, n_stride = int64_t{g.p} * g.q * g.k;
  stride_c dc{};
  stride_d dd{};
  cute::get<0>(dc) = cute::make_stride(q_stride, p_stride, n_stride);
  cute::get<0>(dd) = cute::make_stride(q_stride, p_stride, n_stride);

  typename Config::arguments args(
      shape, {static_cast<const element*>(x), static_cast<const element*>(w)},
      {{}, static_cast<const element*>(e.source), dc, static_cast<element*>(y), dd});
  auto& thread = args.epilogue.thread;
  thread.alpha = e.alpha;
  thread.beta = e.beta;
  thread.bias_ptr = static_cast<const element*>(e.bias);
  thread.activation = e.activation;
  return args;
}

// CUTLASS's own can_implement, after ours (see cutlass_support).
template <typename Config>
std::string fprop_cutlass_support(const nhwc_geometry& g) {
  const auto args = fprop_arguments<Config>(g, nullptr, nullptr, nullptr, fprop_epilogue{});
  return cutlass_support<typename Config::device>(args, "fprop");
}

template <typename Config>
size_t fprop_workspace(const nhwc_geometry& g) {
  return Config::device::get_workspace_size(fprop_arguments<Config>(g, nullptr, nullptr, nullptr, fprop_epilogue{}));
}

template <typename Config>
void run_fprop(const nhwc_geometry& g, const void* x, const void* w, void* y, const fprop_epilogue& e,
               void* workspace, cudaStream_t stream) {
  launch<typename Config::device>(fprop_arguments<Config>(g, x, w, y, e), workspace, stream, "fprop");
}

}  // namespace tessera::cuda::igemm
