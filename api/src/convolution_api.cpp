// Convolution forward: descriptor, shape inference, validation, get/find, workspace, dispatch.
#include "convolution_problem.hpp"
#include "dispatch.hpp"
#include "tuning.hpp"
#include "error_state.hpp"
#include "problem_text.hpp"
#include "validation.hpp"

#include <tessera_common/shape_inference.hpp>

#include <algorithm>
#include <cmath>

using namespace tessera::api;

namespace tessera::api {

tsrStatus_t check_convolution_desc(const char* fn, tsrConvolutionDescriptor_t conv) {
  if (!conv) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": conv is NULL");
  if (!conv->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": conv was created but never set (call tsrSetConvolutionNdDescriptor)");
  return TSR_STATUS_SUCCESS;
}

}  // namespace tessera::api

namespace {

tsrStatus_t check_conv(const char* fn, tsrConvolutionDescriptor_t conv) {
  return check_convolution_desc(fn, conv);
}

// Output dims of x (*) w under conv, after checking that x and w agree with conv and each other.
tsrStatus_t infer_output(const char* fn, const tsrConvolutionStruct& conv, const tsrpTensor& x,
                         const tsrpTensor& w, tsrpTensor* y_shape,
                         const convolution_names& names = convolution_names{}) {
  const std::string x_name = names.x, w_name = names.w;
  const int nd = conv.spatial_dims + 2;
  if (x.ndims != nd)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + x_name + " has " + std::to_string(x.ndims) + " dims, expected " +
                    std::to_string(nd) + " (N, C and " + std::to_string(conv.spatial_dims) +
                    " spatial dims, as conv says)");
  if (w.ndims != nd)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + w_name + " has " + std::to_string(w.ndims) + " dims, expected " +
                    std::to_string(nd) + " (K, C/groups and " + std::to_string(conv.spatial_dims) +
                    " spatial dims)");
  if (x.dims[1] % conv.groups != 0)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + x_name + " has " + std::to_string(x.dims[1]) +
                    " channels, not divisible by groups = " + std::to_string(conv.groups));
  if (w.dims[0] % conv.groups != 0)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + w_name + " has " + std::to_string(w.dims[0]) +
                    " output channels, not divisible by groups = " + std::to_string(conv.groups));
  if (w.dims[1] != x.dims[1] / conv.groups)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + w_name + " has " + std::to_string(w.dims[1]) +
                    " input channels per group, expected C/groups = " +
                    std::to_string(x.dims[1] / conv.groups));
  tsrpTensor y{};
  y.data_type = x.data_type;
  y.ndims = nd;
  y.dims[0] = x.dims[0];
  y.dims[1] = w.dims[0];
  for (int i = 0; i < conv.spatial_dims; ++i) {
    std::string why;
    int64_t out = 0;
    if (!tessera::common::infer_conv_output_size(x.dims[2 + i], w.dims[2 + i], conv.stride[i],
                                                 conv.pad_before[i], conv.pad_after[i],
                                                 conv.dilation[i], &out, &why))
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  std::string(fn) + ": spatial dim " + std::to_string(i) + ": " + why);
    y.dims[2 + i] = out;
  }
  *y_shape = y;
  return TSR_STATUS_SUCCESS;
}

bool is_floating(int32_t t) {
  return t == TSR_DATA_FLOAT || t == TSR_DATA_HALF || t == TSR_DATA_BFLOAT16;
}

}  // namespace

