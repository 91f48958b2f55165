// Convolution backward data, filter and bias: validation, problem building, get-algorithm,
// workspace queries, dispatch. Data and filter reuse the forward problem (x/w/y are dx/w/dy or
// x/dw/dy) and therefore the forward's shape inference and messages (convolution_problem.hpp).
#include "convolution_problem.hpp"
#include "dispatch.hpp"
#include "error_state.hpp"
#include "tuning.hpp"
#include "validation.hpp"

#include <cmath>

using namespace tessera::api;

namespace {

const convolution_names data_names{"dx_desc", "w_desc", "dy_desc"};
const convolution_names filter_names{"x_desc", "dw_desc", "dy_desc"};

tsrStatus_t check_scalars(const char* fn, float alpha, float beta) {
  if (!std::isfinite(alpha))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": alpha is not finite");
  if (!std::isfinite(beta))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": beta is not finite");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_workspace(const char* fn, void* workspace, size_t workspace_size) {
  if (workspace_size > 0 && !workspace)
    return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                std::string(fn) + ": workspace is NULL but workspace_size is " +
                    std::to_string(workspace_size));
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t data_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t w_desc,
                         tsrTensorDescriptor_t dy_desc, tsrConvolutionDescriptor_t conv,
                         tsrTensorDescriptor_t dx_desc, tsrpConvolutionProblem* p) {
  return build_convolution_problem(fn, h, dx_desc, w_desc, conv, dy_desc, data_names,
                                   convolution_types::floating, p);
}

tsrStatus_t filter_problem(const char* fn, tsrContext& h, tsrTensorDescriptor_t x_desc,
                           tsrTensorDescriptor_t dy_desc, tsrConvolutionDescriptor_t conv,
                           tsrTensorDescriptor_t dw_desc, tsrpConvolutionProblem* p) {
  return build_convolution_problem(fn, h, x_desc, dw_desc, conv, dy_desc, filter_names,
                                   convolution_types::floating, p);
}

tsrStatus_t run(tsrContext& h, const char* fn, int op, const void* problem, const void* args,
                tsrAlgo_t algo, void* workspace, size_t workspace_size) {
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = problem;
  call.args = args;
  call.algo = algo;
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  call.describe = nullptr;  // the benchdnn-style descriptors for backward passes come later
  return dispatch(h, call);
}

