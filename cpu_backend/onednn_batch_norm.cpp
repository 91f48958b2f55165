// Kernels "bnorm_fwd_training", "bnorm_fwd_inference" and "bnorm_bwd" on oneDNN's
// batch_normalization primitive, with cuDNN's semantics (see plugin_abi_normalization.h).
//
// How the cuDNN contract maps onto oneDNN:
//  - Spatial mode is oneDNN's batch normalization as it is. Per-activation mode (one statistic
//    per C,H,W element) has no oneDNN flag: the data is staged row-major and viewed as a 2-D
//    N x (C*H*W) tensor, whose per-"channel" statistics are exactly the per-activation ones and
//    whose parameter vector is the packed 1xCxHxW parameter tensor.
//  - The primitive computes in the data type itself when that type has a native kernel (f32,
//    bf16), the blend is the identity (alpha 1, beta 0) and the tensors share one layout;
//    otherwise (alpha/beta, mixed layouts, f16 on CPUs without AVX512-FP16) it computes in f32
//    on staged copies and one reorder writes alpha * result + beta * out, rounded once.
//  - Training: oneDNN gives the batch mean and biased variance; the kernel then writes
//    save_inv_variance = 1/sqrt(var + eps) and updates the running statistics with the unbiased
//    variance (cuDNN's convention, which oneDNN does not have).
//  - Backward: oneDNN wants the variance, cuDNN saves the inverse std: var = 1/inv^2 - eps
//    (computed in double) gives it back to within a few ulp. A fused relu is undone on the
//    staged dy with the forward output y (g = y > 0 ? dy : 0, cuDNN's BackwardEx), then oneDNN
//    differentiates the normalization. dscale/dbias go to the workspace and are blended into the
//    user's with alpha_param/beta_param.
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_norm_staging.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_reorder_step.hpp"
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

enum class bn_op { training, inference, backward };

const char* kernel_name(bn_op op) {
  switch (op) {
    case bn_op::training: return "bnorm_fwd_training";
    case bn_op::inference: return "bnorm_fwd_inference";
    case bn_op::backward: return "bnorm_bwd";
  }
  return "";
}

bool has_relu(const tsrpBatchNormProblem& p) { return p.activation == TSRP_ACTIVATION_RELU; }

std::string check_problem(const tsrpBatchNormProblem& p, bn_op op) {
  if (p.mode != TSRP_BATCH_NORM_SPATIAL && p.mode != TSRP_BATCH_NORM_PER_ACTIVATION)
    return "unknown batch normalization mode " + std::to_string(p.mode);
  if (p.activation != TSRP_ACTIVATION_IDENTITY && p.activation != TSRP_ACTIVATION_RELU)
    return "activation " + std::to_string(p.activation) +
           " is not fused by the oneDNN batch normalization (identity and relu are)";
  if (p.x.ndims < 2 || p.x.ndims > 5)
    return "x has " + std::to_string(p.x.ndims) + " dims; oneDNN batch normalization takes 2 to 5";
  if (!(p.epsilon > 0)) return "epsilon must be > 0";
  const bool backward = op == bn_op::backward;
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {backward ? &p.dy : &p.y, backward ? "dy" : "y"}, {backward ? &p.dx : nullptr, "dx"},
      {backward && has_relu(p) ? &p.y : nullptr, "y"}};
  for (const auto& [t, name] : tensors) {
    if (t == nullptr) continue;
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN batch normalization supports f32, f16 and bf16";
    if (!same_dims(*t, p.x) || t->data_type != p.x.data_type)
      return std::string("tensor ") + name + " has other dims or data type than x";
  }
  if (p.param.data_type != TSRP_DATA_FLOAT) return "param tensor is not f32";
  return {};
}

// Elements per statistic (the reduction length) and statistics count.
int64_t reduction_length(const tsrpBatchNormProblem& p) {
  int64_t m = p.x.dims[0];
  if (p.mode == TSRP_BATCH_NORM_SPATIAL)
    for (int i = 2; i < p.x.ndims; ++i) m *= p.x.dims[i];
  return m;
}
int64_t statistics_count(const tsrpBatchNormProblem& p) { return element_count(p.x) / reduction_length(p); }

cache_key problem_key(const tsrpBatchNormProblem& p, bn_op op) {
  cache_key key(kernel_name(op));
  key.add(int64_t{p.mode}).add(int64_t{p.activation}).add(p.epsilon).add(p.x).add(p.param);
  if (op == bn_op::backward) {
    key.add(p.dy).add(p.dx);
    if (has_relu(p)) key.add(p.y);
  } else {
    key.add(p.y);
  }
  return key;
}