namespace tessera::api {

tsrStatus_t build_convolution_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t x_desc,
                                      tsrTensorDescriptor_t w_desc, tsrConvolutionDescriptor_t conv,
                                      tsrTensorDescriptor_t y_desc, const convolution_names& names,
                                      convolution_types types, tsrpConvolutionProblem* problem) {
  if (tsrStatus_t s = check_tensor(fn, names.x, x_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, names.w, w_desc)) return s;
  if (tsrStatus_t s = check_conv(fn, conv)) return s;
  if (tsrStatus_t s = check_tensor(fn, names.y, y_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  const tsrpTensor& w = w_desc->tensor;
  const tsrpTensor& y = y_desc->tensor;
  tsrpTensor expected{};
  if (tsrStatus_t s = infer_output(fn, *conv, x, w, &expected, names)) return s;
  const std::string forward_output =
      std::string("the convolution's output ") + names.x + " (*) " + names.w;
  if (tsrStatus_t s = check_same_shape(fn, forward_output.c_str(), expected, names.y, y, false))
    return s;
  if (types == convolution_types::int8_quantized) {
    if (x.data_type != TSR_DATA_INT8)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + names.x + " has data type " +
                      data_type_name(x.data_type) + ", expected s8");
    if (w.data_type != TSR_DATA_INT8)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + names.w + " has data type " +
                      data_type_name(w.data_type) + ", expected s8");
  } else {
    if (types == convolution_types::floating && !is_floating(x.data_type))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + names.x + " has data type " +
                      data_type_name(x.data_type) + ", expected f32, f16 or bf16");
    if (w.data_type != x.data_type)
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  std::string(fn) + ": " + names.w + " has data type " +
                      data_type_name(w.data_type) + ", expected " + names.x + "'s " +
                      data_type_name(x.data_type));
  }
  // int8 inputs (from either entry point) accumulate in s32 and may widen the output.
  if (x.data_type == TSR_DATA_INT8 && w.data_type == TSR_DATA_INT8 &&
      types != convolution_types::floating) {
    if (y.data_type != TSR_DATA_INT8 && y.data_type != TSR_DATA_INT32 &&
        y.data_type != TSR_DATA_FLOAT)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + names.y + " has data type " +
                      data_type_name(y.data_type) + ", expected s8, s32 or f32 for int8 inputs");
    if (conv->compute_type != TSR_DATA_INT32)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": conv has compute_type " +
                      data_type_name(conv->compute_type) + ", expected s32 for int8 inputs");
  } else if (y.data_type != x.data_type) {
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": " + names.y + " has data type " +
                    data_type_name(y.data_type) + ", expected " + names.x + "'s " +
                    data_type_name(x.data_type));
  }
  *problem = tsrpConvolutionProblem{};
  problem->struct_size = sizeof(*problem);
  problem->x = x;
  problem->w = w;
  problem->y = y;
  problem->spatial_dims = conv->spatial_dims;
  problem->mode = conv->mode;
  problem->compute_type = conv->compute_type;
  problem->math_mode = h.math_mode;
  problem->groups = conv->groups;
  for (int i = 0; i < TSR_MAX_SPATIAL_DIMS; ++i) {
    problem->pad_before[i] = i < conv->spatial_dims ? conv->pad_before[i] : 0;
    problem->pad_after[i] = i < conv->spatial_dims ? conv->pad_after[i] : 0;
    problem->stride[i] = i < conv->spatial_dims ? conv->stride[i] : 1;
    problem->dilation[i] = i < conv->spatial_dims ? conv->dilation[i] : 1;
  }
  return TSR_STATUS_SUCCESS;
}

}  // namespace tessera::api

namespace {

tsrStatus_t build_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t x_desc,
                          tsrTensorDescriptor_t w_desc, tsrConvolutionDescriptor_t conv,
                          tsrTensorDescriptor_t y_desc, tsrpConvolutionProblem* problem) {
  return build_convolution_problem(fn, h, x_desc, w_desc, conv, y_desc, convolution_names{},
                                   convolution_types::same, problem);
}

