// Add, scale, set and transform tensor: validation, problem building, dispatch. (Op tensor and
// reduce tensor, which have descriptors of their own, are in op_tensor_api.cpp and
// reduce_tensor_api.cpp.) None of these calls takes a workspace: kernels that need scratch get it
// from the handle's pool.
#include "dispatch.hpp"
#include "tensor_ops_checks.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

tsrStatus_t run(tsrContext& h, const char* fn, int op, const void* problem, const void* args) {
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = problem;
  call.args = args;
  call.describe = nullptr;  // trace descriptors for tensor ops come later
  return dispatch(h, call);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrAddTensor(tsrHandle_t handle, float alpha, tsrTensorDescriptor_t a_desc,
                                 const void* a, float beta, tsrTensorDescriptor_t c_desc, void* c) {
  const char* fn = "tsrAddTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_tensor(fn, "a_desc", a_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "c_desc", c_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "a", a)) return s;
    if (tsrStatus_t s = check_not_null(fn, "c", c)) return s;
    if (tsrStatus_t s = check_finite(fn, "alpha", alpha)) return s;
    if (tsrStatus_t s = check_finite(fn, "beta", beta)) return s;
    if (tsrStatus_t s = check_ones_or_equal(fn, "a_desc", a_desc->tensor, "c_desc", c_desc->tensor,
                                            "broadcast"))
      return s;
    tsrpAddTensorProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.a = a_desc->tensor;
    problem.c = c_desc->tensor;
    tsrpAddTensorArgs args{};
    args.struct_size = sizeof(args);
    args.a = a;
    args.c = c;
    args.alpha = alpha;
    args.beta = beta;
    return run(*handle, fn, TSR_OP_ADD_TENSOR, &problem, &args);
  });
}

TSR_API tsrStatus_t tsrScaleTensor(tsrHandle_t handle, tsrTensorDescriptor_t y_desc, void* y,
                                   float alpha) {
  const char* fn = "tsrScaleTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_finite(fn, "alpha", alpha)) return s;
    tsrpScaleTensorProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.y = y_desc->tensor;
    tsrpScaleTensorArgs args{};
    args.struct_size = sizeof(args);
    args.y = y;
    args.alpha = alpha;
    return run(*handle, fn, TSR_OP_SCALE_TENSOR, &problem, &args);
  });
}

TSR_API tsrStatus_t tsrSetTensor(tsrHandle_t handle, tsrTensorDescriptor_t y_desc, void* y,
                                 double value) {
  const char* fn = "tsrSetTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    const int32_t dt = y_desc->tensor.data_type;
    // NaN and infinity are legitimate fills for floating tensors (poison, masks), but an integer
    // has no such value.
    if ((dt == TSR_DATA_INT8 || dt == TSR_DATA_INT32) && !std::isfinite(value))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": value is " + std::to_string(value) +
                      ", expected a finite value for y_desc's data type " + data_type_name(dt));
    tsrpSetTensorProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.y = y_desc->tensor;
    tsrpSetTensorArgs args{};
    args.struct_size = sizeof(args);
    args.y = y;
    args.value = value;
    return run(*handle, fn, TSR_OP_SET_TENSOR, &problem, &args);
  });
}

TSR_API tsrStatus_t tsrTransformTensor(tsrHandle_t handle, float alpha,
                                       tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                       tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrTransformTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_finite(fn, "alpha", alpha)) return s;
    if (tsrStatus_t s = check_finite(fn, "beta", beta)) return s;
    // Types may differ: converting them is the point.
    if (tsrStatus_t s = check_same_shape(fn, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor, false))
      return s;
    tsrpTransformTensorProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.x = x_desc->tensor;
    problem.y = y_desc->tensor;
    tsrpTransformTensorArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.y = y;
    args.alpha = alpha;
    args.beta = beta;
    return run(*handle, fn, TSR_OP_TRANSFORM_TENSOR, &problem, &args);
  });
}

}  // extern "C"
