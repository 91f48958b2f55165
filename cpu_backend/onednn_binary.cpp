// Kernel "op_tensor": c = op(alpha1 * a, alpha2 * b) + beta * c (add, mul, min, max; b broadcast)
// and c = op(alpha1 * a) + beta * c (sqrt, not) on oneDNN's binary primitive.
//
// alpha1 and alpha2 are the binary's runtime source scales, beta a sum post-op (left out when
// beta == 0, so c is not read then). The unary ops are binary_max(a, a), which is a exactly,
// followed by an eltwise post-op: sqrt, or linear(-1, 1) for not's 1 - x. Plans, first one
// oneDNN implements with other than its reference code (else the first implemented at all), at
// run time among those that fit the workspace workspace_size reported (choose_plan):
//   1. direct: a, b and c as the user laid them out, types as given;
//   2. staged: a and b converted into dense f32 buffers in the workspace, the binary in f32
//      into a third buffer, and one reorder writing c with beta as its sum (f16 on CPUs without
//      AVX512-FP16, s32, mixed types oneDNN lacks).
// Either way the arithmetic is f32 (the compute type) and c is rounded once.
// NaN: min/max follow the CPU's vminps/vmaxps (no propagation guarantee either way).
#include "onednn_kernels.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_tensor_op_kernel.hpp"
#include "onednn_workspace.hpp"

#include <optional>
#include <unordered_map>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using alg = dnnl::algorithm;

bool is_unary(int32_t op) { return op == TSRP_OP_TENSOR_SQRT || op == TSRP_OP_TENSOR_NOT; }

std::optional<alg> binary_algorithm(int32_t op) {
  switch (op) {
    case TSRP_OP_TENSOR_ADD: return alg::binary_add;
    case TSRP_OP_TENSOR_MUL: return alg::binary_mul;
    case TSRP_OP_TENSOR_MIN: return alg::binary_min;
    case TSRP_OP_TENSOR_MAX: return alg::binary_max;
    case TSRP_OP_TENSOR_SQRT:
    case TSRP_OP_TENSOR_NOT: return alg::binary_max;  // max(x, x) = x, then the post-op
    default: return std::nullopt;
  }
}

struct binary_plan final : tensor_op_plan {
  bool unary = false;
  dnnl::memory::desc user_a, user_b, user_c;
  dnnl::memory::desc stage_a, stage_b, stage_c;  // staged plans
  std::optional<reorder_step> a_in, b_in, c_out;
  dnnl::binary::primitive_desc pd;
  dnnl::binary binary;
  bool scale0 = false, scale1 = false;
  float alpha1 = 1.0f, alpha2 = 1.0f;
  size_t a_offset = 0, b_offset = 0, c_offset = 0, scratchpad_offset = 0;
};