call_description describe(const void* problem, const tsrContext& h, const std::string& backend) {
  return describe_convolution(*static_cast<const tsrpConvolutionProblem*>(problem), h, backend);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateConvolutionDescriptor(tsrConvolutionDescriptor_t* desc) {
  return guarded("tsrCreateConvolutionDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateConvolutionDescriptor", "desc", desc)) return s;
    *desc = new tsrConvolutionStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyConvolutionDescriptor(tsrConvolutionDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetConvolutionNdDescriptor(tsrConvolutionDescriptor_t desc, int spatial_dims,
                                                  const int64_t pad_before[],
                                                  const int64_t pad_after[],
                                                  const int64_t stride[], const int64_t dilation[],
                                                  tsrConvolutionMode_t mode,
                                                  tsrDataType_t compute_type) {
  const char* fn = "tsrSetConvolutionNdDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (spatial_dims < 1 || spatial_dims > TSR_MAX_SPATIAL_DIMS)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": spatial_dims is " + std::to_string(spatial_dims) +
                      ", expected 1, 2 or 3");
    if (tsrStatus_t s = check_not_null(fn, "pad_before", pad_before)) return s;
    if (tsrStatus_t s = check_not_null(fn, "pad_after", pad_after)) return s;
    if (tsrStatus_t s = check_not_null(fn, "stride", stride)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dilation", dilation)) return s;
    if (mode != TSR_CROSS_CORRELATION && mode != TSR_CONVOLUTION)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrConvolutionMode_t");
    if (compute_type != TSR_DATA_FLOAT && compute_type != TSR_DATA_INT32)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": compute_type " + data_type_name(compute_type) +
                      " is not an accumulation type (f32, or s32 for int8)");
    auto bad = [&](const char* what, int i, int64_t v, const char* expected) {
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": " + what + "[" + std::to_string(i) + "] is " +
                      std::to_string(v) + ", expected " + expected);
    };
    for (int i = 0; i < spatial_dims; ++i) {
      if (pad_before[i] < 0) return bad("pad_before", i, pad_before[i], "0 or more");
      if (pad_after[i] < 0) return bad("pad_after", i, pad_after[i], "0 or more");
      if (stride[i] < 1) return bad("stride", i, stride[i], "1 or more");
      if (dilation[i] < 1) return bad("dilation", i, dilation[i], "1 or more (1 means none)");
    }
    tsrConvolutionStruct c;
    c.groups = desc->groups;
    c.spatial_dims = spatial_dims;
    for (int i = 0; i < spatial_dims; ++i) {
      c.pad_before[i] = pad_before[i];
      c.pad_after[i] = pad_after[i];
      c.stride[i] = stride[i];
      c.dilation[i] = dilation[i];
    }
    c.mode = mode;
    c.compute_type = compute_type;
    c.is_set = true;
    *desc = c;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrSetConvolutionGroupCount(tsrConvolutionDescriptor_t desc, int64_t groups) {
  const char* fn = "tsrSetConvolutionGroupCount";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (groups < 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": groups is " + std::to_string(groups) + ", expected 1 or more");
    desc->groups = groups;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetConvolutionForwardOutputDim(tsrConvolutionDescriptor_t conv,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t w_desc, int nb_dims,
                                                      int64_t out_dims[]) {
  const char* fn = "tsrGetConvolutionForwardOutputDim";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_conv(fn, conv)) return s;
    if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "w_desc", w_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "out_dims", out_dims)) return s;
    tsrpTensor y{};
    if (tsrStatus_t s = infer_output(fn, *conv, x_desc->tensor, w_desc->tensor, &y)) return s;
    if (nb_dims != y.ndims)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nb_dims is " + std::to_string(nb_dims) + ", expected " +
                      std::to_string(y.ndims));
    for (int i = 0; i < y.ndims; ++i) out_dims[i] = y.dims[i];
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetConvolutionForwardAlgorithm(tsrHandle_t handle,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t w_desc,
                                                      tsrConvolutionDescriptor_t conv,
                                                      tsrTensorDescriptor_t y_desc,
                                                      int requested_count, int* returned_count,
                                                      tsrAlgoPerf_t perf[]) {
  const char* fn = "tsrGetConvolutionForwardAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, x_desc, w_desc, conv, y_desc, &problem)) return s;
    return get_algorithms(*handle, fn, TSR_OP_CONVOLUTION_FORWARD, &problem, requested_count,
                          returned_count, perf);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionForwardWorkspaceSize(tsrHandle_t handle,
                                                          tsrTensorDescriptor_t x_desc,
                                                          tsrTensorDescriptor_t w_desc,
                                                          tsrConvolutionDescriptor_t conv,
                                                          tsrTensorDescriptor_t y_desc,
                                                          tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetConvolutionForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, x_desc, w_desc, conv, y_desc, &problem)) return s;
    return query_workspace(*handle, fn, TSR_OP_CONVOLUTION_FORWARD, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrFindConvolutionForwardAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t w_desc,
    const void* w, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t y_desc, const void* y,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size) {
  const char* fn = "tsrFindConvolutionForwardAlgorithm";
  (void)y;  // never written: find measures on a scratch output of its own
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, x_desc, w_desc, conv, y_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if (tsrStatus_t s = check_not_null(fn, "returned_count", returned_count)) return s;
    if (tsrStatus_t s = check_perf_array(fn, requested_count, perf)) return s;
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": workspace is NULL but workspace_size is " +
                      std::to_string(workspace_size));

    auto handle_lock = lock_handle(*handle);
    const tessera::registry::registry& reg = tessera::registry::registry::instance();
    auto lock = reg.read_lock();
    ensure_plugin_contexts(*handle, reg);
    const bool use_pool = !workspace && workspace_size == 0;  // as for tsrConvolutionForward
    tessera::registry::selection_request req = make_request(*handle, TSR_OP_CONVOLUTION_FORWARD, &problem, TSR_ALGO_AUTO,
                                                            true, use_pool ? handle->workspace_limit : workspace_size);
    std::vector<tessera::registry::kernel_verdict> ranked = tessera::registry::rank_candidates(reg, req);

    // Measured on a scratch y (find never writes the caller's), as the autotuner measures.
    tsrpConvolutionForwardArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.w = w;
    args.y = const_cast<void*>(y ? y : x);  // only its presence matters: measure_candidates redirects y
    args.alpha = 1.0f;
    args.beta = 0.0f;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_CONVOLUTION_FORWARD;
    call.problem = &problem;
    call.args = &args;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    std::vector<float> times;
    if (tsrStatus_t s = measure_candidates(*handle, call, ranked, &times, tuning_limits_from_environment(), 5))
      return s;
    std::vector<size_t> order(ranked.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (ranked[a].can_run != ranked[b].can_run) return ranked[a].can_run;
      return ranked[a].can_run && times[a] < times[b];
    });
    int n = std::min<int>(requested_count, static_cast<int>(order.size()));
    for (int i = 0; i < n; ++i) {
      fill_perf(reg, ranked[order[i]], &perf[i]);
      perf[i].time_ms = times[order[i]];
    }
    *returned_count = n;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrConvolutionForward(tsrHandle_t handle, float alpha,
                                          tsrTensorDescriptor_t x_desc, const void* x,
                                          tsrTensorDescriptor_t w_desc, const void* w,
                                          tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                          void* workspace, size_t workspace_size, float beta,
                                          tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrConvolutionForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, x_desc, w_desc, conv, y_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (!std::isfinite(alpha))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
    if (!std::isfinite(beta))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": beta is not finite");
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": workspace is NULL but workspace_size is " +
                      std::to_string(workspace_size));
    tsrpConvolutionForwardArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.w = w;
    args.y = y;
    args.alpha = alpha;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_CONVOLUTION_FORWARD;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    call.describe = describe;
    return dispatch(*handle, call);
  });
}

}  // extern "C"

