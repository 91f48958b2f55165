// Backward filter as implicit GEMM on the H200's tensor cores:
//   "conv_bwd_filter_igemm_sm90_<tile>_<type>"  dw = alpha * conv_backward_filter(x, dy) + beta * dw
// fp16 or bf16 x, dy and dw, fp32 accumulation, 1-D and 2-D, packed NHWC x / KRSC dw / NPQK dy
// with C and K multiples of 8, one group, cross-correlation, strides up to 8. Tiles, best first:
// 128x64x64 (filters x channels x pixels) and 64x64x64, which doubles the CTAs of layers with 64
// filters. Deterministic: one CTA reduces each dw tile in a fixed order (no split-K atomics).
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "conv_igemm_wgrad_sm90.cuh"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::cuda {
namespace {

template <int32_t DataType, int TileM, int TileN>
struct wgrad_choice;

#define TESSERA_IGEMM_WGRAD_CHOICE(type, suffix, tm, tn)                                          \
  template <>                                                                                      \
  struct wgrad_choice<type, tm, tn> {                                                              \
    using config = igemm::wgrad_sm90<type, tm, tn, 64>;                                            \
    static constexpr const char* name = "conv_bwd_filter_igemm_sm90_" #tm "x" #tn "x64_" suffix;   \
  };
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_HALF, "f16", 128, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_HALF, "f16", 64, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 64, 64)
#undef TESSERA_IGEMM_WGRAD_CHOICE

template <typename Choice>
struct wgrad_traits {
  using config = typename Choice::config;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = Choice::name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "implicit GEMM on sm90 tensor cores (CUTLASS TMA + wgmma collectives), fp32 accumulation over N*P*Q, one "
      "rounding of dw; packed NHWC x, KRSC dw, NPQK dy; C and K multiples of 8; 1-D and 2-D; no split-K; "
      "deterministic";

  // problem.w describes dw, problem.y describes dy.
  static std::string support(const problem_type& p) {
    const igemm::conv_view v = igemm::view_of(p);
    const std::string why = igemm::common_support(v, config::data_type);
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (element_count(p.w) == 0) return {};  // nothing to compute; run() returns at once
    return igemm::wgrad_support<config>(igemm::make_geometry(v));
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return igemm::wgrad_workspace<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    igemm::require_tma_alignment(a.x, "x");
    igemm::require_tma_alignment(a.dy, "dy");
    igemm::run_wgrad<config>(igemm::make_geometry(igemm::view_of(p)), a.x, a.dy, a.dw, a.alpha, a.beta, workspace,
                             ctx.stream());
  }
};

}  // namespace

void add_conv_igemm_wgrad_kernels(kernel_list& out) {
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 64, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 64, 64>>>());
}

}  // namespace tessera::cuda
