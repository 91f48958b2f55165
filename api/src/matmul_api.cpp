// Matmul: descriptor, validation, problem building, get-algorithm, workspace, dispatch.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "validation.hpp"

#include <cmath>
#include <string>

using namespace tessera::api;

// What tsrMatmulDescriptor_t points to. Defined here, not in descriptors.hpp, because no other
// file needs its inside. The activation is held by value: the descriptor owns its epilogue.
struct tsrMatmulStruct {
  bool is_set = false;
  tsrDataType_t compute_type = TSR_DATA_FLOAT;
  tsrActivationMode_t act_mode = TSR_ACTIVATION_IDENTITY;
  double act_coef = 0.0;
  tsrMatmulEpilogueOrder_t order = TSR_MATMUL_BLEND_AFTER_ACTIVATION;
};

namespace {

std::string str(const char* fn) { return std::string(fn); }

tsrStatus_t check_matmul(const char* fn, tsrMatmulDescriptor_t mm) {
  if (!mm) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, str(fn) + ": matmul_desc is NULL");
  if (!mm->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                str(fn) + ": matmul_desc was created but never set (call tsrSetMatmulDescriptor)");
  return TSR_STATUS_SUCCESS;
}

// The C type each input type may produce, as the header's table says.
bool allowed_output(int in, int out) {
  switch (in) {
    case TSR_DATA_FLOAT: return out == TSR_DATA_FLOAT;
    case TSR_DATA_HALF: return out == TSR_DATA_HALF || out == TSR_DATA_FLOAT;
    case TSR_DATA_BFLOAT16: return out == TSR_DATA_BFLOAT16 || out == TSR_DATA_FLOAT;
    case TSR_DATA_INT8: return out == TSR_DATA_INT32 || out == TSR_DATA_FLOAT;
    default: return false;
  }
}