// ---- int8: the forward operation with s8 inputs and output scales --------------------------

namespace {

tsrStatus_t build_quantized_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t x_desc,
                                    tsrTensorDescriptor_t w_desc, tsrConvolutionDescriptor_t conv,
                                    int scale_count, tsrTensorDescriptor_t y_desc,
                                    tsrpConvolutionProblem* problem) {
  if (tsrStatus_t s = build_convolution_problem(fn, h, x_desc, w_desc, conv, y_desc,
                                                convolution_names{},
                                                convolution_types::int8_quantized, problem))
    return s;
  const int64_t k = problem->y.dims[1];
  if (scale_count != 1 && scale_count != k)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": scale_count is " + std::to_string(scale_count) +
                    ", expected 1 (per tensor) or " + std::to_string(k) +
                    " (per output channel of y_desc)");
  problem->output_scale_count = scale_count;
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrGetConvolutionForwardQuantizedWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, int scale_count, tsrTensorDescriptor_t y_desc,
    tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetConvolutionForwardQuantizedWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_quantized_problem(fn, *handle, x_desc, w_desc, conv, scale_count,
                                                y_desc, &problem))
      return s;
    return query_workspace(*handle, fn, TSR_OP_CONVOLUTION_FORWARD, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrConvolutionForwardQuantized(
    tsrHandle_t handle, float alpha, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t w_desc, const void* w, tsrConvolutionDescriptor_t conv,
    int scale_count, const float scales[], tsrAlgo_t algo, void* workspace,
    size_t workspace_size, float beta, tsrTensorDescriptor_t y_desc, void* y) {
  const char* fn = "tsrConvolutionForwardQuantized";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem problem;
    if (tsrStatus_t s = build_quantized_problem(fn, *handle, x_desc, w_desc, conv, scale_count,
                                                y_desc, &problem))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scales", scales)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    for (int i = 0; i < scale_count; ++i)
      if (!std::isfinite(scales[i]))
        return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    std::string(fn) + ": scales[" + std::to_string(i) + "] is not finite");
    if (!std::isfinite(alpha))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
    if (!std::isfinite(beta))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": beta is not finite");
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": workspace is NULL but workspace_size is " +
                      std::to_string(workspace_size));
    tsrpConvolutionForwardArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.w = w;
    args.y = y;
    args.alpha = alpha;
    args.beta = beta;
    args.output_scales = scales;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_CONVOLUTION_FORWARD;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    call.describe = describe;
    return dispatch(*handle, call);
  });
}

}  // extern "C"
