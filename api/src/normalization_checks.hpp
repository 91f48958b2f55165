// Argument checks shared by the batch, layer and RMS normalization entry points: the f32 packed
// parameter/statistics tensors, epsilon, the blend scalars, optional pointers that come in pairs.
// Messages follow validation.hpp: "<function>: <argument> <what is wrong>".
#pragma once

#include "error_state.hpp"
#include "validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tessera::api::normalization {

inline std::string number_text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

inline std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

inline tsrStatus_t check_finite(const char* fn, const char* name, double value) {
  if (std::isfinite(value)) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": " + name + " is not finite");
}

// cuDNN wants epsilon >= 1e-5; any positive value keeps 1/sqrt(var + epsilon) finite, and that
// is all Tessera needs.
inline tsrStatus_t check_epsilon(const char* fn, double epsilon) {
  if (std::isfinite(epsilon) && epsilon > 0) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(fn) + ": epsilon is " + number_text(epsilon) + ", expected > 0");
}

// Data tensors: a floating type the normalization kernels compute.
inline tsrStatus_t check_floating(const char* fn, const char* name, const tsrpTensor& t) {
  if (t.data_type == TSR_DATA_FLOAT || t.data_type == TSR_DATA_HALF ||
      t.data_type == TSR_DATA_BFLOAT16)
    return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
              std::string(fn) + ": " + name + " has data type " + data_type_name(t.data_type) +
                  ", expected f32, f16 or bf16");
}

// Row-major packed, strides of size-1 dims aside (they never move the address).
inline bool is_packed(const tsrpTensor& t) {
  int64_t expected = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    if (t.dims[i] != 1 && t.strides[i] != expected) return false;
    // A packed tensor's size fits (its extent was checked): overflow means a broadcast view.
    if (__builtin_mul_overflow(expected, t.dims[i], &expected)) return false;
  }
  return true;
}

// An f32 packed tensor whose dims are `expected`, optionally padded with 1s up to `max_dims`
// (before the expected dims when pad_front, after them otherwise).
inline tsrStatus_t check_param_tensor(const char* fn, const char* name, const tsrpTensor& t,
                                      const std::vector<int64_t>& expected, int max_dims,
                                      bool pad_front, const char* what) {
  const int n = static_cast<int>(expected.size());
  bool ok = t.ndims >= n && t.ndims <= std::max(n, max_dims);
  const int pad = ok ? t.ndims - n : 0;
  for (int i = 0; ok && i < t.ndims; ++i) {
    const int e = pad_front ? i - pad : i;
    const int64_t want = (e >= 0 && e < n) ? expected[static_cast<size_t>(e)] : 1;
    ok = t.dims[i] == want;
  }
  if (!ok)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + name + " has dims " + dims_string(t) + ", expected " +
                    dims_text(expected) + " (" + what + ")");
  if (t.data_type != TSR_DATA_FLOAT)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + name + " has data type " + data_type_name(t.data_type) +
                    ", expected f32 (parameters and statistics are f32 for every data type)");
  if (!is_packed(t))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": " + name + " is not packed (row-major strides expected)");
  return TSR_STATUS_SUCCESS;
}

// Two optional pointers that only make sense together.
inline tsrStatus_t check_pair(const char* fn, const char* a_name, const void* a,
                              const char* b_name, const void* b) {
  if ((a == nullptr) == (b == nullptr)) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
              std::string(fn) + ": " + (a ? b_name : a_name) + " is NULL but " +
                  (a ? a_name : b_name) + " is not (give both or neither)");
}

inline tsrStatus_t check_workspace(const char* fn, const void* workspace, size_t workspace_size) {
  if (workspace_size == 0 || workspace) return TSR_STATUS_SUCCESS;
  return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": workspace is NULL but workspace_size is " +
                                                     std::to_string(workspace_size));
}

// Layer/RMS norm: begin_norm_axis splits x into leading (statistics) and normalized dims.
inline tsrStatus_t check_norm_axis(const char* fn, const tsrpTensor& x, int axis) {
  if (x.ndims < 2)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": x_desc has " + std::to_string(x.ndims) +
                    " dims, expected 2 or more (leading dims, then normalized ones)");
  if (axis < 1 || axis > x.ndims - 1)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": begin_norm_axis is " + std::to_string(axis) + ", expected 1 to " +
                    std::to_string(x.ndims - 1) + " for x_desc's " + std::to_string(x.ndims) + " dims");
  return TSR_STATUS_SUCCESS;
}

inline std::vector<int64_t> normalized_dims(const tsrpTensor& x, int axis) {
  return std::vector<int64_t>(x.dims + axis, x.dims + x.ndims);
}
inline std::vector<int64_t> leading_dims(const tsrpTensor& x, int axis) {
  return std::vector<int64_t>(x.dims, x.dims + axis);
}

// The scale (and bias, dscale, dbias) layout of layer/RMS norm.
inline tsrStatus_t check_scale_desc(const char* fn, const tsrpTensor& x, int axis,
                                    tsrTensorDescriptor_t scale_desc) {
  if (tsrStatus_t s = check_tensor(fn, "scale_desc", scale_desc)) return s;
  return check_param_tensor(fn, "scale_desc", scale_desc->tensor, normalized_dims(x, axis),
                            x.ndims, true, "x_desc's dims from begin_norm_axis");
}

inline tsrStatus_t check_stats_desc(const char* fn, const tsrpTensor& x, int axis,
                                    tsrTensorDescriptor_t stats_desc) {
  if (tsrStatus_t s = check_tensor(fn, "stats_desc", stats_desc)) return s;
  return check_param_tensor(fn, "stats_desc", stats_desc->tensor, leading_dims(x, axis), x.ndims,
                            false, "x_desc's dims before begin_norm_axis");
}

}  // namespace tessera::api::normalization
