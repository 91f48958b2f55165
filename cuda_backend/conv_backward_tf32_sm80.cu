// fp32 backward convolutions on the TF32 tensor cores through CUTLASS's sm80 implicit GEMM
// (mma.sync m16n8k8 TF32; issue 4: TF32 for every direction where the handle's math mode allows it):
//   "conv_bwd_filter_igemm_sm80_128x128x16_tf32"  dw = alpha * conv_backward_filter(x, dy) + beta * dw
//   "conv_bwd_data_igemm_sm80_128x128x16_tf32"    dx = alpha * conv_backward_data(w, dy) + beta * dx
//
// Why the sm80 collectives and not the sm90 ones the fp16/bf16 kernels use: the TF32 wgmma takes
// K-major operands only, and the backward GEMMs have MN-major ones (backward filter: dy with K
// contiguous and x with C contiguous, both MN-major; backward data: w with C, its GEMM N,
// contiguous). The sm80 collectives load tiles into shared memory in layouts their warp-level
// TF32 mma.sync fragments read either way, so no operand copy is needed. They also run on any
// GPU from sm80 on (the portable path the issue asks for).
//  - Backward filter: the pixel reduction (N*P*Q) is long and dw has few tiles, so the reduction
//    is split over CTAs ("parallel split-K": each split writes its fp32 partial dw to its own slice
//    of the workspace, and reduce_wgrad_partials adds the slices in order and blends dw once):
//    deterministic for a given split, no atomics. The split is the fp16/bf16 split-K kernels' plan
//    (conv_wgrad_split_plan.hpp). Why not CUTLASS's serial split-K (each split waits on a semaphore
//    for the one before and adds its tile to dw), as first written: on the H200 (2026-12-05) its
//    chain of ~200 dependent read-add-writes made ResNet-50's early 1x1 layers 4-9x slower than
//    cuDNN (1x1 64->64 at N=32: 0.536 ms against cuDNN's 0.059).
//  - Backward data: CUTLASS's strided dgrad (each CTA one phase of dx, so stride 2 costs no wasted
//    taps), for every stride; dilation 1 only (its can_implement declines dilation at every stride,
//    unit stride included; dilated unit-stride problems have the forward form below). Unit-stride
//    problems also have the TF32 forward form (conv_igemm_dgrad_fprop_form.cuh, wgmma), which the
//    wave model ranks ahead of this one.
// fp32 x, dy and w; packed NHWC x / KRSC w / NPQK dy; C and K multiples of 8 (the family's
// common_support); one group, cross-correlation, 1-D and 2-D.
//
// Written on 2026-12-04 without a GPU; the H200 conformance run of 2026-12-05 passed both (tools/gpu/
// device_run.sh variants tf32_dgrad, tf32_wgrad), so they are registered like every other kernel.
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "conv_igemm_padded_channels.cuh"
#include "conv_igemm_wave_model.hpp"
#include "conv_wgrad_partials_reduce.cuh"
#include "conv_wgrad_split_plan.hpp"
#include "cuda_context.hpp"
#include "cuda_errors.hpp"
#include "kernel_glue.hpp"
#include "launch_overrides.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

