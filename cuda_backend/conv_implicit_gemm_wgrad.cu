// Backward filter as implicit GEMM on the H200's tensor cores:
//   "conv_bwd_filter_igemm_sm90_<tile>_<type>"          one CTA per dw tile
//   "conv_bwd_filter_igemm_sm90_split_k_<tile>_<type>"  N*P*Q split over more CTAs
//                                                       (conv_igemm_wgrad_split_k.cuh)
//   "conv_bwd_filter_igemm_sm90_split_k_padded_c_<tile>_<type>"  C not a multiple of 8, zero
//                                                       channels (conv_igemm_wgrad_padded.cuh)
// dw = alpha * conv_backward_filter(x, dy) + beta * dw; fp16 or bf16 x, dy and dw, fp32
// accumulation, 1-D and 2-D, packed NHWC x / KRSC dw / NPQK dy with C and K multiples of 8, one
// group, cross-correlation, strides up to 8. Tiles: 128x64x64 (filters x channels x pixels) and
// 64x64x64, which doubles the CTAs of layers with 64 filters. Both are deterministic: the split
// kernels add their fp32 partial sums in a fixed order, no atomics. Between them the registry's
// heuristic goes by wgrad_estimate_us (the wave model); the split kernels decline a dw with
// enough tiles to fill the GPU by itself.
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "conv_igemm_wgrad_sm90.cuh"
#include "conv_igemm_wave_model.hpp"
#include "conv_igemm_wgrad_padded.cuh"
#include "conv_igemm_wgrad_split_k.cuh"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"


#include <tessera/plugin_abi.h>

#include <algorithm>
#include <string>

namespace tessera::cuda {
namespace {

template <int32_t DataType, int TileM, int TileN>
struct wgrad_choice;

#define TESSERA_IGEMM_WGRAD_CHOICE(type, suffix, tm, tn)                                          \
  template <>                                                                                      \
  struct wgrad_choice<type, tm, tn> {                                                              \
    using config = igemm::wgrad_sm90<type, tm, tn, 64>;                                            \
    using split_config = igemm::wgrad_sm90<type, tm, tn, 64, true>;                                \
    static constexpr const char* name = "conv_bwd_filter_igemm_sm90_" #tm "x" #tn "x64_" suffix;   \
    static constexpr const char* split_name =                                                      \
        "conv_bwd_filter_igemm_sm90_split_k_" #tm "x" #tn "x64_" suffix;                           \
    static constexpr const char* padded_name =                                                     \
        "conv_bwd_filter_igemm_sm90_split_k_padded_c_" #tm "x" #tn "x64_" suffix;                  \
  };
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_HALF, "f16", 128, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_HALF, "f16", 64, 64)
TESSERA_IGEMM_WGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 64, 64)
#undef TESSERA_IGEMM_WGRAD_CHOICE

// The registry's heuristic among the wgrad kernels (conv_igemm_wave_model.hpp). The split
// kernels pay their fp32 partials even when the device leaves them one split.
template <typename Config>
double wgrad_estimate_us(const igemm::nhwc_geometry& g) {
  const int splits = Config::fp32_partials ? igemm::plan_wgrad_split<Config>(g, igemm::model_sms).splits : 1;
  return igemm::wave_estimate_us(Config::tile_m, Config::tile_n, Config::tile_k,
                                 igemm::wgrad_work(g, Config::tile_n, Config::tile_k, splits, Config::fp32_partials));
}

