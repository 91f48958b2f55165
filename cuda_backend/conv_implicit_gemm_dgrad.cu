// Backward data as implicit GEMM on the H200's tensor cores:
//   "conv_bwd_data_igemm_sm90_<tile>_<type>"   dx = alpha * conv_backward_data(w, dy) + beta * dx
// fp16 or bf16 w, dy and dx, fp32 accumulation, 1-D and 2-D, packed NHWC dx / KRSC w / NPQK dy
// with C and K multiples of 8, one group, cross-correlation, unit strides (CUTLASS's sm90 dgrad);
// strided problems run the same kernels phase by phase:
//   "conv_bwd_data_igemm_sm90_strided_<tile>_<type>"   (conv_igemm_dgrad_strided.cuh)
// and C not a multiple of 8 (3-channel stems) with zero channels, unit or strided:
//   "conv_bwd_data_igemm_sm90_padded_c_<tile>_<type>"  (conv_igemm_dgrad_padded.cuh)
// Tiles: 128x128x64 and 128x64x64 (measured faster for C <= 64), ranked by the wave model
// (dgrad_estimate_us); clusters of two CTAs along M sharing each filter tile. Deterministic: one
// CTA per output tile, fixed reduction order.
#include "conv_igemm_dgrad_padded.cuh"
#include "conv_igemm_dgrad_sm90.cuh"
#include "conv_igemm_dgrad_strided.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <algorithm>
#include <string>

namespace tessera::cuda {
namespace {

template <int32_t DataType, int TileM, int TileN>
struct dgrad_choice;

#define TESSERA_IGEMM_DGRAD_CHOICE(type, suffix, tm, tn)                                          \
  template <>                                                                                      \
  struct dgrad_choice<type, tm, tn> {                                                              \
    using config = igemm::dgrad_sm90<type, tm, tn, 64, 2>;                                         \
    static constexpr const char* name = "conv_bwd_data_igemm_sm90_" #tm "x" #tn "x64_" suffix;     \
    static constexpr const char* strided_name =                                                    \
        "conv_bwd_data_igemm_sm90_strided_" #tm "x" #tn "x64_" suffix;                             \
    static constexpr const char* padded_name =                                                     \
        "conv_bwd_data_igemm_sm90_padded_c_" #tm "x" #tn "x64_" suffix;                            \
  };
TESSERA_IGEMM_DGRAD_CHOICE(TSRP_DATA_HALF, "f16", 128, 128)
TESSERA_IGEMM_DGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 128)
TESSERA_IGEMM_DGRAD_CHOICE(TSRP_DATA_HALF, "f16", 128, 64)
TESSERA_IGEMM_DGRAD_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 64)
#undef TESSERA_IGEMM_DGRAD_CHOICE

// The operands every tensor-core dgrad reads or writes through TMA: present and 16-byte aligned.
void require_dgrad_operands(const tsrpConvolutionProblem& p, const tsrpConvolutionBackwardDataArgs& a) {
  require_pointer(a.w, element_count(p.w), "w");
  require_pointer(a.dy, element_count(p.y), "dy");
  require_pointer(a.dx, element_count(p.x), "dx");
  igemm::require_tma_alignment(a.w, "w");
  igemm::require_tma_alignment(a.dy, "dy");
  igemm::require_tma_alignment(a.dx, "dx");
}

template <typename Choice>
struct dgrad_traits {
  using config = typename Choice::config;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = Choice::name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "implicit GEMM on sm90 tensor cores (CUTLASS TMA + wgmma collectives), fp32 accumulation, one rounding "
      "of dx; packed NHWC dx, KRSC w, NPQK dy; C and K multiples of 8; unit strides; 1-D and 2-D; deterministic";