// clang-format off
#include <cutlass/cutlass.h>
#include <cutlass/numeric_types.h>
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/kernel/default_conv2d_wgrad.h>
#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/conv/threadblock/threadblock_swizzle.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace tessera::cuda {
namespace {

// tfloat32_t: fp32 bits in memory; the tensor cores read the top 19 bits of each operand.
using element = cutlass::tfloat32_t;
constexpr int tile_m = 128, tile_n = 128, tile_k = 16;
using wgrad_kernel = typename cutlass::conv::kernel::DefaultConv2dWgrad<
    element, cutlass::layout::TensorNHWC, element, cutlass::layout::TensorNHWC, float, cutlass::layout::TensorNHWC,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<tile_m, tile_n, tile_k>,
    cutlass::gemm::GemmShape<64, 64, tile_k>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized>::Kernel;
using wgrad_device = cutlass::conv::device::ImplicitGemmConvolution<wgrad_kernel>;
using dgrad_kernel = typename cutlass::conv::kernel::DefaultConv2dDgrad<
    element, cutlass::layout::TensorNHWC, element, cutlass::layout::TensorNHWC, float, cutlass::layout::TensorNHWC,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<tile_m, tile_n, tile_k>,
    cutlass::gemm::GemmShape<64, 64, tile_k>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>, 3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized, cutlass::conv::StrideSupport::kStrided>::Kernel;
using dgrad_device = cutlass::conv::device::ImplicitGemmConvolution<dgrad_kernel>;

// The problem as CUTLASS 2.x describes it. Explicit P and Q with the padding before: CUTLASS's
// iterators place tap r of output p at p * stride - pad + r * dilation and mask what falls outside
// x, so asymmetric padding (the padding after is implied by P and Q) comes out right.
cutlass::conv::Conv2dProblemSize problem_of(const igemm::nhwc_geometry& g, int splits) {
  return cutlass::conv::Conv2dProblemSize(g.n, g.h, g.w, g.c, g.k, g.r, g.s, g.p, g.q, g.pad_before[0],
                                          g.pad_before[1], g.stride[0], g.stride[1], g.dilation[0], g.dilation[1],
                                          cutlass::conv::Mode::kCrossCorrelation, splits, 1);
}

using nhwc = cutlass::layout::TensorNHWC;
template <typename T>
cutlass::TensorRef<T, nhwc> packed_ref(const void* data, int n, int h, int w, int c) {
  return cutlass::TensorRef<T, nhwc>(static_cast<T*>(const_cast<void*>(data)), nhwc::packed({n, h, w, c}));
}

// The pixel reduction's split: the fp16/bf16 split-K kernels' plan (conv_wgrad_split_plan.hpp) with
// this kernel's grid. Two differences from theirs: CUTLASS's wgrad GEMM runs C*R*S as one flat N
// (so the plan sees C*R*S channels and a 1x1 filter: 3x3 64->64 has 5 column tiles, not 9), and
// two of these CTAs fit an SM (~48 KB of shared memory, 128 threads), so the plan fills two per SM.
// `sms`: the device's SM count at run time, split_planning_sms when sizing the workspace (the plan
// caps its CTA slots there, so the run's split never outgrows it). H200, 2026-12-05: 3x3 64->64 at
// N=32 0.309 -> 0.147 ms with this grid count; ResNet-50's backward filter at N=32 1.017x cuDNN's
// TF32 speed (geomean).
igemm::nhwc_geometry as_flat_gemm(const igemm::nhwc_geometry& g) {
  igemm::nhwc_geometry flat = g;
  flat.c = g.c * g.r * g.s;
  flat.r = flat.s = 1;
  return flat;
}

igemm::wgrad_split_plan split_plan(const igemm::nhwc_geometry& g, int sms) {
  return igemm::plan_wgrad_split(as_flat_gemm(g), tile_m, tile_n, tile_k, 2 * sms);
}

// CUTLASS's arguments for "parallel split-K": each split's fp32 partial dw (alpha 1, beta 0) in its
// own slice of `partials` (K x R x S x C floats each), for reduce_wgrad_partials to add in slice
// order and blend into dw. One split writes one slice. Null pointers when only checking shapes.
wgrad_device::Arguments partial_wgrad_arguments(const igemm::nhwc_geometry& g, const void* x, const void* dy,
                                                float* partials, int splits) {
  const auto partial_ref = packed_ref<float>(partials, g.k, g.r, g.s, g.c);
  return wgrad_device::Arguments(problem_of(g, splits), packed_ref<element>(dy, g.n, g.p, g.q, g.k),
                                 packed_ref<element>(x, g.n, g.h, g.w, g.c), partial_ref, partial_ref, {1.0f, 0.0f},
                                 cutlass::conv::SplitKMode::kParallel);
}

// One split: dw blended in the epilogue; more: the partials above.
wgrad_device::Arguments wgrad_arguments(const igemm::nhwc_geometry& g, const void* x, const void* dy, void* dw,
                                        float* partials, int splits, float alpha, float beta) {
  if (splits > 1) return partial_wgrad_arguments(g, x, dy, partials, splits);
  const auto dw_ref = packed_ref<float>(dw, g.k, g.r, g.s, g.c);
  return wgrad_device::Arguments(problem_of(g, 1), packed_ref<element>(dy, g.n, g.p, g.q, g.k),
                                 packed_ref<element>(x, g.n, g.h, g.w, g.c), dw_ref, dw_ref, {alpha, beta});
}

dgrad_device::Arguments dgrad_arguments(const igemm::nhwc_geometry& g, const void* w, const void* dy, void* dx,
                                        float alpha, float beta) {
  const auto dx_ref = packed_ref<float>(dx, g.n, g.h, g.w, g.c);
  return dgrad_device::Arguments(problem_of(g, 1), packed_ref<element>(dy, g.n, g.p, g.q, g.k),
                                 packed_ref<element>(w, g.k, g.r, g.s, g.c), dx_ref, dx_ref, {alpha, beta});
}

// CUTLASS's own can_implement, after our checks; empty when it accepts.
template <typename Device>
std::string cutlass_2x_support(const typename Device::Arguments& args, const char* direction) {
  const cutlass::Status s = Device::can_implement(args);
  if (s == cutlass::Status::kSuccess) return {};
  return std::string("CUTLASS's sm80 TF32 ") + direction + " cannot run this problem: " + cutlassGetStatusString(s);
}

// initialize (which zeroes a split run's workspace with an async memset) and launch.
template <typename Device>
void launch_2x(const typename Device::Arguments& args, void* workspace, cudaStream_t stream, const char* direction) {
  if (Device::get_workspace_size(args) > 0) require_pointer(workspace, 1, "workspace");
  Device op;
  cutlass::Status s = op.initialize(args, workspace, stream);
  if (s == cutlass::Status::kSuccess) s = op.run(stream);
  if (s != cutlass::Status::kSuccess) {
    throw status_error(TSRP_STATUS_EXECUTION_FAILED, std::string("CUTLASS's sm80 TF32 ") + direction +
                                                         " failed to launch: " + cutlassGetStatusString(s));
  }
  check_cuda(cudaGetLastError(), direction);
}

const char* const tf32_math_reason =
    "fp32 backward convolutions run on the TF32 tensor cores only when the handle's math mode is "
    "TSR_MATH_ALLOW_TF32 (tsrSetMathMode); exact fp32 runs on the direct kernels";

// The strided dgrad's GEMM work: each CTA runs one phase of dx, which meets only the taps that
// land on it, about ceil(R / stride) x ceil(S / stride) of them (dgrad_work counts all R x S).
igemm::gemm_work strided_dgrad_work(const igemm::nhwc_geometry& g) {
  igemm::gemm_work work = igemm::dgrad_work(g, tile_k);
  work.k_iterations = std::ceil(double(g.r) / g.stride[0]) * std::ceil(double(g.s) / g.stride[1]) *
                      std::ceil(double(g.k) / tile_k);
  work.element_bytes = 4;
  return work;
}

// Named before CUTLASS's can_implement, which would only say "Error Not Supported".
const char* const dgrad_dilation_reason =
    "dilation above 1: CUTLASS's strided dgrad takes dilation 1 only (unit-stride dilated problems have the "
    "TF32 forward form, conv_bwd_data_igemm_sm90_fprop_form_128x128x32_tf32)";

// What the 16-byte alignment of every operand is for, in the reasons (CUTLASS 2.x loads 128 bits).
const char* const wide_accesses = "the 128-bit accesses of this kernel";

struct wgrad_tf32_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = "conv_bwd_filter_igemm_sm80_128x128x16_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward filter on TF32 tensor cores (CUTLASS sm80 implicit GEMM, mma.sync; only under "
      "TSR_MATH_ALLOW_TF32): x and dy enter the multiplies with 10-bit mantissas, fp32 accumulation; the pixel "
      "reduction split over CTAs whose fp32 partial dw slices (workspace) a second kernel adds in a fixed order "
      "(parallel split-K); packed NHWC x, KRSC dw, NPQK dy; C and K multiples of 8; 1-D and 2-D; "
      "a 16-byte aligned workspace; deterministic";

  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) return tf32_math_reason;
    return igemm::backward_support(p, TSRP_DATA_FLOAT, p.w, [](const igemm::nhwc_geometry& g) -> std::string {
      if (int64_t{g.n} * g.p * g.q == 0) return "dy has no pixels (dw = beta * dw): left to the direct kernels";
      return cutlass_2x_support<wgrad_device>(
          wgrad_arguments(g, nullptr, nullptr, nullptr, nullptr, split_plan(g, igemm::split_planning_sms).splits,
                          1.0f, 0.0f),
          "wgrad");
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    if (int64_t{g.n} * g.p * g.q == 0) return 0;
    const igemm::wgrad_split_plan plan = split_plan(g, igemm::split_planning_sms);
    return plan.splits > 1 ? static_cast<size_t>(plan.splits) * plan.slice_elements * sizeof(float) : 0;
  }

  static double estimate_us(const problem_type& p) {
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    igemm::gemm_work work =
        igemm::wgrad_work(as_flat_gemm(g), tile_n, tile_k, split_plan(g, igemm::model_sms).splits, true);
    work.element_bytes = 4;
    // mma.sync reaches about half the rate of wgmma at these tiles: counted as twice the time.
    return 2.0 * igemm::wave_estimate_us(tile_m, tile_n, tile_k, work);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    if (int64_t{g.n} * g.p * g.q == 0) {  // support() declined it: an empty reduction has no CUTLASS grid
      throw status_error(TSRP_STATUS_NOT_SUPPORTED, "dy has no pixels (dw = beta * dw): left to the direct kernels");
    }
    igemm::require_16_byte_alignment(a.x, "x", wide_accesses);
    igemm::require_16_byte_alignment(a.dy, "dy", wide_accesses);
    igemm::require_16_byte_alignment(a.dw, "dw", wide_accesses);
    const igemm::wgrad_split_plan plan = split_plan(g, ctx.sm_count());
    if (plan.splits == 1) {
      launch_2x<wgrad_device>(wgrad_arguments(g, a.x, a.dy, a.dw, nullptr, 1, a.alpha, a.beta), nullptr, ctx.stream(),
                              "the TF32 backward filter");
      return;
    }
    require_pointer(workspace, 1, "workspace");
    igemm::require_aligned_workspace(workspace, "the fp32 partial sums' 128-bit stores and loads");
    auto* partials = static_cast<float*>(workspace);
    // CUTLASS's initialize zeroes `workspace` for a split run (its size, get_workspace_size, is the
    // partials'): given the partials themselves, that memset is the only cost of its bookkeeping.
    launch_2x<wgrad_device>(wgrad_arguments(g, a.x, a.dy, nullptr, partials, plan.splits, 1.0f, 0.0f), partials,
                            ctx.stream(), "the TF32 backward filter");
    launch_wgrad_partials_reduction<float>(partials, a.dw, plan.slice_elements, plan.splits, g.c, g.c, a.alpha,
                                           a.beta, ctx.sm_count(), ctx.stream(),
                                           "launching the TF32 backward filter's split reduction");
  }
};

