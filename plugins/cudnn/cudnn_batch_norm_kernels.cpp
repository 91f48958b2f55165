// Batch normalization: forward training, forward inference and backward
// (cudnnBatchNormalizationForwardTraining / ForwardInference / Backward). Tessera's batch norm is
// defined as cuDNN's (plugin_abi_normalization.h): biased batch variance, unbiased running
// variance, saved inverse standard deviation, the same alpha/beta blends.
//
// Declined:
//  - an activation after the affine step: cuDNN fuses one only in the ...Ex calls, which take
//    NHWC f16 with SPATIAL_PERSISTENT; not wrapped here.
//  - training that updates running statistics from one element per statistic (M = 1): cuDNN
//    scales the variance by M / (M - 1); Tessera defines that case as the biased variance.
//  - layouts cuDNN takes through one descriptor: the backward's x, dy and dx share one
//    (cudnn_ops.h: "same desc for x, dx, dy"); the forward's x and y are kept alike as well.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

enum class bn_step { training, inference, backward };

int64_t elements_per_statistic(const tsrpBatchNormProblem& p) {
  int64_t m = p.x.dims[0];
  if (p.mode == TSRP_BATCH_NORM_SPATIAL)
    for (int i = 2; i < p.x.ndims; ++i) m *= p.x.dims[i];
  return m;
}

std::string batch_norm_support(const tsrpBatchNormProblem& p, bn_step step) {
  if (p.mode != TSRP_BATCH_NORM_SPATIAL && p.mode != TSRP_BATCH_NORM_PER_ACTIVATION)
    return "unknown batch norm mode " + std::to_string(p.mode);
  if (p.activation != TSRP_ACTIVATION_IDENTITY)
    return "an activation fused into batch norm (cuDNN's ...Ex calls, NHWC f16 only) is not wrapped";
  const int32_t dt = p.x.data_type;
  if (!floating(dt)) return std::string(data_type_name(dt)) + " batch norm not supported";
  if (p.param.data_type != TSRP_DATA_FLOAT) return "parameters must be f32";
  if (p.x.ndims < 2 || p.x.ndims > 5) return "x must have 2 to 5 dims";
  if (step == bn_step::backward) {
    if (p.dy.data_type != dt || p.dx.data_type != dt) return "x, dy and dx must share one data type";
    if (!same_layout(p.x, p.dy) || !same_layout(p.x, p.dx))
      return "x, dy and dx in different layouts (cuDNN's backward takes one descriptor for them)";
  } else {
    if (p.y.data_type != dt) return "x and y must share one data type";
    if (!same_layout(p.x, p.y)) return "x and y in different layouts";
  }
  if (step == bn_step::training && p.update_running_stats != 0 && elements_per_statistic(p) == 1)
    return "running variance from one element per statistic (cuDNN divides by M - 1 = 0)";
  cudnn_tensor_shape shape;
  for (const tsrpTensor* t : {&p.x, &p.param}) {
    std::string why = cudnn_shape_of(*t, 4, &shape);
    if (!why.empty()) return why;
  }
  return {};
}

struct batch_norm_prepared : prepared_problem {
  tensor_descriptor x, y, param;  // backward: y holds dy's descriptor, and dx is x's
  cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;
};

std::unique_ptr<batch_norm_prepared> prepare_batch_norm(const tsrpBatchNormProblem& p, bn_step step) {
  auto prepared = std::make_unique<batch_norm_prepared>();
  prepared->mode = p.mode == TSRP_BATCH_NORM_SPATIAL ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
  prepared->x = make_tensor_descriptor(p.x);
  prepared->y = make_tensor_descriptor(step == bn_step::backward ? p.dy : p.y);
  prepared->param = make_tensor_descriptor(p.param);
  return prepared;
}

template <bn_step Step>
struct batch_norm_kernel {
  using problem_type = tsrpBatchNormProblem;
  using args_type = tsrpBatchNormArgs;
  using prepared_type = batch_norm_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return batch_norm_support(p, Step); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_batch_norm(p, Step);
  }

  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.scale, "scale");
    if constexpr (Step == bn_step::training) {
      require_pointer(a.bias, "bias");
      require_pointer(a.y, "y");
      const bool running = p.update_running_stats != 0, saved = p.write_saved_stats != 0;
      check_cudnn(cudnn().cudnnBatchNormalizationForwardTraining(
                      handle, d.mode, &a.alpha, &a.beta, d.x, a.x, d.y, a.y, d.param, a.scale, a.bias,
                      p.exponential_average_factor, running ? a.running_mean : nullptr,
                      running ? a.running_variance : nullptr, p.epsilon, saved ? a.save_mean : nullptr,
                      saved ? a.save_inv_variance : nullptr),
                  "cudnnBatchNormalizationForwardTraining");
    } else if constexpr (Step == bn_step::inference) {
      require_pointer(a.bias, "bias");
      require_pointer(a.y, "y");
      require_pointer(a.estimated_mean, "estimated_mean");
      require_pointer(a.estimated_variance, "estimated_variance");
      check_cudnn(cudnn().cudnnBatchNormalizationForwardInference(handle, d.mode, &a.alpha, &a.beta, d.x, a.x, d.y,
                                                                  a.y, d.param, a.scale, a.bias, a.estimated_mean,
                                                                  a.estimated_variance, p.epsilon),
                  "cudnnBatchNormalizationForwardInference");
    } else {
      require_pointer(a.dy, "dy");
      require_pointer(a.dx, "dx");
      require_pointer(a.dscale, "dscale");
      require_pointer(a.dbias, "dbias");
      // The saved statistics are optional for cuDNN (it recomputes them when both are null).
      const bool saved = a.saved_mean != nullptr && a.saved_inv_variance != nullptr;
      check_cudnn(cudnn().cudnnBatchNormalizationBackward(
                      handle, d.mode, &a.alpha, &a.beta, &a.alpha_param, &a.beta_param, d.x, a.x, d.y, a.dy, d.x,
                      a.dx, d.param, a.scale, a.dscale, a.dbias, p.epsilon, saved ? a.saved_mean : nullptr,
                      saved ? a.saved_inv_variance : nullptr),
                  "cudnnBatchNormalizationBackward");
    }
  }
};

const kernel_spec training_specs[] = {
    {"cudnn_bnorm_fwd_training", TSRP_OP_BATCH_NORM_FORWARD_TRAINING, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnBatchNormalizationForwardTraining; no fused activation", 0},
};
const kernel_spec inference_specs[] = {
    {"cudnn_bnorm_fwd_inference", TSRP_OP_BATCH_NORM_FORWARD_INFERENCE, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnBatchNormalizationForwardInference; no fused activation", 0},
};
const kernel_spec backward_specs[] = {
    {"cudnn_bnorm_bwd", TSRP_OP_BATCH_NORM_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnBatchNormalizationBackward; x, dy, dx in one layout", 0},
};

}  // namespace

void add_batch_norm_kernels(kernel_list& list) {
  add_kernels<batch_norm_kernel<bn_step::training>>(list, training_specs);
  add_kernels<batch_norm_kernel<bn_step::inference>>(list, inference_specs);
  add_kernels<batch_norm_kernel<bn_step::backward>>(list, backward_specs);
}

}  // namespace tessera::cudnn_plugin
