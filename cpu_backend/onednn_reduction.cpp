// Kernel "reduce_tensor": c = alpha * reduce(a) + beta * c on oneDNN's reduction primitive, plus
// the indices of the chosen elements for min/max/amax.
//
// The reduction always writes a dense f32 buffer in the workspace (laid out like c), and one
// reorder writes c with alpha as its scale and beta as its sum (left out for beta == 0, so c is
// not read then): the reduction primitive's own post-ops would need a separate plan per
// alpha/beta shape for the same result. a is read in place when oneDNN reduces it as laid out;
// else (f16 on CPUs without AVX512-FP16, s32, amax) it is first converted into a dense f32
// buffer. amax is max(|a|): an eltwise_abs in place on that buffer, then reduction_max.
// norm1 is norm_lp_sum with p = 1 and norm2 with p = 2 (eps 0). When no dim is reduced the
// reduction is the identity (or |a| for amax, norm1 and norm2) and no primitive is created.
//
// Indices: oneDNN's reduction has none, so the plugin computes them itself after the primitive
// ran, in a plain loop over a in its own type (exact for every type): for each element of c,
// the first position (row-major over the reduced dims) holding the minimum, maximum or largest
// magnitude. NaN is skipped unless nan_propagation asks for it (then the first NaN wins).
#include "host_element_access.hpp"
#include "onednn_kernels.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_tensor_op_kernel.hpp"
#include "onednn_workspace.hpp"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using alg = dnnl::algorithm;

struct reduce_op {
  alg algorithm;
  float p;          // norm_lp's p
  bool abs_first;   // amax: |a| before the reduction
};

std::optional<reduce_op> reduce_op_for(int32_t op) {
  switch (op) {
    case TSRP_REDUCE_TENSOR_ADD: return reduce_op{alg::reduction_sum, 0.0f, false};
    case TSRP_REDUCE_TENSOR_MUL: return reduce_op{alg::reduction_mul, 0.0f, false};
    case TSRP_REDUCE_TENSOR_MIN: return reduce_op{alg::reduction_min, 0.0f, false};
    case TSRP_REDUCE_TENSOR_MAX: return reduce_op{alg::reduction_max, 0.0f, false};
    case TSRP_REDUCE_TENSOR_AMAX: return reduce_op{alg::reduction_max, 0.0f, true};
    case TSRP_REDUCE_TENSOR_AVG: return reduce_op{alg::reduction_mean, 0.0f, false};
    case TSRP_REDUCE_TENSOR_NORM1: return reduce_op{alg::reduction_norm_lp_sum, 1.0f, false};
    case TSRP_REDUCE_TENSOR_NORM2: return reduce_op{alg::reduction_norm_lp_sum, 2.0f, false};
    default: return std::nullopt;
  }
}

bool reduces_something(const tsrpReduceTensorProblem& p) {
  for (int i = 0; i < p.a.ndims; ++i)
    if (p.a.dims[i] != p.c.dims[i]) return true;
  return false;
}

// With nothing reduced, these ops are |a| rather than a.
bool identity_is_abs(int32_t op) {
  return op == TSRP_REDUCE_TENSOR_AMAX || op == TSRP_REDUCE_TENSOR_NORM1 ||
         op == TSRP_REDUCE_TENSOR_NORM2;
}

struct reduce_plan final : tensor_op_plan {
  dnnl::memory::desc user_a, user_c, stage_a, stage_c;
  std::optional<reorder_step> a_in;  // user a -> stage_a
  bool has_abs = false;
  dnnl::eltwise_forward::primitive_desc abs_pd;
  dnnl::eltwise_forward abs;
  bool has_reduction = false;
  dnnl::reduction::primitive_desc reduction_pd;
  dnnl::reduction reduction;
  reorder_step out;  // result -> user c, alpha and beta
  size_t a_offset = 0, c_offset = 0, scratchpad_offset = 0;
};