struct bn_plan final : cached_entry {
  bn_op op = bn_op::training;
  bool relu = false;
  dnnl::memory::desc stage;    // x's dims, in the compute type and layout
  dnnl::memory::desc compute;  // what the primitive sees (the 2-D view for per-activation)
  dnnl::memory::desc stats;    // f32 vector of the statistics
  staged_tensor x, y_in, dy, out;
  dnnl::batch_normalization_forward::primitive_desc forward_pd;
  dnnl::batch_normalization_backward::primitive_desc backward_pd;
  dnnl::primitive bnorm;
  size_t mean_offset = 0, variance_offset = 0, dscale_offset = 0, dbias_offset = 0;
  size_t bn_workspace_offset = 0, scratchpad_offset = 0, workspace_bytes = 0;
  int64_t length = 0, count = 0;
  std::string description;

  const dnnl::primitive_desc& pd() const {
    return op == bn_op::backward ? static_cast<const dnnl::primitive_desc&>(backward_pd) : forward_pd;
  }
};

// Throws dnnl::error when oneDNN has no implementation in `compute_type`.
std::shared_ptr<bn_plan> build_plan(const dnnl::engine& engine, const tsrpBatchNormProblem& p,
                                    bn_op op, dt compute_type, float alpha, float beta) {
  auto plan = std::make_shared<bn_plan>();
  plan->op = op;
  plan->relu = has_relu(p);
  plan->length = reduction_length(p);
  plan->count = statistics_count(p);
  const bool per_activation = p.mode == TSRP_BATCH_NORM_PER_ACTIVATION;
  plan->stage = per_activation ? make_row_major_desc(p.x, compute_type)
                               : make_dense_desc_like(p.x, compute_type);
  plan->compute = per_activation ? plan->stage.reshape({p.x.dims[0], plan->count}) : plan->stage;
  plan->stats = dnnl::memory::desc({plan->count}, dt::f32, dnnl::memory::format_tag::a);

  workspace_layout layout;
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  const float eps = static_cast<float>(p.epsilon);
  if (op == bn_op::backward) {
    plan->x = plan_input(engine, p.x, plan->stage, layout);
    plan->dy = plan_input(engine, p.dy, plan->stage, layout, plan->relu);  // relu masks a copy
    if (plan->relu) plan->y_in = plan_input(engine, p.y, plan->stage, layout);
    plan->out = plan_output(engine, p.dx, plan->stage, layout, alpha, beta);
    const flags f = flags::use_scale | flags::use_shift;
    auto hint = dnnl::batch_normalization_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_training, plan->compute, plan->compute, eps, f);
    plan->backward_pd = dnnl::batch_normalization_backward::primitive_desc(
        engine, dnnl::prop_kind::backward, plan->compute, plan->compute, plan->compute, eps, f,
        hint, attr);
  } else {
    plan->x = plan_input(engine, p.x, plan->stage, layout);
    plan->out = plan_output(engine, p.y, plan->stage, layout, alpha, beta);
    flags f = flags::use_scale | flags::use_shift;
    if (plan->relu) f = f | flags::fuse_norm_relu;
    if (op == bn_op::inference) f = f | flags::use_global_stats;
    plan->forward_pd = dnnl::batch_normalization_forward::primitive_desc(
        engine, op == bn_op::training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
        plan->compute, plan->compute, eps, f, attr);
    plan->bn_workspace_offset = layout.reserve(plan->forward_pd.workspace_desc().get_size());
  }
  // Statistics buffers are reserved whatever the options, so the workspace does not depend on
  // which optional outputs a call asks for.
  const size_t stat_bytes = static_cast<size_t>(plan->count) * sizeof(float);
  plan->mean_offset = layout.reserve(stat_bytes);
  plan->variance_offset = layout.reserve(stat_bytes);
  plan->dscale_offset = layout.reserve(stat_bytes);
  plan->dbias_offset = layout.reserve(stat_bytes);
  size_t scratchpad = scratchpad_bytes(plan->pd());
  for (const staged_tensor* s : {&plan->x, &plan->y_in, &plan->dy, &plan->out})
    scratchpad = std::max(scratchpad, step_scratchpad(*s));
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  plan->description = std::string(kernel_name(op)) + " (data " + data_type_name(p.x.data_type) +
                      ", compute " + (compute_type == dt::f32 ? "f32" : data_type_name(p.x.data_type)) +
                      (per_activation ? ", per-activation as 2-D" : "") +
                      ") bnorm=" + plan->pd().impl_info_str();
  for (const auto& [s, name] : {std::pair<const staged_tensor*, const char*>{&plan->x, " x_reorder="},
                                {&plan->dy, " dy_reorder="}, {&plan->y_in, " y_reorder="},
                                {&plan->out, " out_reorder="}})
    if (s->staged()) plan->description += std::string(name) + s->step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<bn_plan> choose_plan(const dnnl::engine& engine, const tsrpBatchNormProblem& p,
                                     bn_op op, float alpha, float beta) {
  // The data type itself when it can be native and no blend or relu mask needs f32.
  const bool try_native = (p.x.data_type == TSRP_DATA_FLOAT || p.x.data_type == TSRP_DATA_BFLOAT16) &&
                          alpha == 1.0f && beta == 0.0f && !(op == bn_op::backward && has_relu(p));
  std::shared_ptr<bn_plan> native;
  if (try_native && p.x.data_type != TSRP_DATA_FLOAT) {
    try {
      native = build_plan(engine, p, op, *to_dnnl_data_type(p.x.data_type), alpha, beta);
      if (!is_reference_impl(native->pd())) return native;
    } catch (const dnnl::error&) {
      // No native kernel for this type on this CPU: f32 below.
    }
  }
  try {
    auto staged = build_plan(engine, p, op, dt::f32, alpha, beta);
    if (native && is_reference_impl(staged->pd())) return native;
    return staged;
  } catch (const dnnl::error&) {
    if (native) return native;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, std::string("oneDNN has no batch normalization for ") +
                                                      "this problem: " + current_exception_text());
  }
}