  // problem.x describes dx, problem.y describes dy.
  static std::string support(const problem_type& p) {
    return igemm::backward_support(p, config::data_type, p.x, [](const igemm::nhwc_geometry& g) {
      return igemm::dgrad_support<config>(g);
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    return igemm::dgrad_workspace<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static double estimate_us(const problem_type& p) {
    return igemm::dgrad_estimate_us<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_dgrad_operands(p, a);
    igemm::run_dgrad<config>(igemm::make_geometry(igemm::view_of(p)), a.w, a.dy, a.dx, a.alpha, a.beta, workspace,
                             ctx.stream());
  }
};

template <typename Choice>
struct strided_dgrad_traits {
  using config = typename Choice::config;
  using phases = igemm::strided_dgrad<config, typename igemm::cuda_element<config::data_type>::type>;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = Choice::strided_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "strides above 1 as one unit-stride implicit GEMM per phase of dx (sub-filters gathered into the "
      "workspace, dx written through strided views; phases no tap reaches get beta * dx); fp32 accumulation, one "
      "rounding; packed NHWC dx, KRSC w, NPQK dy; C and K multiples of 8; dilation 1; deterministic";

  static std::string support(const problem_type& p) {
    return igemm::backward_support(p, config::data_type, p.x, [](const igemm::nhwc_geometry& g) {
      return phases::support(g);
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    return phases::workspace(igemm::make_geometry(igemm::view_of(p)));
  }

  static double estimate_us(const problem_type& p) {
    return phases::estimate_us(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_dgrad_operands(p, a);
    const igemm::nhwc_geometry g = igemm::make_geometry(igemm::view_of(p));
    if (phases::workspace(g) > 0) {
      require_pointer(workspace, 1, "workspace");
      igemm::require_tma_alignment(workspace, "workspace");  // the gathered sub-filters are TMA operands
    }
    phases::run(g, a.w, a.dy, a.dx, a.alpha, a.beta, workspace, ctx.stream());
  }
};

template <typename Choice>
struct padded_dgrad_traits {
  using config = typename Choice::config;
  using padded = igemm::padded_channels_dgrad<config, typename igemm::cuda_element<config::data_type>::type>;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = Choice::padded_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "C not a multiple of 8 (3-channel stems) on the tensor cores: w staged with zero channels up to a multiple "
      "of 8, the unit-stride or strided implicit GEMM into a padded dx in the workspace (fp32 accumulation), then "
      "dx = alpha * dx' + beta * dx on the real channels (two roundings unless alpha is 1); packed NHWC dx, KRSC "
      "w, NPQK dy; K a multiple of 8; 1-D and 2-D; deterministic";

  static std::string support(const problem_type& p) {
    const std::string why = padded::support(igemm::view_of(p), config::data_type);
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    return padded::workspace(igemm::view_of(p));
  }

  static double estimate_us(const problem_type& p) { return padded::estimate_us(igemm::view_of(p)); }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dx, element_count(p.x), "dx");
    require_pointer(workspace, 1, "workspace");
    igemm::require_tma_alignment(a.dy, "dy");  // w and dx are staged: any alignment
    igemm::require_tma_alignment(workspace, "workspace");  // the staged w is a TMA operand
    padded::run(igemm::view_of(p), a.w, a.dy, a.dx, a.alpha, a.beta, workspace, std::max(ctx.sm_count(), 1),
                ctx.stream());
  }
};

}  // namespace

void add_conv_igemm_dgrad_kernels(kernel_list& out) {
  out.push_back(make_kernel<dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 128>>>());
  out.push_back(make_kernel<dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 128>>>());
  out.push_back(make_kernel<dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<strided_dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 128>>>());
  out.push_back(make_kernel<strided_dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 128>>>());
  out.push_back(make_kernel<strided_dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<strided_dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
  out.push_back(make_kernel<padded_dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 128>>>());
  out.push_back(make_kernel<padded_dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 128>>>());
  out.push_back(make_kernel<padded_dgrad_traits<dgrad_choice<TSRP_DATA_HALF, 128, 64>>>());
  out.push_back(make_kernel<padded_dgrad_traits<dgrad_choice<TSRP_DATA_BFLOAT16, 128, 64>>>());
}

}  // namespace tessera::cuda
