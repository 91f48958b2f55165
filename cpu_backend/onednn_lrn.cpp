// Kernels "lrn_fwd" (y = alpha * lrn(x) + beta * y) and "lrn_bwd"
// (dx = alpha * dlrn(x, dy) + beta * dx) on oneDNN's lrn_across_channels.
//
// Parameters map one to one: oneDNN computes dst = src / (k + alpha / local_size * sum)^beta,
// dividing alpha by the window as cuDNN does, so cuDNN's (n, alpha, beta, k) pass unchanged.
// The window: oneDNN sums channels c - (n-1)/2 .. c + (n-1)/2, which for even n is n - 1
// channels while still dividing by n; cuDNN's window is n channels, c - (n-1)/2 .. c + n/2. So
// even n is declined, with that reason.
//
// Plans as for pooling (onednn_pooling.cpp): direct on the user's memory when alpha == 1,
// beta == 0 and oneDNN has a non-reference implementation there, else staged through dense f32
// workspace buffers (x's stride order) with one output reorder applying alpha and beta (beta as a
// sum post-op only when beta != 0, so the output is not read then). Backward: oneDNN wants the
// forward-training workspace; it is recomputed inside lrn_bwd by running forward training on x
// into scratch just before the backward primitive (y is not read), so no state crosses calls.
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
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using md = dnnl::memory::desc;

constexpr const char* forward_name = "lrn_fwd";
constexpr const char* backward_name = "lrn_bwd";

std::string check_problem(const tsrpLrnProblem& p, bool backward) {
  if (p.n < 1) return "window n is " + std::to_string(p.n) + ", expected at least 1";
  if (p.n % 2 == 0)
    return "even window n = " + std::to_string(p.n) +
           ": oneDNN's lrn_across_channels sums n - 1 channels for even n (cuDNN sums n), only "
           "odd n match";
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta) || !std::isfinite(p.k))
    return "alpha, beta and k must be finite";
  std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {&p.y, "y"}, {&p.dy, "dy"}, {&p.dx, "dx"}};
  const size_t used = backward ? 4 : 2;
  for (size_t i = 0; i < used; ++i) {
    const auto& [t, name] = tensors[i];
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (t->ndims < 3 || t->ndims > 5)
      return std::string("tensor ") + name + " has " + std::to_string(t->ndims) +
             " dims, expected 3 to 5";
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN LRN supports f32, f16 and bf16";
    if (t->data_type != p.x.data_type)
      return std::string("tensor ") + name + " has another data type than x";
    if (!same_dims(*t, p.x)) return std::string("tensor ") + name + " has other dims than x";
  }
  return {};
}

cache_key problem_key(const tsrpLrnProblem& p, bool backward) {
  cache_key key(backward ? backward_name : forward_name);
  key.add(p.n).add(p.alpha).add(p.beta).add(p.k).add(p.x).add(p.y);
  if (backward) key.add(p.dy).add(p.dx);
  return key;
}

struct lrn_plan final : cached_entry {
  bool backward = false;
  bool recompute = false;  // backward: forward training first, for oneDNN's workspace
  md user_x, user_dy, user_out;
  md x_c, dy_c, out_c;
  dnnl::lrn_forward::primitive_desc forward_pd;  // forward, or the hint / recompute for backward
  dnnl::lrn_backward::primitive_desc backward_pd;
  dnnl::primitive forward, backward_primitive;
  std::optional<reorder_step> x_in, dy_in, out;
  size_t x_offset = 0, dy_offset = 0, out_offset = 0, fwd_dst_offset = 0, ws_offset = 0;
  size_t scratchpad_offset = 0, workspace_bytes = 0;
  std::string description;
};

const dnnl::primitive_desc& main_pd(const lrn_plan& plan) {
  return plan.backward ? static_cast<const dnnl::primitive_desc&>(plan.backward_pd)
                       : plan.forward_pd;
}

void make_pds(lrn_plan& plan, const dnnl::engine& engine, const tsrpLrnProblem& p) {
  const auto alg = dnnl::algorithm::lrn_across_channels;
  const auto n = static_cast<dnnl::memory::dim>(p.n);
  const auto alpha = static_cast<float>(p.alpha);
  const auto beta = static_cast<float>(p.beta);
  const auto k = static_cast<float>(p.k);
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  if (!plan.backward) {
    plan.forward_pd = dnnl::lrn_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, alg, plan.x_c, plan.out_c, n, alpha, beta, k,
        attr);
    return;
  }
  plan.forward_pd = dnnl::lrn_forward::primitive_desc(
      engine, dnnl::prop_kind::forward_training, alg, plan.x_c, plan.dy_c, n, alpha, beta, k, attr);
  plan.backward_pd = dnnl::lrn_backward::primitive_desc(
      engine, alg, plan.out_c, plan.dy_c, plan.x_c, n, alpha, beta, k, plan.forward_pd, attr);
  plan.recompute = plan.backward_pd.workspace_desc().get_size() > 0;
}

