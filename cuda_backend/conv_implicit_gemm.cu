// Forward convolution as implicit GEMM on the H200's tensor cores (issue 4):
//   "conv_fwd_igemm_sm90_<tile>_<type>"          y = alpha * conv(x, w) + beta * y
//   "conv_bias_act_fwd_igemm_sm90_<tile>_<type>" y = act(alpha1 * conv(x, w) + alpha2 * z + bias)
// fp16 or bf16 x, w and y, fp32 accumulation, 1-D and 2-D, packed NHWC x / KRSC w / NPQK y with C
// and K multiples of 8, one group, cross-correlation. Both operations run the same CUTLASS
// kernel (conv_igemm_fprop_sm90.cuh), whose epilogue does the blend, bias and activation in fp32,
// so each tile costs one instantiation per element type. Tiles, best first: 128x128x64 (the
// ResNet-50 workhorse), 128x64x64 (layers with K <= 64, where a 128-wide N tile idles half the
// MMAs); both with clusters of two CTAs along M that share each filter tile through TMA
// multicast. Each output element is computed by one CTA in a fixed order: deterministic.
#include "conv_igemm_fprop_sm90.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "cuda_context.hpp"
#include "cuda_kernels.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::cuda {
namespace {

using igemm::fprop_epilogue;
using igemm::nhwc_geometry;

// A forward kernel configuration and the names of the two kernels that run it.
template <int32_t DataType, int TileM, int TileN>
struct fprop_choice;

#define TESSERA_IGEMM_FPROP_CHOICE(type, suffix, tm, tn)                                            \
  template <>                                                                                        \
  struct fprop_choice<type, tm, tn> {                                                                \
    using config = igemm::fprop_sm90<type, tm, tn, 64, 2>;                                           \
    static constexpr const char* forward_name = "conv_fwd_igemm_sm90_" #tm "x" #tn "x64_" suffix;    \
    static constexpr const char* fused_name = "conv_bias_act_fwd_igemm_sm90_" #tm "x" #tn "x64_" suffix; \
  };
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_HALF, "f16", 128, 128)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 128)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_HALF, "f16", 128, 64)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 64)
#undef TESSERA_IGEMM_FPROP_CHOICE

constexpr const char* forward_notes =
    "implicit GEMM on sm90 tensor cores (CUTLASS TMA + wgmma collectives), fp32 accumulation, one rounding "
    "of y; packed NHWC x, KRSC w, NPQK y; C and K multiples of 8; 1-D and 2-D; deterministic";
constexpr const char* fused_notes =
    "implicit GEMM on sm90 tensor cores with bias, residual and activation in the fp32 epilogue (one "
    "rounding of y); packed NHWC x, KRSC w, NPQK y and z; C and K multiples of 8; 1-D and 2-D; deterministic";

// Checks of the forward problem shared by both operations: what every direction needs, then
// the TMA im2col window over x.
template <typename Config>
std::string fprop_support(const igemm::conv_view& v) {
  std::string why = igemm::common_support(v, Config::data_type);
  if (!why.empty()) return why;
  if (element_count(*v.y) == 0) return {};  // nothing to compute; run() returns at once
  if (v.x->dims[1] == 0) return "x has 0 channels: nothing for the tensor cores to reduce";
  const nhwc_geometry g = igemm::make_geometry(v);
  // TMA walks x from corner -pad_before to pad_after - (filter - 1) * dilation past its end.
  const int lower[2] = {-g.pad_before[0], -g.pad_before[1]};
  const int upper[2] = {g.pad_after[0] - (g.r - 1) * g.dilation[0], g.pad_after[1] - (g.s - 1) * g.dilation[1]};
  const int filter[2] = {g.r, g.s};
  why = igemm::im2col_corner_support("x", lower, upper, filter, g.dilation);
  if (!why.empty()) return why;
  return igemm::fprop_cutlass_support<Config>(g);
}

void require_aligned_operands(const void* x, const void* w, const void* y) {
  igemm::require_tma_alignment(x, "x");
  igemm::require_tma_alignment(w, "w");
  igemm::require_tma_alignment(y, "y");
}

template <typename Choice>
struct forward_traits {
  using config = typename Choice::config;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr const char* name = Choice::forward_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = forward_notes;