// Throws dnnl::error when oneDNN does not implement it.
std::shared_ptr<reduce_plan> try_plan(const dnnl::engine& engine, const tsrpReduceTensorProblem& p,
                                      float alpha, float beta, bool staged) {
  const reduce_op op = *reduce_op_for(p.op);
  auto pl = std::make_shared<reduce_plan>();
  pl->user_a = make_memory_desc(p.a);
  pl->user_c = make_memory_desc(p.c);
  pl->has_reduction = reduces_something(p);
  pl->has_abs = pl->has_reduction ? op.abs_first : identity_is_abs(p.op);
  workspace_layout layout;
  size_t scratchpad = 0;
  dnnl::memory::desc src = pl->user_a;
  if (staged || pl->has_abs) {
    pl->stage_a = make_dense_desc_like(p.a, dt::f32);
    pl->a_in = make_reorder_step(engine, pl->user_a, pl->stage_a, 1.0f, 0.0f);
    pl->a_offset = layout.reserve(pl->stage_a.get_size());
    scratchpad = std::max(scratchpad, scratchpad_bytes(pl->a_in->pd));
    src = pl->stage_a;
  }
  if (pl->has_abs) {
    pl->abs_pd = dnnl::eltwise_forward::primitive_desc(engine, dnnl::prop_kind::forward_inference,
                                                       alg::eltwise_abs, src, src, 0.0f, 0.0f,
                                                       user_scratchpad_attr());
    scratchpad = std::max(scratchpad, scratchpad_bytes(pl->abs_pd));
  }
  dnnl::memory::desc result = src;
  if (pl->has_reduction) {
    pl->stage_c = make_dense_desc_like(p.c, dt::f32);
    pl->reduction_pd = dnnl::reduction::primitive_desc(engine, op.algorithm, src, pl->stage_c, op.p,
                                                       0.0f, user_scratchpad_attr());
    pl->c_offset = layout.reserve(pl->stage_c.get_size());
    scratchpad = std::max(scratchpad, scratchpad_bytes(pl->reduction_pd));
    result = pl->stage_c;
  }
  pl->out = make_reorder_step(engine, result, pl->user_c, alpha, beta);
  scratchpad = std::max(scratchpad, scratchpad_bytes(pl->out.pd));
  pl->scratchpad_offset = layout.reserve(scratchpad);
  pl->workspace_bytes = layout.required_bytes();

  pl->description = std::string(pl->a_in ? "a staged to f32" : "a in place") + " (" +
                    data_type_name(p.a.data_type) + "->" + data_type_name(p.c.data_type) + ")";
  if (pl->a_in) pl->description += std::string(" a_reorder=") + pl->a_in->pd.impl_info_str();
  if (pl->has_abs) pl->description += std::string(" abs=") + pl->abs_pd.impl_info_str();
  if (pl->has_reduction)
    pl->description += std::string(" reduction=") + pl->reduction_pd.impl_info_str();
  else
    pl->description += " (nothing reduced)";
  pl->description += std::string(" c_reorder=") + pl->out.pd.impl_info_str() +
                     " workspace=" + std::to_string(pl->workspace_bytes);
  return pl;
}

bool is_reference(const reduce_plan& pl) {
  return pl.has_reduction ? is_reference_impl(pl.reduction_pd) : is_reference_impl(pl.out.pd);
}

