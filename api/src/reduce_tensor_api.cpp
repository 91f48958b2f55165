// Reduce tensor: its descriptor, the indices and workspace queries, validation, dispatch.
#include "dispatch.hpp"
#include "tensor_ops_checks.hpp"

#include <tessera_common/shape_inference.hpp>

using namespace tessera::api;

namespace {

bool valid_op(int op) { return op >= TSR_REDUCE_TENSOR_ADD && op <= TSR_REDUCE_TENSOR_NORM2; }

bool has_indices(int op) {
  return op == TSR_REDUCE_TENSOR_MIN || op == TSR_REDUCE_TENSOR_MAX || op == TSR_REDUCE_TENSOR_AMAX;
}

tsrStatus_t check_reduce_desc(const char* fn, tsrReduceTensorDescriptor_t d) {
  if (!d) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": reduce_desc is NULL");
  if (!d->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) +
                    ": reduce_desc was created but never set (call tsrSetReduceTensorDescriptor)");
  return TSR_STATUS_SUCCESS;
}

// Checks the descriptors and builds the problem.
tsrStatus_t build_problem(const char* fn, tsrReduceTensorDescriptor_t reduce_desc,
                          tsrTensorDescriptor_t a_desc, tsrTensorDescriptor_t c_desc,
                          tsrpReduceTensorProblem* problem) {
  if (tsrStatus_t s = check_reduce_desc(fn, reduce_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "a_desc", a_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "c_desc", c_desc)) return s;
  if (tsrStatus_t s = check_ones_or_equal(fn, "c_desc", c_desc->tensor, "a_desc", a_desc->tensor,
                                          "reduced"))
    return s;
  *problem = tsrpReduceTensorProblem{};
  problem->struct_size = sizeof(*problem);
  problem->op = reduce_desc->op;
  problem->compute_type = reduce_desc->compute_type;
  problem->nan_propagation = reduce_desc->nan_propagation;
  problem->indices = reduce_desc->indices;
  problem->indices_type = reduce_desc->indices_type;
  problem->a = a_desc->tensor;
  problem->c = c_desc->tensor;
  return TSR_STATUS_SUCCESS;
}

