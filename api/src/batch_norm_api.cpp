// Batch normalization: the derived parameter descriptor, validation, problem building,
// workspace queries and dispatch of training forward, inference forward and backward.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "normalization_checks.hpp"
#include "validation.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace tessera::api;
using namespace tessera::api::normalization;

namespace {

tsrStatus_t check_mode(const char* fn, int mode) {
  if (mode == TSR_BATCHNORM_SPATIAL || mode == TSR_BATCHNORM_PER_ACTIVATION)
    return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrBatchNormMode_t");
}

tsrStatus_t check_x_dims(const char* fn, const tsrpTensor& x) {
  if (x.ndims >= 2 && x.ndims <= 5) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
              std::string(fn) + ": x_desc has " + std::to_string(x.ndims) +
                  " dims, expected 2 to 5 (N, C and up to 3 spatial dims)");
}

// 1xCx1.. (spatial) or 1xCxspatial (per activation), f32, packed: what the derive call gives.
tsrpTensor derived_param(const tsrpTensor& x, int mode) {
  tsrpTensor p{};
  p.data_type = TSRP_DATA_FLOAT;
  p.ndims = x.ndims;
  p.dims[0] = 1;
  p.dims[1] = x.dims[1];
  for (int i = 2; i < x.ndims; ++i) p.dims[i] = mode == TSR_BATCHNORM_SPATIAL ? 1 : x.dims[i];
  // Saturating: x may be a broadcast view (stride 0) whose dims multiply past int64 (the fuzzer
  // found C * H * W overflowing here); the caller refuses a result whose size overflows.
  int64_t stride = 1;
  for (int i = x.ndims - 1; i >= 0; --i) {
    p.strides[i] = stride;
    if (__builtin_mul_overflow(stride, p.dims[i], &stride)) stride = INT64_MAX;
  }
  return p;
}

// Only identity and relu are fused (cuDNN's *Ex calls fuse relu too); others are refused here
// rather than by every kernel, since no backend could give them a meaning in backward.
tsrStatus_t read_activation(const char* fn, tsrActivationDescriptor_t act, int32_t* mode,
                            double* coef) {
  *mode = TSRP_ACTIVATION_IDENTITY;
  *coef = 0;
  if (!act) return TSR_STATUS_SUCCESS;
  if (!act->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": act was created but never set (call tsrSetActivationDescriptor)");
  if (act->mode != TSR_ACTIVATION_IDENTITY && act->mode != TSR_ACTIVATION_RELU)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": act has mode " + std::to_string(act->mode) +
                    ", expected TSR_ACTIVATION_IDENTITY or TSR_ACTIVATION_RELU (the activations "
                    "batch normalization fuses)");
  *mode = act->mode;
  *coef = act->coef;
  return TSR_STATUS_SUCCESS;
}

// The part every batch-norm call shares: mode, activation, x, param_desc, and the data tensors
// that must have x's dims and type (y forward; y (optional), dy and dx backward).
struct data_tensor {
  const char* name;
  tsrTensorDescriptor_t desc;
  bool required;
};

tsrStatus_t build_problem(const char* fn, int mode, tsrActivationDescriptor_t act,
                          tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t param_desc,
                          const std::vector<data_tensor>& others, tsrpBatchNormProblem* p) {
  if (tsrStatus_t s = check_mode(fn, mode)) return s;
  *p = tsrpBatchNormProblem{};
  p->struct_size = sizeof(*p);
  p->mode = mode;
  if (tsrStatus_t s = read_activation(fn, act, &p->activation, &p->activation_coef)) return s;
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  if (tsrStatus_t s = check_x_dims(fn, x)) return s;
  if (tsrStatus_t s = check_floating(fn, "x_desc", x)) return s;
  p->x = x;
  for (const data_tensor& t : others) {
    if (!t.desc && !t.required) continue;
    if (tsrStatus_t s = check_tensor(fn, t.name, t.desc)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, t.name, t.desc->tensor)) return s;
    const std::string name = t.name;
    if (name == "y_desc") p->y = t.desc->tensor;
    if (name == "dy_desc") p->dy = t.desc->tensor;
    if (name == "dx_desc") p->dx = t.desc->tensor;
  }
  if (tsrStatus_t s = check_tensor(fn, "param_desc", param_desc)) return s;
  const tsrpTensor expected = derived_param(x, mode);
  if (tsrStatus_t s = check_param_tensor(
          fn, "param_desc", param_desc->tensor,
          std::vector<int64_t>(expected.dims, expected.dims + expected.ndims), x.ndims, false,
          mode == TSR_BATCHNORM_SPATIAL ? "1xCx1.. for TSR_BATCHNORM_SPATIAL, as tsrDeriveBatchNormTensorDescriptor gives"
                                        : "1xCxspatial for TSR_BATCHNORM_PER_ACTIVATION, as tsrDeriveBatchNormTensorDescriptor gives"))
    return s;
  p->param = param_desc->tensor;
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_blend(const char* fn, const char* a_name, float a, const char* b_name, float b) {
  if (tsrStatus_t s = check_finite(fn, a_name, a)) return s;
  return check_finite(fn, b_name, b);
}

