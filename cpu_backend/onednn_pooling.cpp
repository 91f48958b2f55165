// Kernels "pool_fwd" (y = alpha * pool(x) + beta * y) and "pool_bwd"
// (dx = alpha * dpool(x, dy) + beta * dx) on oneDNN's pooling primitive, 2-D and 3-D.
//
// Plans, as for eltwise (onednn_activation.cpp):
//  - direct: alpha == 1, beta == 0 and oneDNN has a non-reference implementation for the user's
//    own strided descs and data type: the primitive reads and writes the user's memory;
//  - staged otherwise: inputs are reordered into dense f32 workspace buffers (x's stride order
//    for every tensor, so reorders convert and never transpose), pooling runs in f32 there, and
//    one reorder writes the output applying alpha (source scale) and beta (a sum post-op, added
//    only when beta != 0 so the output is never read then). f16 on CPUs without AVX512-FP16
//    always takes this path.
// Max backward: cuDNN takes y and recomputes the argmax from x; oneDNN's backward instead needs
// the forward-training workspace (the argmax indices). We recompute it inside pool_bwd: the
// forward-training primitive runs on x into scratch (its dst and workspace live in our workspace)
// just before the backward primitive, so no state is carried between calls and y is not read.
// oneDNN's argmax keeps the first maximum in window order (strictly greater replaces), which is
// the convention of the reference (tests/reference/reference_pooling.hpp); the result is
// deterministic.
// NaN inputs to max pooling: oneDNN does not define them, so an x holding a NaN is pooled (forward
// and backward) by the plugin's own loops under the NaN rule (onednn_pooling_nan.hpp), on the same
// staged or direct buffers, before the same output blend.
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_pooling_nan.hpp"
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
using md = dnnl::memory::desc;

constexpr const char* forward_name = "pool_fwd";
constexpr const char* backward_name = "pool_bwd";

std::optional<dnnl::algorithm> algorithm_for(int32_t mode) {
  switch (mode) {
    case TSRP_POOLING_MAX: return dnnl::algorithm::pooling_max;
    case TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING: return dnnl::algorithm::pooling_avg_include_padding;
    case TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING: return dnnl::algorithm::pooling_avg_exclude_padding;
    default: return std::nullopt;
  }
}

std::string check_problem(const tsrpPoolingProblem& p, bool backward) {
  if (!algorithm_for(p.mode)) return "unknown pooling mode " + std::to_string(p.mode);
  if (p.nan_propagation != TSRP_NOT_PROPAGATE_NAN && p.nan_propagation != TSRP_PROPAGATE_NAN)
    return "unknown NaN propagation " + std::to_string(p.nan_propagation);
  const int sd = p.spatial_dims;
  if (sd < 2 || sd > 3) return "spatial_dims " + std::to_string(sd) + " (pool kernels do 2-D and 3-D)";
  std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {&p.y, "y"}, {&p.dy, "dy"}, {&p.dx, "dx"}};
  const size_t used = backward ? 4 : 2;
  for (size_t i = 0; i < used; ++i) {
    const auto& [t, name] = tensors[i];
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (t->ndims != sd + 2)
      return std::string("tensor ") + name + " has " + std::to_string(t->ndims) +
             " dims, expected spatial_dims + 2 = " + std::to_string(sd + 2);
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN pooling supports f32, f16 and bf16";
    if (t->data_type != p.x.data_type)
      return std::string("tensor ") + name + " has data type " + data_type_name(t->data_type) +
             ", x has " + data_type_name(p.x.data_type) + " (one type per call)";
  }
  for (int i = 0; i < sd; ++i) {
    if (p.window[i] < 1 || p.stride[i] < 1) return "window and stride must be at least 1";
    if (p.pad_before[i] < 0 || p.pad_after[i] < 0 || p.pad_before[i] >= p.window[i] ||
        p.pad_after[i] >= p.window[i])
      return "pads must be in [0, window)";
    const int64_t padded = p.x.dims[2 + i] + p.pad_before[i] + p.pad_after[i];
    const int64_t expected = padded >= p.window[i] ? (padded - p.window[i]) / p.stride[i] + 1 : 0;
    if (p.y.dims[2 + i] != expected)
      return "y spatial dim " + std::to_string(i) + " is " + std::to_string(p.y.dims[2 + i]) +
             ", expected " + std::to_string(expected);
  }
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.x.dims[1]) return "y must be N x C of x";
  if (backward && (!same_dims(p.dy, p.y) || !same_dims(p.dx, p.x)))
    return "dy must have y's dims and dx x's";
  return {};
}

