// The registry kernels around the sm90 forward convolution (conv_igemm_fprop_sm90.cuh), written
// once for every way of feeding it. A "choice" names one configuration:
//   using config = igemm::fprop_sm90<...>;        the CUTLASS kernel
//   using layout = ...;                           how the caller's tensors become its operands
//   static constexpr const char* forward_name, *fused_name;
// and the two traits below turn it into a "conv_fwd_*" and a "conv_bias_act_fwd_*" kernel
// (kernel_glue.hpp's lifecycle). Both run the same CUTLASS kernel, whose epilogue does the blend,
// bias and activation in fp32, so a configuration costs one instantiation per element type.
//
// A layout (all members static):
//   forward_notes, fused_notes                     numerical notes shown to users
//   std::string support(const conv_view&, int32_t element)   empty: the layout can feed it
//   nhwc_geometry geometry(const conv_view&)       the problem the CUTLASS kernel sees
//   size_t staging_bytes(const conv_view&)         workspace the layout itself needs
//   staged_operands stage(const conv_view&, x, w, workspace, stream)  enqueues any staging
// as_given_layout below takes the tensors as they are; conv_implicit_gemm_space_to_depth.cu has
// the one that folds strides into channels for the small-C stem convolutions.
#pragma once

#include "conv_igemm_fprop_sm90.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_wave_model.hpp"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace tessera::cuda::igemm {

// What the CUTLASS kernel reads after a layout staged (or did not stage) the caller's tensors.
struct staged_operands {
  nhwc_geometry geometry;
  const void* x;
  const void* w;
  void* workspace;  // what is left for CUTLASS
};


// The caller's tensors are the CUTLASS kernel's operands: packed NHWC x, KRSC w, C and K
// multiples of 8.
struct as_given_layout {
  static constexpr const char* forward_notes =
      "implicit GEMM on sm90 tensor cores (CUTLASS TMA + wgmma collectives), fp32 accumulation, one rounding "
      "of y; packed NHWC x, KRSC w, NPQK y; C and K multiples of 8; 1-D and 2-D; deterministic";
  static constexpr const char* fused_notes =
      "implicit GEMM on sm90 tensor cores with bias, residual and activation in the fp32 epilogue (one "
      "rounding of y); packed NHWC x, KRSC w, NPQK y and z; C and K multiples of 8; 1-D and 2-D; deterministic";

  static std::string support(const conv_view& v, int32_t element) {
    std::string why = common_support(v, element);
    if (!why.empty()) return why;
    if (element_count(*v.y) != 0 && v.x->dims[1] == 0) return "x has 0 channels: nothing for the tensor cores to reduce";
    return {};
  }
  static nhwc_geometry geometry(const conv_view& v) { return make_geometry(v); }
  static size_t staging_bytes(const conv_view&) { return 0; }
  static staged_operands stage(const conv_view& v, const void* x, const void* w, void* workspace, cudaStream_t) {
    return {make_geometry(v), x, w, workspace};
  }
};

// fp32 x, w and y on the TF32 tensor cores (only under TSR_MATH_ALLOW_TF32): the caller's tensors
// as given; what differs is what users are told about the numbers.
struct as_given_tf32_layout : as_given_layout {
  static constexpr const char* forward_notes =
      "implicit GEMM on sm90 TF32 tensor cores (CUTLASS TMA + wgmma collectives): fp32 x and w enter the "
      "multiplies with 10-bit mantissas, fp32 accumulation, fp32 y; only under TSR_MATH_ALLOW_TF32; packed NHWC "
      "x, KRSC w, NPQK y; C and K multiples of 8; 1-D and 2-D; deterministic";
  static constexpr const char* fused_notes =
      "implicit GEMM on sm90 TF32 tensor cores with bias, residual and activation in the fp32 epilogue; fp32 x "
      "and w enter the multiplies with 10-bit mantissas; only under TSR_MATH_ALLOW_TF32; packed NHWC x, KRSC w, "
      "NPQK y and z; C and K multiples of 8; 1-D and 2-D; deterministic";
};

// Checks of the forward problem shared by both operations: the layout's own, then the TMA
// im2col window over the operand CUTLASS walks, then CUTLASS's can_implement.
template <typename Choice>
std::string fprop_support(const conv_view& v) {
  using config = typename Choice::config;
  using layout = typename Choice::layout;
  std::string why = layout::support(v, config::data_type);
  if (!why.empty()) return why;
  if (config::data_type == TSRP_DATA_FLOAT && v.math_mode != TSRP_MATH_ALLOW_TF32) {
    return "fp32 x, w and y run on the TF32 tensor cores only when the handle's math mode is TSR_MATH_ALLOW_TF32 "
           "(tsrSetMathMode); exact fp32 runs on the direct kernels";
  }
  if (element_count(*v.y) == 0) return {};  // nothing to compute; run() returns at once
  const nhwc_geometry g = layout::geometry(v);
  // TMA walks x from corner -pad_before to pad_after - (filter - 1) * dilation past its end.
  const int lower[2] = {-g.pad_before[0], -g.pad_before[1]};
  const int upper[2] = {g.pad_after[0] - (g.r - 1) * g.dilation[0], g.pad_after[1] - (g.s - 1) * g.dilation[1]};
  const int filter[2] = {g.r, g.s};
  why = im2col_corner_support("x", lower, upper, filter, g.dilation);
  if (!why.empty()) return why;
  return fprop_cutlass_support<config>(g);
}

