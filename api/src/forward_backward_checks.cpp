// Checks shared by activation, LRN, pooling and softmax (see forward_backward_checks.hpp).
#include "forward_backward_checks.hpp"

#include "error_state.hpp"

#include <cmath>
#include <string>

namespace tessera::api {

tsrStatus_t check_scalars(const char* fn, float alpha, float beta) {
  if (!std::isfinite(alpha))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
  if (!std::isfinite(beta))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": beta is not finite");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_floating(const char* fn, const char* name, const tsrpTensor& t) {
  if (t.data_type == TSR_DATA_FLOAT || t.data_type == TSR_DATA_HALF ||
      t.data_type == TSR_DATA_BFLOAT16)
    return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(fn) + ": " + name + " has data type " + data_type_name(t.data_type) +
                  ", expected f32, f16 or bf16");
}

tsrStatus_t check_forward_tensors(const char* fn, tsrTensorDescriptor_t x_desc,
                                  tsrTensorDescriptor_t y_desc) {
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  return check_tensor(fn, "y_desc", y_desc);
}

tsrStatus_t check_backward_tensors(const char* fn, tsrTensorDescriptor_t y_desc,
                                   tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc,
                                   tsrTensorDescriptor_t dx_desc) {
  if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "dy_desc", dy_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  return check_tensor(fn, "dx_desc", dx_desc);
}

tsrStatus_t check_backward_shapes_as_x(const char* fn, tsrTensorDescriptor_t y_desc,
                                       tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc,
                                       tsrTensorDescriptor_t dx_desc) {
  const tsrpTensor& x = x_desc->tensor;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, "y_desc", y_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, "dy_desc", dy_desc->tensor)) return s;
  return check_same_shape(fn, "x_desc", x, "dx_desc", dx_desc->tensor);
}

tsrStatus_t check_forward_data(const char* fn, const void* x, const void* y, float alpha,
                               float beta) {
  if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
  if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
  return check_scalars(fn, alpha, beta);
}

tsrStatus_t check_backward_data(const char* fn, const void* y, const void* dy, const void* x,
                                const void* dx, float alpha, float beta) {
  if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
  if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
  if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
  if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
  return check_scalars(fn, alpha, beta);
}

}  // namespace tessera::api