// Throws dnnl::error when oneDNN does not implement it.
std::shared_ptr<binary_plan> try_plan(const dnnl::engine& engine, const tsrpOpTensorProblem& p,
                                      const tsrpOpTensorArgs& a, bool staged) {
  auto pl = std::make_shared<binary_plan>();
  pl->unary = is_unary(p.op);
  pl->user_a = make_memory_desc(p.a);
  pl->user_c = make_memory_desc(p.c);
  pl->user_b = pl->unary ? pl->user_a : make_memory_desc(p.b);
  pl->alpha1 = a.alpha1;
  pl->alpha2 = pl->unary ? a.alpha1 : a.alpha2;
  pl->scale0 = pl->alpha1 != 1.0f;
  pl->scale1 = pl->alpha2 != 1.0f;

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (pl->scale0) attr.set_scales_mask(DNNL_ARG_SRC_0, 0);
  if (pl->scale1) attr.set_scales_mask(DNNL_ARG_SRC_1, 0);
  dnnl::post_ops ops;
  if (p.op == TSRP_OP_TENSOR_SQRT) ops.append_eltwise(alg::eltwise_sqrt, 0.0f, 0.0f);
  if (p.op == TSRP_OP_TENSOR_NOT) ops.append_eltwise(alg::eltwise_linear, -1.0f, 1.0f);
  // Direct plans blend c in the binary; staged ones in the final reorder.
  if (!staged && a.beta != 0.0f) ops.append_sum(a.beta);
  attr.set_post_ops(ops);

  workspace_layout layout;
  size_t scratchpad = 0;
  dnnl::memory::desc src0 = pl->user_a, src1 = pl->user_b, dst = pl->user_c;
  if (staged) {
    // a is laid out like c (they have the same dims), so the binary's src0 and dst agree.
    pl->stage_c = make_dense_desc_like(p.c, dt::f32);
    pl->stage_a = pl->stage_c;
    if (pl->user_a != pl->stage_a) {
      pl->a_in = make_reorder_step(engine, pl->user_a, pl->stage_a, 1.0f, 0.0f);
      pl->a_offset = layout.reserve(pl->stage_a.get_size());
      src0 = pl->stage_a;
    }
    src1 = src0;
    if (!pl->unary) {
      pl->stage_b = make_dense_desc_like(p.b, dt::f32);
      src1 = pl->user_b;
      if (pl->user_b != pl->stage_b) {
        pl->b_in = make_reorder_step(engine, pl->user_b, pl->stage_b, 1.0f, 0.0f);
        pl->b_offset = layout.reserve(pl->stage_b.get_size());
        src1 = pl->stage_b;
      }
    }
    dst = pl->stage_c;
    pl->c_offset = layout.reserve(pl->stage_c.get_size());
    pl->c_out = make_reorder_step(engine, pl->stage_c, pl->user_c, 1.0f, a.beta);
  }
  pl->pd = dnnl::binary::primitive_desc(engine, *binary_algorithm(p.op), src0, src1, dst, attr);
  scratchpad = scratchpad_bytes(pl->pd);
  for (const auto* step : {&pl->a_in, &pl->b_in, &pl->c_out})
    if (*step) scratchpad = std::max(scratchpad, scratchpad_bytes((*step)->pd));
  pl->scratchpad_offset = layout.reserve(scratchpad);
  pl->workspace_bytes = layout.required_bytes();

  pl->description = std::string(staged ? "staged through f32" : "direct") + " (a " +
                    data_type_name(p.a.data_type) + ", b " + data_type_name(p.b.data_type) +
                    ", c " + data_type_name(p.c.data_type) + ") binary=" + pl->pd.impl_info_str();
  if (pl->a_in) pl->description += std::string(" a_reorder=") + pl->a_in->pd.impl_info_str();
  if (pl->b_in) pl->description += std::string(" b_reorder=") + pl->b_in->pd.impl_info_str();
  if (pl->c_out) pl->description += std::string(" c_reorder=") + pl->c_out->pd.impl_info_str();
  pl->description += " workspace=" + std::to_string(pl->workspace_bytes);
  return pl;
}

