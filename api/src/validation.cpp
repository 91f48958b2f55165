#include "validation.hpp"

#include "error_state.hpp"

#include <tessera_common/shape_inference.hpp>

namespace tessera::api {

tsrStatus_t check_not_null(const char* function, const char* argument, const void* pointer) {
  if (pointer) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
              std::string(function) + ": " + argument + " is NULL");
}

tsrStatus_t check_tensor(const char* function, const char* argument, tsrTensorDescriptor_t desc) {
  if (!desc)
    return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                std::string(function) + ": " + argument + " is NULL");
  if (!desc->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(function) + ": " + argument +
                    " was created but never set (call tsrSetTensorNdDescriptor)");
  return TSR_STATUS_SUCCESS;
}

bool valid_data_type(int dtype) { return dtype >= TSR_DATA_FLOAT && dtype <= TSR_DATA_INT32; }

const char* data_type_name(int dtype) { return tessera::common::data_type_name(dtype); }

std::string dims_string(const tsrpTensor& t) {
  std::string s;
  for (int i = 0; i < t.ndims; ++i) {
    if (i) s += "x";
    s += std::to_string(t.dims[i]);
  }
  return s;
}

tsrStatus_t check_same_shape(const char* function, const char* a_name, const tsrpTensor& a,
                             const char* b_name, const tsrpTensor& b, bool same_dtype) {
  bool same = a.ndims == b.ndims;
  for (int i = 0; same && i < a.ndims; ++i) same = a.dims[i] == b.dims[i];
  if (!same)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(function) + ": " + b_name + " has dims " + dims_string(b) +
                    ", expected those of " + a_name + " (" + dims_string(a) + ")");
  if (same_dtype && a.data_type != b.data_type)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(function) + ": " + b_name + " has data type " +
                    data_type_name(b.data_type) + ", expected " + a_name + "'s " +
                    data_type_name(a.data_type));
  return TSR_STATUS_SUCCESS;
}

bool tensor_bytes(const tsrpTensor& t, size_t* bytes) {
  return tessera::common::tensor_extent_bytes(t, bytes);
}

}  // namespace tessera::api
