// Pooling forward and backward: descriptor, output shape, validation, workspace query, dispatch.
#include "error_state.hpp"
#include "forward_backward_checks.hpp"
#include "validation.hpp"

#include <algorithm>
#include <cmath>

// The pooling descriptor is private to this file: nothing else reads it.
struct tsrPoolingStruct {
  bool is_set = false;
  tsrPoolingMode_t mode = TSR_POOLING_MAX;
  tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN;
  int spatial_dims = 0;
  int64_t window[TSR_MAX_SPATIAL_DIMS] = {1, 1, 1};
  int64_t pad_before[TSR_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t pad_after[TSR_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t stride[TSR_MAX_SPATIAL_DIMS] = {1, 1, 1};
};

using namespace tessera::api;

namespace {

tsrStatus_t check_pool(const char* fn, tsrPoolingDescriptor_t pool) {
  if (!pool) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": pool is NULL");
  if (!pool->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": pool was created but never set (call tsrSetPoolingNdDescriptor)");
  return TSR_STATUS_SUCCESS;
}

// The output shape of pooling x (dims only; data type and strides of x).
tsrStatus_t infer_output(const char* fn, const tsrPoolingStruct& pool, const tsrpTensor& x,
                         tsrpTensor* y) {
  const int nd = pool.spatial_dims + 2;
  if (x.ndims != nd)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": x_desc has " + std::to_string(x.ndims) + " dims, expected " +
                    std::to_string(nd) + " (N, C and " + std::to_string(pool.spatial_dims) +
                    " spatial dims, as pool says)");
  *y = x;
  for (int i = 0; i < pool.spatial_dims; ++i) {
    // Checked: x may be a broadcast view (stride 0) with a dim near 2^63 (the fuzzer's).
    int64_t padded = 0;
    if (__builtin_add_overflow(x.dims[2 + i], pool.pad_before[i], &padded) ||
        __builtin_add_overflow(padded, pool.pad_after[i], &padded))
      return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                  std::string(fn) + ": spatial dim " + std::to_string(i) + " of x_desc is " +
                      std::to_string(x.dims[2 + i]) + ", and with the padding of pool it overflows");
    if (padded < pool.window[i])
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  std::string(fn) + ": spatial dim " + std::to_string(i) + " of x_desc is " +
                      std::to_string(x.dims[2 + i]) + ", padded " + std::to_string(padded) +
                      ", smaller than the window " + std::to_string(pool.window[i]));
    y->dims[2 + i] = (padded - pool.window[i]) / pool.stride[i] + 1;
  }
  return TSR_STATUS_SUCCESS;
}

void fill_geometry(const tsrPoolingStruct& pool, tsrpPoolingProblem* p) {
  p->struct_size = sizeof(*p);
  p->mode = pool.mode;
  p->nan_propagation = pool.nan_propagation;
  p->spatial_dims = pool.spatial_dims;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    const bool used = i < pool.spatial_dims;
    p->window[i] = used ? pool.window[i] : 1;
    p->pad_before[i] = used ? pool.pad_before[i] : 0;
    p->pad_after[i] = used ? pool.pad_after[i] : 0;
    p->stride[i] = used ? pool.stride[i] : 1;
  }
}

// x and y agree with the descriptor and each other.
tsrStatus_t check_pair(const char* fn, const tsrPoolingStruct& pool, const char* x_name,
                       const tsrpTensor& x, const char* y_name, const tsrpTensor& y) {
  if (tsrStatus_t s = check_floating(fn, x_name, x)) return s;
  tsrpTensor expected{};
  if (tsrStatus_t s = infer_output(fn, pool, x, &expected)) return s;
  std::string what = std::string("the pooling output of ") + x_name;
  return check_same_shape(fn, what.c_str(), expected, y_name, y, true);
}

