// Kernels "eltwise_fwd" (y = alpha * act(x) + beta * y) and "eltwise_bwd"
// (dx = alpha * act'(x) * dy + beta * dx) on oneDNN's eltwise primitive.
//
// oneDNN eltwise computes act() only, with one desc for all its tensors on its fast paths. So:
//  - direct: when every tensor has the same type and strides, the type has a native oneDNN
//    eltwise, alpha == 1 and beta == 0, the primitive runs on the user's memory;
//  - staged otherwise: the inputs are reordered into dense f32 workspace buffers (same stride
//    order as x, so the reorders are conversions, not transposes), the eltwise runs there in
//    place, and one reorder writes the output with alpha as its source scale and beta as a sum
//    post-op (dst = alpha * act + beta * dst, in f32, rounded once). The sum is only added when
//    beta != 0, so the output is never read then. f16 on CPUs without AVX512-FP16 always takes
//    this path.
// Backward always differentiates through x (src), never the forward output: the use_dst_for_bwd
// variants are exact only for some modes and would need y to be bit-exactly act(x).
#include "onednn_eltwise_algorithm.hpp"
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_staged_kernel.hpp"
#include "onednn_workspace.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using alg = dnnl::algorithm;

constexpr const char* forward_name = "eltwise_fwd";
constexpr const char* backward_name = "eltwise_bwd";


// The tensors an operation uses: x and the output (y forward, dx backward), plus dy backward.
struct roles {
  const tsrpTensor* x;
  const tsrpTensor* dy;  // null forward
  const tsrpTensor* out;
};

roles roles_of(const tsrpActivationProblem& p, bool backward) {
  return backward ? roles{&p.x, &p.dy, &p.dx} : roles{&p.x, nullptr, &p.y};
}

std::string check_problem(const tsrpActivationProblem& p, bool backward) {
  if (!eltwise_op_for(p.mode, p.coef)) return "unknown activation mode " + std::to_string(p.mode);
  const roles r = roles_of(p, backward);
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {r.x, "x"}, {r.out, backward ? "dx" : "y"}, {r.dy, "dy"}};
  for (const auto& [t, name] : tensors) {
    if (t == nullptr) continue;
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN activation supports f32, f16 and bf16";
    if (!same_dims(*t, *r.x)) return std::string("tensor ") + name + " has other dims than x";
  }
  return {};
}

cache_key problem_key(const tsrpActivationProblem& p, bool backward) {
  const roles r = roles_of(p, backward);
  cache_key key(backward ? backward_name : forward_name);
  key.add(int64_t{p.mode}).add(p.coef).add(*r.x).add(*r.out);
  if (r.dy != nullptr) key.add(*r.dy);
  return key;
}

struct activation_plan final : cached_entry {
  bool backward = false;
  dnnl::memory::desc user_x, user_dy, user_out;
  dnnl::memory::desc stage;  // dense f32 like x; empty for a direct plan
  dnnl::eltwise_forward::primitive_desc forward_pd;  // forward, or the hint for backward
  dnnl::eltwise_backward::primitive_desc backward_pd;
  dnnl::primitive eltwise;
  std::optional<reorder_step> x_in, dy_in, out;
  size_t x_offset = 0, dy_offset = 0, result_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;

  const dnnl::primitive_desc& eltwise_pd() const {
    return backward ? static_cast<const dnnl::primitive_desc&>(backward_pd) : forward_pd;
  }
};

std::shared_ptr<activation_plan> new_plan(const tsrpActivationProblem& p, bool backward) {
  auto plan = std::make_shared<activation_plan>();
  const roles r = roles_of(p, backward);
  plan->backward = backward;
  plan->user_x = make_memory_desc(*r.x);
  plan->user_out = make_memory_desc(*r.out);
  if (backward) plan->user_dy = make_memory_desc(*r.dy);
  return plan;
}

// Builds the eltwise primitive descriptor(s) over `data` (src and dst/diff descs alike).
void make_eltwise_pds(activation_plan& plan, const dnnl::engine& engine, const eltwise_op& op,
                      const dnnl::memory::desc& x, const dnnl::memory::desc& dy,
                      const dnnl::memory::desc& out) {
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  if (!plan.backward) {
    plan.forward_pd = dnnl::eltwise_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, op.algorithm, x, out, op.alg_alpha,
        op.alg_beta, attr);
    return;
  }
  plan.forward_pd = dnnl::eltwise_forward::primitive_desc(
      engine, dnnl::prop_kind::forward_training, op.algorithm, x, x, op.alg_alpha, op.alg_beta);
  plan.backward_pd = dnnl::eltwise_backward::primitive_desc(
      engine, op.algorithm, out, dy, x, op.alg_alpha, op.alg_beta, plan.forward_pd, attr);
}