// Find for backward data and filter: the arguments of a run whose output find redirects to
// scratch (an output pointer the caller may leave NULL stands in with an input's: never written).
tsrStatus_t find(tsrContext& h, const char* fn, int op, const tsrpConvolutionProblem& p, const void* args,
                 int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
                 size_t workspace_size) {
  if (tsrStatus_t s = check_not_null(fn, "returned_count", returned_count)) return s;
  if (tsrStatus_t s = check_perf_array(fn, requested_count, perf)) return s;
  if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = &p;
  call.args = args;
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  return find_algorithms(h, call, requested_count, returned_count, perf);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrFindConvolutionBackwardDataAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, const void* w, tsrTensorDescriptor_t dy_desc,
    const void* dy, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, const void* dx,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size) {
  const char* fn = "tsrFindConvolutionBackwardDataAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = data_problem(fn, *handle, w_desc, dy_desc, conv, dx_desc, &p)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    tsrpConvolutionBackwardDataArgs args{};
    args.struct_size = sizeof(args);
    args.w = w;
    args.dy = dy;
    args.dx = const_cast<void*>(dx ? dx : dy);
    args.alpha = 1.0f;
    args.beta = 0.0f;
    return find(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_DATA, p, &args, requested_count, returned_count, perf,
                workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrFindConvolutionBackwardFilterAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc,
    const void* dy, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, const void* dw,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size) {
  const char* fn = "tsrFindConvolutionBackwardFilterAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = filter_problem(fn, *handle, x_desc, dy_desc, conv, dw_desc, &p)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    tsrpConvolutionBackwardFilterArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.dy = dy;
    args.dw = const_cast<void*>(dw ? dw : dy);
    args.alpha = 1.0f;
    args.beta = 0.0f;
    return find(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_FILTER, p, &args, requested_count, returned_count, perf,
                workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionBackwardDataAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, int requested_count,
    int* returned_count, tsrAlgoPerf_t perf[]) {
  const char* fn = "tsrGetConvolutionBackwardDataAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = data_problem(fn, *handle, w_desc, dy_desc, conv, dx_desc, &p)) return s;
    return get_algorithms(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_DATA, &p, requested_count,
                          returned_count, perf);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionBackwardDataWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo,
    size_t* bytes) {
  const char* fn = "tsrGetConvolutionBackwardDataWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = data_problem(fn, *handle, w_desc, dy_desc, conv, dx_desc, &p)) return s;
    return query_workspace(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_DATA, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrConvolutionBackwardData(tsrHandle_t handle, float alpha,
                                               tsrTensorDescriptor_t w_desc, const void* w,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                               void* workspace, size_t workspace_size, float beta,
                                               tsrTensorDescriptor_t dx_desc, void* dx) {
  const char* fn = "tsrConvolutionBackwardData";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = data_problem(fn, *handle, w_desc, dy_desc, conv, dx_desc, &p)) return s;
    if (tsrStatus_t s = check_not_null(fn, "w", w)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (tsrStatus_t s = check_scalars(fn, alpha, beta)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    tsrpConvolutionBackwardDataArgs args{};
    args.struct_size = sizeof(args);
    args.w = w;
    args.dy = dy;
    args.dx = dx;
    args.alpha = alpha;
    args.beta = beta;
    return run(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_DATA, &p, &args, algo, workspace,
               workspace_size);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionBackwardFilterAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, int requested_count,
    int* returned_count, tsrAlgoPerf_t perf[]) {
  const char* fn = "tsrGetConvolutionBackwardFilterAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = filter_problem(fn, *handle, x_desc, dy_desc, conv, dw_desc, &p)) return s;
    return get_algorithms(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_FILTER, &p, requested_count,
                          returned_count, perf);
  });
}

TSR_API tsrStatus_t tsrGetConvolutionBackwardFilterWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, tsrAlgo_t algo,
    size_t* bytes) {
  const char* fn = "tsrGetConvolutionBackwardFilterWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = filter_problem(fn, *handle, x_desc, dy_desc, conv, dw_desc, &p)) return s;
    return query_workspace(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_FILTER, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrConvolutionBackwardFilter(tsrHandle_t handle, float alpha,
                                                 tsrTensorDescriptor_t x_desc, const void* x,
                                                 tsrTensorDescriptor_t dy_desc, const void* dy,
                                                 tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                                 void* workspace, size_t workspace_size,
                                                 float beta, tsrTensorDescriptor_t dw_desc,
                                                 void* dw) {
  const char* fn = "tsrConvolutionBackwardFilter";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpConvolutionProblem p;
    if (tsrStatus_t s = filter_problem(fn, *handle, x_desc, dy_desc, conv, dw_desc, &p)) return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dw", dw)) return s;
    if (tsrStatus_t s = check_scalars(fn, alpha, beta)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    tsrpConvolutionBackwardFilterArgs args{};
    args.struct_size = sizeof(args);
    args.x = x;
    args.dy = dy;
    args.dw = dw;
    args.alpha = alpha;
    args.beta = beta;
    return run(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_FILTER, &p, &args, algo, workspace,
               workspace_size);
  });
}

TSR_API tsrStatus_t tsrConvolutionBackwardBias(tsrHandle_t handle, float alpha,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               float beta, tsrTensorDescriptor_t db_desc,
                                               void* db) {
  const char* fn = "tsrConvolutionBackwardBias";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_tensor(fn, "dy_desc", dy_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "db_desc", db_desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "db", db)) return s;
    if (tsrStatus_t s = check_scalars(fn, alpha, beta)) return s;
    const tsrpTensor& t = dy_desc->tensor;
    const tsrpTensor& b = db_desc->tensor;
    if (t.ndims < 3 || t.ndims > 2 + TSR_MAX_SPATIAL_DIMS)
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  std::string(fn) + ": dy_desc has " + std::to_string(t.ndims) +
                      " dims, expected 3 to 5 (N, K and 1 to 3 spatial dims)");
    if (t.data_type != TSR_DATA_FLOAT && t.data_type != TSR_DATA_HALF &&
        t.data_type != TSR_DATA_BFLOAT16)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": dy_desc has data type " + data_type_name(t.data_type) +
                      ", expected f32, f16 or bf16");
    tsrpTensor expected{};
    expected.data_type = t.data_type;
    expected.ndims = t.ndims;
    for (int i = 0; i < t.ndims; ++i) expected.dims[i] = i == 1 ? t.dims[1] : 1;
    if (tsrStatus_t s = check_same_shape(fn, "dy_desc's bias shape (1, K, 1...)", expected, "db_desc", b))
      return s;
    tsrpConvolutionBackwardBiasProblem p{};
    p.struct_size = sizeof(p);
    p.dy = t;
    p.db = b;
    tsrpConvolutionBackwardBiasArgs args{};
    args.struct_size = sizeof(args);
    args.dy = dy;
    args.db = db;
    args.alpha = alpha;
    args.beta = beta;
    return run(*handle, fn, TSR_OP_CONVOLUTION_BACKWARD_BIAS, &p, &args, TSR_ALGO_AUTO, nullptr, 0);
  });
}

}  // extern "C"