std::string dims_of(const int64_t* dims, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

// Checks the descriptors against each other and builds the problem. bias_desc may be NULL.
tsrStatus_t build_problem(const char* fn, const tsrContext& h, tsrMatmulDescriptor_t mm,
                          tsrTensorDescriptor_t a_desc, tsrTensorDescriptor_t b_desc,
                          tsrTensorDescriptor_t bias_desc, tsrTensorDescriptor_t c_desc,
                          tsrpMatmulProblem* problem) {
  if (tsrStatus_t s = check_matmul(fn, mm)) return s;
  if (tsrStatus_t s = check_tensor(fn, "a_desc", a_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "b_desc", b_desc)) return s;
  if (bias_desc)
    if (tsrStatus_t s = check_tensor(fn, "bias_desc", bias_desc)) return s;
  if (tsrStatus_t s = check_tensor(fn, "c_desc", c_desc)) return s;
  const tsrpTensor& a = a_desc->tensor;
  const tsrpTensor& b = b_desc->tensor;
  const tsrpTensor& c = c_desc->tensor;
  const int n = c.ndims;

  // Ranks: one for all, and room for the two matrix dims.
  const std::pair<const char*, const tsrpTensor*> operands[] = {{"a_desc", &a}, {"b_desc", &b}, {"c_desc", &c}};
  for (const auto& [name, t] : operands)
    if (t->ndims < 2)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  str(fn) + ": " + name + " has " + std::to_string(t->ndims) +
                      " dims, expected 2 to " + std::to_string(TSR_MAX_DIMS) +
                      " ([batch..., rows, columns])");
  if (a.ndims != n || b.ndims != n)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": a_desc, b_desc and c_desc have " + std::to_string(a.ndims) + ", " +
                    std::to_string(b.ndims) + " and " + std::to_string(n) +
                    " dims, expected one rank for all three");

  // Matrix dims: A is M x K, B is K x N.
  const int64_t m = a.dims[n - 2], k = a.dims[n - 1], nn = b.dims[n - 1];
  if (b.dims[n - 2] != k)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": b_desc has dims " + dims_string(b) + ": its K (dim " +
                    std::to_string(n - 2) + ") is " + std::to_string(b.dims[n - 2]) +
                    ", expected a_desc's K = " + std::to_string(k) + " (a_desc has dims " +
                    dims_string(a) + ")");
  // Batch dims broadcast: each of A's and B's is 1 or the other's.
  int64_t expected[TSR_MAX_DIMS] = {};
  for (int i = 0; i < n - 2; ++i) {
    if (a.dims[i] != b.dims[i] && a.dims[i] != 1 && b.dims[i] != 1)
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  str(fn) + ": batch dim " + std::to_string(i) + " is " +
                      std::to_string(a.dims[i]) + " in a_desc (" + dims_string(a) + ") and " +
                      std::to_string(b.dims[i]) + " in b_desc (" + dims_string(b) +
                      "), expected equal or one of them 1");
    expected[i] = a.dims[i] == 1 ? b.dims[i] : a.dims[i];
  }
  expected[n - 2] = m;
  expected[n - 1] = nn;
  for (int i = 0; i < n; ++i)
    if (c.dims[i] != expected[i])
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  str(fn) + ": c_desc has dims " + dims_string(c) + ", expected " +
                      dims_of(expected, n) + " (batch dims broadcast from a_desc " +
                      dims_string(a) + " and b_desc " + dims_string(b) + ", then M x N)");
  // Outputs must not overlap themselves: a zero stride over a dim > 1 would.
  for (int i = 0; i < n; ++i)
    if (c.strides[i] == 0 && c.dims[i] > 1)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  str(fn) + ": c_desc has stride 0 in dim " + std::to_string(i) + " (extent " +
                      std::to_string(c.dims[i]) + "): elements of the output would overlap");

  // Data types.
  if (b.data_type != a.data_type)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": b_desc has data type " + data_type_name(b.data_type) +
                    ", expected a_desc's " + data_type_name(a.data_type));
  if (a.data_type == TSR_DATA_INT32)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": a_desc has data type s32, expected f32, f16, bf16 or s8 inputs");
  if (!allowed_output(a.data_type, c.data_type))
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": c_desc has data type " + data_type_name(c.data_type) + ", expected " +
                    (a.data_type == TSR_DATA_FLOAT  ? "f32"
                     : a.data_type == TSR_DATA_INT8 ? "s32 or f32"
                                                    : std::string(data_type_name(a.data_type)) +
                                                          " or f32") +
                    " for " + data_type_name(a.data_type) + " inputs");
  const tsrDataType_t wanted_compute = a.data_type == TSR_DATA_INT8 ? TSR_DATA_INT32 : TSR_DATA_FLOAT;
  if (mm->compute_type != wanted_compute)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                str(fn) + ": matmul_desc has compute type " + data_type_name(mm->compute_type) +
                    ", expected " + data_type_name(wanted_compute) + " for " +
                    data_type_name(a.data_type) + " inputs");

  // Bias: C's rank, each dim 1 or C's, C's type or f32.
  if (bias_desc) {
    const tsrpTensor& bias = bias_desc->tensor;
    bool fits = bias.ndims == n;
    for (int i = 0; fits && i < n; ++i) fits = bias.dims[i] == 1 || bias.dims[i] == c.dims[i];
    if (!fits)
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  str(fn) + ": bias_desc has dims " + dims_string(bias) + ", expected " +
                      std::to_string(n) + " dims each 1 or c_desc's (" + dims_string(c) +
                      "), e.g. [1..., 1, " + std::to_string(nn) + "] for a per-column bias");
    if (bias.data_type != c.data_type && bias.data_type != TSR_DATA_FLOAT)
      return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  str(fn) + ": bias_desc has data type " + data_type_name(bias.data_type) +
                      ", expected " +
                      (c.data_type == TSR_DATA_FLOAT
                           ? std::string("f32 (c_desc's type, or f32)")
                           : std::string(data_type_name(c.data_type)) + " (c_desc's type) or f32"));
  }

  *problem = tsrpMatmulProblem{};
  problem->struct_size = sizeof(*problem);
  problem->a = a;
  problem->b = b;
  problem->c = c;
  problem->has_bias = bias_desc ? 1 : 0;
  if (bias_desc) problem->bias = bias_desc->tensor;
  problem->compute_type = mm->compute_type;
  problem->math_mode = h.math_mode;
  problem->activation_mode = mm->act_mode;
  problem->activation_coef = mm->act_coef;
  problem->epilogue_order = mm->order;
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrCreateMatmulDescriptor(tsrMatmulDescriptor_t* desc) {
  return guarded("tsrCreateMatmulDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateMatmulDescriptor", "desc", desc)) return s;
    *desc = new tsrMatmulStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyMatmulDescriptor(tsrMatmulDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetMatmulDescriptor(tsrMatmulDescriptor_t desc, tsrDataType_t compute_type,
                                           tsrActivationDescriptor_t act,
                                           tsrMatmulEpilogueOrder_t order) {
  const char* fn = "tsrSetMatmulDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    if (compute_type != TSR_DATA_FLOAT && compute_type != TSR_DATA_INT32)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  str(fn) + ": compute_type " +
                      (valid_data_type(compute_type) ? std::string(data_type_name(compute_type))
                                                     : std::to_string(compute_type)) +
                      " is not an accumulation type (f32, or s32 for s8 inputs)");
    if (order != TSR_MATMUL_BLEND_AFTER_ACTIVATION && order != TSR_MATMUL_BLEND_BEFORE_ACTIVATION)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  str(fn) + ": order " + std::to_string(order) + " is not a tsrMatmulEpilogueOrder_t");
    tsrActivationMode_t mode = TSR_ACTIVATION_IDENTITY;
    double coef = 0.0;
    if (act) {
      // Read through the public getter: it reports an unset descriptor with the right status.
      if (tsrGetActivationDescriptor(act, &mode, &coef) != TSR_STATUS_SUCCESS)
        return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    str(fn) + ": act was created but never set (call tsrSetActivationDescriptor)");
    }
    desc->compute_type = compute_type;
    desc->act_mode = mode;
    desc->act_coef = coef;
    desc->order = order;
    desc->is_set = true;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetMatmulDescriptor(tsrMatmulDescriptor_t desc, tsrDataType_t* compute_type,
                                           tsrActivationMode_t* act_mode, double* act_coef,
                                           tsrMatmulEpilogueOrder_t* order) {
  const char* fn = "tsrGetMatmulDescriptor";
  return guarded(fn, [&] {
    if (!desc) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, str(fn) + ": desc is NULL");
    if (!desc->is_set)
      return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                  str(fn) + ": desc was created but never set (call tsrSetMatmulDescriptor)");
    if (tsrStatus_t s = check_not_null(fn, "compute_type", compute_type)) return s;
    if (tsrStatus_t s = check_not_null(fn, "act_mode", act_mode)) return s;
    if (tsrStatus_t s = check_not_null(fn, "act_coef", act_coef)) return s;
    if (tsrStatus_t s = check_not_null(fn, "order", order)) return s;
    *compute_type = desc->compute_type;
    *act_mode = desc->act_mode;
    *act_coef = desc->act_coef;
    *order = desc->order;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetMatmulAlgorithm(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc,
                                          tsrTensorDescriptor_t a_desc,
                                          tsrTensorDescriptor_t b_desc,
                                          tsrTensorDescriptor_t bias_desc,
                                          tsrTensorDescriptor_t c_desc, int requested_count,
                                          int* returned_count, tsrAlgoPerf_t perf[]) {
  const char* fn = "tsrGetMatmulAlgorithm";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpMatmulProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, matmul_desc, a_desc, b_desc, bias_desc, c_desc, &problem))
      return s;
    return get_algorithms(*handle, fn, TSR_OP_MATMUL, &problem, requested_count, returned_count, perf);
  });
}