cache_key problem_key(const tsrpPoolingProblem& p, bool backward) {
  cache_key key(backward ? backward_name : forward_name);
  key.add(int64_t{p.mode}).add(int64_t{p.nan_propagation}).add(int64_t{p.spatial_dims});
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i)
    key.add(p.window[i]).add(p.pad_before[i]).add(p.pad_after[i]).add(p.stride[i]);
  key.add(p.x).add(p.y);
  if (backward) key.add(p.dy).add(p.dx);
  return key;
}

// A y-shaped buffer laid out in x's stride order (so staged tensors all share one order).
md dense_like_x(const tsrpTensor& shape, const tsrpTensor& x, dt type) {
  tsrpTensor t = shape;
  for (int i = 0; i < t.ndims; ++i) t.strides[i] = x.strides[i];
  return make_dense_desc_like(t, type);
}

struct pool_plan final : cached_entry {
  bool backward = false;
  bool recompute = false;  // backward max: forward training first, for the argmax workspace
  md user_x, user_dy, user_out;
  md x_c, dy_c, out_c;  // what the primitives see (the user's descs on the direct path)
  dnnl::pooling_forward::primitive_desc forward_pd;  // forward, or the hint / recompute for backward
  dnnl::pooling_backward::primitive_desc backward_pd;
  dnnl::primitive forward, backward_primitive;
  std::optional<reorder_step> x_in, dy_in, out;
  size_t x_offset = 0, dy_offset = 0, out_offset = 0, fwd_dst_offset = 0, ws_offset = 0;
  size_t scratchpad_offset = 0, workspace_bytes = 0;
  std::optional<nan_scan> x_scan;  // max pooling: how to scan x_c's layout for NaN each call
  std::string description;
};

void make_pds(pool_plan& plan, const dnnl::engine& engine, const tsrpPoolingProblem& p) {
  const int sd = p.spatial_dims;
  dnnl::memory::dims strides(sd), kernel(sd), dilation(sd, 0), pad_l(sd), pad_r(sd);
  for (int i = 0; i < sd; ++i) {
    strides[i] = p.stride[i];
    kernel[i] = p.window[i];
    pad_l[i] = p.pad_before[i];
    pad_r[i] = p.pad_after[i];
  }
  const dnnl::algorithm alg = *algorithm_for(p.mode);
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  if (!plan.backward) {
    plan.forward_pd = dnnl::pooling_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, alg, plan.x_c, plan.out_c, strides, kernel,
        dilation, pad_l, pad_r, attr);
    return;
  }
  plan.forward_pd = dnnl::pooling_forward::primitive_desc(
      engine, dnnl::prop_kind::forward_training, alg, plan.x_c, plan.dy_c, strides, kernel,
      dilation, pad_l, pad_r, attr);
  plan.backward_pd = dnnl::pooling_backward::primitive_desc(
      engine, alg, plan.out_c, plan.dy_c, strides, kernel, dilation, pad_l, pad_r,
      plan.forward_pd, attr);
  plan.recompute = plan.backward_pd.workspace_desc().get_size() > 0;
}

const dnnl::primitive_desc& main_pd(const pool_plan& plan) {
  return plan.backward ? static_cast<const dnnl::primitive_desc&>(plan.backward_pd)
                       : plan.forward_pd;
}

std::shared_ptr<pool_plan> new_plan(const tsrpPoolingProblem& p, bool backward) {
  auto plan = std::make_shared<pool_plan>();
  plan->backward = backward;
  plan->user_x = make_memory_desc(p.x);
  plan->user_out = make_memory_desc(backward ? p.dx : p.y);
  if (backward) plan->user_dy = make_memory_desc(p.dy);
  return plan;
}

// Workspace for the recompute (dst and argmax) and the scratchpads; shared by both paths.
void finish_layout(pool_plan& plan, workspace_layout& layout, size_t scratchpad) {
  if (plan.recompute) {
    plan.fwd_dst_offset = layout.reserve(plan.forward_pd.dst_desc().get_size());
    plan.ws_offset = layout.reserve(plan.forward_pd.workspace_desc().get_size());
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan.forward_pd));
  }
  scratchpad = std::max(scratchpad, scratchpad_bytes(main_pd(plan)));
  plan.scratchpad_offset = layout.reserve(scratchpad);
  plan.workspace_bytes = layout.required_bytes();
}

