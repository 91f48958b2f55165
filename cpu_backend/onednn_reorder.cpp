// Kernels "transform_tensor" (y = alpha * x + beta * y, any strides and types to any others) and
// "add_tensor" (c = alpha * a + beta * c with a broadcast to c) on oneDNN's reorder.
//
// Both are one reorder with alpha as a runtime source scale and beta as a sum post-op (only added
// when beta != 0, so the output is not read then): onednn_reorder_step. add_tensor reads a
// through a view with c's dims and stride 0 along the broadcast dims, which oneDNN's reorders
// walk like any other strides. Where oneDNN has no direct reorder between the two types, or
// only its reference one, the source is first converted into a dense f32 buffer in the workspace
// (laid out like the destination, so the second reorder is a plain conversion), and alpha/beta
// are applied by the second reorder; both paths compute in f32 and round once.
#include "onednn_kernels.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_tensor_op_kernel.hpp"
#include "onednn_workspace.hpp"

#include <optional>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;

struct copy_plan final : tensor_op_plan {
  dnnl::memory::desc user_src, user_dst, stage;
  std::optional<reorder_step> to_stage;  // staged plans only
  std::optional<reorder_step> to_dst;
  size_t stage_offset = 0, scratchpad_offset = 0;
};

// Throws dnnl::error when oneDNN cannot do it.
std::shared_ptr<copy_plan> try_copy(const dnnl::engine& engine, const tsrpTensor& src,
                                    const tsrpTensor& dst, float alpha, float beta, bool staged) {
  auto plan = std::make_shared<copy_plan>();
  plan->user_src = make_memory_desc(src);
  plan->user_dst = make_memory_desc(dst);
  workspace_layout layout;
  size_t scratchpad = 0;
  if (staged) {
    plan->stage = make_dense_desc_like(dst, dt::f32);
    plan->to_stage = make_reorder_step(engine, plan->user_src, plan->stage, 1.0f, 0.0f);
    plan->to_dst = make_reorder_step(engine, plan->stage, plan->user_dst, alpha, beta);
    plan->stage_offset = layout.reserve(plan->stage.get_size());
    scratchpad = std::max(scratchpad_bytes(plan->to_stage->pd), scratchpad_bytes(plan->to_dst->pd));
    plan->description = std::string("staged through f32: reorder=") +
                        plan->to_stage->pd.impl_info_str() + " then reorder=" +
                        plan->to_dst->pd.impl_info_str();
  } else {
    plan->to_dst = make_reorder_step(engine, plan->user_src, plan->user_dst, alpha, beta);
    scratchpad = scratchpad_bytes(plan->to_dst->pd);
    plan->description = std::string("direct reorder=") + plan->to_dst->pd.impl_info_str();
  }
  plan->description += std::string(" (") + data_type_name(src.data_type) + "->" +
                       data_type_name(dst.data_type) + ")";
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();
  return plan;
}

bool is_reference(const copy_plan& plan) {
  return is_reference_impl(plan.to_dst->pd) || (plan.to_stage && is_reference_impl(plan.to_stage->pd));
}

// Direct unless only the reference reorder does it directly and the staged pair does better.
// Only plans of at most `limit` workspace bytes (the run passes what workspace_size reported, see
// k_scale_classes; the plan of the call's scalar class always fits).
std::shared_ptr<copy_plan> choose_copy(const dnnl::engine& engine, const tsrpTensor& src,
                                       const tsrpTensor& dst, float alpha, float beta,
                                       size_t limit) {
  std::shared_ptr<copy_plan> direct, staged;
  std::string error;
  const auto over_limit = [&](const copy_plan& plan) {
    if (plan.workspace_bytes <= limit) return false;
    error = plan.description + ": more than the " + std::to_string(limit) +
            " bytes workspace_size reported";
    return true;
  };
  try {
    direct = try_copy(engine, src, dst, alpha, beta, false);
    if (over_limit(*direct))
      direct.reset();
    else if (!is_reference(*direct))
      return direct;
  } catch (const dnnl::error&) {
    error = current_exception_text();
  }
  try {
    staged = try_copy(engine, src, dst, alpha, beta, true);
    if (over_limit(*staged)) staged.reset();
  } catch (const dnnl::error&) {
    // no staged pair either: the message below keeps the direct attempt's reason
  }
  if (!staged) {
    if (direct) return direct;
    throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string("oneDNN has no reorder from ") + data_type_name(src.data_type) +
                           " to " + data_type_name(dst.data_type) + ": " + error);
  }
  if (direct && is_reference(*staged)) return direct;
  return staged;
}

void instantiate_copy(copy_plan& plan) {
  if (plan.to_stage) plan.to_stage->instantiate();
  plan.to_dst->instantiate();
}

void execute_copy(const copy_plan& plan, context& ctx, const void* src, void* dst, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  dnnl::memory s(plan.user_src, engine, const_cast<void*>(src));  // only read
  dnnl::memory d(plan.user_dst, engine, dst);
  if (plan.to_stage) {
    dnnl::memory staged(plan.stage, engine, workspace_at(workspace, plan.stage_offset));
    plan.to_stage->execute(stream, s, staged, scratchpad);
    plan.to_dst->execute(stream, staged, d, scratchpad);
  } else {
    plan.to_dst->execute(stream, s, d, scratchpad);
  }
  stream.wait();
}

