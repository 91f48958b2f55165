// Softmax and log-softmax forward and backward: validation, problem building, workspace query,
// dispatch.
#include "error_state.hpp"
#include "forward_backward_checks.hpp"
#include "validation.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

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
  return check_floating(fn, name, t);
}

tsrStatus_t build_forward(const char* fn, tsrSoftmaxAlgorithm_t algorithm, tsrSoftmaxMode_t mode,
                          tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc,
                          tsrpSoftmaxProblem* p) {
  if (tsrStatus_t s = check_modes(fn, algorithm, mode)) return s;
  if (tsrStatus_t s = check_forward_tensors(fn, x_desc, y_desc)) return s;
  if (tsrStatus_t s = check_first(fn, "x_desc", x_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor))
    return s;
  *p = tsrpSoftmaxProblem{};
  p->struct_size = sizeof(*p);
  p->algorithm = algorithm;
  p->mode = mode;
  fill_forward_tensors(x_desc, y_desc, p);
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
    if (tsrStatus_t s = check_forward_data(fn, x, y, alpha, beta)) return s;
    return dispatch_forward<tsrpSoftmaxArgs>(*handle, fn, TSR_OP_SOFTMAX_FORWARD, &problem, algo,
                                             x, y, alpha, beta);
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
    // Softmax's backward takes no x (the gradient needs only y and dy).
    return dispatch_backward<tsrpSoftmaxArgs>(*handle, fn, TSR_OP_SOFTMAX_BACKWARD, &problem, algo,
                                              y, dy, nullptr, dx, alpha, beta);
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