// Only plans of at most `limit` workspace bytes (the run passes what workspace_size reported, see
// k_scale_classes; the plan of the call's scalar class always fits).
std::shared_ptr<reduce_plan> choose_plan(const dnnl::engine& engine,
                                         const tsrpReduceTensorProblem& p, float alpha, float beta,
                                         size_t limit) {
  std::shared_ptr<reduce_plan> reference_plan;
  std::string error;
  for (bool staged : {false, true}) {
    try {
      auto pl = try_plan(engine, p, alpha, beta, staged);
      if (pl->workspace_bytes > limit) {
        error = pl->description + ": more than the " + std::to_string(limit) +
                " bytes workspace_size reported";
        continue;
      }
      if (!is_reference(*pl)) return pl;
      if (!reference_plan) reference_plan = pl;
    } catch (const dnnl::error&) {
      error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no reduction for this problem (last attempt: ") + error + ")");
}

// ---- indices ------------------------------------------------------------------------------

// Walks c's elements in row-major order and, for each, its slice of a.
void compute_indices(const tsrpReduceTensorProblem& p, const void* a, uint32_t* indices) {
  const int nd = p.a.ndims;
  std::vector<int> reduced;  // dims of a that are reduced, outermost first
  for (int i = 0; i < nd; ++i)
    if (p.c.dims[i] == 1 && p.a.dims[i] != 1) reduced.push_back(i);
  const bool propagate = p.nan_propagation == TSRP_PROPAGATE_NAN;
  int64_t c_index[TSRP_MAX_DIMS] = {};
  int64_t out = 0;
  while (true) {
    // Position of this slice's first element in a.
    int64_t base = 0;
    for (int i = 0; i < nd; ++i) base += c_index[i] * p.a.strides[i];
    int64_t r_index[TSRP_MAX_DIMS] = {};
    int64_t position = 0, best_position = 0;
    double best = 0.0;
    bool have = false;
    while (true) {
      int64_t offset = base;
      for (size_t k = 0; k < reduced.size(); ++k) offset += r_index[k] * p.a.strides[reduced[k]];
      double v = load_element(a, p.a.data_type, offset);
      if (p.op == TSRP_REDUCE_TENSOR_AMAX) v = std::fabs(v);
      if (std::isnan(v)) {
        if (propagate) {
          best_position = position;
          break;  // the first NaN is the answer
        }
      } else if (!have || (p.op == TSRP_REDUCE_TENSOR_MIN ? v < best : v > best)) {
        best = v;
        best_position = position;
        have = true;
      }
      ++position;
      int k = static_cast<int>(reduced.size()) - 1;
      for (; k >= 0; --k) {
        if (++r_index[k] < p.a.dims[reduced[k]]) break;
        r_index[k] = 0;
      }
      if (k < 0) break;
    }
    indices[out++] = static_cast<uint32_t>(best_position);
    int d = nd - 1;
    for (; d >= 0; --d) {
      if (++c_index[d] < p.c.dims[d]) break;
      c_index[d] = 0;
    }
    if (d < 0) break;
  }
}

bool wants_indices(const tsrpReduceTensorProblem& p) {
  return p.indices == TSRP_REDUCE_TENSOR_FLATTENED_INDICES;
}

struct reduce_traits {
  using problem = tsrpReduceTensorProblem;
  using args = tsrpReduceTensorArgs;
  using plan = reduce_plan;
  static constexpr const char* name = "reduce_tensor";

  static std::string check(const problem& p) {
    if (!reduce_op_for(p.op)) return "unknown reduce op " + std::to_string(p.op);
    if (p.compute_type != TSRP_DATA_FLOAT)
      return std::string("compute type ") + data_type_name(p.compute_type) +
             ": oneDNN's reduction accumulates in f32 (use compute type float)";
    if (p.indices != TSRP_REDUCE_TENSOR_NO_INDICES && p.indices != TSRP_REDUCE_TENSOR_FLATTENED_INDICES)
      return "unknown indices mode " + std::to_string(p.indices);
    if (wants_indices(p)) {
      if (p.op != TSRP_REDUCE_TENSOR_MIN && p.op != TSRP_REDUCE_TENSOR_MAX && p.op != TSRP_REDUCE_TENSOR_AMAX)
        return "indices are only defined for min, max and amax";
      if (p.indices_type != TSRP_32BIT_INDICES) return "only 32-bit indices are supported";
    }
    std::string reason = check_tensor(p.a, "a");
    if (reason.empty()) reason = check_tensor(p.c, "c");
    if (!reason.empty()) return reason;
    if (p.a.ndims != p.c.ndims) return "a and c have different numbers of dims";
    for (int i = 0; i < p.a.ndims; ++i)
      if (p.c.dims[i] != 1 && p.c.dims[i] != p.a.dims[i])
        return "c's dim " + std::to_string(i) + " is neither 1 nor a's";
    if (element_count(p.c) > 0 && element_count(p.a) == 0) return "a is empty while c is not";
    return check_output_does_not_overlap(p.c, "c");
  }
  static bool empty(const problem& p) { return element_count(p.c) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(int64_t{p.op}).add(int64_t{p.compute_type}).add(p.a).add(p.c);
    // The indices mode and type change only the plugin's own loop, not the plan, but check()
    // judges them, and the workspace query caches check()'s answer under this key: without them
    // an answer for a problem without indices was given to one asking for indices of a sum.
    // (NaN mode: neither.)
    k.add(int64_t{p.indices}).add(int64_t{p.indices_type});
    return k;
  }
  static void add_args(cache_key& k, const args& a) { k.add(double{a.alpha}).add(double{a.beta}); }
  static std::vector<args> shapes() {
    std::vector<args> out;
    for (float alpha : k_scale_classes)
      for (float beta : k_sum_classes) out.push_back(args{sizeof(args), nullptr, nullptr, nullptr, 0, alpha, beta});
    return out;
  }
  static std::string check_args(const problem& p, const args& a) {
    if (!a.a || !a.c) return "null a or c";
    if (wants_indices(p)) {
      if (!a.indices) return "null indices";
      if (a.indices_size < static_cast<size_t>(element_count(p.c)) * sizeof(uint32_t))
        return "indices_size " + std::to_string(a.indices_size) + " is below 4 bytes per element of c";
    }
    return {};
  }
  static std::shared_ptr<plan> build(const dnnl::engine& e, const problem& p, const args& a) {
    return choose_plan(e, p, a.alpha, a.beta, k_no_workspace_limit);
  }
  static std::shared_ptr<plan> build_within(const dnnl::engine& e, const problem& p, const args& a,
                                            size_t limit) {
    return choose_plan(e, p, a.alpha, a.beta, limit);
  }
  static void instantiate(plan& pl) {
    if (pl.a_in) pl.a_in->instantiate();
    if (pl.has_abs) pl.abs = dnnl::eltwise_forward(pl.abs_pd);
    if (pl.has_reduction) pl.reduction = dnnl::reduction(pl.reduction_pd);
    pl.out.instantiate();
  }
  static void execute(const plan& pl, context& ctx, const problem& p, const args& a, void* ws) {
    dnnl::engine& engine = ctx.engine();
    dnnl::stream& stream = ctx.stream();
    void* scratchpad = workspace_at(ws, pl.scratchpad_offset);
    const auto scratch_arg = [&](const dnnl::primitive_desc_base& pd,
                                 std::unordered_map<int, dnnl::memory>& args) {
      if (scratchpad_bytes(pd) > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine, scratchpad));
    };
    dnnl::memory ua(pl.user_a, engine, const_cast<void*>(a.a));  // only read
    dnnl::memory uc(pl.user_c, engine, a.c);
    dnnl::memory src = ua;
    if (pl.a_in) {
      src = dnnl::memory(pl.stage_a, engine, workspace_at(ws, pl.a_offset));
      pl.a_in->execute(stream, ua, src, scratchpad);
    }
    if (pl.has_abs) {
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, src}};
      scratch_arg(pl.abs_pd, args);
      pl.abs.execute(stream, args);
    }
    dnnl::memory result = src;
    if (pl.has_reduction) {
      result = dnnl::memory(pl.stage_c, engine, workspace_at(ws, pl.c_offset));
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, result}};
      scratch_arg(pl.reduction_pd, args);
      pl.reduction.execute(stream, args);
    }
    pl.out.execute(stream, result, uc, scratchpad);
    stream.wait();
    if (wants_indices(p)) compute_indices(p, a.a, static_cast<uint32_t*>(a.indices));
  }
};

const tsrpKernel g_reduce = tensor_op_kernel<reduce_traits>::make(
    TSRP_OP_REDUCE_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN reduction accumulating in f32 into a workspace buffer; alpha/beta applied by one "
    "reorder to c, rounded once. amax = abs eltwise then max; norm1/norm2 = norm_lp_sum p=1/2. "
    "Indices (min/max/amax) computed by the plugin in a plain loop, first index on ties, NaN "
    "skipped unless propagated. Summation order is oneDNN's (fixed per machine and threads).");

}  // namespace

const tsrpKernel& reduce_tensor_kernel() noexcept { return g_reduce; }

}  // namespace tessera::onednn