std::shared_ptr<lrn_plan> new_plan(const tsrpLrnProblem& p, bool backward) {
  auto plan = std::make_shared<lrn_plan>();
  plan->backward = backward;
  plan->user_x = make_memory_desc(p.x);
  plan->user_out = make_memory_desc(backward ? p.dx : p.y);
  if (backward) plan->user_dy = make_memory_desc(p.dy);
  return plan;
}

void finish_layout(lrn_plan& plan, workspace_layout& layout, size_t scratchpad) {
  if (plan.recompute) {
    plan.fwd_dst_offset = layout.reserve(plan.forward_pd.dst_desc().get_size());
    plan.ws_offset = layout.reserve(plan.forward_pd.workspace_desc().get_size());
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan.forward_pd));
  }
  scratchpad = std::max(scratchpad, scratchpad_bytes(main_pd(plan)));
  plan.scratchpad_offset = layout.reserve(scratchpad);
  plan.workspace_bytes = layout.required_bytes();
}

std::shared_ptr<lrn_plan> try_direct(const dnnl::engine& engine, const tsrpLrnProblem& p,
                                     bool backward, float alpha, float beta) {
  if (alpha != 1.0f || beta != 0.0f) return nullptr;
  auto plan = new_plan(p, backward);
  plan->x_c = plan->user_x;
  plan->out_c = plan->user_out;
  if (backward) plan->dy_c = plan->user_dy;
  make_pds(*plan, engine, p);
  workspace_layout layout;
  finish_layout(*plan, layout, 0);
  plan->description = std::string("direct ") + data_type_name(p.x.data_type) +
                      " lrn=" + main_pd(*plan).impl_info_str();
  return plan;
}

