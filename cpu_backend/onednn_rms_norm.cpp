// Kernels "rms_norm_fwd" and "rms_norm_bwd": plain C++ loops, because oneDNN 3.2's
// layer_normalization has no RMS variant (the rms flag came in oneDNN 3.3).
//
// oneDNN still does the data movement: x (and dy) are reordered into row-major f32 buffers of
// the workspace (a plain copy when x is already row-major f32 it is used in place), the loops
// run over contiguous rows of `inner` floats, and the result goes back to the user's type and
// strides through a reorder. The loops are written to vectorize (unit stride, no branches,
// float loads with double accumulators, which keep the sums of squares exact for the integer
// fills the tests use and well-conditioned otherwise). They run on one thread: rows are
// independent, so threading them is a later improvement that does not change results.
//   forward:  inv_rms = 1 / sqrt(sum(x^2) / inner + eps); y = x * inv_rms * scale
//   backward: g = dy * scale; dx = inv_rms * (g - x * inv_rms^2 * sum(g * x) / inner);
//             dscale = sum over rows of dy * x * inv_rms (accumulated in double)
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_norm_staging.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_workspace.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;

const char* kernel_name(bool backward) { return backward ? "rms_norm_bwd" : "rms_norm_fwd"; }

std::string check_problem(const tsrpRmsNormProblem& p, bool backward) {
  if (p.x.ndims < 2 || p.begin_norm_axis < 1 || p.begin_norm_axis > p.x.ndims - 1)
    return "begin_norm_axis " + std::to_string(p.begin_norm_axis) + " does not split x's " +
           std::to_string(p.x.ndims) + " dims";
  if (!(p.epsilon > 0)) return "epsilon must be > 0";
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {backward ? &p.dy : &p.y, backward ? "dy" : "y"}, {backward ? &p.dx : nullptr, "dx"}};
  for (const auto& [t, name] : tensors) {
    if (t == nullptr) continue;
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the RMS normalization supports f32, f16 and bf16";
    if (!same_dims(*t, p.x) || t->data_type != p.x.data_type)
      return std::string("tensor ") + name + " has other dims or data type than x";
  }
  return {};
}

cache_key problem_key(const tsrpRmsNormProblem& p, bool backward) {
  cache_key key(kernel_name(backward));
  key.add(int64_t{p.begin_norm_axis}).add(p.x);
  if (backward) key.add(p.dy).add(p.dx); else key.add(p.y);
  return key;
}

struct rms_plan final : cached_entry {
  bool backward = false;
  dnnl::memory::desc stage;  // row-major f32 of x's dims
  staged_tensor x, dy, out;
  size_t dscale_offset = 0, scratchpad_offset = 0, workspace_bytes = 0;
  int64_t outer = 0, inner = 0;
  std::string description;
};

std::shared_ptr<rms_plan> build_plan(const dnnl::engine& engine, const tsrpRmsNormProblem& p, bool backward) {
  auto plan = std::make_shared<rms_plan>();
  plan->backward = backward;
  plan->inner = 1;
  for (int i = p.begin_norm_axis; i < p.x.ndims; ++i) plan->inner *= p.x.dims[i];
  plan->outer = element_count(p.x) / plan->inner;
  plan->stage = make_row_major_desc(p.x, dt::f32);
  workspace_layout layout;
  plan->x = plan_input(engine, p.x, plan->stage, layout);
  if (backward) plan->dy = plan_input(engine, p.dy, plan->stage, layout);
  // The loops write their own buffer: the user's output is written only by the final reorder
  // (or in place when it is row-major f32), never half-computed.
  plan->out = plan_output(engine, backward ? p.dx : p.y, plan->stage, layout, 1.0f, 0.0f);
  plan->dscale_offset = layout.reserve(static_cast<size_t>(plan->inner) * sizeof(double));
  size_t scratchpad = 0;
  for (const staged_tensor* s : {&plan->x, &plan->dy, &plan->out})
    scratchpad = std::max(scratchpad, step_scratchpad(*s));
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string(kernel_name(backward)) + " (data " + data_type_name(p.x.data_type) +
                      ", compute f32 loops, " + std::to_string(plan->outer) + "x" +
                      std::to_string(plan->inner) + ")";
  for (const auto& [s, name] : {std::pair<const staged_tensor*, const char*>{&plan->x, " x_reorder="},
                                {&plan->dy, " dy_reorder="}, {&plan->out, " out_reorder="}})
    if (s->staged()) plan->description += std::string(name) + s->step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

struct rms_query final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0;
};

std::shared_ptr<const rms_query> query(const tsrpRmsNormProblem& p, bool backward) {
  static shared_cache answers;
  return answers.get_or_create<rms_query>(problem_key(p, backward).str(), [&] {
    auto q = std::make_shared<rms_query>();
    q->reason = check_problem(p, backward);
    if (!q->reason.empty()) return q;
    try {
      q->workspace_bytes = build_plan(query_engine(), p, backward)->workspace_bytes;
    } catch (const dnnl::error&) {
      q->reason = "oneDNN cannot reorder these tensors to row-major f32: " + current_exception_text();
    }
    return q;
  });
}

template <bool Backward>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpRmsNormProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated RMS normalization problem");
      return 0;
    }
    auto q = query(p, Backward);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("RMS normalization query", reason, reason_size);
    return 0;
  }
}