void instantiate(bn_plan& plan) {
  annotate("oneDNN batch normalization primitive creation", [&] {
    if (plan.op == bn_op::backward)
      plan.bnorm = dnnl::batch_normalization_backward(plan.backward_pd);
    else
      plan.bnorm = dnnl::batch_normalization_forward(plan.forward_pd);
    for (staged_tensor* s : {&plan.x, &plan.y_in, &plan.dy, &plan.out}) instantiate(*s);
  });
}

struct bn_query final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0;
};

std::shared_ptr<const bn_query> query(const tsrpBatchNormProblem& p, bn_op op) {
  static shared_cache answers;
  return answers.get_or_create<bn_query>(problem_key(p, op).str(), [&] {
    auto q = std::make_shared<bn_query>();
    q->reason = check_problem(p, op);
    if (!q->reason.empty()) return q;
    // The largest over the blends, which choose different plans.
    for (const auto& [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {2.0f, 1.0f}}) {
      try {
        q->workspace_bytes =
            std::max(q->workspace_bytes, choose_plan(query_engine(), p, op, alpha, beta)->workspace_bytes);
      } catch (const plugin_error& e) {
        if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
        q->reason = e.what();
        return q;
      }
    }
    return q;
  });
}

template <bn_op Op>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpBatchNormProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated batch normalization problem");
      return 0;
    }
    auto q = query(p, Op);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN batch normalization query", reason, reason_size);
    return 0;
  }
}

template <bn_op Op>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN batch normalization workspace query", message, sizeof message, [&] {
    tsrpBatchNormProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("bnorm workspace_size: null argument");
    auto q = query(p, Op);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

float* f32_at(void* workspace, size_t offset) { return static_cast<float*>(workspace_at(workspace, offset)); }

