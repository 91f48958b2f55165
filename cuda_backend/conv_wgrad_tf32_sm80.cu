// Backward filter in fp32 on the TF32 tensor cores (issue 4: TF32 for every direction where the
// handle's math mode allows it):
//   "conv_bwd_filter_igemm_sm80_128x128x16_tf32"   dw = alpha * conv_backward_filter(x, dy) + beta * dw
//
// Why CUTLASS's sm80 (mma.sync) implicit GEMM and not the sm90 one the other directions use: the
// wgrad GEMM (M = K filters, N = C*R*S, reduction over N*P*Q pixels) reads dy with K contiguous
// and x with C contiguous, both MN-major, and the sm90 TF32 wgmma takes K-major operands only.
// The sm80 collectives load tiles into shared memory in a layout their warp-level TF32 mma.sync
// fragments can read either way, so no operand copy is needed. It also runs on any GPU from sm80
// on (the portable path the issue asks for).
// The pixel reduction is long (N*P*Q) and dw has few tiles, so the reduction is split over
// CTAs along it ("serial split-K": each split waits for the one before on a semaphore in the
// workspace, then adds its fp32 partial tile to dw): deterministic, the splits always add in the
// same order, no atomics. Split count from the tile count and the reduction length only, so that
// workspace and run agree on every device.
// fp32 x, dy and dw; packed NHWC x / KRSC dw / NPQK dy; C and K multiples of 8 (the family's
// common_support); one group, cross-correlation, 1-D and 2-D.
//
// Written on 2026-12-04 without a GPU to run it on: registered only under
// TESSERA_CUDA_TF32_WGRAD=1 until the H200 conformance run has passed it
// (tools/gpu/device_run.sh variants, "tf32_wgrad").
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "conv_igemm_wave_model.hpp"
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
#include <cutlass/conv/kernel/default_conv2d_wgrad.h>
#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/epilogue/thread/linear_combination.h>
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

// Splits of the pixel reduction: enough CTAs for two per SM of the model H200 (these tiles use
// ~48 KB of shared memory and 128 threads), each split at least 32 k-tiles long so that its
// semaphore wait and read-modify-write of the dw tile stay small against its main loop.
int reduction_splits(const igemm::nhwc_geometry& g) {
  const double tiles = std::ceil(double(g.k) / tile_m) * std::ceil(double(g.c) * g.r * g.s / tile_n);
  const double k_tiles = std::ceil(double(g.n) * g.p * g.q / tile_k);
  const int wanted = static_cast<int>(std::ceil(2.0 * igemm::model_sms / tiles));
  const int longest = static_cast<int>(std::max(1.0, std::floor(k_tiles / 32.0)));
  return std::clamp(std::min(wanted, longest), 1, 256);
}

// CUTLASS's arguments; null pointers when only checking shapes.
wgrad_device::Arguments wgrad_arguments(const igemm::nhwc_geometry& g, const void* x, const void* dy, void* dw,
                                        float alpha, float beta) {
  // Explicit P and Q with the padding before: CUTLASS's iterators place tap r of output p at
  // p * stride - pad + r * dilation and mask what falls outside x, so asymmetric padding (the
  // padding after is implied by P and Q) comes out right.
  const cutlass::conv::Conv2dProblemSize problem(g.n, g.h, g.w, g.c, g.k, g.r, g.s, g.p, g.q, g.pad_before[0],
                                                 g.pad_before[1], g.stride[0], g.stride[1], g.dilation[0],
                                                 g.dilation[1], cutlass::conv::Mode::kCrossCorrelation,
                                                 reduction_splits(g), 1);
  using layout = cutlass::layout::TensorNHWC;
  const auto packed = [](int n, int h, int w, int c) { return layout::packed({n, h, w, c}); };
  cutlass::TensorRef<element, layout> dy_ref(static_cast<element*>(const_cast<void*>(dy)), packed(g.n, g.p, g.q, g.k));
  cutlass::TensorRef<element, layout> x_ref(static_cast<element*>(const_cast<void*>(x)), packed(g.n, g.h, g.w, g.c));
  cutlass::TensorRef<float, layout> dw_ref(static_cast<float*>(dw), packed(g.k, g.r, g.s, g.c));
  return wgrad_device::Arguments(problem, dy_ref, x_ref, dw_ref, dw_ref, {alpha, beta},
                                 cutlass::conv::SplitKMode::kSerial);
}

// CUTLASS 2.x's 128-bit global accesses need 16-byte aligned operands.
void require_16_byte_alignment(const void* pointer, const char* name) {
  if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0) {
    throw status_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string(name) + " is not 16-byte aligned, which the 128-bit accesses of this kernel need");
  }
}

struct wgrad_tf32_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = "conv_bwd_filter_igemm_sm80_128x128x16_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward filter on TF32 tensor cores (CUTLASS sm80 implicit GEMM, mma.sync; only under "
      "TSR_MATH_ALLOW_TF32): x and dy enter the multiplies with 10-bit mantissas, fp32 accumulation; the pixel "
      "reduction split over CTAs that add their fp32 partial tiles to dw in a fixed order (serial split-K, "
      "semaphores in the workspace); packed NHWC x, KRSC dw, NPQK dy; C and K multiples of 8; 1-D and 2-D; "
      "deterministic";

  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) {
      return "fp32 backward filter runs on the TF32 tensor cores only when the handle's math mode is "
             "TSR_MATH_ALLOW_TF32 (tsrSetMathMode); exact fp32 runs on the direct kernels";
    }
    return igemm::backward_support(p, TSRP_DATA_FLOAT, p.w, [](const igemm::nhwc_geometry& g) -> std::string {
      if (int64_t{g.n} * g.p * g.q == 0) return "dy has no pixels (dw = beta * dw): left to the direct kernels";
      const cutlass::Status s = wgrad_device::can_implement(wgrad_arguments(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
      if (s != cutlass::Status::kSuccess) {
        return std::string("CUTLASS's sm80 TF32 wgrad cannot run this problem: ") + cutlassGetStatusString(s);
      }
      return {};
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    if (int64_t{g.n} * g.p * g.q == 0) return 0;
    return wgrad_device::get_workspace_size(wgrad_arguments(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
  }

  static double estimate_us(const problem_type& p) {
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    igemm::gemm_work work = igemm::wgrad_work(g, tile_n, tile_k, reduction_splits(g), false);
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
    require_16_byte_alignment(a.x, "x");
    require_16_byte_alignment(a.dy, "dy");
    require_16_byte_alignment(a.dw, "dw");
    const wgrad_device::Arguments args = wgrad_arguments(g, a.x, a.dy, a.dw, a.alpha, a.beta);
    if (wgrad_device::get_workspace_size(args) > 0) require_pointer(workspace, 1, "workspace");
    wgrad_device op;
    cutlass::Status s = op.initialize(args, workspace, ctx.stream());  // zeroes the semaphores (async)
    if (s == cutlass::Status::kSuccess) s = op.run(ctx.stream());
    if (s != cutlass::Status::kSuccess) {
      throw status_error(TSRP_STATUS_EXECUTION_FAILED,
                         std::string("CUTLASS's sm80 TF32 wgrad failed to launch: ") + cutlassGetStatusString(s));
    }
    check_cuda(cudaGetLastError(), "launching the TF32 backward filter");
  }
};

}  // namespace

void add_conv_wgrad_tf32_kernels(kernel_list& out) {
  if (launch_override("TESSERA_CUDA_TF32_WGRAD", 0, 0, 1) == 1) out.push_back(make_kernel<wgrad_tf32_traits>());
}

}  // namespace tessera::cuda