size_t indices_bytes(const tsrpReduceTensorProblem& p) {
  if (p.indices != TSR_REDUCE_TENSOR_FLATTENED_INDICES) return 0;
  int64_t n = 0;
  tessera::common::element_count(p.c.ndims, p.c.dims, &n);
  return static_cast<size_t>(n) * sizeof(uint32_t);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateReduceTensorDescriptor(tsrReduceTensorDescriptor_t* desc) {
  const char* fn = "tsrCreateReduceTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    *desc = new tsrReduceTensorStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc,
                                                 tsrReduceTensorOp_t op, tsrDataType_t compute_type,
                                                 tsrNanPropagation_t nan_propagation,
                                                 tsrReduceTensorIndices_t indices,
                                                 tsrIndicesType_t indices_type) {
  const char* fn = "tsrSetReduceTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (!valid_op(op))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": op " + std::to_string(op) + " is not a tsrReduceTensorOp_t");
    if (compute_type != TSR_DATA_FLOAT)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": compute_type is " +
                      (valid_data_type(compute_type) ? data_type_name(compute_type)
                                                     : std::to_string(compute_type)) +
                      ", expected TSR_DATA_FLOAT (reductions accumulate in f32)");
    if (!valid_nan_propagation(nan_propagation))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": nan_propagation " + std::to_string(nan_propagation) +
                      " is not a tsrNanPropagation_t");
    if (indices != TSR_REDUCE_TENSOR_NO_INDICES && indices != TSR_REDUCE_TENSOR_FLATTENED_INDICES)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": indices " + std::to_string(indices) +
                      " is not a tsrReduceTensorIndices_t");
    if (indices == TSR_REDUCE_TENSOR_FLATTENED_INDICES && !has_indices(op))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": indices is TSR_REDUCE_TENSOR_FLATTENED_INDICES but op " +
                      std::to_string(op) + " has none (only MIN, MAX and AMAX pick an element)");
    if (indices_type != TSR_32BIT_INDICES)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": indices_type " + std::to_string(indices_type) +
                      " is not supported, expected TSR_32BIT_INDICES");
    desc->op = op;
    desc->compute_type = compute_type;
    desc->nan_propagation = nan_propagation;
    desc->indices = indices;
    desc->indices_type = indices_type;
    desc->is_set = true;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc,
                                                 tsrReduceTensorOp_t* op,
                                                 tsrDataType_t* compute_type,
                                                 tsrNanPropagation_t* nan_propagation,
                                                 tsrReduceTensorIndices_t* indices,
                                                 tsrIndicesType_t* indices_type) {
  const char* fn = "tsrGetReduceTensorDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_reduce_desc(fn, desc)) return s;
    if (tsrStatus_t s = check_not_null(fn, "op", op)) return s;
    if (tsrStatus_t s = check_not_null(fn, "compute_type", compute_type)) return s;
    if (tsrStatus_t s = check_not_null(fn, "nan_propagation", nan_propagation)) return s;
    if (tsrStatus_t s = check_not_null(fn, "indices", indices)) return s;
    if (tsrStatus_t s = check_not_null(fn, "indices_type", indices_type)) return s;
    *op = desc->op;
    *compute_type = desc->compute_type;
    *nan_propagation = desc->nan_propagation;
    *indices = desc->indices;
    *indices_type = desc->indices_type;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetReductionIndicesSize(tsrHandle_t handle,
                                               tsrReduceTensorDescriptor_t reduce_desc,
                                               tsrTensorDescriptor_t a_desc,
                                               tsrTensorDescriptor_t c_desc, size_t* bytes) {
  const char* fn = "tsrGetReductionIndicesSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpReduceTensorProblem problem;
    if (tsrStatus_t s = build_problem(fn, reduce_desc, a_desc, c_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bytes", bytes)) return s;
    *bytes = indices_bytes(problem);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetReductionWorkspaceSize(tsrHandle_t handle,
                                                 tsrReduceTensorDescriptor_t reduce_desc,
                                                 tsrTensorDescriptor_t a_desc,
                                                 tsrTensorDescriptor_t c_desc, tsrAlgo_t algo,
                                                 size_t* bytes) {
  const char* fn = "tsrGetReductionWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpReduceTensorProblem problem;
    if (tsrStatus_t s = build_problem(fn, reduce_desc, a_desc, c_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bytes", bytes)) return s;
    return query_workspace(*handle, fn, TSR_OP_REDUCE_TENSOR, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrReduceTensor(tsrHandle_t handle, tsrReduceTensorDescriptor_t reduce_desc,
                                    tsrAlgo_t algo, void* indices, size_t indices_size,
                                    void* workspace, size_t workspace_size, float alpha,
                                    tsrTensorDescriptor_t a_desc, const void* a, float beta,
                                    tsrTensorDescriptor_t c_desc, void* c) {
  const char* fn = "tsrReduceTensor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpReduceTensorProblem problem;
    if (tsrStatus_t s = build_problem(fn, reduce_desc, a_desc, c_desc, &problem)) return s;
    if (tsrStatus_t s = check_not_null(fn, "a", a)) return s;
    if (tsrStatus_t s = check_not_null(fn, "c", c)) return s;
    if (tsrStatus_t s = check_finite(fn, "alpha", alpha)) return s;
    if (tsrStatus_t s = check_finite(fn, "beta", beta)) return s;
    const size_t needed = indices_bytes(problem);
    if (needed > 0) {
      if (!indices)
        return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    std::string(fn) + ": indices is NULL but reduce_desc asks for "
                                      "TSR_REDUCE_TENSOR_FLATTENED_INDICES (" +
                        std::to_string(needed) + " bytes)");
      if (indices_size < needed)
        return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    std::string(fn) + ": indices_size is " + std::to_string(indices_size) +
                        ", expected at least " + std::to_string(needed) +
                        " (4 bytes per element of c, see tsrGetReductionIndicesSize)");
    }
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": workspace is NULL but workspace_size is " +
                      std::to_string(workspace_size));
    tsrpReduceTensorArgs args{};
    args.struct_size = sizeof(args);
    args.a = a;
    args.c = c;
    args.indices = needed > 0 ? indices : nullptr;
    args.indices_size = needed > 0 ? indices_size : 0;
    args.alpha = alpha;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_REDUCE_TENSOR;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    call.describe = nullptr;  // trace descriptors for tensor ops come later
    return dispatch(*handle, call);
  });
}

}  // extern "C"
