// Fused convolution + bias + residual + activation, cudnnConvolutionBiasActivationForward:
// y = act(alpha1 * conv(x, w) + alpha2 * z + bias). The convolution part is validated by the
// same builder as the forward call (convolution_problem.hpp); z, bias and act are checked here.
#include "convolution_problem.hpp"
#include "dispatch.hpp"
#include "error_state.hpp"
#include "validation.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

// Everything but the pointers. z_desc may be NULL (no residual).
tsrStatus_t build_fused_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t x_desc,
                                tsrTensorDescriptor_t w_desc, tsrConvolutionDescriptor_t conv,
                                tsrTensorDescriptor_t z_desc, tsrTensorDescriptor_t bias_desc,
                                tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc,
                                tsrpConvolutionBiasActivationProblem* problem) {
  tsrpConvolutionProblem c;
  if (tsrStatus_t s = build_convolution_problem(fn, h, x_desc, w_desc, conv, y_desc,
                                                convolution_names{}, convolution_types::floating,
                                                &c))
    return s;
  if (z_desc) {
    if (tsrStatus_t s = check_tensor(fn, "z_desc", z_desc)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "y_desc", c.y, "z_desc", z_desc->tensor)) return s;
  }
  if (tsrStatus_t s = check_tensor(fn, "bias_desc", bias_desc)) return s;
  tsrpTensor bias_shape{};
  bias_shape.data_type = c.y.data_type;
  bias_shape.ndims = c.y.ndims;
  for (int i = 0; i < c.y.ndims; ++i) bias_shape.dims[i] = i == 1 ? c.y.dims[1] : 1;
  if (tsrStatus_t s = check_same_shape(fn, "y_desc's bias shape (1, K, 1...)", bias_shape,
                                       "bias_desc", bias_desc->tensor))
    return s;
  if (!act) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": act is NULL");
  if (!act->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": act was created but never set (call tsrSetActivationDescriptor)");
  tsrpConvolutionBiasActivationProblem& p = *problem;
  p = tsrpConvolutionBiasActivationProblem{};
  p.struct_size = sizeof(p);
  p.x = c.x;
  p.w = c.w;
  p.y = c.y;
  if (z_desc) p.z = z_desc->tensor;
  p.bias = bias_desc->tensor;
  p.spatial_dims = c.spatial_dims;
  p.mode = c.mode;
  p.compute_type = c.compute_type;
  p.math_mode = c.math_mode;
  p.groups = c.groups;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    p.pad_before[i] = c.pad_before[i];
    p.pad_after[i] = c.pad_after[i];
    p.stride[i] = c.stride[i];
    p.dilation[i] = c.dilation[i];
  }
  p.has_z = z_desc ? 1 : 0;
  p.activation_mode = act->mode;
  p.activation_coef = act->coef;
  return TSR_STATUS_SUCCESS;
}

bool same_strides(const tsrpTensor& a, const tsrpTensor& b) {
  for (int i = 0; i < a.ndims; ++i)
    if (a.strides[i] != b.strides[i]) return false;
  return true;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrGetConvolutionBiasActivationForwardWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t z_desc,
    tsrTensorDescriptor_t bias_desc, tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc,
    tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetConvolutionBiasActivationForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionBiasActivationProblem p;
    if (tsrStatus_t s = build_fused_problem(fn, *handle, x_desc, w_desc, conv, z_desc, bias_desc,
                                            act, y_desc, &p))
      return s;
    return query_workspace(*handle, fn, TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD, &p, algo,
                           bytes);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionBiasActivationForwardAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t z_desc,
    tsrTensorDescriptor_t bias_desc, tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[]) {
  const char* fn = "tsrGetConvolutionBiasActivationForwardAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionBiasActivationProblem p;
    if (tsrStatus_t s = build_fused_problem(fn, *handle, x_desc, w_desc, conv, z_desc, bias_desc,
                                            act, y_desc, &p))
      return s;
    return get_algorithms(*handle, fn, TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD, &p,
                          requested_count, returned_count, perf);
  });
}

TSR_API tsrStatus_t tsrConvolutionBiasActivationForward(
    tsrHandle_t handle, float alpha1, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t w_desc, const void* w, tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
    void* workspace, size_t workspace_size, float alpha2, tsrTensorDescriptor_t z_desc,
    const void* z, tsrTensorDescriptor_t bias_desc, const void* bias,
    tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrConvolutionBiasActivationForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionBiasActivationProblem p;
    if (tsrStatus_t s = build_fused_problem(fn, *handle, x_desc, w_desc, conv, z_desc, bias_desc,
                                            act, y_desc, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if ((z_desc == nullptr) != (z == nullptr))
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + (z ? ": z is given but z_desc is NULL"
                                       : ": z is NULL but z_desc is given (pass both or neither)"));
    if (tsrStatus_t s = check_not_null(fn, "bias", bias)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (!std::isfinite(alpha1))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha1 is not finite");
    if (!std::isfinite(alpha2))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha2 is not finite");
    if (z && z == y && !same_strides(p.z, p.y))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": z aliases y but z_desc's strides differ from y_desc's");
    p.z_aliases_y = z && z == y ? 1 : 0;
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": workspace is NULL but workspace_size is " +
                      std::to_string(workspace_size));
    tsrpConvolutionBiasActivationArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.w = w;
    args.z = z;
    args.bias = bias;
    args.y = y;
    args.alpha1 = alpha1;
    args.alpha2 = alpha2;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD;
    call.problem = &p;
    call.args = &args;
    call.algo = algo;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    call.describe = nullptr;  // descriptors for the fused op come later
    return dispatch(*handle, call);
  });
}

}  // extern "C"