tsrStatus_t build_forward(const char* fn, tsrPoolingDescriptor_t pool, tsrTensorDescriptor_t x_desc,
                          tsrTensorDescriptor_t y_desc, tsrpPoolingProblem* p) {
  if (tsrStatus_t s = check_pool(fn, pool)) return s;
  if (tsrStatus_t s = check_forward_tensors(fn, x_desc, y_desc)) return s;
  if (tsrStatus_t s = check_pair(fn, *pool, "x_desc", x_desc->tensor, "y_desc", y_desc->tensor))
    return s;
  *p = tsrpPoolingProblem{};
  fill_geometry(*pool, p);
  fill_forward_tensors(x_desc, y_desc, p);
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t build_backward(const char* fn, tsrPoolingDescriptor_t pool,
                           tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
                           tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dx_desc,
                           tsrpPoolingProblem* p) {
  if (tsrStatus_t s = check_pool(fn, pool)) return s;
  if (tsrStatus_t s = check_backward_tensors(fn, y_desc, dy_desc, x_desc, dx_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  if (tsrStatus_t s = check_pair(fn, *pool, "x_desc", x, "y_desc", y_desc->tensor)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "y_desc", y_desc->tensor, "dy_desc", dy_desc->tensor))
    return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, "dx_desc", dx_desc->tensor)) return s;
  *p = tsrpPoolingProblem{};
  fill_geometry(*pool, p);
  fill_backward_tensors(y_desc, dy_desc, x_desc, dx_desc, p);
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreatePoolingDescriptor(tsrPoolingDescriptor_t* desc) {
  return guarded("tsrCreatePoolingDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreatePoolingDescriptor", "desc", desc)) return s;
    *desc = new tsrPoolingStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyPoolingDescriptor(tsrPoolingDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetPoolingNdDescriptor(tsrPoolingDescriptor_t desc, tsrPoolingMode_t mode,
                                              tsrNanPropagation_t nan_propagation,
                                              int spatial_dims, const int64_t window[],
                                              const int64_t pad_before[],
                                              const int64_t pad_after[], const int64_t stride[]) {
  const char* fn = "tsrSetPoolingNdDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (mode != TSR_POOLING_MAX && mode != TSR_POOLING_AVERAGE_COUNT_INCLUDE_PADDING &&
        mode != TSR_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrPoolingMode_t");
    if (nan_propagation != TSR_NOT_PROPAGATE_NAN && nan_propagation != TSR_PROPAGATE_NAN)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nan_propagation " + std::to_string(nan_propagation) +
                      " is not a tsrNanPropagation_t");
    if (spatial_dims < 2 || spatial_dims > TSR_MAX_SPATIAL_DIMS)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": spatial_dims is " + std::to_string(spatial_dims) +
                      ", expected 2 or 3");
    if (tsrStatus_t s = check_not_null(fn, "window", window)) return s;
    if (tsrStatus_t s = check_not_null(fn, "pad_before", pad_before)) return s;
    if (tsrStatus_t s = check_not_null(fn, "pad_after", pad_after)) return s;
    if (tsrStatus_t s = check_not_null(fn, "stride", stride)) return s;
    auto bad = [&](const char* what, int i, int64_t v, const std::string& expected) {
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + what + "[" + std::to_string(i) + "] is " +
                      std::to_string(v) + ", expected " + expected);
    };
    for (int i = 0; i < spatial_dims; ++i) {
      if (window[i] < 1) return bad("window", i, window[i], "1 or more");
      if (stride[i] < 1) return bad("stride", i, stride[i], "1 or more");
      const std::string below = "0 or more and less than window[" + std::to_string(i) +
                                "] = " + std::to_string(window[i]);
      if (pad_before[i] < 0 || pad_before[i] >= window[i])
        return bad("pad_before", i, pad_before[i], below);
      if (pad_after[i] < 0 || pad_after[i] >= window[i])
        return bad("pad_after", i, pad_after[i], below);
    }
    tsrPoolingStruct p;
    p.mode = mode;
    p.nan_propagation = nan_propagation;
    p.spatial_dims = spatial_dims;
    for (int i = 0; i < spatial_dims; ++i) {
      p.window[i] = window[i];
      p.pad_before[i] = pad_before[i];
      p.pad_after[i] = pad_after[i];
      p.stride[i] = stride[i];
    }
    p.is_set = true;
    *desc = p;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetPoolingNdDescriptor(tsrPoolingDescriptor_t desc, int max_spatial_dims,
                                              tsrPoolingMode_t* mode,
                                              tsrNanPropagation_t* nan_propagation,
                                              int* spatial_dims, int64_t window[],
                                              int64_t pad_before[], int64_t pad_after[],
                                              int64_t stride[]) {
  const char* fn = "tsrGetPoolingNdDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_pool(fn, desc)) return s;
    if (max_spatial_dims < 0)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": max_spatial_dims is " + std::to_string(max_spatial_dims) +
                      ", expected 0 or more");
    if (tsrStatus_t s = check_not_null(fn, "mode", mode)) return s;
    if (tsrStatus_t s = check_not_null(fn, "nan_propagation", nan_propagation)) return s;
    if (tsrStatus_t s = check_not_null(fn, "spatial_dims", spatial_dims)) return s;
    const int n = std::min(max_spatial_dims, desc->spatial_dims);
    if (n > 0) {
      if (tsrStatus_t s = check_not_null(fn, "window", window)) return s;
      if (tsrStatus_t s = check_not_null(fn, "pad_before", pad_before)) return s;
      if (tsrStatus_t s = check_not_null(fn, "pad_after", pad_after)) return s;
      if (tsrStatus_t s = check_not_null(fn, "stride", stride)) return s;
    }
    *mode = desc->mode;
    *nan_propagation = desc->nan_propagation;
    *spatial_dims = desc->spatial_dims;
    for (int i = 0; i < n; ++i) {
      window[i] = desc->window[i];
      pad_before[i] = desc->pad_before[i];
      pad_after[i] = desc->pad_after[i];
      stride[i] = desc->stride[i];
    }
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetPoolingNdForwardOutputDim(tsrPoolingDescriptor_t pool,
                                                    tsrTensorDescriptor_t x_desc, int nb_dims,
                                                    int64_t out_dims[]) {
  const char* fn = "tsrGetPoolingNdForwardOutputDim";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_pool(fn, pool)) return s;
    if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "out_dims", out_dims)) return s;
    tsrpTensor y{};
    if (tsrStatus_t s = infer_output(fn, *pool, x_desc->tensor, &y)) return s;
    if (nb_dims != y.ndims)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nb_dims is " + std::to_string(nb_dims) + ", expected " +
                      std::to_string(y.ndims));
    for (int i = 0; i < y.ndims; ++i) out_dims[i] = y.dims[i];
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrPoolingForward(tsrHandle_t handle, tsrPoolingDescriptor_t pool,
                                      tsrAlgo_t algo, float alpha, tsrTensorDescriptor_t x_desc,
                                      const void* x, float beta, tsrTensorDescriptor_t y_desc,
                                      void* y) {
  const char* fn = "tsrPoolingForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpPoolingProblem problem;
    if (tsrStatus_t s = build_forward(fn, pool, x_desc, y_desc, &problem)) return s;
    if (tsrStatus_t s = check_forward_data(fn, x, y, alpha, beta)) return s;
    return dispatch_forward<tsrpPoolingArgs>(*handle, fn, TSR_OP_POOLING_FORWARD, &problem, algo,
                                             x, y, alpha, beta);
  });
}

