// What the tensor-operation entry points (add/op/scale/set/transform/reduce tensor) share: their
// descriptors' contents and the checks only they need (broadcast and reduction shapes, scalars).
#pragma once

#include "descriptors.hpp"
#include "error_state.hpp"
#include "validation.hpp"

#include <cmath>
#include <string>

struct tsrOpTensorStruct {
  bool is_set = false;
  tsrOpTensorOp_t op = TSR_OP_TENSOR_ADD;
  tsrDataType_t compute_type = TSR_DATA_FLOAT;
  tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN;
};

struct tsrReduceTensorStruct {
  bool is_set = false;
  tsrReduceTensorOp_t op = TSR_REDUCE_TENSOR_ADD;
  tsrDataType_t compute_type = TSR_DATA_FLOAT;
  tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN;
  tsrReduceTensorIndices_t indices = TSR_REDUCE_TENSOR_NO_INDICES;
  tsrIndicesType_t indices_type = TSR_32BIT_INDICES;
};

namespace tessera::api {

inline tsrStatus_t check_finite(const char* fn, const char* name, float value) {
  if (std::isfinite(value)) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(fn) + ": " + name + " is " + std::to_string(value) + ", expected a finite value");
}

// `small` has `big`'s number of dims and each of its dims is 1 or big's. `role` says what the
// size-1 dims mean ("broadcast", "reduced") in the message.
inline tsrStatus_t check_ones_or_equal(const char* fn, const char* small_name, const tsrpTensor& small,
                                       const char* big_name, const tsrpTensor& big,
                                       const char* role) {
  if (small.ndims != big.ndims)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + small_name + " has " + std::to_string(small.ndims) +
                    " dims (" + dims_string(small) + "), expected " + big_name + "'s " +
                    std::to_string(big.ndims) + " (" + dims_string(big) + ")");
  for (int i = 0; i < big.ndims; ++i)
    if (small.dims[i] != 1 && small.dims[i] != big.dims[i])
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  std::string(fn) + ": " + small_name + " has dims " + dims_string(small) +
                      ": dim " + std::to_string(i) + " is " + std::to_string(small.dims[i]) +
                      ", expected 1 (" + role + ") or " + big_name + "'s " +
                      std::to_string(big.dims[i]) + " (" + big_name + " has dims " +
                      dims_string(big) + ")");
  return TSR_STATUS_SUCCESS;
}

inline bool valid_nan_propagation(int v) {
  return v == TSR_NOT_PROPAGATE_NAN || v == TSR_PROPAGATE_NAN;
}

}  // namespace tessera::api
