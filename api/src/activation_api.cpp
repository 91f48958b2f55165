// Activation forward and backward: validation, problem building, dispatch.
#include "error_state.hpp"
#include "forward_backward_checks.hpp"
#include "problem_text.hpp"
#include "validation.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

bool valid_mode(int mode) { return mode >= TSR_ACTIVATION_IDENTITY && mode <= TSR_ACTIVATION_SWISH; }

tsrStatus_t check_activation(const char* fn, tsrActivationDescriptor_t act) {
  if (!act) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": act is NULL");
  if (!act->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": act was created but never set (call tsrSetActivationDescriptor)");
  return TSR_STATUS_SUCCESS;
}

call_description describe_forward(const void* problem, const tsrContext& h, const std::string& backend) {
  return describe_activation(*static_cast<const tsrpActivationProblem*>(problem), false, h, backend);
}
call_description describe_backward(const void* problem, const tsrContext& h, const std::string& backend) {
  return describe_activation(*static_cast<const tsrpActivationProblem*>(problem), true, h, backend);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateActivationDescriptor(tsrActivationDescriptor_t* desc) {
  return guarded("tsrCreateActivationDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateActivationDescriptor", "desc", desc)) return s;
    *desc = new tsrActivationStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyActivationDescriptor(tsrActivationDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetActivationDescriptor(tsrActivationDescriptor_t desc,
                                               tsrActivationMode_t mode, double coef) {
  const char* fn = "tsrSetActivationDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (!valid_mode(mode))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrActivationMode_t");
    if (!std::isfinite(coef))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": coef is not finite");
    if (mode == TSR_ACTIVATION_CLIPPED_RELU && coef <= 0)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": coef (the clip) is " + std::to_string(coef) +
                      ", expected > 0 for TSR_ACTIVATION_CLIPPED_RELU");
    desc->mode = mode;
    desc->coef = coef;
    desc->is_set = true;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetActivationDescriptor(tsrActivationDescriptor_t desc,
                                               tsrActivationMode_t* mode, double* coef) {
  const char* fn = "tsrGetActivationDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_activation(fn, desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "mode", mode)) return s;
    if (tsrStatus_t s = check_not_null(fn, "coef", coef)) return s;
    *mode = desc->mode;
    *coef = desc->coef;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrActivationForward(tsrHandle_t handle, tsrActivationDescriptor_t act,
                                         tsrAlgo_t algo, float alpha,
                                         tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                         tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrActivationForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_activation(fn, act)) return s;
    if (tsrStatus_t s = check_forward_tensors(fn, x_desc, y_desc)) return s;
    // Activation checks the data pointers before the shapes (the others after): kept as it was.
    if (tsrStatus_t s = check_forward_data(fn, x, y, alpha, beta)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor))
      return s;
    tsrpActivationProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.mode = act->mode;
    problem.coef = act->coef;
    fill_forward_tensors(x_desc, y_desc, &problem);
    return dispatch_forward<tsrpActivationArgs>(*handle, fn, TSR_OP_ACTIVATION_FORWARD, &problem,
                                                algo, x, y, alpha, beta, describe_forward);
  });
}

TSR_API tsrStatus_t tsrActivationBackward(tsrHandle_t handle, tsrActivationDescriptor_t act,
                                          tsrAlgo_t algo, float alpha,
                                          tsrTensorDescriptor_t y_desc, const void* y,
                                          tsrTensorDescriptor_t dy_desc, const void* dy,
                                          tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                          tsrTensorDescriptor_t dx_desc, void* dx) {
  const char* fn = "tsrActivationBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_activation(fn, act)) return s;
    if (tsrStatus_t s = check_backward_tensors(fn, y_desc, dy_desc, x_desc, dx_desc)) return s;
    if (tsrStatus_t s = check_backward_data(fn, y, dy, x, dx, alpha, beta)) return s;
    if (tsrStatus_t s = check_backward_shapes_as_x(fn, y_desc, dy_desc, x_desc, dx_desc)) return s;
    tsrpActivationProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.mode = act->mode;
    problem.coef = act->coef;
    fill_backward_tensors(y_desc, dy_desc, x_desc, dx_desc, &problem);
    return dispatch_backward<tsrpActivationArgs>(*handle, fn, TSR_OP_ACTIVATION_BACKWARD, &problem,
                                                 algo, y, dy, x, dx, alpha, beta,
                                                 describe_backward);
  });
}

}  // extern "C"