struct dgrad_tf32_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = "conv_bwd_data_igemm_sm80_128x128x16_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward data on TF32 tensor cores (CUTLASS sm80 strided implicit GEMM, mma.sync, one CTA per phase "
      "of dx; only under TSR_MATH_ALLOW_TF32): w and dy enter the multiplies with 10-bit mantissas, fp32 "
      "accumulation, one rounding of dx; packed NHWC dx, KRSC w, NPQK dy; C and K multiples of 8; any stride, "
      "dilation 1 (CUTLASS's strided dgrad declines dilation at every stride); 1-D and 2-D; deterministic";

  // problem.x describes dx, problem.y describes dy.
  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) return tf32_math_reason;
    return igemm::backward_support(p, TSRP_DATA_FLOAT, p.x, [](const igemm::nhwc_geometry& g) -> std::string {
      if (g.k == 0) return "w has 0 filters: nothing for the tensor cores to reduce";
      if (g.dilation[0] != 1 || g.dilation[1] != 1) return dgrad_dilation_reason;
      return cutlass_2x_support<dgrad_device>(dgrad_arguments(g, nullptr, nullptr, nullptr, 1.0f, 0.0f), "dgrad");
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    return dgrad_device::get_workspace_size(dgrad_arguments(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
  }

  static double estimate_us(const problem_type& p) {
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    const igemm::gemm_work work = strided_dgrad_work(g);
    // mma.sync reaches about half the rate of wgmma at these tiles: counted as twice the time.
    return 2.0 * igemm::wave_estimate_us(tile_m, tile_n, tile_k, work);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dx, element_count(p.x), "dx");
    igemm::require_16_byte_alignment(a.w, "w", wide_accesses);
    igemm::require_16_byte_alignment(a.dy, "dy", wide_accesses);
    igemm::require_16_byte_alignment(a.dx, "dx", wide_accesses);
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    launch_2x<dgrad_device>(dgrad_arguments(g, a.w, a.dy, a.dx, a.alpha, a.beta), workspace, ctx.stream(),
                            "the TF32 backward data");
  }
};

// ---- C not a multiple of 8 (RGB stems) ---------------------------------------------------------
// The zero-channel staging of the fp16/bf16 backward kernels (conv_igemm_padded_channels.hpp):
// w (backward data) or x (backward filter) copied with C rounded up to 8 and the extra channels
// zero, so that every product the kernels above add is one of the real convolution's or zero. Why:
// fp32 ResNet-50 conv1 (C = 3) at N=32 under TF32 ran on the exact tiled kernels, backward data
// 78.7 ms against cuDNN's 0.76 and backward filter 0.80 against 0.29 (H200, 2026-12-05). These
// forms passed the H200 conformance, memcheck and racecheck in the next session and run conv1 in
// 1.74 ms (0.45x cuDNN's speed) and 0.45 ms (0.66x); registered since.

// Why a padded problem is declined, with the padding said; empty when CUTLASS takes it.
std::string padded_support(const std::string& inner) {
  return inner.empty() ? inner : "with C padded to a multiple of 8: " + inner;
}

struct dgrad_tf32_padded_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = "conv_bwd_data_igemm_sm80_padded_c_128x128x16_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward data on TF32 tensor cores for C not a multiple of 8 (only under TSR_MATH_ALLOW_TF32): w "
      "copied with C rounded up to 8 (zero channels) into the workspace, CUTLASS's sm80 strided dgrad writes the "
      "padded dx there in fp32, then dx = alpha * its first C channels + beta * dx (one rounding, fp32); packed "
      "NHWC dx, KRSC w, NPQK dy; K a multiple of 8; any stride, dilation 1; 1-D and 2-D; deterministic";

  // problem.x describes dx, problem.y describes dy.
  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) return tf32_math_reason;
    const igemm::conv_view v = igemm::view_of(p);
    const std::string why = igemm::padded_channels_support(v, TSRP_DATA_FLOAT);
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (element_count(p.x) == 0) return {};
    const igemm::nhwc_geometry gp = igemm::padded_geometry(v);
    if (gp.k == 0) return "w has 0 filters: nothing for the tensor cores to reduce";
    if (gp.dilation[0] != 1 || gp.dilation[1] != 1) return dgrad_dilation_reason;
    return padded_support(
        cutlass_2x_support<dgrad_device>(dgrad_arguments(gp, nullptr, nullptr, nullptr, 1.0f, 0.0f), "dgrad"));
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    const igemm::nhwc_geometry gp = igemm::padded_geometry(igemm::view_of(p));
    return igemm::padded_dgrad_space<float>::bytes(
        gp, dgrad_device::get_workspace_size(dgrad_arguments(gp, nullptr, nullptr, nullptr, 1.0f, 0.0f)));
  }

  static double estimate_us(const problem_type& p) {
    const igemm::conv_view v = igemm::view_of(p);
    const igemm::nhwc_geometry gp = igemm::padded_geometry(v);
    const igemm::gemm_work work = strided_dgrad_work(gp);
    // As the unpadded kernel's, plus the staging's.
    return 2.0 * igemm::wave_estimate_us(tile_m, tile_n, tile_k, work) +
           igemm::padded_dgrad_staging_us<float>(gp, v.x->dims[1]);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dx, element_count(p.x), "dx");
    require_pointer(workspace, 1, "workspace");
    // w and dx are read and written element by element (the staging kernels); dy and the staged
    // copies in the workspace are CUTLASS's operands.
    igemm::require_16_byte_alignment(a.dy, "dy", wide_accesses);
    igemm::require_aligned_workspace(workspace, "the staged w and dx, CUTLASS's operands,");
    const igemm::conv_view v = igemm::view_of(p);
    const igemm::nhwc_geometry g = igemm::make_geometry(v), gp = igemm::padded_geometry(v);
    const igemm::padded_dgrad_space<float> space(workspace, gp);
    igemm::stage_zero_channels<float>(a.w, space.filters, int64_t{g.k} * g.r * g.s, g.c, gp.c, ctx.sm_count(),
                                      ctx.stream(), "launching the filter's channel padding");
    launch_2x<dgrad_device>(dgrad_arguments(gp, space.filters, a.dy, space.dx, 1.0f, 0.0f), space.inner,
                            ctx.stream(), "the TF32 backward data (padded channels)");
    igemm::blend_unpadded_dx<float>(space.dx, a.dx, int64_t{g.n} * g.h * g.w, g.c, gp.c, a.alpha, a.beta,
                                    ctx.sm_count(), ctx.stream());
  }
};