TSR_API tsrStatus_t tsrGetMatmulWorkspaceSize(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc,
                                              tsrTensorDescriptor_t a_desc,
                                              tsrTensorDescriptor_t b_desc,
                                              tsrTensorDescriptor_t bias_desc,
                                              tsrTensorDescriptor_t c_desc, tsrAlgo_t algo,
                                              size_t* bytes) {
  const char* fn = "tsrGetMatmulWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpMatmulProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, matmul_desc, a_desc, b_desc, bias_desc, c_desc, &problem))
      return s;
    return query_workspace(*handle, fn, TSR_OP_MATMUL, &problem, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrMatmul(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc, tsrAlgo_t algo,
                              float alpha, tsrTensorDescriptor_t a_desc, const void* a,
                              tsrTensorDescriptor_t b_desc, const void* b,
                              tsrTensorDescriptor_t bias_desc, const void* bias, float beta,
                              tsrTensorDescriptor_t c_desc, void* c, void* workspace,
                              size_t workspace_size) {
  const char* fn = "tsrMatmul";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpMatmulProblem problem;
    if (tsrStatus_t s = build_problem(fn, *handle, matmul_desc, a_desc, b_desc, bias_desc, c_desc, &problem))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "a", a)) return s;
    if (tsrStatus_t s = check_not_null(fn, "b", b)) return s;
    if (bias_desc && !bias)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  str(fn) + ": bias is NULL but bias_desc is not (pass both, or NULL for both)");
    if (!bias_desc && bias)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  str(fn) + ": bias_desc is NULL but bias is not (pass both, or NULL for both)");
    if (tsrStatus_t s = check_not_null(fn, "c", c)) return s;
    if (!std::isfinite(alpha))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, str(fn) + ": alpha is not finite");
    if (!std::isfinite(beta))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, str(fn) + ": beta is not finite");
    if (workspace_size > 0 && !workspace)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  str(fn) + ": workspace is NULL but workspace_size is " + std::to_string(workspace_size));
    tsrpMatmulArgs args{};
    args.struct_size = sizeof(args);
    args.a = a;
    args.b = b;
    args.bias = bias;
    args.c = c;
    args.alpha = alpha;
    args.beta = beta;
    operation_call call;
    call.function = fn;
    call.op = TSR_OP_MATMUL;
    call.problem = &problem;
    call.args = &args;
    call.algo = algo;
    call.workspace = workspace;
    call.workspace_size = workspace_size;
    call.describe = nullptr;  // the lead adds matmul's problem text to problem_text.cpp
    return dispatch(*handle, call);
  });
}

}  // extern "C"