TSR_API tsrStatus_t tsrPoolingBackward(tsrHandle_t handle, tsrPoolingDescriptor_t pool,
                                       tsrAlgo_t algo, float alpha, tsrTensorDescriptor_t y_desc,
                                       const void* y, tsrTensorDescriptor_t dy_desc,
                                       const void* dy, tsrTensorDescriptor_t x_desc, const void* x,
                                       float beta, tsrTensorDescriptor_t dx_desc, void* dx) {
  const char* fn = "tsrPoolingBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpPoolingProblem problem;
    if (tsrStatus_t s = build_backward(fn, pool, y_desc, dy_desc, x_desc, dx_desc, &problem))
      return s;
    if (tsrStatus_t s = check_backward_data(fn, y, dy, x, dx, alpha, beta)) return s;
    return dispatch_backward<tsrpPoolingArgs>(*handle, fn, TSR_OP_POOLING_BACKWARD, &problem, algo,
                                              y, dy, x, dx, alpha, beta);
  });
}

TSR_API tsrStatus_t tsrGetPoolingForwardWorkspaceSize(tsrHandle_t handle,
                                                      tsrPoolingDescriptor_t pool,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
                                                      size_t* bytes) {
  const char* fn = "tsrGetPoolingForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpPoolingProblem problem;
    if (tsrStatus_t s = build_forward(fn, pool, x_desc, y_desc, &problem)) return s;
    return query_workspace(*handle, fn, TSR_OP_POOLING_FORWARD, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetPoolingBackwardWorkspaceSize(tsrHandle_t handle,
                                                       tsrPoolingDescriptor_t pool,
                                                       tsrTensorDescriptor_t y_desc,
                                                       tsrTensorDescriptor_t dy_desc,
                                                       tsrTensorDescriptor_t x_desc,
                                                       tsrTensorDescriptor_t dx_desc,
                                                       tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetPoolingBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpPoolingProblem problem;
    if (tsrStatus_t s = build_backward(fn, pool, y_desc, dy_desc, x_desc, dx_desc, &problem))
      return s;
    return query_workspace(*handle, fn, TSR_OP_POOLING_BACKWARD, &problem, algo, bytes);
  });
}

}  // extern "C"