// The operands every tensor-core wgrad needs: x and dy read through TMA (16-byte aligned), dw.
void require_wgrad_operands(const tsrpConvolutionProblem& p, const tsrpConvolutionBackwardFilterArgs& a) {
  require_pointer(a.x, element_count(p.x), "x");
  require_pointer(a.dy, element_count(p.y), "dy");
  require_pointer(a.dw, element_count(p.w), "dw");
  igemm::require_tma_alignment(a.x, "x");
  igemm::require_tma_alignment(a.dy, "dy");
}

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
      "rounding of dw; packed NHWC x, KRSC dw, NPQK dy; C and K multiples of 8; 1-D and 2-D; one CTA per dw tile; "
      "deterministic";

  // problem.w describes dw, problem.y describes dy.
  static std::string support(const problem_type& p) {
    return igemm::backward_support(p, config::data_type, p.w, [](const igemm::nhwc_geometry& g) {
      return igemm::wgrad_support<config>(g);
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return igemm::wgrad_workspace<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static double estimate_us(const problem_type& p) {
    return wgrad_estimate_us<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_wgrad_operands(p, a);
    igemm::run_wgrad<config>(igemm::make_geometry(igemm::view_of(p)), a.x, a.dy, a.dw, a.alpha, a.beta, workspace,
                             ctx.stream());
  }
};

template <typename Choice>
struct split_k_wgrad_traits {
  using config = typename Choice::split_config;
  using split = igemm::wgrad_split_k<config, typename igemm::cuda_element<config::data_type>::type>;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = Choice::split_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "implicit GEMM on sm90 tensor cores (CUTLASS TMA + wgmma collectives) with N*P*Q split over up to 128 CTAs "
      "per dw tile: fp32 partial sums in the workspace, added in a fixed order, one rounding of dw; packed NHWC x, "
      "KRSC dw, NPQK dy; C and K multiples of 8; 1-D and 2-D; a 16-byte aligned workspace; deterministic";

  static std::string support(const problem_type& p) {
    return igemm::backward_support(p, config::data_type, p.w, [](const igemm::nhwc_geometry& g) {
      return split::support(g);
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return split::workspace(igemm::make_geometry(igemm::view_of(p)));
  }

  static double estimate_us(const problem_type& p) {
    return wgrad_estimate_us<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_wgrad_operands(p, a);
    require_pointer(workspace, 1, "workspace");
    igemm::require_aligned_workspace(workspace, "the fp32 partial sums");
    split::run(igemm::make_geometry(igemm::view_of(p)), a.x, a.dy, a.dw, a.alpha, a.beta, workspace,
               std::max(ctx.sm_count(), 1), ctx.stream());
  }
};

template <typename Choice>
struct padded_wgrad_traits {
  using config = typename Choice::split_config;
  using padded = igemm::padded_channels_wgrad<config, typename igemm::cuda_element<config::data_type>::type>;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = Choice::padded_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "C not a multiple of 8 (3-channel stems) on the tensor cores: x staged with zero channels up to a multiple "
      "of 8, the split-K implicit GEMM into fp32 partial sums, added in a fixed order keeping the real channels, "
      "one rounding of dw; packed NHWC x, KRSC dw, NPQK dy; K a multiple of 8; 1-D and 2-D; deterministic";

  static std::string support(const problem_type& p) {
    const std::string why = padded::support(igemm::view_of(p), config::data_type);
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return padded::workspace(igemm::view_of(p));
  }

  static double estimate_us(const problem_type& p) { return padded::estimate_us(igemm::view_of(p)); }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    require_pointer(workspace, 1, "workspace");
    igemm::require_tma_alignment(a.dy, "dy");  // x is staged: any alignment
    igemm::require_aligned_workspace(workspace, "the staged x and the fp32 partial sums");
    padded::run(igemm::view_of(p), a.x, a.dy, a.dw, a.alpha, a.beta, workspace, std::max(ctx.sm_count(), 1),
                ctx.stream());
  }
};

}  // namespace

void add_conv_igemm_wgrad_kernels(kernel_list& out) {
  out.push_back(make_kernel<split_k_wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<split_k_wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<split_k_wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 64, 64>>>());
  out.push_back(make_kernel<split_k_wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 64, 64>>>());
  out.push_back(make_kernel<padded_wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<padded_wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<padded_wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 64, 64>>>());
  out.push_back(make_kernel<padded_wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 64, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_HALF, 64, 64>>>());
  out.push_back(make_kernel<wgrad_traits<wgrad_choice<TSRP_DATA_BFLOAT16, 64, 64>>>());
}

}  // namespace tessera::cuda
