// Kernels "softmax_fwd" (y = alpha * softmax(x) + beta * y) and "softmax_bwd"
// (dx = alpha * dsoftmax(y, dy) + beta * dx) on oneDNN's softmax primitive (softmax_accurate,
// softmax_log); cuDNN's FAST algorithm is computed as accurate.
//
// Modes: CHANNEL is oneDNN's softmax over axis 1 of the N-D tensor. INSTANCE (over C x spatial
// per n) is a softmax over axis 1 of a 2-D N x (C*spatial) view. A view is only valid when every
// tensor of the call has the same strides and each n's elements form one dense block; then all
// of them map an element to the same place of the block, and the order inside it does not
// matter to a softmax. Otherwise the tensors are staged in row-major order, where it always is.
//
// Plans, as for eltwise: direct (alpha == 1, beta == 0, a non-reference oneDNN implementation on
// the user's memory) or staged (inputs reordered into dense f32 workspace buffers, softmax in
// f32, one reorder applying alpha as a source scale and beta as a sum post-op that is left out
// for beta == 0, so the output is never read then). f16 without AVX512-FP16 is always staged.
// Backward uses the forward output y, as cuDNN does (oneDNN's softmax backward takes dst).
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
using md = dnnl::memory::desc;

constexpr const char* forward_name = "softmax_fwd";
constexpr const char* backward_name = "softmax_bwd";

// The tensors an operation uses: the input (x forward, y backward), dy backward, the output.
struct roles {
  const tsrpTensor* in;
  const tsrpTensor* dy;  // null forward
  const tsrpTensor* out;
};

roles roles_of(const tsrpSoftmaxProblem& p, bool backward) {
  return backward ? roles{&p.y, &p.dy, &p.dx} : roles{&p.x, nullptr, &p.y};
}

std::string check_problem(const tsrpSoftmaxProblem& p, bool backward) {
  if (p.algorithm != TSRP_SOFTMAX_FAST && p.algorithm != TSRP_SOFTMAX_ACCURATE &&
      p.algorithm != TSRP_SOFTMAX_LOG)
    return "unknown softmax algorithm " + std::to_string(p.algorithm);
  if (p.mode != TSRP_SOFTMAX_MODE_INSTANCE && p.mode != TSRP_SOFTMAX_MODE_CHANNEL)
    return "unknown softmax mode " + std::to_string(p.mode);
  const roles r = roles_of(p, backward);
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {r.in, backward ? "y" : "x"}, {r.out, backward ? "dx" : "y"}, {r.dy, "dy"}};
  for (const auto& [t, name] : tensors) {
    if (t == nullptr) continue;
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (t->ndims < 2) return std::string("tensor ") + name + " has fewer than 2 dims (N, C)";
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN softmax supports f32, f16 and bf16";
    if (t->data_type != r.in->data_type)
      return std::string("tensor ") + name + " has another data type than the input";
    if (!same_dims(*t, *r.in)) return std::string("tensor ") + name + " has other dims than the input";
  }
  return {};
}

cache_key problem_key(const tsrpSoftmaxProblem& p, bool backward) {
  const roles r = roles_of(p, backward);
  cache_key key(backward ? backward_name : forward_name);
  key.add(int64_t{p.algorithm}).add(int64_t{p.mode}).add(*r.in).add(*r.out);
  if (r.dy != nullptr) key.add(*r.dy);
  return key;
}

dnnl::algorithm algorithm_of(const tsrpSoftmaxProblem& p) {
  return p.algorithm == TSRP_SOFTMAX_LOG ? dnnl::algorithm::softmax_log
                                         : dnnl::algorithm::softmax_accurate;
}

int64_t per_instance(const tsrpTensor& t) {
  int64_t n = 1;
  for (int i = 1; i < t.ndims; ++i) n *= t.dims[i];
  return n;
}

// True when each n's elements fill one dense block of per_instance(t) elements, block n at
// n * per_instance(t): the condition for the N x (C*spatial) view.
bool instance_blocks_dense(const tsrpTensor& t) {
  int64_t extent = 1;
  for (int i = 1; i < t.ndims; ++i) extent += (t.dims[i] - 1) * t.strides[i];
  const int64_t block = per_instance(t);
  return extent == block && (t.dims[0] == 1 || t.strides[0] == block);
}

