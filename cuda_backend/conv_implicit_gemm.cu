// Forward convolution as implicit GEMM on the H200's tensor cores (issue 4):
//   "conv_fwd_igemm_sm90_<tile>_<type>"          y = alpha * conv(x, w) + beta * y
//   "conv_bias_act_fwd_igemm_sm90_<tile>_<type>" y = act(alpha1 * conv(x, w) + alpha2 * z + bias)
// fp16 or bf16 x, w and y (and fp32 on the TF32 tensor cores when the handle's math mode allows
// it), fp32 accumulation, 1-D and 2-D, packed NHWC x / KRSC w / NPQK y with C
// and K multiples of 8, one group, cross-correlation. Both operations run the same CUTLASS
// kernel (conv_igemm_fprop_sm90.cuh), whose epilogue does the blend, bias and activation in fp32,
// so each tile costs one instantiation per element type. Tiles, best first: 128x128x64 (the
// ResNet-50 workhorse), 128x64x64 (layers with K <= 64, where a 128-wide N tile idles half the
// MMAs); both with clusters of two CTAs along M that share each filter tile through TMA
// multicast. Each output element is computed by one CTA in a fixed order: deterministic.
#include "conv_igemm_dgrad_fprop_form.cuh"
#include "conv_igemm_fprop_kernels.cuh"
#include "conv_igemm_kernels.hpp"
#include "cuda_kernels.hpp"
#include "launch_overrides.hpp"

#include <tessera/plugin_abi.h>

namespace tessera::cuda {
namespace {

// A forward kernel configuration and the names of the two kernels that run it.
template <int32_t DataType, int TileM, int TileN>
struct fprop_choice;

#define TESSERA_IGEMM_FPROP_CHOICE(type, suffix, tm, tn)                                            \
  template <>                                                                                        \
  struct fprop_choice<type, tm, tn> {                                                                \
    using config = igemm::fprop_sm90<type, tm, tn, 64, 2>;                                           \
    using layout = igemm::as_given_layout;                                                           \
    static constexpr const char* forward_name = "conv_fwd_igemm_sm90_" #tm "x" #tn "x64_" suffix;    \
    static constexpr const char* fused_name = "conv_bias_act_fwd_igemm_sm90_" #tm "x" #tn "x64_" suffix; \
  };
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_HALF, "f16", 128, 128)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 128)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_HALF, "f16", 128, 64)
TESSERA_IGEMM_FPROP_CHOICE(TSRP_DATA_BFLOAT16, "bf16", 128, 64)
#undef TESSERA_IGEMM_FPROP_CHOICE

// fp32 under TSR_MATH_ALLOW_TF32: the 128x128 tile with 32 fp32 channels per k-tile (the same
// 128-byte smem rows as 64 halves). One tile only: the TF32 path is for users who opt in to
// approximate fp32, and each tile is another CUTLASS instantiation to build.
template <>
struct fprop_choice<TSRP_DATA_FLOAT, 128, 128> {
  using config = igemm::fprop_sm90<TSRP_DATA_FLOAT, 128, 128, 32, 2>;
  using layout = igemm::as_given_tf32_layout;
  static constexpr const char* forward_name = "conv_fwd_igemm_sm90_128x128x32_tf32";
  static constexpr const char* fused_name = "conv_bias_act_fwd_igemm_sm90_128x128x32_tf32";
};

}  // namespace

void add_conv_implicit_gemm_kernels(kernel_list& out) {
  kernel_list forward, fused;
  igemm::add_fprop_choice<fprop_choice<TSRP_DATA_HALF, 128, 128>>(forward, fused);
  igemm::add_fprop_choice<fprop_choice<TSRP_DATA_BFLOAT16, 128, 128>>(forward, fused);
  igemm::add_fprop_choice<fprop_choice<TSRP_DATA_HALF, 128, 64>>(forward, fused);
  igemm::add_fprop_choice<fprop_choice<TSRP_DATA_BFLOAT16, 128, 64>>(forward, fused);
  igemm::add_fprop_choice<fprop_choice<TSRP_DATA_FLOAT, 128, 128>>(forward, fused);
  add_conv_igemm_space_to_depth_kernels(forward, fused);
  out.insert(out.end(), forward.begin(), forward.end());
  out.insert(out.end(), fused.begin(), fused.end());
  add_conv_igemm_3d_kernels(out);
  add_conv_igemm_dgrad_kernels(out);
  // The TF32 backward data runs the TF32 forward kernel above (conv_igemm_dgrad_fprop_form.cuh), so
  // it is instantiated in this file.
  out.push_back(make_kernel<igemm::dgrad_fprop_form_traits<fprop_choice<TSRP_DATA_FLOAT, 128, 128>::config>>());
  add_conv_igemm_wgrad_kernels(out);
  add_conv_wgrad_small_c_kernels(out);
  add_conv_backward_tf32_kernels(out);
}

}  // namespace tessera::cuda
