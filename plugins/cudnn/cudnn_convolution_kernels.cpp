// Convolution forward, backward data, backward filter, backward bias and the fused
// conv + bias + residual + activation forward: one kernel per cuDNN algorithm, in the order
// selection should try them (the autotuner measures them all anyway).
//
// Left out on purpose:
//  - CUDNN_CONVOLUTION_FWD_ALGO_DIRECT and CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: cuDNN has
//    never implemented them (cudnn_ops.h says so of the latter); every problem would decline.
//  - fused kernels for the FFT and Winograd algorithms: cudnnConvolutionBiasActivationForward
//    takes them, but they serve only f16 NCHW stride-1 relu problems (fp32 is declined below), a
//    corner too small to be worth a kernel each.
// Determinism follows cuDNN's documentation ("Reproducibility" in the developer guide): results
// are bitwise reproducible on one architecture except for backward data ALGO_0 and backward
// filter ALGO_0 and ALGO_3, which accumulate with atomics (also marked in cudnn_ops.h).
#include "cudnn_convolution_geometry.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

constexpr uint32_t deterministic = TSRP_KERNEL_DETERMINISTIC;
constexpr uint32_t nondeterministic = 0;

// FFT and Winograd convolve through transforms whose rounding is not that of an fp32 sum of
// products: small-integer inputs, exact with every GEMM-based algorithm, come out ~1e-6 off. The
// default math mode promises fp32 arithmetic, so fp32 problems need TSR_MATH_ALLOW_TF32 (reduced
// fp32 precision allowed) to use them; f16 and bf16 round far above that error.
std::string transform_precision_rule(bool transform_based, const convolution_shape& s) {
  if (transform_based && s.x.data_type == TSRP_DATA_FLOAT && s.math_mode != TSRP_MATH_ALLOW_TF32)
    return "FFT/Winograd transforms are not exact in fp32; allowed only with TSR_MATH_ALLOW_TF32";
  return {};
}

struct convolution_prepared : prepared_problem {
  convolution_plan plan;
  convolution_descriptors d;
  size_t algorithm_bytes = 0;  // cuDNN's own workspace, right after the staging buffer
};

std::unique_ptr<convolution_prepared> prepare_descriptors(const convolution_shape& s) {
  auto prepared = std::make_unique<convolution_prepared>();
  const std::string why = plan_convolution(s, &prepared->plan);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  build_convolution_descriptors(s, prepared->plan, &prepared->d);
  return prepared;
}

void finish_workspace(convolution_prepared& prepared, size_t algorithm_bytes) {
  prepared.algorithm_bytes = algorithm_bytes;
  prepared.workspace_bytes = prepared.plan.staged_bytes + algorithm_bytes;
}

// Where cuDNN's own workspace starts in the caller's, and the staging buffer (if any).
void* algorithm_workspace(const convolution_prepared& prepared, void* workspace) {
  if (prepared.algorithm_bytes == 0) return nullptr;
  return static_cast<char*>(workspace) + prepared.plan.staged_bytes;
}

// ---- forward ----------------------------------------------------------------------------------

bool forward_transform_based(int algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

struct convolution_forward {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  using prepared_type = convolution_prepared;

  static std::string support(const problem_type& p, const kernel_spec& spec) {
    const convolution_shape s = convolution_shape_of(p);
    convolution_plan plan;
    std::string why = plan_convolution(s, &plan);
    if (why.empty() && p.output_scale_count != 0) why = "int8 not supported (output scales)";
    if (why.empty()) why = transform_precision_rule(forward_transform_based(spec.algorithm), s);
    return why;
  }

  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t handle, const problem_type& p, const kernel_spec& spec) {
    auto prepared = prepare_descriptors(convolution_shape_of(p));
    const convolution_descriptors& d = prepared->d;
    size_t bytes = 0;
    check_cudnn(cudnn().cudnnGetConvolutionForwardWorkspaceSize(
                    handle, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(spec.algorithm), &bytes),
                "cudnnGetConvolutionForwardWorkspaceSize");
    finish_workspace(*prepared, bytes);
    return prepared;
  }

  static void run(cudnnHandle_t handle, const prepared_type& prepared, const problem_type&, const args_type& a,
                  const kernel_spec& spec, void* workspace, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.w, "w");
    require_pointer(a.y, "y");
    const convolution_descriptors& d = prepared.d;
    const void* x = a.x;
    if (prepared.plan.staged) {
      stage_input(handle, prepared.plan, d, a.x, workspace);
      x = workspace;
    }
    check_cudnn(cudnn().cudnnConvolutionForward(handle, &a.alpha, d.x, x, d.w, a.w, d.conv,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(spec.algorithm),
                                                algorithm_workspace(prepared, workspace), prepared.algorithm_bytes,
                                                &a.beta, d.y, a.y),
                "cudnnConvolutionForward");
  }
};