bool same_strides(const tsrpTensor& a, const tsrpTensor& b) {
  for (int i = 0; i < a.ndims; ++i)
    if (a.dims[i] != 1 && a.strides[i] != b.strides[i]) return false;
  return true;
}

md instance_view(const tsrpTensor& t, dt type) {
  const int64_t block = per_instance(t);
  return md({t.dims[0], block}, type, {block, 1});
}

md row_major(const tsrpTensor& t, dt type) {
  dnnl::memory::dims dims(t.dims, t.dims + t.ndims), strides(static_cast<size_t>(t.ndims));
  int64_t running = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = running;
    running *= std::max<int64_t>(t.dims[i], 1);
  }
  return md(dims, type, strides);
}

struct softmax_plan final : cached_entry {
  bool backward = false;
  md user_in, user_dy, user_out;
  md in_c, dy_c, out_c;  // N-D descs of the buffers the primitive works on
  md in_p, dy_p, out_p;  // the same buffers as the primitive sees them (2-D for INSTANCE)
  dnnl::softmax_forward::primitive_desc forward_pd;  // forward, or the backward's hint
  dnnl::softmax_backward::primitive_desc backward_pd;
  dnnl::primitive softmax;
  std::optional<reorder_step> in_step, dy_step, out_step;
  size_t in_offset = 0, dy_offset = 0, out_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;

  const dnnl::primitive_desc& softmax_pd() const {
    return backward ? static_cast<const dnnl::primitive_desc&>(backward_pd) : forward_pd;
  }
};

void make_pds(softmax_plan& plan, const dnnl::engine& engine, const tsrpSoftmaxProblem& p) {
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  const dnnl::algorithm alg = algorithm_of(p);
  constexpr int axis = 1;  // C, or C*spatial of the INSTANCE view
  if (!plan.backward) {
    plan.forward_pd = dnnl::softmax_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, alg, plan.in_p, plan.out_p, axis, attr);
    return;
  }
  plan.forward_pd = dnnl::softmax_forward::primitive_desc(
      engine, dnnl::prop_kind::forward_training, alg, plan.in_p, plan.in_p, axis);
  plan.backward_pd = dnnl::softmax_backward::primitive_desc(
      engine, alg, plan.out_p, plan.dy_p, plan.in_p, axis, plan.forward_pd, attr);
}

std::shared_ptr<softmax_plan> new_plan(const tsrpSoftmaxProblem& p, bool backward) {
  auto plan = std::make_shared<softmax_plan>();
  const roles r = roles_of(p, backward);
  plan->backward = backward;
  plan->user_in = make_memory_desc(*r.in);
  plan->user_out = make_memory_desc(*r.out);
  if (backward) plan->user_dy = make_memory_desc(*r.dy);
  return plan;
}

std::shared_ptr<softmax_plan> try_direct(const dnnl::engine& engine, const tsrpSoftmaxProblem& p,
                                         bool backward, float alpha, float beta) {
  if (alpha != 1.0f || beta != 0.0f) return nullptr;
  const roles r = roles_of(p, backward);
  const bool instance = p.mode == TSRP_SOFTMAX_MODE_INSTANCE;
  if (instance) {
    if (!instance_blocks_dense(*r.in) || !same_strides(*r.in, *r.out)) return nullptr;
    if (backward && !same_strides(*r.in, *r.dy)) return nullptr;
  }
  auto plan = new_plan(p, backward);
  const dt type = *to_dnnl_data_type(r.in->data_type);
  plan->in_c = plan->in_p = plan->user_in;
  plan->out_c = plan->out_p = plan->user_out;
  if (backward) plan->dy_c = plan->dy_p = plan->user_dy;
  if (instance) {
    plan->in_p = plan->out_p = instance_view(*r.in, type);
    if (backward) plan->dy_p = plan->in_p;
  }
  make_pds(*plan, engine, p);
  workspace_layout layout;
  plan->scratchpad_offset = layout.reserve(scratchpad_bytes(plan->softmax_pd()));
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string("direct ") + data_type_name(r.in->data_type) +
                      " softmax=" + plan->softmax_pd().impl_info_str();
  return plan;
}