// Null when the direct path does not apply; throws dnnl::error when oneDNN lacks it.
std::shared_ptr<activation_plan> try_direct(const dnnl::engine& engine,
                                            const tsrpActivationProblem& p, bool backward,
                                            const eltwise_op& op, float alpha, float beta) {
  if (alpha != 1.0f || beta != 0.0f) return nullptr;
  auto plan = new_plan(p, backward);
  if (plan->user_out != plan->user_x || (backward && plan->user_dy != plan->user_x)) return nullptr;
  make_eltwise_pds(*plan, engine, op, plan->user_x, plan->user_dy, plan->user_out);
  workspace_layout layout;
  plan->scratchpad_offset = layout.reserve(scratchpad_bytes(plan->eltwise_pd()));
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string("direct ") + data_type_name(p.x.data_type) +
                      " eltwise=" + plan->eltwise_pd().impl_info_str();
  return plan;
}

std::shared_ptr<activation_plan> build_staged(const dnnl::engine& engine,
                                              const tsrpActivationProblem& p, bool backward,
                                              const eltwise_op& op, float alpha, float beta) {
  auto plan = new_plan(p, backward);
  const roles r = roles_of(p, backward);
  plan->stage = make_dense_desc_like(*r.x, dt::f32);
  const size_t stage_bytes = plan->stage.get_size();
  workspace_layout layout;
  size_t scratchpad = 0;

  if (plan->user_x != plan->stage) {
    plan->x_in = make_reorder_step(engine, plan->user_x, plan->stage, 1.0f, 0.0f);
    plan->x_offset = layout.reserve(stage_bytes);
  }
  if (!backward) {
    // In place on the staged x when there is one.
    plan->result_offset = plan->x_in ? plan->x_offset : layout.reserve(stage_bytes);
  } else {
    if (plan->user_dy != plan->stage) {
      plan->dy_in = make_reorder_step(engine, plan->user_dy, plan->stage, 1.0f, 0.0f);
      plan->dy_offset = layout.reserve(stage_bytes);
      plan->result_offset = plan->dy_offset;  // diff_src over diff_dst: oneDNN allows in place
    } else {
      plan->result_offset = layout.reserve(stage_bytes);
    }
  }
  make_eltwise_pds(*plan, engine, op, plan->stage, plan->stage, plan->stage);
  plan->out = make_reorder_step(engine, plan->stage, plan->user_out, alpha, beta);
  for (const auto* step : {&plan->x_in, &plan->dy_in, &plan->out})
    if (*step) scratchpad = std::max(scratchpad, scratchpad_bytes((*step)->pd));
  scratchpad = std::max(scratchpad, scratchpad_bytes(plan->eltwise_pd()));
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  plan->description = std::string("staged (data ") + data_type_name(r.x->data_type) + "->" +
                      data_type_name(r.out->data_type) +
                      ", compute f32) eltwise=" + plan->eltwise_pd().impl_info_str();
  if (plan->x_in) plan->description += std::string(" x_reorder=") + plan->x_in->pd.impl_info_str();
  if (plan->dy_in) plan->description += std::string(" dy_reorder=") + plan->dy_in->pd.impl_info_str();
  plan->description += std::string(" out_reorder=") + plan->out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<activation_plan> choose_plan(const dnnl::engine& engine,
                                             const tsrpActivationProblem& p, bool backward,
                                             float alpha, float beta) {
  const eltwise_op op = *eltwise_op_for(p.mode, p.coef);
  std::shared_ptr<activation_plan> direct;
  try {
    direct = try_direct(engine, p, backward, op, alpha, beta);
  } catch (const dnnl::error&) {
    // e.g. f16 without AVX512-FP16: the staged path computes in f32.
  }
  if (direct && !is_reference_impl(direct->eltwise_pd())) return direct;
  std::shared_ptr<activation_plan> staged;
  try {
    staged = build_staged(engine, p, backward, op, alpha, beta);
  } catch (const dnnl::error&) {
    if (direct) return direct;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no ") + (backward ? "backward" : "forward") +
                           " eltwise for this problem: " + current_exception_text());
  }
  // Both reference: the direct one at least makes no copies.
  if (direct && is_reference_impl(staged->eltwise_pd())) return direct;
  return staged;
}