std::string check_pair(const tsrpTensor& src, const char* src_name, const tsrpTensor& dst,
                       const char* dst_name) {
  std::string reason = check_tensor(src, src_name);
  if (reason.empty()) reason = check_tensor(dst, dst_name);
  if (reason.empty()) reason = check_output_does_not_overlap(dst, dst_name);
  return reason;
}

std::vector<std::pair<float, float>> scalar_shapes() {
  std::vector<std::pair<float, float>> out;
  for (float alpha : k_scale_classes)
    for (float beta : k_sum_classes) out.emplace_back(alpha, beta);
  return out;
}

struct transform_traits {
  using problem = tsrpTransformTensorProblem;
  using args = tsrpTransformTensorArgs;
  using plan = copy_plan;
  static constexpr const char* name = "transform_tensor";

  static std::string check(const problem& p) {
    std::string reason = check_pair(p.x, "x", p.y, "y");
    if (reason.empty() && !same_dims(p.x, p.y)) reason = "x and y have different dims";
    return reason;
  }
  static bool empty(const problem& p) { return element_count(p.y) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(p.x).add(p.y);
    return k;
  }
  static void add_args(cache_key& k, const args& a) { k.add(double{a.alpha}).add(double{a.beta}); }
  static std::vector<args> shapes() {
    std::vector<args> out;
    for (auto [alpha, beta] : scalar_shapes()) out.push_back(args{sizeof(args), nullptr, nullptr, alpha, beta});
    return out;
  }
  static std::string check_args(const problem&, const args& a) {
    return a.x && a.y ? std::string() : std::string("null x or y");
  }
  static std::shared_ptr<plan> build(const dnnl::engine& e, const problem& p, const args& a) {
    return build_within(e, p, a, k_no_workspace_limit);
  }
  static std::shared_ptr<plan> build_within(const dnnl::engine& e, const problem& p, const args& a,
                                            size_t limit) {
    return choose_copy(e, p.x, p.y, a.alpha, a.beta, limit);
  }
  static void instantiate(plan& pl) { instantiate_copy(pl); }
  static void execute(const plan& pl, context& ctx, const problem&, const args& a, void* ws) {
    execute_copy(pl, ctx, a.x, a.y, ws);
  }
};

struct add_traits {
  using problem = tsrpAddTensorProblem;
  using args = tsrpAddTensorArgs;
  using plan = copy_plan;
  static constexpr const char* name = "add_tensor";

  static std::string check(const problem& p) {
    std::string reason = check_pair(p.a, "a", p.c, "c");
    if (!reason.empty()) return reason;
    if (p.a.ndims != p.c.ndims) return "a and c have different numbers of dims";
    for (int i = 0; i < p.c.ndims; ++i)
      if (p.a.dims[i] != 1 && p.a.dims[i] != p.c.dims[i])
        return "a's dim " + std::to_string(i) + " is neither 1 nor c's";
    return {};
  }
  static bool empty(const problem& p) { return element_count(p.c) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(p.a).add(p.c);
    return k;
  }
  static void add_args(cache_key& k, const args& a) { k.add(double{a.alpha}).add(double{a.beta}); }
  static std::vector<args> shapes() {
    std::vector<args> out;
    for (auto [alpha, beta] : scalar_shapes()) out.push_back(args{sizeof(args), nullptr, nullptr, alpha, beta});
    return out;
  }
  static std::string check_args(const problem&, const args& a) {
    return a.a && a.c ? std::string() : std::string("null a or c");
  }
  static std::shared_ptr<plan> build(const dnnl::engine& e, const problem& p, const args& a) {
    return build_within(e, p, a, k_no_workspace_limit);
  }
  static std::shared_ptr<plan> build_within(const dnnl::engine& e, const problem& p, const args& a,
                                            size_t limit) {
    return choose_copy(e, broadcast_view(p.a, p.c), p.c, a.alpha, a.beta, limit);
  }
  static void instantiate(plan& pl) { instantiate_copy(pl); }
  static void execute(const plan& pl, context& ctx, const problem&, const args& a, void* ws) {
    execute_copy(pl, ctx, a.a, a.c, ws);
  }
};

const tsrpKernel g_transform = tensor_op_kernel<transform_traits>::make(
    TSRP_OP_TRANSFORM_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN reorder: any strides and types to any others, alpha as a source scale and beta as a "
    "sum, in f32, rounded once to y's type (integers round to nearest and saturate). Pairs "
    "oneDNN reorders only with its reference code go through an f32 buffer in the workspace.");

const tsrpKernel g_add = tensor_op_kernel<add_traits>::make(
    TSRP_OP_ADD_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN reorder from a stride-0 broadcast view of a: c = alpha * a + beta * c in f32, rounded "
    "once to c's type.");

}  // namespace

const tsrpKernel& transform_tensor_kernel() noexcept { return g_transform; }
const tsrpKernel& add_tensor_kernel() noexcept { return g_add; }

}  // namespace tessera::onednn
