// Op tensor: its descriptor, validation, problem building, dispatch.
#include "dispatch.hpp"
#include "tensor_ops_checks.hpp"

using namespace tessera::api;

namespace {

bool valid_op(int op) { return op >= TSR_OP_TENSOR_ADD && op <= TSR_OP_TENSOR_NOT; }
bool is_unary(int op) { return op == TSR_OP_TENSOR_SQRT || op == TSR_OP_TENSOR_NOT; }

tsrStatus_t check_op_desc(const char* fn, tsrOpTensorDescriptor_t d) {
  if (!d) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": op_desc is NULL");
  if (!d->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": op_desc was created but never set (call tsrSetOpTensorDescriptor)");
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateOpTensorDescriptor(tsrOpTensorDescriptor_t* desc) {
  const char* fn = "tsrCreateOpTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    *desc = new tsrOpTensorStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyOpTensorDescriptor(tsrOpTensorDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetOpTensorDescriptor(tsrOpTensorDescriptor_t desc, tsrOpTensorOp_t op,
                                             tsrDataType_t compute_type,
                                             tsrNanPropagation_t nan_propagation) {
  const char* fn = "tsrSetOpTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (!valid_op(op))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": op " + std::to_string(op) + " is not a tsrOpTensorOp_t");
    if (compute_type != TSR_DATA_FLOAT)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": compute_type is " +
                      (valid_data_type(compute_type) ? data_type_name(compute_type)
                                                     : std::to_string(compute_type)) +
                      ", expected TSR_DATA_FLOAT (half, bf16 and integer data compute in f32)");
    if (!valid_nan_propagation(nan_propagation))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nan_propagation " + std::to_string(nan_propagation) +
                      " is not a tsrNanPropagation_t");
    desc->op = op;
    desc->compute_type = compute_type;
    desc->nan_propagation = nan_propagation;
    desc->is_set = true;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetOpTensorDescriptor(tsrOpTensorDescriptor_t desc, tsrOpTensorOp_t* op,
                                             tsrDataType_t* compute_type,
                                             tsrNanPropagation_t* nan_propagation) {
  const char* fn = "tsrGetOpTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_op_desc(fn, desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "op", op)) return s;
    if (tsrStatus_t s = check_not_null(fn, "compute_type", compute_type)) return s;
    if (tsrStatus_t s = check_not_null(fn, "nan_propagation", nan_propagation)) return s;
    *op = desc->op;
    *compute_type = desc->compute_type;
    *nan_propagation = desc->nan_propagation;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrOpTensor(tsrHandle_t handle, tsrOpTensorDescriptor_t op_desc, float alpha1,
                                tsrTensorDescriptor_t a_desc, const void* a, float alpha2,
                                tsrTensorDescriptor_t b_desc, const void* b, float beta,
                                tsrTensorDescriptor_t c_desc, void* c) {
  const char* fn = "tsrOpTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_op_desc(fn, op_desc)) return s;
    const bool unary = is_unary(op_desc->op);
    if (tsrStatus_t s = check_tensor(fn, "a_desc", a_desc)) return s;
    if (!unary)
      if (tsrStatus_t s = check_tensor(fn, "b_desc", b_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "c_desc", c_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "a", a)) return s;
    if (!unary)
      if (tsrStatus_t s = check_not_null(fn, "b", b)) return s;
    if (tsrStatus_t s = check_not_null(fn, "c", c)) return s;
    if (tsrStatus_t s = check_finite(fn, "alpha1", alpha1)) return s;
    if (!unary)
      if (tsrStatus_t s = check_finite(fn, "alpha2", alpha2)) return s;
    if (tsrStatus_t s = check_finite(fn, "beta", beta)) return s;
    // a has c's dims exactly (types may differ); b broadcasts.
    if (tsrStatus_t s = check_same_shape(fn, "c_desc", c_desc->tensor, "a_desc", a_desc->tensor, false))
      return s;
    if (!unary)
      if (tsrStatus_t s = check_ones_or_equal(fn, "b_desc", b_desc->tensor, "c_desc",
                                              c_desc->tensor, "broadcast"))
        return s;
    tsrpOpTensorProblem problem{};
    problem.struct_size = sizeof(problem);
    problem.op = op_desc->op;
    problem.compute_type = op_desc->compute_type;
    problem.nan_propagation = op_desc->nan_propagation;
    problem.a = a_desc->tensor;
    problem.b = unary ? a_desc->tensor : b_desc->tensor;
    problem.c = c_desc->tensor;
    tsrpOpTensorArgs args{};
    args.struct_size = sizeof(args);
    args.a = a;
    args.b = unary ? nullptr : b;
    args.c = c;
    args.alpha1 = alpha1;
    args.alpha2 = unary ? 0.0f : alpha2;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_OP_TENSOR;
    call.problem = &problem;
    call.args = &args;
    call.describe = nullptr;  // trace descriptors for tensor ops come later
    return dispatch(*handle, call);
  });
}

}  // extern "C"