// Null when the direct path does not apply; throws dnnl::error when oneDNN lacks it.
std::shared_ptr<pool_plan> try_direct(const dnnl::engine& engine, const tsrpPoolingProblem& p,
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
                      " pooling=" + main_pd(*plan).impl_info_str();
  return plan;
}

std::shared_ptr<pool_plan> build_staged(const dnnl::engine& engine, const tsrpPoolingProblem& p,
                                        bool backward, float alpha, float beta) {
  auto plan = new_plan(p, backward);
  plan->x_c = make_dense_desc_like(p.x, dt::f32);
  plan->out_c = backward ? plan->x_c : dense_like_x(p.y, p.x, dt::f32);
  if (backward) plan->dy_c = dense_like_x(p.dy, p.x, dt::f32);
  workspace_layout layout;
  size_t scratchpad = 0;
  const auto stage_in = [&](const md& user, const md& chosen, std::optional<reorder_step>& step,
                            size_t& offset) {
    if (user == chosen) return;
    step = make_reorder_step(engine, user, chosen, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(chosen.get_size());
  };
  // Backward max reads x only for the recompute; average backward does not read x at all.
  const bool needs_x = !backward || p.mode == TSRP_POOLING_MAX;
  if (needs_x) stage_in(plan->user_x, plan->x_c, plan->x_in, plan->x_offset);
  if (backward) stage_in(plan->user_dy, plan->dy_c, plan->dy_in, plan->dy_offset);
  make_pds(*plan, engine, p);
  plan->out = make_reorder_step(engine, plan->out_c, plan->user_out, alpha, beta);
  scratchpad = std::max(scratchpad, scratchpad_bytes(plan->out->pd));
  plan->out_offset = layout.reserve(plan->out_c.get_size());
  finish_layout(*plan, layout, scratchpad);
  plan->description = std::string("staged (data ") + data_type_name(p.x.data_type) +
                      ", compute f32) pooling=" + main_pd(*plan).impl_info_str();
  if (plan->recompute)
    plan->description += std::string(" recompute=") + plan->forward_pd.impl_info_str();
  if (plan->x_in) plan->description += std::string(" x_reorder=") + plan->x_in->pd.impl_info_str();
  if (plan->dy_in) plan->description += std::string(" dy_reorder=") + plan->dy_in->pd.impl_info_str();
  plan->description += std::string(" out_reorder=") + plan->out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<pool_plan> choose_plan(const dnnl::engine& engine, const tsrpPoolingProblem& p,
                                       bool backward, float alpha, float beta) {
  std::shared_ptr<pool_plan> direct;
  try {
    direct = try_direct(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    // e.g. f16 without AVX512-FP16, or strides no implementation takes: stage in f32.
  }
  if (direct && !is_reference_impl(main_pd(*direct))) return direct;
  std::shared_ptr<pool_plan> staged;
  try {
    staged = build_staged(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    if (direct) return direct;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no ") + (backward ? "backward" : "forward") +
                           " pooling for this problem: " + current_exception_text());
  }
  if (direct && is_reference_impl(main_pd(*staged))) return direct;
  return staged;
}

// Under staged_kernel's "oneDNN ... primitive creation" annotation.
void create_primitives(pool_plan& plan) {
  if (!plan.backward || plan.recompute) plan.forward = dnnl::pooling_forward(plan.forward_pd);
  if (plan.backward) plan.backward_primitive = dnnl::pooling_backward(plan.backward_pd);
  for (auto* step : {&plan.x_in, &plan.dy_in, &plan.out})
    if (*step) (*step)->instantiate();
}

void execute_plan(const pool_plan& plan, context& ctx, const tsrpPoolingProblem& p, const tsrpPoolingArgs& a,
                  void* workspace) {
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
  dnnl::memory src, diff_dst;
  const bool needs_x = !plan.backward || plan.recompute;
  if (needs_x) {
    dnnl::memory x(plan.user_x, engine, const_cast<void*>(a.x));
    src = x;
    if (plan.x_in) {
      src = at(plan.x_c, plan.x_offset);
      plan.x_in->execute(stream, x, src, scratchpad);
    }
  }
  if (plan.backward) {
    dnnl::memory dy(plan.user_dy, engine, const_cast<void*>(a.dy));
    diff_dst = dy;
    if (plan.dy_in) {
      diff_dst = at(plan.dy_c, plan.dy_offset);
      plan.dy_in->execute(stream, dy, diff_dst, scratchpad);
    }
  }
  dnnl::memory result = plan.out ? at(plan.out_c, plan.out_offset) : out;

  // NaN in x: oneDNN's max is undefined for it, so the plan's loops take the call
  // (onednn_pooling_nan.hpp); the blend into the user's output below stays the same.
  const bool nan_aware = plan.x_scan && needs_x && holds_nan(*plan.x_scan, src.get_data_handle());
  if (nan_aware) {
    if (plan.backward) {
      max_pool_backward_nan_aware(p, src, diff_dst, result);
    } else {
      max_pool_forward_nan_aware(p, src, result);
    }
  } else if (!plan.backward) {
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, result}};
    scratch_arg(plan.forward_pd, args);
    plan.forward.execute(stream, args);
  } else {
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
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, diff_dst},
                                               {DNNL_ARG_DIFF_SRC, result}};
    if (plan.recompute) args.emplace(DNNL_ARG_WORKSPACE, ws);
    scratch_arg(plan.backward_pd, args);
    plan.backward_primitive.execute(stream, args);
  }
  if (plan.out) plan.out->execute(stream, result, out, scratchpad);
  stream.wait();
}