// Under staged_kernel's "oneDNN ... primitive creation" annotation.
void create_primitives(activation_plan& plan) {
  if (plan.backward)
    plan.eltwise = dnnl::eltwise_backward(plan.backward_pd);
  else
    plan.eltwise = dnnl::eltwise_forward(plan.forward_pd);
  for (auto* step : {&plan.x_in, &plan.dy_in, &plan.out})
    if (*step) (*step)->instantiate();
}

void execute_plan(const activation_plan& plan, context& ctx, const tsrpActivationArgs& a,
             void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  // oneDNN memories take void*; x and dy are only read.
  dnnl::memory x(plan.user_x, engine, const_cast<void*>(a.x));
  dnnl::memory out(plan.user_out, engine, plan.backward ? a.dx : a.y);
  dnnl::memory dy;
  if (plan.backward) dy = dnnl::memory(plan.user_dy, engine, const_cast<void*>(a.dy));

  std::unordered_map<int, dnnl::memory> args;
  if (scratchpad_bytes(plan.eltwise_pd()) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.eltwise_pd().scratchpad_desc(), engine, scratchpad));

  if (!plan.out) {  // direct
    if (plan.backward) {
      args.insert({{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, out}});
    } else {
      args.insert({{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, out}});
    }
    plan.eltwise.execute(stream, args);
    stream.wait();
    return;
  }

  const auto staged = [&](size_t offset) {
    return dnnl::memory(plan.stage, engine, workspace_at(workspace, offset));
  };
  dnnl::memory src = x;
  if (plan.x_in) {
    src = staged(plan.x_offset);
    plan.x_in->execute(stream, x, src, scratchpad);
  }
  dnnl::memory result = staged(plan.result_offset);
  if (plan.backward) {
    dnnl::memory diff_dst = dy;
    if (plan.dy_in) {
      diff_dst = staged(plan.dy_offset);
      plan.dy_in->execute(stream, dy, diff_dst, scratchpad);
    }
    args.insert({{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, result}});
  } else {
    args.insert({{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, result}});
  }
  plan.eltwise.execute(stream, args);
  plan.out->execute(stream, result, out, scratchpad);
  stream.wait();
}

// The lifecycle (queries, plan cache, workspace check) is staged_kernel's.
template <bool Backward>
struct activation_traits : alpha_beta_traits<tsrpActivationArgs> {
  using problem = tsrpActivationProblem;
  using args = tsrpActivationArgs;
  using plan = activation_plan;
  static constexpr bool backward = Backward;
  static constexpr const char* name = Backward ? backward_name : forward_name;
  static constexpr const char* primitive = "eltwise";
  static constexpr const char* problem_noun = "activation";
  static std::string check(const problem& p) { return check_problem(p, Backward); }
  static bool empty(const problem& p) { return element_count(p.x) == 0; }
  static cache_key key(const problem& p) { return problem_key(p, Backward); }
  static std::string check_args(const problem&, const args& a) {
    if (a.x == nullptr || (Backward ? (a.dy == nullptr || a.dx == nullptr) : a.y == nullptr))
      return Backward ? "null x, dy or dx" : "null x or y";
    return {};
  }
  static std::shared_ptr<plan> build(const dnnl::engine& engine, const problem& p, const args& a) {
    return choose_plan(engine, p, Backward, a.alpha, a.beta);
  }
  static void instantiate(plan& made) { create_primitives(made); }
  static void execute(const plan& made, context& ctx, const problem&, const args& a,
                      void* workspace) {
    execute_plan(made, ctx, a, workspace);
  }
};

const tsrpKernel g_forward_kernel = staged_kernel<activation_traits<false>>::make(
    TSRP_OP_ACTIVATION_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,  // elementwise: no reduction, so no order to vary
    "oneDNN eltwise forward. act() is evaluated in f32 (bf16/f16 inputs are widened); with "
    "alpha != 1, beta != 0, differing x/y strides or types, or f16 on CPUs without AVX512-FP16, "
    "the result is staged in f32 in the workspace and alpha*act + beta*y is rounded once to y's "
    "type. gelu_tanh/tanh/sigmoid/elu/swish use oneDNN's vectorized approximations (a few ulp).");

const tsrpKernel g_backward_kernel = staged_kernel<activation_traits<true>>::make(
    TSRP_OP_ACTIVATION_BACKWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN eltwise backward, differentiating through x (the forward output y is not used). "
    "Evaluated in f32; staged through the workspace like eltwise_fwd when alpha != 1, beta != 0, "
    "the tensors differ in strides or type, or f16 has no native oneDNN kernel.");

}  // namespace

const tsrpKernel& activation_forward_kernel() noexcept { return g_forward_kernel; }
const tsrpKernel& activation_backward_kernel() noexcept { return g_backward_kernel; }

}  // namespace tessera::onednn
