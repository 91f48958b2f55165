// RMS normalization forward and backward: validation, problem building, workspace queries,
// dispatch.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "normalization_checks.hpp"
#include "validation.hpp"

#include <string>

using namespace tessera::api;
using namespace tessera::api::normalization;

namespace {

tsrStatus_t build_problem(const char* fn, int axis, tsrTensorDescriptor_t x_desc,
                          tsrTensorDescriptor_t out_desc, const char* out_name,
                          tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t scale_desc,
                          tsrTensorDescriptor_t stats_desc, bool need_stats, bool backward,
                          tsrpRmsNormProblem* p) {
  *p = tsrpRmsNormProblem{};
  p->struct_size = sizeof(*p);
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  if (tsrStatus_t s = check_floating(fn, "x_desc", x)) return s;
  if (tsrStatus_t s = check_norm_axis(fn, x, axis)) return s;
  p->begin_norm_axis = axis;
  p->x = x;
  if (backward) {
    if (tsrStatus_t s = check_tensor(fn, "dy_desc", dy_desc)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, "dy_desc", dy_desc->tensor)) return s;
    p->dy = dy_desc->tensor;
  }
  if (tsrStatus_t s = check_tensor(fn, out_name, out_desc)) return s;
  if (tsrStatus_t s = check_same_shape(fn, "x_desc", x, out_name, out_desc->tensor)) return s;
  (backward ? p->dx : p->y) = out_desc->tensor;
  if (tsrStatus_t s = check_scale_desc(fn, x, axis, scale_desc)) return s;
  p->scale = scale_desc->tensor;
  if (need_stats) {
    if (tsrStatus_t s = check_stats_desc(fn, x, axis, stats_desc)) return s;
    p->stats = stats_desc->tensor;
  }
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t run(tsrContext& h, const char* fn, int op, const tsrpRmsNormProblem& p,
                const tsrpRmsNormArgs& a, tsrAlgo_t algo, void* workspace, size_t workspace_size) {
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

TSR_API tsrStatus_t tsrGetRmsNormalizationForwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t scale_desc, tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
    size_t* bytes) {
  const char* fn = "tsrGetRmsNormalizationForwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpRmsNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, y_desc, "y_desc", nullptr,
                                      scale_desc, nullptr, false, false, &p))
      return s;
    p.epsilon = 1e-5;
    return query_workspace(*handle, fn, TSR_OP_RMS_NORM_FORWARD, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrGetRmsNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t scale_desc,
    tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo, size_t* bytes) {
  const char* fn = "tsrGetRmsNormalizationBackwardWorkspaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpRmsNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, dx_desc, "dx_desc", dy_desc,
                                      scale_desc, nullptr, false, true, &p))
      return s;
    p.epsilon = 1e-5;
    p.has_dscale = 1;
    return query_workspace(*handle, fn, TSR_OP_RMS_NORM_BACKWARD, &p, algo, bytes);
  });
}

TSR_API tsrStatus_t tsrRmsNormalizationForward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t scale_desc,
    const void* scale, tsrTensorDescriptor_t stats_desc, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t y_desc, void* y, void* inv_rms) {
  const char* fn = "tsrRmsNormalizationForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpRmsNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, y_desc, "y_desc", nullptr,
                                      scale_desc, stats_desc, inv_rms != nullptr, false, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scale", scale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    p.has_saved_stats = inv_rms != nullptr;
    tsrpRmsNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.y = y;
    a.scale = static_cast<const float*>(scale);
    a.inv_rms = static_cast<float*>(inv_rms);
    return run(*handle, fn, TSR_OP_RMS_NORM_FORWARD, p, a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrRmsNormalizationBackward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t scale_desc, const void* scale, tsrTensorDescriptor_t stats_desc,
    const void* saved_inv_rms, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t dx_desc, void* dx, void* dscale) {
  const char* fn = "tsrRmsNormalizationBackward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    tsrpRmsNormProblem p;
    if (tsrStatus_t s = build_problem(fn, begin_norm_axis, x_desc, dx_desc, "dx_desc", dy_desc,
                                      scale_desc, stats_desc, saved_inv_rms != nullptr, true, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "scale", scale)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (tsrStatus_t s = check_epsilon(fn, epsilon)) return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    p.epsilon = epsilon;
    p.has_saved_stats = saved_inv_rms != nullptr;
    p.has_dscale = dscale != nullptr;
    tsrpRmsNormArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.dy = dy;
    a.dx = dx;
    a.scale = static_cast<const float*>(scale);
    a.saved_inv_rms = static_cast<const float*>(saved_inv_rms);
    a.dscale = static_cast<float*>(dscale);
    return run(*handle, fn, TSR_OP_RMS_NORM_BACKWARD, p, a, algo, workspace, workspace_size);
  });
}

}  // extern "C"