void execute(const bn_plan& plan, context& ctx, const tsrpBatchNormProblem& p, const tsrpBatchNormArgs& a,
             void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  const int64_t count = plan.count;
  const auto user_memory = [&](const staged_tensor& s, const void* pointer) {
    return dnnl::memory(s.user, engine, const_cast<void*>(pointer));
  };
  // The memory the primitive reads: the staged copy (filled now) or the user's tensor.
  const auto input = [&](const staged_tensor& s, const void* pointer) {
    if (!s.staged()) return dnnl::memory(plan.compute, engine, const_cast<void*>(pointer));
    dnnl::memory staged(plan.stage, engine, workspace_at(workspace, s.offset));
    s.step->execute(stream, user_memory(s, pointer), staged, scratchpad);
    return dnnl::memory(plan.compute, engine, workspace_at(workspace, s.offset));
  };
  const auto output = [&](const staged_tensor& s, void* pointer) {
    return dnnl::memory(plan.compute, engine, s.staged() ? workspace_at(workspace, s.offset) : pointer);
  };
  const auto finish_output = [&](const staged_tensor& s, void* pointer) {
    if (!s.staged()) return;
    s.step->execute(stream, dnnl::memory(plan.stage, engine, workspace_at(workspace, s.offset)),
                    user_memory(s, pointer), scratchpad);
  };
  const auto vec = [&](const float* pointer) {
    return dnnl::memory(plan.stats, engine, const_cast<float*>(pointer));
  };

  std::unordered_map<int, dnnl::memory> args;
  if (scratchpad_bytes(plan.pd()) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.pd().scratchpad_desc(), engine, scratchpad));
  float* variance = f32_at(workspace, plan.variance_offset);

  if (plan.op == bn_op::backward) {
    // oneDNN's variance back from cuDNN's saved inverse std.
    for (int64_t c = 0; c < count; ++c) {
      const double inv = a.saved_inv_variance[c];
      variance[c] = static_cast<float>(1.0 / (inv * inv) - p.epsilon);
    }
    dnnl::memory src = input(plan.x, a.x);
    dnnl::memory diff_dst = input(plan.dy, a.dy);
    if (plan.relu) {
      dnnl::memory y = input(plan.y_in, a.y_in);
      stream.wait();
      // Both are dense f32 in the same layout (relu backward always computes in f32).
      float* g = static_cast<float*>(diff_dst.get_data_handle());
      const float* yv = static_cast<const float*>(y.get_data_handle());
      const size_t n = plan.stage.get_size() / sizeof(float);
      for (size_t i = 0; i < n; ++i) g[i] = yv[i] > 0.0f ? g[i] : 0.0f;
    }
    float* dscale = f32_at(workspace, plan.dscale_offset);
    float* dbias = f32_at(workspace, plan.dbias_offset);
    args.insert({{DNNL_ARG_SRC, src},
                 {DNNL_ARG_DIFF_DST, diff_dst},
                 {DNNL_ARG_MEAN, vec(a.saved_mean)},
                 {DNNL_ARG_VARIANCE, vec(variance)},
                 {DNNL_ARG_SCALE, vec(a.scale)},
                 {DNNL_ARG_DIFF_SRC, output(plan.out, a.dx)},
                 {DNNL_ARG_DIFF_SCALE, vec(dscale)},
                 {DNNL_ARG_DIFF_SHIFT, vec(dbias)}});
    plan.bnorm.execute(stream, args);
    finish_output(plan.out, a.dx);
    stream.wait();
    // beta_param 0: the user's dscale/dbias are not read (cuDNN's rule).
    for (int64_t c = 0; c < count; ++c) {
      a.dscale[c] = a.alpha_param * dscale[c] + (a.beta_param != 0.0f ? a.beta_param * a.dscale[c] : 0.0f);
      a.dbias[c] = a.alpha_param * dbias[c] + (a.beta_param != 0.0f ? a.beta_param * a.dbias[c] : 0.0f);
    }
    return;
  }

  dnnl::memory src = input(plan.x, a.x);
  args.insert({{DNNL_ARG_SRC, src},
               {DNNL_ARG_DST, output(plan.out, a.y)},
               {DNNL_ARG_SCALE, vec(a.scale)},
               {DNNL_ARG_SHIFT, vec(a.bias)}});
  if (plan.forward_pd.workspace_desc().get_size() > 0)
    args.emplace(DNNL_ARG_WORKSPACE, dnnl::memory(plan.forward_pd.workspace_desc(), engine,
                                                  workspace_at(workspace, plan.bn_workspace_offset)));
  float* mean = nullptr;
  if (plan.op == bn_op::inference) {
    args.insert({{DNNL_ARG_MEAN, vec(a.estimated_mean)}, {DNNL_ARG_VARIANCE, vec(a.estimated_variance)}});
  } else {
    mean = p.write_saved_stats ? a.save_mean : f32_at(workspace, plan.mean_offset);
    args.insert({{DNNL_ARG_MEAN, vec(mean)}, {DNNL_ARG_VARIANCE, vec(variance)}});
  }
  plan.bnorm.execute(stream, args);
  finish_output(plan.out, a.y);
  stream.wait();
  if (plan.op != bn_op::training) return;
  // cuDNN's statistics: inverse std saved, running averages with the unbiased variance.
  const double unbias = plan.length > 1 ? double(plan.length) / double(plan.length - 1) : 1.0;
  const double f = p.exponential_average_factor;
  for (int64_t c = 0; c < count; ++c) {
    if (p.write_saved_stats)
      a.save_inv_variance[c] = static_cast<float>(1.0 / std::sqrt(double(variance[c]) + p.epsilon));
    if (p.update_running_stats) {
      a.running_mean[c] = static_cast<float>((1.0 - f) * a.running_mean[c] + f * mean[c]);
      a.running_variance[c] =
          static_cast<float>((1.0 - f) * a.running_variance[c] + f * unbias * variance[c]);
    }
  }
}

