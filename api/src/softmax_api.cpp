// Softmax and log-softmax forward and backward: validation, problem building, workspace query,
// dispatch.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "validation.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

tsrStatus_t check_scalars(const char* fn, float alpha, float beta) {
  if (!std::isfinite(alpha))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
  if (!std::isfinite(beta))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": beta is not finite");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_modes(const char* fn, tsrSoftmaxAlgorithm_t algorithm, tsrSoftmaxMode_t mode) {
  if (algorithm != TSR_SOFTMAX_FAST && algorithm != TSR_SOFTMAX_ACCURATE &&
      algorithm != TSR_SOFTMAX_LOG)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": algorithm " + std::to_string(algorithm) +
                    " is not a tsrSoftmaxAlgorithm_t");
  if (mode != TSR_SOFTMAX_MODE_INSTANCE && mode != TSR_SOFTMAX_MODE_CHANNEL)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrSoftmaxMode_t");
  return TSR_STATUS_SUCCESS;
}

// The first tensor of a call: N, C and any spatial dims, a floating type.
tsrStatus_t check_first(const char* fn, const char* name, const tsrpTensor& t) {
  if (t.ndims < 2)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + name + " has " + std::to_string(t.ndims) +
                    " dims, expected 2 or more (N, C, spatial...)");
  if (t.data_type != TSR_DATA_FLOAT && t.data_type != TSR_DATA_HALF &&
      t.data_type != TSR_DATA_BFLOAT16)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": " + name + " has data type " + data_type_name(t.data_type) +
                    ", expected f32, f16 or bf16");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t build_forward(const char* fn, tsrSoftmaxAlgorithm_t algorithm, tsrSoftmaxMode_t mode,
                          tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc,
                          tsrpSoftmaxProblem* p) {
  if (tsrStatus_t s = check_modes(fn, algorithm, mode)) return s;
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
  if (tsrStatus_t s = check_first(fn, "x_desc", x_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor))
    return s;
  *p = tsrpSoftmaxProblem{};
  p->struct_size = sizeof(*p);
  p->algorithm = algorithm;
  p->mode = mode;
  p->x = x_desc->tensor;
  p->y = y_desc->tensor;
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t build_backward(const char* fn, tsrSoftmaxAlgorithm_t algorithm, tsrSoftmaxMode_t mode,
                           tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
                           tsrTensorDescriptor_t dx_desc, tsrpSoftmaxProblem* p) {
  if (tsrStatus_t s = check_modes(fn, algorithm, mode)) return s;
  if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "dy_desc", dy_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "dx_desc", dx_desc)) return s;
  const tsrpTensor& y = y_desc->tensor;
  if (tsrStatus_t s = check_first(fn, "y_desc", y)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "y_desc", y, "dy_desc", dy_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "y_desc", y, "dx_desc", dx_desc->tensor)) return s;
  *p = tsrpSoftmaxProblem{};
  p->struct_size = sizeof(*p);
  p->algorithm = algorithm;
  p->mode = mode;
  p->y = y;
  p->dy = dy_desc->tensor;
  p->dx = dx_desc->tensor;
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrSoftmaxForward(tsrHandle_t handle, tsrSoftmaxAlgorithm_t algorithm,
                                      tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                                      tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                      tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrSoftmaxForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpSoftmaxProblem problem;
    if (tsrStatus_t s = build_forward(fn, algorithm, mode, x_desc, y_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_scalars(fn, alpha, beta)) return s;
    tsrpSoftmaxArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.y = y;
    args.alpha = alpha;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_SOFTMAX_FORWARD;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    return dispatch(*handle, call);
  });
}

TSR_API tsrStatus_t tsrSoftmaxBackward(tsrHandle_t handle, tsrSoftmaxAlgorithm_t algorithm,
                                       tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                                       tsrTensorDescriptor_t y_desc, const void* y,
                                       tsrTensorDescriptor_t dy_desc, const void* dy, float beta,
                                       tsrTensorDescriptor_t dx_desc, void* dx) {
  const char* fn = "tsrSoftmaxBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpSoftmaxProblem problem;
    if (tsrStatus_t s = build_backward(fn, algorithm, mode, y_desc, dy_desc, dx_desc, &problem))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (tsrStatus_t s = check_scalars(fn, alpha, beta)) return s;
    tsrpSoftmaxArgs args{};
    args.struct_size = sizeof(args);
    args.y_in = y;
    args.dy = dy;
    args.dx = dx;
    args.alpha = alpha;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_SOFTMAX_BACKWARD;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    return dispatch(*handle, call);
  });
}

TSR_API tsrStatus_t tsrGetSoftmaxForwardWorkspaceSize(tsrHandle_t handle,
                                                      tsrSoftmaxAlgorithm_t algorithm,
                                                      tsrSoftmaxMode_t mode,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
                                                      size_t* bytes) {
  const char* fn = "tsrGetSoftmaxForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpSoftmaxProblem problem;
    if (tsrStatus_t s = build_forward(fn, algorithm, mode, x_desc, y_desc, &problem)) return s;
    return query_workspace(*handle, fn, TSR_OP_SOFTMAX_FORWARD, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetSoftmaxBackwardWorkspaceSize(tsrHandle_t handle,
                                                       tsrSoftmaxAlgorithm_t algorithm,
                                                       tsrSoftmaxMode_t mode,
                                                       tsrTensorDescriptor_t y_desc,
                                                       tsrTensorDescriptor_t dy_desc,
                                                       tsrTensorDescriptor_t dx_desc,
                                                       tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetSoftmaxBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpSoftmaxProblem problem;
    if (tsrStatus_t s = build_backward(fn, algorithm, mode, y_desc, dy_desc, dx_desc, &problem))
      return s;
    return query_workspace(*handle, fn, TSR_OP_SOFTMAX_BACKWARD, &problem, algo, bytes);
  });
}

}  // extern "C"