tsrStatus_t run(tsrContext& h, const char* fn, int op, const tsrpBatchNormProblem& p,
                const tsrpBatchNormArgs& a, tsrAlgo_t algo, void* workspace, size_t workspace_size) {
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = &p;
  call.args = &a;
  call.algo = algo;
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  call.describe = nullptr;
  return dispatch(h, call);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrDeriveBatchNormTensorDescriptor(tsrTensorDescriptor_t x_desc,
                                                       tsrBatchNormMode_t mode,
                                                       tsrTensorDescriptor_t derived_desc) {
  const char* fn = "tsrDeriveBatchNormTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "derived_desc", derived_desc)) return s;
    if (tsrStatus_t s = check_mode(fn, mode)) return s;
    if (check_x_dims(fn, x_desc->tensor) != TSR_STATUS_SUCCESS)
      // The same words, but here a range error of the argument, not a disagreement.
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, last_error());
    const tsrpTensor derived = derived_param(x_desc->tensor, mode);
    size_t bytes = 0;
    if (!tensor_bytes(derived, &bytes))
      return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                  std::string(fn) + ": x_desc has dims " + dims_string(x_desc->tensor) +
                      ": the packed parameter tensor they call for has a byte size that overflows");
    derived_desc->tensor = derived;
    derived_desc->is_set = true;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetBatchNormalizationForwardTrainingWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t param_desc,
    tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetBatchNormalizationForwardTrainingWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc, {{"y_desc", y_desc, true}}, &p))
      return s;
    p.update_running_stats = 1;  // kernels size their workspace for every option
    p.write_saved_stats = 1;
    p.epsilon = 1e-5;  // only completes the problem: the workspace does not depend on it
    return query_workspace(*handle, fn, TSR_OP_BATCH_NORM_FORWARD_TRAINING, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetBatchNormalizationForwardInferenceWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t param_desc,
    tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetBatchNormalizationForwardInferenceWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc, {{"y_desc", y_desc, true}}, &p))
      return s;
    p.epsilon = 1e-5;  // only completes the problem: the workspace does not depend on it
    return query_workspace(*handle, fn, TSR_OP_BATCH_NORM_FORWARD_INFERENCE, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetBatchNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
    tsrTensorDescriptor_t dx_desc, tsrTensorDescriptor_t param_desc, tsrAlgo_t algo,
    size_t* bytes) {
  const char* fn = "tsrGetBatchNormalizationBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    const bool needs_y = act && act->is_set && act->mode != TSR_ACTIVATION_IDENTITY;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc,
                                      {{"y_desc", y_desc, needs_y},
                                       {"dy_desc", dy_desc, true},
                                       {"dx_desc", dx_desc, true}},
                                      &p))
      return s;
    p.epsilon = 1e-5;  // only completes the problem: the workspace does not depend on it
    return query_workspace(*handle, fn, TSR_OP_BATCH_NORM_BACKWARD, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrBatchNormalizationForwardTraining(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t param_desc,
    const void* scale, const void* bias, double exponential_average_factor, double epsilon,
    void* workspace, size_t workspace_size, float beta, tsrTensorDescriptor_t y_desc, void* y,
    void* running_mean, void* running_variance, void* save_mean, void* save_inv_variance) {
  const char* fn = "tsrBatchNormalizationForwardTraining";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc, {{"y_desc", y_desc, true}}, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scale", scale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bias", bias)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_pair(fn, "running_mean", running_mean, "running_variance", running_variance)) return s;
    if (tsrStatus_t s = check_pair(fn, "save_mean", save_mean, "save_inv_variance", save_inv_variance)) return s;
    if (tsrStatus_t s = check_blend(fn, "alpha", alpha, "beta", beta)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (!(exponential_average_factor >= 0.0 && exponential_average_factor <= 1.0))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": exponential_average_factor is " +
                      number_text(exponential_average_factor) + ", expected 0 to 1");
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    p.exponential_average_factor = exponential_average_factor;
    p.update_running_stats = running_mean != nullptr;
    p.write_saved_stats = save_mean != nullptr;
    tsrpBatchNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.y = y;
    a.scale = static_cast<const float*>(scale);
    a.bias = static_cast<const float*>(bias);
    a.running_mean = static_cast<float*>(running_mean);
    a.running_variance = static_cast<float*>(running_variance);
    a.save_mean = static_cast<float*>(save_mean);
    a.save_inv_variance = static_cast<float*>(save_inv_variance);
    a.alpha = alpha;
    a.beta = beta;
    return run(*handle, fn, TSR_OP_BATCH_NORM_FORWARD_TRAINING, p, a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrBatchNormalizationForwardInference(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t param_desc,
    const void* scale, const void* bias, const void* estimated_mean,
    const void* estimated_variance, double epsilon, void* workspace, size_t workspace_size,
    float beta, tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrBatchNormalizationForwardInference";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc, {{"y_desc", y_desc, true}}, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scale", scale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bias", bias)) return s;
    if (tsrStatus_t s = check_not_null(fn, "estimated_mean", estimated_mean)) return s;
    if (tsrStatus_t s = check_not_null(fn, "estimated_variance", estimated_variance)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_blend(fn, "alpha", alpha, "beta", beta)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    tsrpBatchNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.y = y;
    a.scale = static_cast<const float*>(scale);
    a.bias = static_cast<const float*>(bias);
    a.estimated_mean = static_cast<const float*>(estimated_mean);
    a.estimated_variance = static_cast<const float*>(estimated_variance);
    a.alpha = alpha;
    a.beta = beta;
    return run(*handle, fn, TSR_OP_BATCH_NORM_FORWARD_INFERENCE, p, a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrBatchNormalizationBackward(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha_data, float alpha_param, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t y_desc, const void* y, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t param_desc, const void* scale, const void* saved_mean,
    const void* saved_inv_variance, double epsilon, void* workspace, size_t workspace_size,
    float beta_data, tsrTensorDescriptor_t dx_desc, void* dx, float beta_param, void* dscale,
    void* dbias) {
  const char* fn = "tsrBatchNormalizationBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpBatchNormProblem p;
    const bool needs_y = act && act->is_set && act->mode != TSR_ACTIVATION_IDENTITY;
    if (tsrStatus_t s = build_problem(fn, mode, act, x_desc, param_desc,
                                      {{"y_desc", needs_y ? y_desc : nullptr, needs_y},
                                       {"dy_desc", dy_desc, true},
                                       {"dx_desc", dx_desc, true}},
                                      &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (needs_y)
      if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scale", scale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "saved_mean", saved_mean)) return s;
    if (tsrStatus_t s = check_not_null(fn, "saved_inv_variance", saved_inv_variance)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dscale", dscale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dbias", dbias)) return s;
    if (tsrStatus_t s = check_blend(fn, "alpha_data", alpha_data, "beta_data", beta_data)) return s;
    if (tsrStatus_t s = check_blend(fn, "alpha_param", alpha_param, "beta_param", beta_param)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    tsrpBatchNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.y_in = needs_y ? y : nullptr;
    a.dy = dy;
    a.dx = dx;
    a.scale = static_cast<const float*>(scale);
    a.saved_mean = static_cast<const float*>(saved_mean);
    a.saved_inv_variance = static_cast<const float*>(saved_inv_variance);
    a.dscale = static_cast<float*>(dscale);
    a.dbias = static_cast<float*>(dbias);
    a.alpha = alpha_data;
    a.beta = beta_data;
    a.alpha_param = alpha_param;
    a.beta_param = beta_param;
    return run(*handle, fn, TSR_OP_BATCH_NORM_BACKWARD, p, a, algo, workspace, workspace_size);
  });
}

}  // extern "C"
