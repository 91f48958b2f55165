// LRN across channels, forward and backward: descriptor, validation, workspace query, dispatch.
#include "error_state.hpp"
#include "forward_backward_checks.hpp"
#include "validation.hpp"

#include <cmath>

// The LRN descriptor is private to this file; the defaults are cuDNN's.
struct tsrLrnStruct {
  unsigned n = 5;
  double alpha = 1e-4;
  double beta = 0.75;
  double k = 2.0;
};

using namespace tessera::api;

namespace {

tsrStatus_t check_lrn(const char* fn, tsrLrnDescriptor_t lrn) {
  if (!lrn) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": lrn is NULL");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_first(const char* fn, const char* name, const tsrpTensor& t) {
  if (t.ndims < 3 || t.ndims > 5)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + name + " has " + std::to_string(t.ndims) +
                    " dims, expected 3 to 5 (N, C and 1 to 3 spatial dims)");
  return check_floating(fn, name, t);
}

void fill_parameters(const tsrLrnStruct& lrn, tsrpLrnProblem* p) {
  *p = tsrpLrnProblem{};
  p->struct_size = sizeof(*p);
  p->n = lrn.n;
  p->alpha = lrn.alpha;
  p->beta = lrn.beta;
  p->k = lrn.k;
}

tsrStatus_t build_forward(const char* fn, tsrLrnDescriptor_t lrn, tsrTensorDescriptor_t x_desc,
                          tsrTensorDescriptor_t y_desc, tsrpLrnProblem* p) {
  if (tsrStatus_t s = check_lrn(fn, lrn)) return s;
  if (tsrStatus_t s = check_forward_tensors(fn, x_desc, y_desc)) return s;
  if (tsrStatus_t s = check_first(fn, "x_desc", x_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor))
    return s;
  fill_parameters(*lrn, p);
  fill_forward_tensors(x_desc, y_desc, p);
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t build_backward(const char* fn, tsrLrnDescriptor_t lrn, tsrTensorDescriptor_t y_desc,
                           tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc,
                           tsrTensorDescriptor_t dx_desc, tsrpLrnProblem* p) {
  if (tsrStatus_t s = check_lrn(fn, lrn)) return s;
  if (tsrStatus_t s = check_backward_tensors(fn, y_desc, dy_desc, x_desc, dx_desc)) return s;
  if (tsrStatus_t s = check_first(fn, "x_desc", x_desc->tensor)) return s;
  if (tsrStatus_t s = check_backward_shapes_as_x(fn, y_desc, dy_desc, x_desc, dx_desc)) return s;
  fill_parameters(*lrn, p);
  fill_backward_tensors(y_desc, dy_desc, x_desc, dx_desc, p);
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateLrnDescriptor(tsrLrnDescriptor_t* desc) {
  return guarded("tsrCreateLrnDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateLrnDescriptor", "desc", desc)) return s;
    *desc = new tsrLrnStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyLrnDescriptor(tsrLrnDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetLrnDescriptor(tsrLrnDescriptor_t desc, unsigned n, double alpha,
                                        double beta, double k) {
  const char* fn = "tsrSetLrnDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (n < TSR_LRN_MIN_N || n > TSR_LRN_MAX_N)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": n is " + std::to_string(n) + ", expected " +
                      std::to_string(TSR_LRN_MIN_N) + " to " + std::to_string(TSR_LRN_MAX_N));
    if (!std::isfinite(alpha))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
    if (!std::isfinite(beta) || beta < TSR_LRN_MIN_BETA)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": beta is " + std::to_string(beta) +
                      ", expected a finite value of at least TSR_LRN_MIN_BETA (0.01)");
    if (!std::isfinite(k) || k < TSR_LRN_MIN_K)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": k is " + std::to_string(k) +
                      ", expected a finite value of at least TSR_LRN_MIN_K (1e-5)");
    desc->n = n;
    desc->alpha = alpha;
    desc->beta = beta;
    desc->k = k;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetLrnDescriptor(tsrLrnDescriptor_t desc, unsigned* n, double* alpha,
                                        double* beta, double* k) {
  const char* fn = "tsrGetLrnDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_lrn(fn, desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "n", n)) return s;
    if (tsrStatus_t s = check_not_null(fn, "alpha", alpha)) return s;
    if (tsrStatus_t s = check_not_null(fn, "beta", beta)) return s;
    if (tsrStatus_t s = check_not_null(fn, "k", k)) return s;
    *n = desc->n;
    *alpha = desc->alpha;
    *beta = desc->beta;
    *k = desc->k;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrLrnCrossChannelForward(tsrHandle_t handle, tsrLrnDescriptor_t lrn,
                                              tsrAlgo_t algo, float alpha,
                                              tsrTensorDescriptor_t x_desc, const void* x,
                                              float beta, tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrLrnCrossChannelForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLrnProblem problem;
    if (tsrStatus_t s = build_forward(fn, lrn, x_desc, y_desc, &problem)) return s;
    if (tsrStatus_t s = check_forward_data(fn, x, y, alpha, beta)) return s;
    return dispatch_forward<tsrpLrnArgs>(*handle, fn, TSR_OP_LRN_FORWARD, &problem, algo, x, y,
                                         alpha, beta);
  });
}

TSR_API tsrStatus_t tsrLrnCrossChannelBackward(tsrHandle_t handle, tsrLrnDescriptor_t lrn,
                                               tsrAlgo_t algo, float alpha,
                                               tsrTensorDescriptor_t y_desc, const void* y,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               tsrTensorDescriptor_t x_desc, const void* x,
                                               float beta, tsrTensorDescriptor_t dx_desc,
                                               void* dx) {
  const char* fn = "tsrLrnCrossChannelBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLrnProblem problem;
    if (tsrStatus_t s = build_backward(fn, lrn, y_desc, dy_desc, x_desc, dx_desc, &problem))
      return s;
    if (tsrStatus_t s = check_backward_data(fn, y, dy, x, dx, alpha, beta)) return s;
    return dispatch_backward<tsrpLrnArgs>(*handle, fn, TSR_OP_LRN_BACKWARD, &problem, algo, y, dy,
                                          x, dx, alpha, beta);
  });
}

TSR_API tsrStatus_t tsrGetLrnCrossChannelForwardWorkspaceSize(tsrHandle_t handle,
                                                              tsrLrnDescriptor_t lrn,
                                                              tsrTensorDescriptor_t x_desc,
                                                              tsrTensorDescriptor_t y_desc,
                                                              tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetLrnCrossChannelForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLrnProblem problem;
    if (tsrStatus_t s = build_forward(fn, lrn, x_desc, y_desc, &problem)) return s;
    return query_workspace(*handle, fn, TSR_OP_LRN_FORWARD, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetLrnCrossChannelBackwardWorkspaceSize(
    tsrHandle_t handle, tsrLrnDescriptor_t lrn, tsrTensorDescriptor_t y_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dx_desc,
    tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetLrnCrossChannelBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLrnProblem problem;
    if (tsrStatus_t s = build_backward(fn, lrn, y_desc, dy_desc, x_desc, dx_desc, &problem))
      return s;
    return query_workspace(*handle, fn, TSR_OP_LRN_BACKWARD, &problem, algo, bytes);
  });
}

}  // extern "C"