  static std::string support(const problem_type& p) {
    const std::string why = fprop_support<config>(igemm::view_of(p));
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.y) == 0) return 0;
    return igemm::fprop_workspace<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    require_aligned_operands(a.x, a.w, a.y);
    fprop_epilogue e;
    e.alpha = a.alpha;
    e.beta = a.beta;
    e.source = a.y;  // read only when beta != 0
    igemm::run_fprop<config>(igemm::make_geometry(igemm::view_of(p)), a.x, a.w, a.y, e, workspace, ctx.stream());
  }
};

template <typename Choice>
struct fused_traits {
  using config = typename Choice::config;
  using problem_type = tsrpConvolutionBiasActivationProblem;
  using args_type = tsrpConvolutionBiasActivationArgs;
  static constexpr const char* name = Choice::fused_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = fused_notes;

  static std::string support(const problem_type& p) {
    const std::string why = fprop_support<config>(igemm::view_of(p));
    if (!why.empty()) return why;
    if (p.bias.data_type != p.y.data_type) {
      return std::string("bias data type ") + data_type_name(p.bias.data_type) + " differs from y's";
    }
    if (p.bias.ndims != p.y.ndims) return "bias must have as many dims as y";
    for (int d = 0; d < p.bias.ndims; ++d) {
      if (p.bias.dims[d] != (d == 1 ? p.y.dims[1] : 1)) return "bias must be 1 x K x 1 ...";
    }
    // The epilogue reads bias[k] at k; any stride of a single value is fine.
    if (p.bias.dims[1] > 1 && p.bias.strides[1] != 1) return "bias is not contiguous over K";
    if (p.has_z) {
      if (p.z.data_type != p.y.data_type) {
        return std::string("z data type ") + data_type_name(p.z.data_type) + " differs from y's";
      }
      if (!same_dims(p.z, p.y)) return "z's dims differ from y's";
      // The epilogue reads z through y's (packed NPQK) layout.
      if (!p.z_aliases_y && !same_strides(p.z, p.y)) {
        return "z's strides differ from y's (z must be packed NPQK like y)";
      }
    }
    if (p.activation_mode < TSRP_ACTIVATION_IDENTITY || p.activation_mode > TSRP_ACTIVATION_SWISH) {
      return "activation mode " + std::to_string(p.activation_mode) + " not supported";
    }
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.y) == 0) return 0;
    return igemm::fprop_workspace<config>(igemm::make_geometry(igemm::view_of(p)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    require_pointer(a.bias, element_count(p.bias), "bias");
    require_aligned_operands(a.x, a.w, a.y);
    fprop_epilogue e;
    e.alpha = a.alpha1;
    // Without z (or with alpha2 == 0) beta is 0 and the epilogue loads nothing through source.
    const bool blend = p.has_z != 0 && a.alpha2 != 0.0f;
    e.beta = blend ? a.alpha2 : 0.0f;
    e.source = a.y;
    if (blend) {
      const void* z = p.z_aliases_y ? a.y : a.z;
      require_pointer(z, element_count(p.z), "z");
      igemm::require_tma_alignment(z, "z");
      e.source = z;
    }
    e.bias = a.bias;
    e.activation.mode = p.activation_mode;
    e.activation.coef = static_cast<float>(p.activation_coef);
    igemm::run_fprop<config>(igemm::make_geometry(igemm::view_of(p)), a.x, a.w, a.y, e, workspace, ctx.stream());
  }
};

template <typename Choice>
void add_choice(kernel_list& forward, kernel_list& fused) {
  forward.push_back(make_kernel<forward_traits<Choice>>());
  fused.push_back(make_kernel<fused_traits<Choice>>());
}

}  // namespace

void add_conv_implicit_gemm_kernels(kernel_list& out) {
  kernel_list forward, fused;
  add_choice<fprop_choice<TSRP_DATA_HALF, 128, 128>>(forward, fused);
  add_choice<fprop_choice<TSRP_DATA_BFLOAT16, 128, 128>>(forward, fused);
  add_choice<fprop_choice<TSRP_DATA_HALF, 128, 64>>(forward, fused);
  add_choice<fprop_choice<TSRP_DATA_BFLOAT16, 128, 64>>(forward, fused);
  out.insert(out.end(), forward.begin(), forward.end());
  out.insert(out.end(), fused.begin(), fused.end());
  add_conv_igemm_dgrad_kernels(out);
  add_conv_igemm_wgrad_kernels(out);
}

}  // namespace tessera::cuda
