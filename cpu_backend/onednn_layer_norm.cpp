// Kernels "lnorm_fwd" and "lnorm_bwd" on oneDNN's layer_normalization primitive.
//
// oneDNN normalizes over the last dim only; Tessera's begin_norm_axis names several trailing
// dims. Row-major, those are one contiguous run per statistic, so the data is used (or staged)
// row-major and viewed as a 2-D outer x inner tensor, whose per-row statistics are the layer's
// and whose scale/shift vector is the packed scale tensor. The primitive computes in the data
// type when oneDNN has a native kernel for it (f32, bf16); f16 on CPUs without AVX512-FP16
// computes in f32 on staged copies. The forward always runs forward_training so that mean and
// variance come out (to the workspace when not asked for); inv_std = 1/sqrt(var + eps) is
// written from the variance. The backward recovers the variance from the saved inv_std as
// 1/inv^2 - eps (in double).
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
#include <unordered_map>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using flags = dnnl::normalization_flags;

const char* kernel_name(bool backward) { return backward ? "lnorm_bwd" : "lnorm_fwd"; }

std::string check_problem(const tsrpLayerNormProblem& p, bool backward) {
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
             ": the oneDNN layer normalization supports f32, f16 and bf16";
    if (!same_dims(*t, p.x) || t->data_type != p.x.data_type)
      return std::string("tensor ") + name + " has other dims or data type than x";
  }
  if (backward && p.has_dscale && !p.has_scale) return "dscale asked for without a scale";
  return {};
}

int64_t inner_size(const tsrpLayerNormProblem& p) {
  int64_t n = 1;
  for (int i = p.begin_norm_axis; i < p.x.ndims; ++i) n *= p.x.dims[i];
  return n;
}

cache_key problem_key(const tsrpLayerNormProblem& p, bool backward) {
  cache_key key(kernel_name(backward));
  key.add(int64_t{p.begin_norm_axis}).add(int64_t{p.has_scale}).add(int64_t{p.has_bias})
      .add(p.epsilon).add(p.x);
  if (backward) key.add(p.dy).add(p.dx); else key.add(p.y);
  return key;
}

struct ln_plan final : cached_entry {
  bool backward = false;
  flags f = flags::none;
  dnnl::memory::desc stage, compute, stats, params;
  staged_tensor x, dy, out;
  dnnl::layer_normalization_forward::primitive_desc forward_pd;
  dnnl::layer_normalization_backward::primitive_desc backward_pd;
  dnnl::primitive lnorm;
  size_t mean_offset = 0, variance_offset = 0, dscale_offset = 0, dbias_offset = 0, shift_offset = 0;
  size_t scratchpad_offset = 0, workspace_bytes = 0;
  int64_t outer = 0, inner = 0;
  std::string description;
  const dnnl::primitive_desc& pd() const {
    return backward ? static_cast<const dnnl::primitive_desc&>(backward_pd) : forward_pd;
  }
};

std::shared_ptr<ln_plan> build_plan(const dnnl::engine& engine, const tsrpLayerNormProblem& p,
                                    bool backward, dt compute_type) {
  auto plan = std::make_shared<ln_plan>();
  plan->backward = backward;
  plan->inner = inner_size(p);
  plan->outer = element_count(p.x) / plan->inner;
  plan->stage = make_row_major_desc(p.x, compute_type);
  plan->compute = plan->stage.reshape({plan->outer, plan->inner});
  plan->stats = dnnl::memory::desc({plan->outer}, dt::f32, dnnl::memory::format_tag::a);
  plan->params = dnnl::memory::desc({plan->inner}, dt::f32, dnnl::memory::format_tag::a);
  if (p.has_scale) plan->f = plan->f | flags::use_scale;
  if (p.has_bias) plan->f = plan->f | flags::use_shift;
  const float eps = static_cast<float>(p.epsilon);
  workspace_layout layout;
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  plan->x = plan_input(engine, p.x, plan->stage, layout);
  if (backward) {
    plan->dy = plan_input(engine, p.dy, plan->stage, layout);
    plan->out = plan_output(engine, p.dx, plan->stage, layout, 1.0f, 0.0f);
    auto hint = dnnl::layer_normalization_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_training, plan->compute, plan->compute, plan->stats, eps, plan->f);
    plan->backward_pd = dnnl::layer_normalization_backward::primitive_desc(
        engine, dnnl::prop_kind::backward, plan->compute, plan->compute, plan->compute, plan->stats,
        eps, plan->f, hint, attr);
  } else {
    plan->out = plan_output(engine, p.y, plan->stage, layout, 1.0f, 0.0f);
    plan->forward_pd = dnnl::layer_normalization_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_training, plan->compute, plan->compute, plan->stats, eps,
        plan->f, attr);
  }
  const size_t stat_bytes = static_cast<size_t>(plan->outer) * sizeof(float);
  const size_t param_bytes = static_cast<size_t>(plan->inner) * sizeof(float);
  plan->mean_offset = layout.reserve(stat_bytes);
  plan->variance_offset = layout.reserve(stat_bytes);
  plan->dscale_offset = layout.reserve(param_bytes);
  plan->dbias_offset = layout.reserve(param_bytes);
  plan->shift_offset = layout.reserve(param_bytes);
  size_t scratchpad = scratchpad_bytes(plan->pd());
  for (const staged_tensor* s : {&plan->x, &plan->dy, &plan->out})
    scratchpad = std::max(scratchpad, step_scratchpad(*s));
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string(kernel_name(backward)) + " (data " + data_type_name(p.x.data_type) +
                      ", compute " + (compute_type == dt::f32 ? "f32" : data_type_name(p.x.data_type)) +
                      ", " + std::to_string(plan->outer) + "x" + std::to_string(plan->inner) +
                      ") lnorm=" + plan->pd().impl_info_str();
  for (const auto& [s, name] : {std::pair<const staged_tensor*, const char*>{&plan->x, " x_reorder="},
                                {&plan->dy, " dy_reorder="}, {&plan->out, " out_reorder="}})
    if (s->staged()) plan->description += std::string(name) + s->step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<ln_plan> choose_plan(const dnnl::engine& engine, const tsrpLayerNormProblem& p, bool backward) {
  std::shared_ptr<ln_plan> native;
  if (p.x.data_type == TSRP_DATA_BFLOAT16) {
    try {
      native = build_plan(engine, p, backward, dt::bf16);
      if (!is_reference_impl(native->pd())) return native;
    } catch (const dnnl::error&) {
      // No native bf16 kernel on this CPU: f32 below.
    }
  }
  try {
    auto staged = build_plan(engine, p, backward, dt::f32);
    if (native && is_reference_impl(staged->pd())) return native;
    return staged;
  } catch (const dnnl::error&) {
    if (native) return native;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no layer normalization for this problem: ") +
                           current_exception_text());
  }
}