std::shared_ptr<softmax_plan> build_staged(const dnnl::engine& engine, const tsrpSoftmaxProblem& p,
                                           bool backward, float alpha, float beta) {
  auto plan = new_plan(p, backward);
  const roles r = roles_of(p, backward);
  const bool instance = p.mode == TSRP_SOFTMAX_MODE_INSTANCE;
  const md stage = instance ? row_major(*r.in, dt::f32) : make_dense_desc_like(*r.in, dt::f32);
  const md view = instance ? instance_view(*r.in, dt::f32) : stage;
  plan->in_c = plan->out_c = stage;
  plan->in_p = plan->out_p = view;
  if (backward) {
    plan->dy_c = stage;
    plan->dy_p = view;
  }
  const size_t stage_bytes = stage.get_size();
  workspace_layout layout;
  size_t scratchpad = 0;
  const auto stage_in = [&](const md& user, std::optional<reorder_step>& step, size_t& offset) {
    if (user == stage) return false;
    step = make_reorder_step(engine, user, stage, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(stage_bytes);
    return true;
  };
  stage_in(plan->user_in, plan->in_step, plan->in_offset);
  if (backward) stage_in(plan->user_dy, plan->dy_step, plan->dy_offset);
  plan->out_offset = layout.reserve(stage_bytes);
  make_pds(*plan, engine, p);
  plan->out_step = make_reorder_step(engine, stage, plan->user_out, alpha, beta);
  scratchpad = std::max(scratchpad, scratchpad_bytes(plan->out_step->pd));
  scratchpad = std::max(scratchpad, scratchpad_bytes(plan->softmax_pd()));
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string("staged (data ") + data_type_name(r.in->data_type) +
                      ", compute f32" + (instance ? ", N x C*spatial view" : "") +
                      ") softmax=" + plan->softmax_pd().impl_info_str();
  if (plan->in_step) plan->description += std::string(" in_reorder=") + plan->in_step->pd.impl_info_str();
  if (plan->dy_step) plan->description += std::string(" dy_reorder=") + plan->dy_step->pd.impl_info_str();
  plan->description += std::string(" out_reorder=") + plan->out_step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<softmax_plan> choose_plan(const dnnl::engine& engine, const tsrpSoftmaxProblem& p,
                                          bool backward, float alpha, float beta) {
  std::shared_ptr<softmax_plan> direct;
  try {
    direct = try_direct(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    // e.g. f16 without AVX512-FP16: the staged path computes in f32.
  }
  if (direct && !is_reference_impl(direct->softmax_pd())) return direct;
  std::shared_ptr<softmax_plan> staged;
  try {
    staged = build_staged(engine, p, backward, alpha, beta);
  } catch (const dnnl::error&) {
    if (direct) return direct;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no ") + (backward ? "backward" : "forward") +
                           " softmax for this problem: " + current_exception_text());
  }
  if (direct && is_reference_impl(staged->softmax_pd())) return direct;
  return staged;
}

// Under staged_kernel's "oneDNN ... primitive creation" annotation.
void create_primitives(softmax_plan& plan) {
  if (plan.backward)
    plan.softmax = dnnl::softmax_backward(plan.backward_pd);
  else
    plan.softmax = dnnl::softmax_forward(plan.forward_pd);
  for (auto* step : {&plan.in_step, &plan.dy_step, &plan.out_step})
    if (*step) (*step)->instantiate();
}

void execute_plan(const softmax_plan& plan, context& ctx, const tsrpSoftmaxArgs& a, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  // oneDNN memories take void*; the inputs are only read.
  void* in_ptr = const_cast<void*>(plan.backward ? a.y_in : a.x);
  void* out_ptr = plan.backward ? a.dx : a.y;
  dnnl::memory user_in(plan.user_in, engine, in_ptr);
  dnnl::memory user_out(plan.user_out, engine, out_ptr);
  void* in_buf = in_ptr;
  if (plan.in_step) {
    in_buf = workspace_at(workspace, plan.in_offset);
    plan.in_step->execute(stream, user_in, dnnl::memory(plan.in_c, engine, in_buf), scratchpad);
  }
  void* dy_buf = nullptr;
  if (plan.backward) {
    dy_buf = const_cast<void*>(a.dy);
    if (plan.dy_step) {
      dnnl::memory user_dy(plan.user_dy, engine, dy_buf);
      dy_buf = workspace_at(workspace, plan.dy_offset);
      plan.dy_step->execute(stream, user_dy, dnnl::memory(plan.dy_c, engine, dy_buf), scratchpad);
    }
  }
  void* out_buf = plan.out_step ? workspace_at(workspace, plan.out_offset) : out_ptr;

  std::unordered_map<int, dnnl::memory> args;
  if (plan.backward) {
    args.insert({{DNNL_ARG_DST, dnnl::memory(plan.in_p, engine, in_buf)},
                 {DNNL_ARG_DIFF_DST, dnnl::memory(plan.dy_p, engine, dy_buf)},
                 {DNNL_ARG_DIFF_SRC, dnnl::memory(plan.out_p, engine, out_buf)}});
  } else {
    args.insert({{DNNL_ARG_SRC, dnnl::memory(plan.in_p, engine, in_buf)},
                 {DNNL_ARG_DST, dnnl::memory(plan.out_p, engine, out_buf)}});
  }
  if (scratchpad_bytes(plan.softmax_pd()) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(plan.softmax_pd().scratchpad_desc(), engine, scratchpad));
  plan.softmax.execute(stream, args);
  if (plan.out_step)
    plan.out_step->execute(stream, dnnl::memory(plan.out_c, engine, out_buf), user_out, scratchpad);
  stream.wait();
}

// The lifecycle (queries, plan cache, workspace check) is staged_kernel's.
template <bool Backward>
struct softmax_traits : alpha_beta_traits<tsrpSoftmaxArgs> {
  using problem = tsrpSoftmaxProblem;
  using args = tsrpSoftmaxArgs;
  using plan = softmax_plan;
  static constexpr bool backward = Backward;
  static constexpr const char* name = Backward ? backward_name : forward_name;
  static constexpr const char* primitive = "softmax";
  static constexpr const char* problem_noun = "softmax";
  static std::string check(const problem& p) { return check_problem(p, Backward); }
  static bool empty(const problem& p) { return element_count(*roles_of(p, Backward).in) == 0; }
  static cache_key key(const problem& p) { return problem_key(p, Backward); }
  static std::string check_args(const problem&, const args& a) {
    if (Backward ? (a.y_in == nullptr || a.dy == nullptr || a.dx == nullptr)
                 : (a.x == nullptr || a.y == nullptr))
      return Backward ? "null y, dy or dx" : "null x or y";
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

const tsrpKernel g_forward_kernel = staged_kernel<softmax_traits<false>>::make(
    TSRP_OP_SOFTMAX_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,  // one reduction per row, in a fixed order for a given machine
    "oneDNN softmax forward (accurate: max subtracted; log; FAST is computed as accurate). exp "
    "and log are oneDNN's vectorized f32 approximations; with alpha != 1, beta != 0, differing "
    "x/y types or strides, instance mode over a layout that is not one dense block per n, or f16 "
    "on CPUs without AVX512-FP16, the rows are staged in f32 in the workspace and alpha*softmax "
    "+ beta*y is rounded once to y's type.");

const tsrpKernel g_backward_kernel = staged_kernel<softmax_traits<true>>::make(
    TSRP_OP_SOFTMAX_BACKWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN softmax backward from the forward output y: accurate y*(dy - sum(dy*y)), log "
    "dy - exp(y)*sum(dy). Computed in f32; staged through the workspace like softmax_fwd.");

}  // namespace

const tsrpKernel& softmax_forward_kernel() noexcept { return g_forward_kernel; }
const tsrpKernel& softmax_backward_kernel() noexcept { return g_backward_kernel; }

}  // namespace tessera::onednn
