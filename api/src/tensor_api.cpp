// Tensor descriptors: create, set (strides or a packed format), get, size.
#include "error_state.hpp"
#include "validation.hpp"

#include <tessera_common/shape_inference.hpp>

#include <cmath>
#include <new>

using namespace tessera::api;

namespace {

tsrStatus_t set_tensor(const char* fn, tsrTensorDescriptor_t desc, tsrDataType_t dtype, int nb_dims,
                       const int64_t dims[], const int64_t strides[]) {
  if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
  if (!valid_data_type(dtype))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": dtype " + std::to_string(dtype) + " is not a tsrDataType_t");
  if (nb_dims < 1 || nb_dims > TSR_MAX_DIMS)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": nb_dims is " + std::to_string(nb_dims) + ", expected 1 to " +
                    std::to_string(TSR_MAX_DIMS));
  if (tsrStatus_t s = check_not_null(fn, "dims", dims)) return s;
  if (tsrStatus_t s = check_not_null(fn, "strides", strides)) return s;
  tsrpTensor t{};
  t.data_type = dtype;
  t.ndims = nb_dims;
  for (int i = 0; i < nb_dims; ++i) {
    if (dims[i] < 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": dims[" + std::to_string(i) + "] is " +
                      std::to_string(dims[i]) + ", expected at least 1");
    if (strides[i] < 0)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": strides[" + std::to_string(i) + "] is " +
                      std::to_string(strides[i]) + ", expected 0 or more");
    t.dims[i] = dims[i];
    t.strides[i] = strides[i];
  }
  size_t bytes = 0;
  if (!tensor_bytes(t, &bytes))
    return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                std::string(fn) + ": a tensor of dims " + dims_string(t) +
                    " with these strides spans more bytes than size_t holds");
  desc->tensor = t;
  desc->is_set = true;
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateTensorDescriptor(tsrTensorDescriptor_t* desc) {
  return guarded("tsrCreateTensorDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateTensorDescriptor", "desc", desc)) return s;
    *desc = new tsrTensorStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyTensorDescriptor(tsrTensorDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetTensorNdDescriptor(tsrTensorDescriptor_t desc, tsrDataType_t dtype,
                                             int nb_dims, const int64_t dims[],
                                             const int64_t strides[]) {
  return guarded("tsrSetTensorNdDescriptor", [&] {
    return set_tensor("tsrSetTensorNdDescriptor", desc, dtype, nb_dims, dims, strides);
  });
}

TSR_API tsrStatus_t tsrSetTensorNdDescriptorEx(tsrTensorDescriptor_t desc, tsrTensorFormat_t format,
                                               tsrDataType_t dtype, int nb_dims,
                                               const int64_t dims[]) {
  const char* fn = "tsrSetTensorNdDescriptorEx";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "dims", dims)) return s;
    if (format != TSR_TENSOR_NCHW && format != TSR_TENSOR_NHWC)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": format " + std::to_string(format) +
                      " is not a tsrTensorFormat_t");
    if (nb_dims < 1 || nb_dims > TSR_MAX_DIMS)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nb_dims is " + std::to_string(nb_dims) +
                      ", expected 1 to " + std::to_string(TSR_MAX_DIMS));
    for (int i = 0; i < nb_dims; ++i)
      if (dims[i] < 1)
        return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    std::string(fn) + ": dims[" + std::to_string(i) + "] is " +
                        std::to_string(dims[i]) + ", expected at least 1");
    int64_t strides[TSR_MAX_DIMS];
    if (!tessera::common::packed_strides(nb_dims, dims, format == TSR_TENSOR_NHWC, strides))
      return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                  std::string(fn) + ": the element count of these dims overflows");
    return set_tensor(fn, desc, dtype, nb_dims, dims, strides);
  });
}

TSR_API tsrStatus_t tsrGetTensorNdDescriptor(tsrTensorDescriptor_t desc, int max_dims,
                                             tsrDataType_t* dtype, int* nb_dims, int64_t dims[],
                                             int64_t strides[]) {
  const char* fn = "tsrGetTensorNdDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_tensor(fn, "desc", desc)) return s;
    if (max_dims < 0)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": max_dims is " + std::to_string(max_dims));
    if (max_dims > 0) {
      if (tsrStatus_t s = check_not_null(fn, "dims", dims)) return s;
      if (tsrStatus_t s = check_not_null(fn, "strides", strides)) return s;
    }
    const tsrpTensor& t = desc->tensor;
    if (dtype) *dtype = static_cast<tsrDataType_t>(t.data_type);
    if (nb_dims) *nb_dims = t.ndims;
    for (int i = 0; i < t.ndims && i < max_dims; ++i) {
      dims[i] = t.dims[i];
      strides[i] = t.strides[i];
    }
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetTensorSizeInBytes(tsrTensorDescriptor_t desc, size_t* bytes) {
  const char* fn = "tsrGetTensorSizeInBytes";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_tensor(fn, "desc", desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bytes", bytes)) return s;
    size_t b = 0;
    tensor_bytes(desc->tensor, &b);  // cannot overflow: checked when set
    *bytes = b;
    return TSR_STATUS_SUCCESS;
  });
}

}  // extern "C"