struct ln_query final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0;
};

std::shared_ptr<const ln_query> query(const tsrpLayerNormProblem& p, bool backward) {
  static shared_cache answers;
  return answers.get_or_create<ln_query>(problem_key(p, backward).str(), [&] {
    auto q = std::make_shared<ln_query>();
    q->reason = check_problem(p, backward);
    if (!q->reason.empty()) return q;
    try {
      q->workspace_bytes = choose_plan(query_engine(), p, backward)->workspace_bytes;
    } catch (const plugin_error& e) {
      if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
      q->reason = e.what();
    }
    return q;
  });
}

template <bool Backward>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpLayerNormProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated layer normalization problem");
      return 0;
    }
    auto q = query(p, Backward);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN layer normalization query", reason, reason_size);
    return 0;
  }
}

template <bool Backward>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN layer normalization workspace query", message, sizeof message, [&] {
    tsrpLayerNormProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("lnorm workspace_size: null argument");
    auto q = query(p, Backward);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    // Scale/shift flags could change oneDNN's scratchpad: answer for the larger of both, so a
    // query made without scale_desc still covers a call with one.
    tsrpLayerNormProblem all = p;
    all.has_scale = 1;
    all.has_bias = 1;
    all.has_dscale = Backward ? 1 : 0;
    auto q_all = query(all, Backward);
    *bytes = std::max(q->workspace_bytes, q_all->reason.empty() ? q_all->workspace_bytes : 0);
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

float* f32_at(void* workspace, size_t offset) { return static_cast<float*>(workspace_at(workspace, offset)); }