// The registry's heuristic among the configurations (conv_igemm_wave_model.hpp). It picks 128x64
// exactly where that tile was measured faster (K <= 64).
template <typename Config>
double fprop_geometry_estimate_us(const nhwc_geometry& g, double staging_bytes) {
  gemm_work work = fprop_work(g, Config::tile_k, staging_bytes);
  work.element_bytes = Config::data_type == TSRP_DATA_FLOAT ? 4 : 2;
  return wave_estimate_us(Config::tile_m, Config::tile_n, Config::tile_k, work);
}

template <typename Choice>
double fprop_estimate_us(const conv_view& v) {
  using layout = typename Choice::layout;
  return fprop_geometry_estimate_us<typename Choice::config>(layout::geometry(v), double(layout::staging_bytes(v)));
}

template <typename Choice>
size_t fprop_kernel_workspace(const conv_view& v) {
  if (element_count(*v.y) == 0) return 0;
  using layout = typename Choice::layout;
  return align_workspace(layout::staging_bytes(v)) + fprop_workspace<typename Choice::config>(layout::geometry(v));
}

// Stages the operands and runs the CUTLASS kernel on the context's stream.
template <typename Choice>
void run_fprop_choice(cuda_context& ctx, const conv_view& v, const void* x, const void* w, void* y,
                      const fprop_epilogue& e, void* workspace) {
  require_tma_alignment(y, "y");
  const staged_operands op = Choice::layout::stage(v, x, w, workspace, ctx.stream());
  require_tma_alignment(op.x, "x");
  require_tma_alignment(op.w, "w");
  run_fprop<typename Choice::config>(op.geometry, op.x, op.w, y, e, op.workspace, ctx.stream());
}

template <typename Choice>
struct fprop_forward_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr const char* name = Choice::forward_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = Choice::layout::forward_notes;

  static std::string support(const problem_type& p) {
    const std::string why = fprop_support<Choice>(view_of(p));
    if (!why.empty()) return why;
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    return {};
  }

  static size_t workspace(const problem_type& p) { return fprop_kernel_workspace<Choice>(view_of(p)); }
  static double estimate_us(const problem_type& p) { return fprop_estimate_us<Choice>(view_of(p)); }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    fprop_epilogue e;
    e.alpha = a.alpha;
    e.beta = a.beta;
    e.source = a.y;  // read only when beta != 0
    run_fprop_choice<Choice>(ctx, view_of(p), a.x, a.w, a.y, e, workspace);
  }
};

template <typename Choice>
struct fprop_fused_traits {
  using problem_type = tsrpConvolutionBiasActivationProblem;
  using args_type = tsrpConvolutionBiasActivationArgs;
  static constexpr const char* name = Choice::fused_name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = Choice::layout::fused_notes;

  static std::string support(const problem_type& p) {
    const std::string why = fprop_support<Choice>(view_of(p));
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

  static size_t workspace(const problem_type& p) { return fprop_kernel_workspace<Choice>(view_of(p)); }
  static double estimate_us(const problem_type& p) { return fprop_estimate_us<Choice>(view_of(p)); }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    require_pointer(a.bias, element_count(p.bias), "bias");
    fprop_epilogue e;
    e.alpha = a.alpha1;
    // Without z (or with alpha2 == 0) beta is 0 and the epilogue loads nothing through source.
    const bool blend = p.has_z != 0 && a.alpha2 != 0.0f;
    e.beta = blend ? a.alpha2 : 0.0f;
    e.source = a.y;
    if (blend) {
      const void* z = p.z_aliases_y ? a.y : a.z;
      require_pointer(z, element_count(p.z), "z");
      require_tma_alignment(z, "z");
      e.source = z;
    }
    e.bias = a.bias;
    e.activation.mode = p.activation_mode;
    e.activation.coef = static_cast<float>(p.activation_coef);
    run_fprop_choice<Choice>(ctx, view_of(p), a.x, a.w, a.y, e, workspace);
  }
};

// Adds the forward and the fused kernel of a choice to their lists.
template <typename Choice>
void add_fprop_choice(kernel_list& forward, kernel_list& fused) {
  forward.push_back(make_kernel<fprop_forward_traits<Choice>>());
  fused.push_back(make_kernel<fprop_fused_traits<Choice>>());
}

}  // namespace tessera::cuda::igemm