template <bool Backward>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("RMS normalization workspace query", message, sizeof message, [&] {
    tsrpRmsNormProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("rms_norm workspace_size: null argument");
    auto q = query(p, Backward);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

// 1 / sqrt(mean(x^2) + eps) of one row.
inline float inv_rms_of(const float* x, int64_t n, double eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
  return static_cast<float>(1.0 / std::sqrt(sum / double(n) + eps));
}

void forward_rows(const float* x, const float* scale, int64_t outer, int64_t inner, double eps,
                  float* y, float* inv_rms) {
  for (int64_t r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    float* yr = y + r * inner;
    const float inv = inv_rms_of(xr, inner, eps);
    for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * inv * scale[i];
    if (inv_rms) inv_rms[r] = inv;
  }
}

void backward_rows(const float* x, const float* dy, const float* scale, const float* saved,
                   int64_t outer, int64_t inner, double eps, float* dx, double* dscale) {
  for (int64_t i = 0; i < inner; ++i) dscale[i] = 0.0;
  for (int64_t r = 0; r < outer; ++r) {
    const float* xr = x + r * inner;
    const float* dyr = dy + r * inner;
    float* dxr = dx + r * inner;
    const double inv = saved ? double(saved[r]) : double(inv_rms_of(xr, inner, eps));
    double gx = 0.0;
    for (int64_t i = 0; i < inner; ++i) gx += double(dyr[i]) * double(scale[i]) * double(xr[i]);
    const double k = inv * inv * inv * gx / double(inner);
    for (int64_t i = 0; i < inner; ++i) {
      dxr[i] = static_cast<float>(inv * double(dyr[i]) * double(scale[i]) - k * double(xr[i]));
      dscale[i] += double(dyr[i]) * double(xr[i]) * inv;
    }
  }
}

void execute(const rms_plan& plan, context& ctx, const tsrpRmsNormProblem& p, const tsrpRmsNormArgs& a,
             void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  const auto input = [&](const staged_tensor& s, const void* pointer) -> const float* {
    if (!s.staged()) return static_cast<const float*>(pointer);
    void* buffer = workspace_at(workspace, s.offset);
    s.step->execute(stream, dnnl::memory(s.user, engine, const_cast<void*>(pointer)),
                    dnnl::memory(plan.stage, engine, buffer), scratchpad);
    return static_cast<const float*>(buffer);
  };
  const float* x = input(plan.x, a.x);
  const float* dy = plan.backward ? input(plan.dy, a.dy) : nullptr;
  void* user_out = plan.backward ? a.dx : a.y;
  float* out = static_cast<float*>(plan.out.staged() ? workspace_at(workspace, plan.out.offset) : user_out);
  stream.wait();
  if (plan.backward) {
    double* dscale = static_cast<double*>(workspace_at(workspace, plan.dscale_offset));
    backward_rows(x, dy, a.scale, p.has_saved_stats ? a.saved_inv_rms : nullptr, plan.outer,
                  plan.inner, p.epsilon, out, dscale);
    if (p.has_dscale)
      for (int64_t i = 0; i < plan.inner; ++i) a.dscale[i] = static_cast<float>(dscale[i]);
  } else {
    forward_rows(x, a.scale, plan.outer, plan.inner, p.epsilon, out,
                 p.has_saved_stats ? a.inv_rms : nullptr);
  }
  if (plan.out.staged()) {
    plan.out.step->execute(stream, dnnl::memory(plan.stage, engine, out),
                           dnnl::memory(plan.out.user, engine, user_out), scratchpad);
    stream.wait();
  }
}

template <bool Backward>
tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  const char* name = kernel_name(Backward);
  return guard("RMS normalization", message, message_size, [&] {
    tsrpRmsNormProblem p;
    tsrpRmsNormArgs a;
    if (handle == nullptr) throw_bad_param(std::string(name) + ": null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param(std::string(name) + ": null or truncated problem or arguments");
    std::string reason = check_problem(p, Backward);
    if (!reason.empty()) throw_not_supported(std::string(name) + " cannot run this problem: " + reason);
    bool missing = !a.x || !a.scale;
    if (Backward)
      missing = missing || !a.dy || !a.dx || (p.has_saved_stats && !a.saved_inv_rms) || (p.has_dscale && !a.dscale);
    else
      missing = missing || !a.y || (p.has_saved_stats && !a.inv_rms);
    if (missing) throw_bad_param(std::string(name) + ": a required pointer is null");
    context& ctx = as_context(handle);
    auto plan = ctx.cache().get_or_create<rms_plan>(problem_key(p, Backward).str(), [&] {
      auto made = annotate("RMS normalization reorder creation", [&] { return build_plan(ctx.engine(), p, Backward); });
      annotate("RMS normalization reorder creation", [&] {
        for (staged_tensor* s : {&made->x, &made->dy, &made->out}) instantiate(*s);
      });
      log_message(TSRP_LOG_DEBUG, std::string(name) + " plan: " + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param(std::string(name) + " needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("RMS normalization execution", [&] { execute(*plan, ctx, p, a, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

const tsrpKernel g_forward = {
    sizeof(tsrpKernel), "rms_norm_fwd", TSRP_OP_RMS_NORM_FORWARD, TSRP_KERNEL_DETERMINISTIC,
    "Plain C++ loops (oneDNN 3.2 has no RMS norm), one thread: sums of squares in double, "
    "output in f32 rounded once to the data type; data staged row-major f32 by oneDNN reorders.",
    nullptr, can_implement<false>, workspace_size<false>, run<false>, nullptr /* estimate_us */};

const tsrpKernel g_backward = {
    sizeof(tsrpKernel), "rms_norm_bwd", TSRP_OP_RMS_NORM_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
    "Plain C++ loops, one thread: row sums and dscale accumulated in double; inv_rms from the "
    "forward or recomputed from x.",
    nullptr, can_implement<true>, workspace_size<true>, run<true>, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& rms_norm_forward_kernel() noexcept { return g_forward; }
const tsrpKernel& rms_norm_backward_kernel() noexcept { return g_backward; }

}  // namespace tessera::onednn