// clang-format off
const kernel_spec forward_specs[] = {
  {"cudnn_conv_fwd_implicit_precomp_gemm", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN IMPLICIT_PRECOMP_GEMM; fp32 on FMA kernels unless TF32 is allowed", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM},
  {"cudnn_conv_fwd_implicit_gemm", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN IMPLICIT_GEMM", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
  {"cudnn_conv_fwd_gemm", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN GEMM (explicit im2col in the workspace)", CUDNN_CONVOLUTION_FWD_ALGO_GEMM},
  {"cudnn_conv_fwd_winograd", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN WINOGRAD; fp32 only with TF32 allowed (transform rounding)", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD},
  {"cudnn_conv_fwd_winograd_nonfused", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN WINOGRAD_NONFUSED; fp32 only with TF32 allowed (transform rounding)", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED},
  {"cudnn_conv_fwd_fft_tiling", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN FFT_TILING; fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING},
  {"cudnn_conv_fwd_fft", TSRP_OP_CONVOLUTION_FORWARD, deterministic,
   "cuDNN FFT (large workspace); fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_FWD_ALGO_FFT},
};
// clang-format on

// ---- backward data ----------------------------------------------------------------------------

bool backward_data_transform_based(int algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}

struct convolution_backward_data {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  using prepared_type = convolution_prepared;

  static std::string support(const problem_type& p, const kernel_spec& spec) {
    const convolution_shape s = convolution_shape_of(p);
    convolution_plan plan;
    std::string why = plan_convolution(s, &plan);
    if (why.empty()) why = transform_precision_rule(backward_data_transform_based(spec.algorithm), s);
    return why;
  }

  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t handle, const problem_type& p, const kernel_spec& spec) {
    auto prepared = prepare_descriptors(convolution_shape_of(p));
    const convolution_descriptors& d = prepared->d;
    size_t bytes = 0;
    check_cudnn(cudnn().cudnnGetConvolutionBackwardDataWorkspaceSize(
                    handle, d.w, d.y, d.conv, d.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(spec.algorithm), &bytes),
                "cudnnGetConvolutionBackwardDataWorkspaceSize");
    finish_workspace(*prepared, bytes);
    return prepared;
  }

  static void run(cudnnHandle_t handle, const prepared_type& prepared, const problem_type&, const args_type& a,
                  const kernel_spec& spec, void* workspace, size_t) {
    require_pointer(a.w, "w");
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    const convolution_descriptors& d = prepared.d;
    const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(spec.algorithm);
    void* algo_workspace = algorithm_workspace(prepared, workspace);
    if (!prepared.plan.staged) {
      check_cudnn(cudnn().cudnnConvolutionBackwardData(handle, &a.alpha, d.w, a.w, d.y, a.dy, d.conv, algo,
                                                       algo_workspace, prepared.algorithm_bytes, &a.beta, d.x, a.dx),
                  "cudnnConvolutionBackwardData");
      return;
    }
    // The gradient of the zero-extended x, then its interior blended into dx.
    const float one = 1.0f, none = 0.0f;
    check_cudnn(cudnn().cudnnConvolutionBackwardData(handle, &one, d.w, a.w, d.y, a.dy, d.conv, algo, algo_workspace,
                                                     prepared.algorithm_bytes, &none, d.x, workspace),
                "cudnnConvolutionBackwardData (into the padded copy of dx)");
    check_cudnn(cudnn().cudnnTransformTensor(handle, &a.alpha, d.x_interior,
                                             static_cast<const char*>(workspace) + prepared.plan.interior_offset,
                                             &a.beta, d.x_user, a.dx),
                "cudnnTransformTensor (dx out of its padded copy)");
  }
};

// clang-format off
const kernel_spec backward_data_specs[] = {
  {"cudnn_conv_bwd_data_algo_1", TSRP_OP_CONVOLUTION_BACKWARD_DATA, deterministic,
   "cuDNN BWD_DATA_ALGO_1", CUDNN_CONVOLUTION_BWD_DATA_ALGO_1},
  {"cudnn_conv_bwd_data_algo_0", TSRP_OP_CONVOLUTION_BACKWARD_DATA, nondeterministic,
   "cuDNN BWD_DATA_ALGO_0 (atomic accumulation: not deterministic)", CUDNN_CONVOLUTION_BWD_DATA_ALGO_0},
  {"cudnn_conv_bwd_data_winograd", TSRP_OP_CONVOLUTION_BACKWARD_DATA, deterministic,
   "cuDNN BWD_DATA WINOGRAD; fp32 only with TF32 allowed (transform rounding)", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD},
  {"cudnn_conv_bwd_data_winograd_nonfused", TSRP_OP_CONVOLUTION_BACKWARD_DATA, deterministic,
   "cuDNN BWD_DATA WINOGRAD_NONFUSED; fp32 only with TF32 allowed", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED},
  {"cudnn_conv_bwd_data_fft_tiling", TSRP_OP_CONVOLUTION_BACKWARD_DATA, deterministic,
   "cuDNN BWD_DATA FFT_TILING; fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING},
  {"cudnn_conv_bwd_data_fft", TSRP_OP_CONVOLUTION_BACKWARD_DATA, deterministic,
   "cuDNN BWD_DATA FFT; fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT},
};
// clang-format on

// ---- backward filter --------------------------------------------------------------------------

bool backward_filter_transform_based(int algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT || algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

struct convolution_backward_filter {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  using prepared_type = convolution_prepared;

  static std::string support(const problem_type& p, const kernel_spec& spec) {
    const convolution_shape s = convolution_shape_of(p);
    convolution_plan plan;
    std::string why = plan_convolution(s, &plan);
    if (why.empty()) why = transform_precision_rule(backward_filter_transform_based(spec.algorithm), s);
    return why;
  }

  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t handle, const problem_type& p, const kernel_spec& spec) {
    auto prepared = prepare_descriptors(convolution_shape_of(p));
    const convolution_descriptors& d = prepared->d;
    size_t bytes = 0;
    check_cudnn(cudnn().cudnnGetConvolutionBackwardFilterWorkspaceSize(
                    handle, d.x, d.y, d.conv, d.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(spec.algorithm),
                    &bytes),
                "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    finish_workspace(*prepared, bytes);
    return prepared;
  }

  static void run(cudnnHandle_t handle, const prepared_type& prepared, const problem_type&, const args_type& a,
                  const kernel_spec& spec, void* workspace, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.dy, "dy");
    require_pointer(a.dw, "dw");
    const convolution_descriptors& d = prepared.d;
    const void* x = a.x;
    if (prepared.plan.staged) {
      stage_input(handle, prepared.plan, d, a.x, workspace);
      x = workspace;
    }
    check_cudnn(cudnn().cudnnConvolutionBackwardFilter(
                    handle, &a.alpha, d.x, x, d.y, a.dy, d.conv,
                    static_cast<cudnnConvolutionBwdFilterAlgo_t>(spec.algorithm),
                    algorithm_workspace(prepared, workspace), prepared.algorithm_bytes, &a.beta, d.w, a.dw),
                "cudnnConvolutionBackwardFilter");
  }
};

// clang-format off
const kernel_spec backward_filter_specs[] = {
  {"cudnn_conv_bwd_filter_algo_1", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, deterministic,
   "cuDNN BWD_FILTER_ALGO_1", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1},
  {"cudnn_conv_bwd_filter_algo_0", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, nondeterministic,
   "cuDNN BWD_FILTER_ALGO_0 (atomic accumulation: not deterministic)", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0},
  {"cudnn_conv_bwd_filter_algo_3", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, nondeterministic,
   "cuDNN BWD_FILTER_ALGO_3 (atomic accumulation: not deterministic)", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3},
  {"cudnn_conv_bwd_filter_winograd_nonfused", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, deterministic,
   "cuDNN BWD_FILTER WINOGRAD_NONFUSED; fp32 only with TF32 allowed", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED},
  {"cudnn_conv_bwd_filter_fft_tiling", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, deterministic,
   "cuDNN BWD_FILTER FFT_TILING; fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING},
  {"cudnn_conv_bwd_filter_fft", TSRP_OP_CONVOLUTION_BACKWARD_FILTER, deterministic,
   "cuDNN BWD_FILTER FFT; fp32 only with TF32 allowed (FFT rounding)", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT},
};
// clang-format on

// ---- fused bias + residual + activation ---------------------------------------------------------

struct fused_prepared : convolution_prepared {
  tensor_descriptor bias, z;  // z: only for a residual in its own memory (else y's descriptor)
  activation_descriptor activation;
};

struct convolution_bias_activation {
  using problem_type = tsrpConvolutionBiasActivationProblem;
  using args_type = tsrpConvolutionBiasActivationArgs;
  using prepared_type = fused_prepared;

  static bool separate_z(const problem_type& p) { return p.has_z != 0 && p.z_aliases_y == 0; }

  static std::string support(const problem_type& p, const kernel_spec& spec) {
    const convolution_shape s = convolution_shape_of(p);
    convolution_plan plan;
    std::string why = plan_convolution(s, &plan);
    if (!why.empty()) return why;
    // cuDNN's fused call applies relu or nothing (cudnnConvolutionBiasActivationForward's
    // documentation); identity only with IMPLICIT_PRECOMP_GEMM.
    if (p.activation_mode == TSRP_ACTIVATION_IDENTITY) {
      if (spec.algorithm != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return "cuDNN fuses the identity activation only with IMPLICIT_PRECOMP_GEMM";
    } else if (p.activation_mode != TSRP_ACTIVATION_RELU) {
      return "cudnnConvolutionBiasActivationForward applies relu or identity only, not activation " +
             std::to_string(p.activation_mode);
    }
    if (p.bias.data_type != p.y.data_type) return "bias must have y's data type";
    if (p.has_z != 0 && p.z.data_type != p.y.data_type) return "z must have y's data type";
    // One layout for y and z is what cuDNN's fused kernels are documented for; a residual in
    // another layout is left to kernels that read it with its own strides.
    if (separate_z(p) && !same_layout(p.z, p.y)) return "residual z in a layout other than y's";
    return {};
  }

  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t handle, const problem_type& p, const kernel_spec& spec) {
    const convolution_shape s = convolution_shape_of(p);
    auto prepared = std::make_unique<fused_prepared>();
    const std::string why = plan_convolution(s, &prepared->plan);
    if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
    build_convolution_descriptors(s, prepared->plan, &prepared->d);
    prepared->bias = make_tensor_descriptor(lifted_like_plan(s, p.bias));
    if (separate_z(p)) prepared->z = make_tensor_descriptor(lifted_like_plan(s, p.z));
    prepared->activation = new_activation_descriptor();
    const cudnnActivationMode_t mode =
        p.activation_mode == TSRP_ACTIVATION_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY;
    check_cudnn(cudnn().cudnnSetActivationDescriptor(prepared->activation, mode, CUDNN_PROPAGATE_NAN, 0.0),
                "cudnnSetActivationDescriptor");
    const convolution_descriptors& d = prepared->d;
    size_t bytes = 0;
    check_cudnn(cudnn().cudnnGetConvolutionForwardWorkspaceSize(
                    handle, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(spec.algorithm), &bytes),
                "cudnnGetConvolutionForwardWorkspaceSize");
    finish_workspace(*prepared, bytes);
    return prepared;
  }

  static void run(cudnnHandle_t handle, const prepared_type& prepared, const problem_type& p, const args_type& a,
                  const kernel_spec& spec, void* workspace, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.w, "w");
    require_pointer(a.bias, "bias");
    require_pointer(a.y, "y");
    if (p.has_z != 0) require_pointer(a.z, "z");
    const convolution_descriptors& d = prepared.d;
    const void* x = a.x;
    if (prepared.plan.staged) {
      stage_input(handle, prepared.plan, d, a.x, workspace);
      x = workspace;
    }
    // Without a residual, cuDNN is given y as z with alpha2 = 0; like beta elsewhere, a zero
    // alpha2 means z is not read (frameworks rely on this for uninitialised outputs).
    const float alpha2 = p.has_z != 0 ? a.alpha2 : 0.0f;
    const void* z = p.has_z != 0 ? a.z : a.y;
    const cudnnTensorDescriptor_t z_desc = separate_z(p) ? prepared.z.get() : d.y.get();
    check_cudnn(cudnn().cudnnConvolutionBiasActivationForward(
                    handle, &a.alpha1, d.x, x, d.w, a.w, d.conv, static_cast<cudnnConvolutionFwdAlgo_t>(spec.algorithm),
                    algorithm_workspace(prepared, workspace), prepared.algorithm_bytes, &alpha2, z_desc, z,
                    prepared.bias, a.bias, prepared.activation, d.y, a.y),
                "cudnnConvolutionBiasActivationForward");
  }
};

// clang-format off
const kernel_spec fused_specs[] = {
  {"cudnn_conv_bias_act_implicit_precomp_gemm", TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD, deterministic,
   "cuDNN fused conv+bias+residual+relu/identity, IMPLICIT_PRECOMP_GEMM", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM},
  {"cudnn_conv_bias_act_implicit_gemm", TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD, deterministic,
   "cuDNN fused conv+bias+residual+relu, IMPLICIT_GEMM", CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
  {"cudnn_conv_bias_act_gemm", TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD, deterministic,
   "cuDNN fused conv+bias+residual+relu, GEMM", CUDNN_CONVOLUTION_FWD_ALGO_GEMM},
};
// clang-format on

// ---- backward bias ----------------------------------------------------------------------------

struct bias_gradient_prepared : prepared_problem {
  tensor_descriptor dy, db;
};

struct convolution_backward_bias {
  using problem_type = tsrpConvolutionBackwardBiasProblem;
  using args_type = tsrpConvolutionBackwardBiasArgs;
  using prepared_type = bias_gradient_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) {
    if (p.dy.data_type != p.db.data_type) return "dy and db must share one data type";
    // f32 and f16 are the types this plugin trusts cudnnConvolutionBackwardBias with; bf16 is
    // left off until a GPU run shows cuDNN accepts it (it cannot be asked beforehand).
    if (p.dy.data_type != TSRP_DATA_FLOAT && p.dy.data_type != TSRP_DATA_HALF)
      return std::string(data_type_name(p.dy.data_type)) + " bias gradient not enabled (f32 and f16 are)";
    if (p.dy.ndims < 3 || p.dy.ndims > 5) return "dy must have 3 to 5 dims";
    cudnn_tensor_shape shape;
    std::string why = cudnn_shape_of(p.dy, 4, &shape);
    return why.empty() ? cudnn_shape_of(p.db, 4, &shape) : why;
  }

  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    auto prepared = std::make_unique<prepared_type>();
    prepared->dy = make_tensor_descriptor(p.dy);
    prepared->db = make_tensor_descriptor(p.db);
    return prepared;
  }

  static void run(cudnnHandle_t handle, const prepared_type& prepared, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.dy, "dy");
    require_pointer(a.db, "db");
    check_cudnn(cudnn().cudnnConvolutionBackwardBias(handle, &a.alpha, prepared.dy, a.dy, &a.beta, prepared.db, a.db),
                "cudnnConvolutionBackwardBias");
  }
};

const kernel_spec backward_bias_specs[] = {
    {"cudnn_conv_bwd_bias", TSRP_OP_CONVOLUTION_BACKWARD_BIAS, deterministic,
     "cuDNN cudnnConvolutionBackwardBias", 0},
};

}  // namespace

void add_convolution_kernels(kernel_list& list) {
  add_kernels<convolution_forward>(list, forward_specs);
  add_kernels<convolution_backward_data>(list, backward_data_specs);
  add_kernels<convolution_backward_filter>(list, backward_filter_specs);
  add_kernels<convolution_bias_activation>(list, fused_specs);
  add_kernels<convolution_backward_bias>(list, backward_bias_specs);
}

}  // namespace tessera::cudnn_plugin
