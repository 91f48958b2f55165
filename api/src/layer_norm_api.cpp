// Layer normalization forward and backward: validation, problem building, workspace queries,
// dispatch.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "normalization_checks.hpp"
#include "validation.hpp"

#include <string>

using namespace tessera::api;
using namespace tessera::api::normalization;

namespace {

// x and the data tensors of its dims and type, begin_norm_axis, and the optional scale/stats
// descriptors (checked when given, or when `need_scale` / `need_stats`).
tsrStatus_t build_problem(const char* fn, int axis, tsrTensorDescriptor_t x_desc,
                          tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
                          tsrTensorDescriptor_t dx_desc, tsrTensorDescriptor_t scale_desc,
                          bool need_scale, tsrTensorDescriptor_t stats_desc, bool need_stats,
                          bool backward, tsrpLayerNormProblem* p) {
  *p = tsrpLayerNormProblem{};
  p->struct_size = sizeof(*p);
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  if (tsrStatus_t s = check_floating(fn, "x_desc", x)) return s;
  if (tsrStatus_t s = check_norm_axis(fn, x, axis)) return s;
  p->begin_norm_axis = axis;
  p->x = x;
  const std::pair<const char*, tsrTensorDescriptor_t> data[] = {
      {backward ? "dy_desc" : "y_desc", backward ? dy_desc : y_desc},
      {"dx_desc", backward ? dx_desc : nullptr}};
  for (const auto& [name, desc] : data) {
    if (!backward && desc == nullptr && std::string(name) == "dx_desc") continue;
    if (tsrStatus_t s = check_tensor(fn, name, desc)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, name, desc->tensor)) return s;
  }
  if (backward) {
    p->dy = dy_desc->tensor;
    p->dx = dx_desc->tensor;
  } else {
    p->y = y_desc->tensor;
  }
  if (need_scale || scale_desc) {
    if (tsrStatus_t s = check_scale_desc(fn, x, axis, scale_desc)) return s;
    p->scale = scale_desc->tensor;
  }
  if (need_stats || stats_desc) {
    if (tsrStatus_t s = check_stats_desc(fn, x, axis, stats_desc)) return s;
    p->stats = stats_desc->tensor;
  }
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t run(tsrContext& h, const char* fn, int op, const tsrpLayerNormProblem& p,
                const tsrpLayerNormArgs& a, tsrAlgo_t algo, void* workspace, size_t workspace_size) {
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = &p;
  call.args = &a;
  call.algo = algo;
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  return dispatch(h, call);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrGetLayerNormalizationForwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t scale_desc, tsrTensorDescriptor_t stats_desc,
    tsrTensorDescriptor_t y_desc, tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetLayerNormalizationForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLayerNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, y_desc, nullptr, nullptr,
                                      scale_desc, false, stats_desc, false, false, &p))
      return s;
    // Kernels size their workspace for every option; these only make the problem complete.
    p.has_scale = p.has_bias = scale_desc != nullptr;
    p.write_saved_stats = stats_desc != nullptr;
    p.epsilon = 1e-5;
    return query_workspace(*handle, fn, TSR_OP_LAYER_NORM_FORWARD, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetLayerNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t scale_desc,
    tsrTensorDescriptor_t stats_desc, tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo,
    size_t* bytes) {
  const char* fn = "tsrGetLayerNormalizationBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpLayerNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, nullptr, dy_desc, dx_desc,
                                      scale_desc, false, stats_desc, true, true, &p))
      return s;
    p.has_scale = p.has_dscale = scale_desc != nullptr;
    p.has_bias = 1;
    p.epsilon = 1e-5;
    return query_workspace(*handle, fn, TSR_OP_LAYER_NORM_BACKWARD, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrLayerNormalizationForward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t scale_desc,
    const void* scale, const void* bias, tsrTensorDescriptor_t stats_desc, void* workspace,
    size_t workspace_size, tsrTensorDescriptor_t y_desc, void* y, void* mean, void* inv_std) {
  const char* fn = "tsrLayerNormalizationForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    const bool affine = scale != nullptr || bias != nullptr;
    const bool stats = mean != nullptr || inv_std != nullptr;
    tsrpLayerNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, y_desc, nullptr, nullptr,
                                      affine ? scale_desc : nullptr, affine,
                                      stats ? stats_desc : nullptr, stats, false, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_pair(fn, "mean", mean, "inv_std", inv_std)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    p.has_scale = scale != nullptr;
    p.has_bias = bias != nullptr;
    p.write_saved_stats = stats;
    tsrpLayerNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.y = y;
    a.scale = static_cast<const float*>(scale);
    a.bias = static_cast<const float*>(bias);
    a.mean = static_cast<float*>(mean);
    a.inv_std = static_cast<float*>(inv_std);
    return run(*handle, fn, TSR_OP_LAYER_NORM_FORWARD, p, a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrLayerNormalizationBackward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t scale_desc, const void* scale, tsrTensorDescriptor_t stats_desc,
    const void* saved_mean, const void* saved_inv_std, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t dx_desc, void* dx, void* dscale, void* dbias) {
  const char* fn = "tsrLayerNormalizationBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    const bool params = scale != nullptr || dscale != nullptr || dbias != nullptr;
    tsrpLayerNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, nullptr, dy_desc, dx_desc,
                                      params ? scale_desc : nullptr, params, stats_desc, true,
                                      true, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "saved_mean", saved_mean)) return s;
    if (tsrStatus_t s = check_not_null(fn, "saved_inv_std", saved_inv_std)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (dscale && !scale)
      return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                  std::string(fn) + ": scale is NULL but dscale is not (a gradient of the scale "
                                    "needs the scale the forward used)");
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    p.has_scale = scale != nullptr;
    p.has_dscale = dscale != nullptr;
    p.has_bias = dbias != nullptr;
    tsrpLayerNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.dy = dy;
    a.dx = dx;
    a.scale = static_cast<const float*>(scale);
    a.saved_mean = static_cast<const float*>(saved_mean);
    a.saved_inv_std = static_cast<const float*>(saved_inv_std);
    a.dscale = static_cast<float*>(dscale);
    a.dbias = static_cast<float*>(dbias);
    return run(*handle, fn, TSR_OP_LAYER_NORM_BACKWARD, p, a, algo, workspace, workspace_size);
  });
}

}  // extern "C"