// Only plans of at most `limit` workspace bytes: the run passes what workspace_size reported, so
// that scalars oneDNN judges apart from their class (a NaN beta turns the direct plan into the
// reference binary) take the reference plan rather than a staged one the host did not size for.
std::shared_ptr<binary_plan> choose_plan(const dnnl::engine& engine, const tsrpOpTensorProblem& p,
                                         const tsrpOpTensorArgs& a, size_t limit) {
  std::shared_ptr<binary_plan> reference_plan;
  std::string error;
  for (bool staged : {false, true}) {
    try {
      auto pl = try_plan(engine, p, a, staged);
      if (pl->workspace_bytes > limit) {
        error = pl->description + ": more than the " + std::to_string(limit) +
                " bytes workspace_size reported";
        continue;
      }
      if (!is_reference_impl(pl->pd)) return pl;
      if (!reference_plan) reference_plan = pl;
    } catch (const dnnl::error&) {
      error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no binary for this op tensor problem (last attempt: ") +
                         error + ")");
}

struct op_tensor_traits {
  using problem = tsrpOpTensorProblem;
  using args = tsrpOpTensorArgs;
  using plan = binary_plan;
  static constexpr const char* name = "op_tensor";

  static std::string check(const problem& p) {
    if (!binary_algorithm(p.op)) return "unknown op tensor op " + std::to_string(p.op);
    if (p.compute_type != TSRP_DATA_FLOAT)
      return std::string("compute type ") + data_type_name(p.compute_type) +
             ": oneDNN's binary computes in f32 (use compute type float)";
    const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.a, "a"}, {&p.b, "b"}, {&p.c, "c"}};
    for (const auto& [t, tname] : tensors) {
      std::string reason = check_tensor(*t, tname);
      if (!reason.empty()) return reason;
    }
    if (!same_dims(p.a, p.c)) return "a and c have different dims";
    if (!is_unary(p.op)) {
      if (p.b.ndims != p.c.ndims) return "b and c have different numbers of dims";
      for (int i = 0; i < p.c.ndims; ++i)
        if (p.b.dims[i] != 1 && p.b.dims[i] != p.c.dims[i])
          return "b's dim " + std::to_string(i) + " is neither 1 nor c's";
    }
    return check_output_does_not_overlap(p.c, "c");
  }
  static bool empty(const problem& p) { return element_count(p.c) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(int64_t{p.op}).add(int64_t{p.compute_type}).add(int64_t{p.nan_propagation});
    k.add(p.a).add(p.c);
    if (!is_unary(p.op)) k.add(p.b);
    return k;
  }
  static void add_args(cache_key& k, const args& a) {
    k.add(double{a.alpha1}).add(double{a.alpha2}).add(double{a.beta});
  }
  static std::vector<args> shapes() {
    std::vector<args> out;
    for (float alpha1 : k_scale_classes)
      for (float alpha2 : k_scale_classes)
        for (float beta : k_sum_classes)
          out.push_back(args{sizeof(args), nullptr, nullptr, nullptr, alpha1, alpha2, beta});
    return out;
  }
  static std::string check_args(const problem& p, const args& a) {
    if (!a.a || !a.c || (!is_unary(p.op) && !a.b)) return "null a, b or c";
    return {};
  }
  static std::shared_ptr<plan> build(const dnnl::engine& e, const problem& p, const args& a) {
    return choose_plan(e, p, a, k_no_workspace_limit);
  }
  static std::shared_ptr<plan> build_within(const dnnl::engine& e, const problem& p, const args& a,
                                            size_t limit) {
    return choose_plan(e, p, a, limit);
  }
  static void instantiate(plan& pl) {
    pl.binary = dnnl::binary(pl.pd);
    for (auto* step : {&pl.a_in, &pl.b_in, &pl.c_out})
      if (*step) (*step)->instantiate();
  }
  static void execute(const plan& pl, context& ctx, const problem&, const args& a, void* ws) {
    dnnl::engine& engine = ctx.engine();
    dnnl::stream& stream = ctx.stream();
    void* scratchpad = workspace_at(ws, pl.scratchpad_offset);
    dnnl::memory ua(pl.user_a, engine, const_cast<void*>(a.a));  // inputs are only read
    dnnl::memory ub = pl.unary ? ua : dnnl::memory(pl.user_b, engine, const_cast<void*>(a.b));
    dnnl::memory uc(pl.user_c, engine, a.c);
    dnnl::memory src0 = ua, src1 = ub, dst = uc;
    if (pl.a_in) {
      src0 = dnnl::memory(pl.stage_a, engine, workspace_at(ws, pl.a_offset));
      pl.a_in->execute(stream, ua, src0, scratchpad);
    }
    if (pl.unary) {
      src1 = src0;
    } else if (pl.b_in) {
      src1 = dnnl::memory(pl.stage_b, engine, workspace_at(ws, pl.b_offset));
      pl.b_in->execute(stream, ub, src1, scratchpad);
    }
    if (pl.c_out) dst = dnnl::memory(pl.stage_c, engine, workspace_at(ws, pl.c_offset));
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}};
    const dnnl::memory::desc scalar({1}, dt::f32, {1});
    if (pl.scale0)
      args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC_0,
                   dnnl::memory(scalar, engine, const_cast<float*>(&pl.alpha1)));
    if (pl.scale1)
      args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC_1,
                   dnnl::memory(scalar, engine, const_cast<float*>(&pl.alpha2)));
    if (scratchpad_bytes(pl.pd) > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pl.pd.scratchpad_desc(), engine, scratchpad));
    pl.binary.execute(stream, args);
    if (pl.c_out) pl.c_out->execute(stream, dst, uc, scratchpad);
    stream.wait();
  }
};

const tsrpKernel g_op_tensor = tensor_op_kernel<op_tensor_traits>::make(
    TSRP_OP_OP_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN binary with alpha1/alpha2 as source scales and beta as a sum, in f32, rounded once to "
    "c's type; sqrt and not (1 - x) as eltwise post-ops. Types or layouts oneDNN's binary lacks "
    "(f16 without AVX512-FP16, s32) are converted through f32 buffers in the workspace. min/max "
    "do not guarantee NaN propagation.");

}  // namespace

const tsrpKernel& op_tensor_kernel() noexcept { return g_op_tensor; }

}  // namespace tessera::onednn