struct wgrad_tf32_padded_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = "conv_bwd_filter_igemm_sm80_padded_c_128x128x16_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward filter on TF32 tensor cores for C not a multiple of 8 (only under TSR_MATH_ALLOW_TF32): x "
      "copied with C rounded up to 8 (zero channels) into the workspace, CUTLASS's sm80 implicit GEMM writes fp32 "
      "partial dw slices of the padded filter (parallel split-K), a second kernel adds them in a fixed order and "
      "keeps the first C channels; packed NHWC x, KRSC dw, NPQK dy; K a multiple of 8; 1-D and 2-D; "
      "deterministic";

  static size_t partial_bytes(const igemm::wgrad_split_plan& plan) {
    return static_cast<size_t>(plan.splits) * plan.slice_elements * sizeof(float);
  }

  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) return tf32_math_reason;
    const igemm::conv_view v = igemm::view_of(p);
    const std::string why = igemm::padded_channels_support(v, TSRP_DATA_FLOAT);
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (element_count(p.w) == 0) return {};
    const igemm::nhwc_geometry gp = igemm::padded_geometry(v);
    if (int64_t{gp.n} * gp.p * gp.q == 0) return "dy has no pixels (dw = beta * dw): left to the direct kernels";
    return padded_support(cutlass_2x_support<wgrad_device>(
        partial_wgrad_arguments(gp, nullptr, nullptr, nullptr, split_plan(gp, igemm::split_planning_sms).splits),
        "wgrad"));
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    const igemm::nhwc_geometry gp = igemm::padded_geometry(igemm::view_of(p));
    if (int64_t{gp.n} * gp.p * gp.q == 0) return 0;
    return igemm::align_workspace(igemm::padded_image_bytes<float>(gp)) +
           partial_bytes(split_plan(gp, igemm::split_planning_sms));
  }

  static double estimate_us(const problem_type& p) {
    const igemm::nhwc_geometry gp = igemm::padded_geometry(igemm::view_of(p));
    igemm::gemm_work work =
        igemm::wgrad_work(as_flat_gemm(gp), tile_n, tile_k, split_plan(gp, igemm::model_sms).splits, true);
    work.element_bytes = 4;
    // As the unpadded kernel's, plus the staging's.
    return 2.0 * igemm::wave_estimate_us(tile_m, tile_n, tile_k, work) + igemm::padded_wgrad_staging_us<float>(gp);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    const igemm::conv_view v = igemm::view_of(p);
    const igemm::nhwc_geometry g = igemm::make_geometry(v), gp = igemm::padded_geometry(v);
    if (int64_t{gp.n} * gp.p * gp.q == 0) {  // support() declined it: an empty reduction has no CUTLASS grid
      throw status_error(TSRP_STATUS_NOT_SUPPORTED, "dy has no pixels (dw = beta * dw): left to the direct kernels");
    }
    require_pointer(workspace, 1, "workspace");
    // x and dw are read and written element by element (the staging and reduction kernels); dy and
    // the staged x and partials in the workspace are CUTLASS's operands.
    igemm::require_16_byte_alignment(a.dy, "dy", wide_accesses);
    igemm::require_aligned_workspace(workspace, "the staged x and the fp32 partial sums, CUTLASS's operands,");
    const igemm::wgrad_split_plan plan = split_plan(gp, ctx.sm_count());
    auto* base = static_cast<uint8_t*>(workspace);
    auto* padded_x = reinterpret_cast<float*>(base);
    auto* partials = reinterpret_cast<float*>(base + igemm::align_workspace(igemm::padded_image_bytes<float>(gp)));
    igemm::stage_zero_channels<float>(a.x, padded_x, int64_t{g.n} * g.h * g.w, g.c, gp.c, ctx.sm_count(), ctx.stream(),
                                      "launching x's channel padding");
    // As in the unpadded kernel, CUTLASS's initialize zeroes the partials of a split run first.
    launch_2x<wgrad_device>(partial_wgrad_arguments(gp, padded_x, a.dy, partials, plan.splits), partials,
                            ctx.stream(), "the TF32 backward filter (padded channels)");
    launch_wgrad_partials_reduction<float>(partials, a.dw, plan.slice_elements, plan.splits, g.c, gp.c, a.alpha,
                                           a.beta, ctx.sm_count(), ctx.stream(),
                                           "launching the TF32 backward filter's split reduction (padded channels)");
  }
};

}  // namespace

void add_conv_backward_tf32_kernels(kernel_list& out) {
  out.push_back(make_kernel<dgrad_tf32_traits>());
  out.push_back(make_kernel<wgrad_tf32_traits>());
  out.push_back(make_kernel<dgrad_tf32_padded_traits>());
  out.push_back(make_kernel<wgrad_tf32_padded_traits>());
}

}  // namespace tessera::cuda