// The lifecycle (queries, plan cache, workspace check) is staged_kernel's.
template <bool Backward>
struct pool_traits : alpha_beta_traits<tsrpPoolingArgs> {
  using problem = tsrpPoolingProblem;
  using args = tsrpPoolingArgs;
  using plan = pool_plan;
  static constexpr bool backward = Backward;
  static constexpr const char* name = Backward ? backward_name : forward_name;
  static constexpr const char* primitive = "pooling";
  static constexpr const char* problem_noun = "pooling";
  static std::string check(const problem& p) { return check_problem(p, Backward); }
  static bool empty(const problem& p) { return element_count(p.x) == 0; }
  static cache_key key(const problem& p) { return problem_key(p, Backward); }
  static std::string check_args(const problem&, const args& a) {
    if (a.x == nullptr || (Backward ? (a.dy == nullptr || a.dx == nullptr) : a.y == nullptr))
      return Backward ? "null x, dy or dx" : "null x or y";
    return {};
  }
  static std::shared_ptr<plan> build(const dnnl::engine& engine, const problem& p, const args& a) {
    std::shared_ptr<plan> made = choose_plan(engine, p, Backward, a.alpha, a.beta);
    // x reaches the primitives (and the NaN scan) in x_c's layout on either path.
    if (p.mode == TSRP_POOLING_MAX) made->x_scan = nan_scan_of(made->x_c);
    return made;
  }
  static void instantiate(plan& made) { create_primitives(made); }
  static void execute(const plan& made, context& ctx, const problem& p, const args& a,
                      void* workspace) {
    execute_plan(made, ctx, p, a, workspace);
  }
};

const tsrpKernel g_forward_kernel = staged_kernel<pool_traits<false>>::make(
    TSRP_OP_POOLING_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,  // each output is one window's max or sum, in a fixed order
    "oneDNN pooling forward (max, average with or without padding), 2-D and 3-D. Averages sum "
    "in f32; with alpha != 1, beta != 0, differing x/y types or layouts no fast kernel takes, "
    "or f16 on CPUs without AVX512-FP16, the result is staged in f32 in the workspace and "
    "alpha*pool + beta*y is rounded once to y's type. Max pooling of an x holding NaN (found by a "
    "scan of x's bits each call) runs in the plugin's own loop under nan_propagation's rule, since "
    "oneDNN leaves NaN inputs undefined.");

const tsrpKernel g_backward_kernel = staged_kernel<pool_traits<true>>::make(
    TSRP_OP_POOLING_BACKWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN pooling backward. Max: the argmax is recomputed from x by oneDNN's forward-training "
    "pooling into the workspace (y is not read); each dy goes to the first maximum of its window "
    "in window order; an x holding NaN runs the plugin's own loop instead (NaNs never win, a window "
    "of NaNs passes no gradient). Staged through f32 in the workspace like pool_fwd when alpha != 1, "
    "beta != 0, or the type/layout has no fast oneDNN kernel.");

}  // namespace

const tsrpKernel& pooling_forward_kernel() noexcept { return g_forward_kernel; }
const tsrpKernel& pooling_backward_kernel() noexcept { return g_backward_kernel; }

}  // namespace tessera::onednn