std::shared_ptr<lrn_plan> build_staged(const dnnl::engine& engine, const tsrpLrnProblem& p,
                                       bool backward, float alpha, float beta) {
  auto plan = new_plan(p, backward);
  const md stage = make_dense_desc_like(p.x, dt::f32);
  plan->x_c = plan->out_c = stage;
  if (backward) plan->dy_c = stage;
  workspace_layout layout;
  size_t scratchpad = 0;
  const auto stage_in = [&](const md& user, std::optional<reorder_step>& step, size_t& offset) {
    if (user == stage) return;
    step = make_reorder_step(engine, user, stage, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(stage.get_size());
  };
  stage_in(plan->user_x, plan->x_in, plan->x_offset);
  if (backward) stage_in(plan->user_dy, plan->dy_in, plan->dy_offset);
  make_pds(*plan, engine, p);
  plan->out = make_reorder_step(engine, stage, plan->user_out, alpha, beta);
  scratchpad = std::max(scratchpad, scratchpad_bytes(plan->out->pd));
  plan->out_offset = layout.reserve(stage.get_size());
  finish_layout(*plan, layout, scratchpad);
  plan->description = std::string("staged (data ") + data_type_name(p.x.data_type) +
                      ", compute f32) lrn=" + main_pd(*plan).impl_info_str();
  if (plan->recompute)
    plan->description += std::string(" recompute=") + plan->forward_pd.impl_info_str();
  if (plan->x_in) plan->description += std::string(" x_reorder=") + plan->x_in->pd.impl_info_str();
  if (plan->dy_in) plan->description += std::string(" dy_reorder=") + plan->dy_in->pd.impl_info_str();
  plan->description += std::string(" out_reorder=") + plan->out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<lrn_plan> choose_plan(const dnnl::engine& engine, const tsrpLrnProblem& p,
                                      bool backward, float alpha, float beta) {
  std::shared_ptr<lrn_plan> direct;
  try {
    direct = try_direct(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    // e.g. f16 without AVX512-FP16: the staged path computes in f32.
  }
  if (direct && !is_reference_impl(main_pd(*direct))) return direct;
  std::shared_ptr<lrn_plan> staged;
  try {
    staged = build_staged(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    if (direct) return direct;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no ") + (backward ? "backward" : "forward") +
                           " LRN for this problem: " + current_exception_text());
  }
  if (direct && is_reference_impl(main_pd(*staged))) return direct;
  return staged;
}

// Under staged_kernel's "oneDNN ... primitive creation" annotation.
void create_primitives(lrn_plan& plan) {
  if (!plan.backward || plan.recompute) plan.forward = dnnl::lrn_forward(plan.forward_pd);
  if (plan.backward) plan.backward_primitive = dnnl::lrn_backward(plan.backward_pd);
  for (auto* step : {&plan.x_in, &plan.dy_in, &plan.out})
    if (*step) (*step)->instantiate();
}

void execute_plan(const lrn_plan& plan, context& ctx, const tsrpLrnArgs& a, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  const auto at = [&](const md& desc, size_t offset) {
    return dnnl::memory(desc, engine, workspace_at(workspace, offset));
  };
  const auto scratch_arg = [&](const dnnl::primitive_desc& pd,
                               std::unordered_map<int, dnnl::memory>& args) {
    if (scratchpad_bytes(pd) > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine, scratchpad));
  };
  // oneDNN memories take void*; x and dy are only read.
  dnnl::memory out(plan.user_out, engine, plan.backward ? a.dx : a.y);
  dnnl::memory x(plan.user_x, engine, const_cast<void*>(a.x));
  dnnl::memory src = x;
  if (plan.x_in) {
    src = at(plan.x_c, plan.x_offset);
    plan.x_in->execute(stream, x, src, scratchpad);
  }
  dnnl::memory result = plan.out ? at(plan.out_c, plan.out_offset) : out;
  if (!plan.backward) {
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, result}};
    scratch_arg(plan.forward_pd, args);
    plan.forward.execute(stream, args);
  } else {
    dnnl::memory dy(plan.user_dy, engine, const_cast<void*>(a.dy));
    dnnl::memory diff_dst = dy;
    if (plan.dy_in) {
      diff_dst = at(plan.dy_c, plan.dy_offset);
      plan.dy_in->execute(stream, dy, diff_dst, scratchpad);
    }
    dnnl::memory ws;
    if (plan.recompute) {
      ws = at(plan.forward_pd.workspace_desc(), plan.ws_offset);
      std::unordered_map<int, dnnl::memory> fargs{
          {DNNL_ARG_SRC, src},
          {DNNL_ARG_DST, at(plan.forward_pd.dst_desc(), plan.fwd_dst_offset)},
          {DNNL_ARG_WORKSPACE, ws}};
      scratch_arg(plan.forward_pd, fargs);
      plan.forward.execute(stream, fargs);
    }
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, result}};
    if (plan.recompute) args.emplace(DNNL_ARG_WORKSPACE, ws);
    scratch_arg(plan.backward_pd, args);
    plan.backward_primitive.execute(stream, args);
  }
  if (plan.out) plan.out->execute(stream, result, out, scratchpad);
  stream.wait();
}

// The lifecycle (queries, plan cache, workspace check) is staged_kernel's.
template <bool Backward>
struct lrn_traits : alpha_beta_traits<tsrpLrnArgs> {
  using problem = tsrpLrnProblem;
  using args = tsrpLrnArgs;
  using plan = lrn_plan;
  static constexpr bool backward = Backward;
  static constexpr const char* name = Backward ? backward_name : forward_name;
  static constexpr const char* primitive = "LRN";
  static constexpr const char* problem_noun = "LRN";
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

const tsrpKernel g_forward_kernel = staged_kernel<lrn_traits<false>>::make(
    TSRP_OP_LRN_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN lrn_across_channels forward, odd n only (oneDNN's even-n window differs from "
    "cuDNN's). The sum of squares and the power are evaluated in f32 (powf or oneDNN's "
    "approximation); with alpha != 1, beta != 0, differing x/y types or strides, or f16 without "
    "AVX512-FP16, staged in f32 in the workspace and rounded once to y's type.");

const tsrpKernel g_backward_kernel = staged_kernel<lrn_traits<true>>::make(
    TSRP_OP_LRN_BACKWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN lrn_across_channels backward, odd n only. oneDNN's forward-training workspace is "
    "recomputed from x in the workspace (y is not read). Computed in f32; staged like lrn_fwd.");

}  // namespace

const tsrpKernel& lrn_forward_kernel() noexcept { return g_forward_kernel; }
const tsrpKernel& lrn_backward_kernel() noexcept { return g_backward_kernel; }

}  // namespace tessera::onednn