template <bn_op Op>
tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  const char* name = kernel_name(Op);
  return guard("oneDNN batch normalization", message, message_size, [&] {
    tsrpBatchNormProblem p;
    tsrpBatchNormArgs a;
    if (handle == nullptr) throw_bad_param(std::string(name) + ": null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param(std::string(name) + ": null or truncated problem or arguments");
    std::string reason = check_problem(p, Op);
    if (!reason.empty()) throw_not_supported(std::string(name) + " cannot run this problem: " + reason);
    bool missing = a.x == nullptr || a.scale == nullptr;
    if (Op == bn_op::backward)
      missing = missing || a.dy == nullptr || a.dx == nullptr || a.saved_mean == nullptr ||
                a.saved_inv_variance == nullptr || a.dscale == nullptr || a.dbias == nullptr ||
                (has_relu(p) && a.y_in == nullptr);
    else
      missing = missing || a.y == nullptr || a.bias == nullptr;
    if (Op == bn_op::inference) missing = missing || !a.estimated_mean || !a.estimated_variance;
    if (Op == bn_op::training)
      missing = missing || (p.write_saved_stats && (!a.save_mean || !a.save_inv_variance)) ||
                (p.update_running_stats && (!a.running_mean || !a.running_variance));
    if (missing) throw_bad_param(std::string(name) + ": a required pointer is null");

    context& ctx = as_context(handle);
    cache_key key = problem_key(p, Op);
    key.add(double{a.alpha}).add(double{a.beta});
    auto plan = ctx.cache().get_or_create<bn_plan>(key.str(), [&] {
      auto made = choose_plan(ctx.engine(), p, Op, a.alpha, a.beta);
      instantiate(*made);
      log_message(TSRP_LOG_DEBUG, std::string(name) + " plan: " + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param(std::string(name) + " needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN batch normalization execution", [&] { execute(*plan, ctx, p, a, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

// Not deterministic-flagged: oneDNN's threaded reductions may split the batch differently from
// run to run on different thread counts (the sums of a given thread count are reproducible).
const tsrpKernel g_training = {
    sizeof(tsrpKernel), "bnorm_fwd_training", TSRP_OP_BATCH_NORM_FORWARD_TRAINING, 0u,
    "oneDNN batch_normalization forward_training (fused relu via fuse_norm_relu). Statistics in "
    "f32; f16 data, alpha/beta blends and mixed layouts are staged in f32 in the workspace. "
    "Per-activation mode runs as a 2-D N x (C*H*W) batch normalization.",
    nullptr, can_implement<bn_op::training>, workspace_size<bn_op::training>, run<bn_op::training>, nullptr /* estimate_us */};

const tsrpKernel g_inference = {
    sizeof(tsrpKernel), "bnorm_fwd_inference", TSRP_OP_BATCH_NORM_FORWARD_INFERENCE, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN batch_normalization forward_inference with use_global_stats (no reduction). f16, "
    "alpha/beta blends and mixed layouts are staged in f32 in the workspace.",
    nullptr, can_implement<bn_op::inference>, workspace_size<bn_op::inference>, run<bn_op::inference>, nullptr /* estimate_us */};

const tsrpKernel g_backward = {
    sizeof(tsrpKernel), "bnorm_bwd", TSRP_OP_BATCH_NORM_BACKWARD, 0u,
    "oneDNN batch_normalization backward (use_scale|use_shift) from the saved mean and inverse "
    "std (the variance is recovered as 1/inv^2 - eps in double). A fused relu masks dy with the "
    "forward output y > 0 first, in f32. dscale/dbias blended with alpha_param/beta_param in f32.",
    nullptr, can_implement<bn_op::backward>, workspace_size<bn_op::backward>, run<bn_op::backward>, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& batch_norm_forward_training_kernel() noexcept { return g_training; }
const tsrpKernel& batch_norm_forward_inference_kernel() noexcept { return g_inference; }
const tsrpKernel& batch_norm_backward_kernel() noexcept { return g_backward; }

}  // namespace tessera::onednn