void execute(const ln_plan& plan, context& ctx, const tsrpLayerNormProblem& p, const tsrpLayerNormArgs& a,
             void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  const auto input = [&](const staged_tensor& s, const void* pointer) {
    if (!s.staged()) return dnnl::memory(plan.compute, engine, const_cast<void*>(pointer));
    s.step->execute(stream, dnnl::memory(s.user, engine, const_cast<void*>(pointer)),
                    dnnl::memory(plan.stage, engine, workspace_at(workspace, s.offset)), scratchpad);
    return dnnl::memory(plan.compute, engine, workspace_at(workspace, s.offset));
  };
  const auto output = [&](const staged_tensor& s, void* pointer) {
    return dnnl::memory(plan.compute, engine, s.staged() ? workspace_at(workspace, s.offset) : pointer);
  };
  const auto finish_output = [&](const staged_tensor& s, void* pointer) {
    if (!s.staged()) return;
    s.step->execute(stream, dnnl::memory(plan.stage, engine, workspace_at(workspace, s.offset)),
                    dnnl::memory(s.user, engine, pointer), scratchpad);
  };
  const auto stats = [&](const float* pointer) {
    return dnnl::memory(plan.stats, engine, const_cast<float*>(pointer));
  };
  const auto params = [&](const float* pointer) {
    return dnnl::memory(plan.params, engine, const_cast<float*>(pointer));
  };
  std::unordered_map<int, dnnl::memory> args;
  if (scratchpad_bytes(plan.pd()) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.pd().scratchpad_desc(), engine, scratchpad));
  float* variance = f32_at(workspace, plan.variance_offset);

  if (plan.backward) {
    for (int64_t r = 0; r < plan.outer; ++r) {
      const double inv = a.saved_inv_std[r];
      variance[r] = static_cast<float>(1.0 / (inv * inv) - p.epsilon);
    }
    args.insert({{DNNL_ARG_SRC, input(plan.x, a.x)},
                 {DNNL_ARG_DIFF_DST, input(plan.dy, a.dy)},
                 {DNNL_ARG_MEAN, stats(a.saved_mean)},
                 {DNNL_ARG_VARIANCE, stats(variance)},
                 {DNNL_ARG_DIFF_SRC, output(plan.out, a.dx)}});
    if (p.has_scale) {
      args.emplace(DNNL_ARG_SCALE, params(a.scale));
      args.emplace(DNNL_ARG_DIFF_SCALE, params(p.has_dscale ? a.dscale : f32_at(workspace, plan.dscale_offset)));
    }
    if (p.has_bias) {
      // oneDNN checks that a shift is passed to a use_shift backward, though it never reads it.
      float* shift = f32_at(workspace, plan.shift_offset);
      std::fill(shift, shift + plan.inner, 0.0f);
      args.emplace(DNNL_ARG_SHIFT, params(shift));
      args.emplace(DNNL_ARG_DIFF_SHIFT, params(a.dbias));
    }
    plan.lnorm.execute(stream, args);
    finish_output(plan.out, a.dx);
    stream.wait();
    return;
  }
  float* mean = p.write_saved_stats ? a.mean : f32_at(workspace, plan.mean_offset);
  args.insert({{DNNL_ARG_SRC, input(plan.x, a.x)},
               {DNNL_ARG_DST, output(plan.out, a.y)},
               {DNNL_ARG_MEAN, stats(mean)},
               {DNNL_ARG_VARIANCE, stats(variance)}});
  if (p.has_scale) args.emplace(DNNL_ARG_SCALE, params(a.scale));
  if (p.has_bias) args.emplace(DNNL_ARG_SHIFT, params(a.bias));
  plan.lnorm.execute(stream, args);
  finish_output(plan.out, a.y);
  stream.wait();
  if (p.write_saved_stats)
    for (int64_t r = 0; r < plan.outer; ++r)
      a.inv_std[r] = static_cast<float>(1.0 / std::sqrt(double(variance[r]) + p.epsilon));
}

template <bool Backward>
tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  const char* name = kernel_name(Backward);
  return guard("oneDNN layer normalization", message, message_size, [&] {
    tsrpLayerNormProblem p;
    tsrpLayerNormArgs a;
    if (handle == nullptr) throw_bad_param(std::string(name) + ": null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param(std::string(name) + ": null or truncated problem or arguments");
    std::string reason = check_problem(p, Backward);
    if (!reason.empty()) throw_not_supported(std::string(name) + " cannot run this problem: " + reason);
    bool missing = a.x == nullptr || (p.has_scale && !a.scale);
    if (Backward)
      missing = missing || !a.dy || !a.dx || !a.saved_mean || !a.saved_inv_std ||
                (p.has_dscale && !a.dscale) || (p.has_bias && !a.dbias);
    else
      missing = missing || !a.y || (p.has_bias && !a.bias) ||
                (p.write_saved_stats && (!a.mean || !a.inv_std));
    if (missing) throw_bad_param(std::string(name) + ": a required pointer is null");
    context& ctx = as_context(handle);
    auto plan = ctx.cache().get_or_create<ln_plan>(problem_key(p, Backward).str(), [&] {
      auto made = choose_plan(ctx.engine(), p, Backward);
      annotate("oneDNN layer normalization primitive creation", [&] {
        if (Backward)
          made->lnorm = dnnl::layer_normalization_backward(made->backward_pd);
        else
          made->lnorm = dnnl::layer_normalization_forward(made->forward_pd);
        for (staged_tensor* s : {&made->x, &made->dy, &made->out}) instantiate(*s);
      });
      log_message(TSRP_LOG_DEBUG, std::string(name) + " plan: " + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param(std::string(name) + " needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN layer normalization execution", [&] { execute(*plan, ctx, p, a, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

const tsrpKernel g_forward = {
    sizeof(tsrpKernel), "lnorm_fwd", TSRP_OP_LAYER_NORM_FORWARD, 0u,
    "oneDNN layer_normalization forward_training over the trailing dims viewed as one row-major "
    "run; statistics in f32; f16 (and tensors not row-major) staged in f32/row-major in the "
    "workspace.",
    nullptr, can_implement<false>, workspace_size<false>, run<false>, nullptr /* estimate_us */};

const tsrpKernel g_backward = {
    sizeof(tsrpKernel), "lnorm_bwd", TSRP_OP_LAYER_NORM_BACKWARD, 0u,
    "oneDNN layer_normalization backward from the saved mean and inv_std (variance recovered as "
    "1/inv^2 - eps in double); dscale/dbias summed by oneDNN in f32.",
    nullptr, can_implement<true>, workspace_size<true>, run<true>, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& layer_norm_forward_kernel() noexcept { return g_forward; }
const tsrpKernel& layer_norm_backward_kernel() noexcept { return g_backward; }

}  // namespace tessera::onednn
