// Kernel "matmul": C = epilogue(alpha * A @ B, bias, beta * C) on oneDNN's matmul primitive.
//
// The epilogue is one oneDNN post-op chain, so every value is f32 inside the primitive and C is
// rounded once:
//   alpha and bias, folded into the primitive: alpha as a runtime source scale (oneDNN 3.x
//          applies argument scales to the accumulator, before the bias) and the bias as the
//          primitive's bias argument; or, where an implementation takes no scales or not that
//          bias broadcast, both as post-ops: eltwise_linear(alpha), then binary_add(bias) (a
//          native bias would be added before the linear and so be scaled by alpha too);
//   act:   an eltwise post-op;
//   beta:  a sum post-op, after act (TSRP_MATMUL_BLEND_AFTER_ACTIVATION) or before it
//          (BLEND_BEFORE_ACTIVATION, cuBLASLt's order); left out for beta == 0, so C is never
//          read then.
//
// A plan is chosen among these layouts, the first that oneDNN implements with something other
// than its reference code (else the first implemented at all):
//   1. A, B and C at the user's strides (transposes and broadcast batch dims included);
//   2. A and B reordered into oneDNN's preferred layout in the workspace, C in place;
//   3. as 2, with C staged in a dense row-major buffer: when beta != 0 C is first copied in, the
//      whole chain runs there and the result is copied back (one code path for both orders);
//   4. (f16/bf16 only) as 3 (or 2 when C is f32) with A, B and the bias converted to f32. This is
//      how f16 runs on CPUs without AVX512-FP16;
//   5. with a bias, each of the above again with the bias expanded to C's full dims in the
//      workspace (for broadcasts the fast implementations do not take, e.g. [1, M, N] over
//      batches).
#include "onednn_eltwise_algorithm.hpp"
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_workspace.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using alg = dnnl::algorithm;

constexpr const char* kernel_name = "matmul";


bool known_activation(int32_t mode) {
  return mode >= TSRP_ACTIVATION_IDENTITY && mode <= TSRP_ACTIVATION_SWISH;
}

std::string dims_text(const tsrpTensor& t) {
  std::string s;
  for (int i = 0; i < t.ndims; ++i) s += (i ? "x" : "") + std::to_string(t.dims[i]);
  return s;
}

std::string check_problem(const tsrpMatmulProblem& p) {
  std::vector<std::pair<const tsrpTensor*, const char*>> tensors = {{&p.a, "a"}, {&p.b, "b"}, {&p.c, "c"}};
  if (p.has_bias) tensors.push_back({&p.bias, "bias"});
  for (const auto& [t, name] : tensors) {
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
  }
  const int n = p.c.ndims;
  if (n < 2 || p.a.ndims != n || p.b.ndims != n || (p.has_bias && p.bias.ndims != n))
    return "a, b, c (and bias) must have one rank of at least 2 (got " + std::to_string(p.a.ndims) +
           ", " + std::to_string(p.b.ndims) + ", " + std::to_string(n) + ")";
  if (p.a.dims[n - 1] != p.b.dims[n - 2] || p.c.dims[n - 2] != p.a.dims[n - 2] ||
      p.c.dims[n - 1] != p.b.dims[n - 1])
    return "a (" + dims_text(p.a) + ") @ b (" + dims_text(p.b) + ") does not give c (" +
           dims_text(p.c) + ")";
  for (int i = 0; i < n - 2; ++i)
    if ((p.a.dims[i] != 1 && p.a.dims[i] != p.c.dims[i]) ||
        (p.b.dims[i] != 1 && p.b.dims[i] != p.c.dims[i]))
      return "batch dim " + std::to_string(i) + " of a or b is neither 1 nor c's";
  if (p.has_bias)
    for (int i = 0; i < n; ++i)
      if (p.bias.dims[i] != 1 && p.bias.dims[i] != p.c.dims[i])
        return "bias (" + dims_text(p.bias) + ") does not broadcast to c (" + dims_text(p.c) + ")";
  const int32_t in = p.a.data_type;
  if (p.b.data_type != in)
    return std::string("a and b must have one data type (got ") + data_type_name(in) + " and " +
           data_type_name(p.b.data_type) + ")";
  const int32_t out = p.c.data_type;
  const bool types_ok =
      (in == TSRP_DATA_FLOAT && out == TSRP_DATA_FLOAT) ||
      ((in == TSRP_DATA_HALF || in == TSRP_DATA_BFLOAT16) && (out == in || out == TSRP_DATA_FLOAT)) ||
      (in == TSRP_DATA_INT8 && (out == TSRP_DATA_INT32 || out == TSRP_DATA_FLOAT));
  if (!types_ok)
    return std::string(data_type_name(in)) + " x " + data_type_name(in) + " -> " +
           data_type_name(out) + " is not a matmul the oneDNN plugin offers";
  const int32_t compute = in == TSRP_DATA_INT8 ? TSRP_DATA_INT32 : TSRP_DATA_FLOAT;
  if (p.compute_type != compute)
    return std::string("compute type ") + data_type_name(p.compute_type) + " for " +
           data_type_name(in) + " inputs: oneDNN accumulates in " + data_type_name(compute);
  if (p.has_bias && p.bias.data_type != out && p.bias.data_type != TSRP_DATA_FLOAT)
    return std::string("bias of type ") + data_type_name(p.bias.data_type) + " (expected c's " +
           data_type_name(out) + " or f32)";
  if (!known_activation(p.activation_mode))
    return "unknown activation mode " + std::to_string(p.activation_mode);
  if (p.epilogue_order != TSRP_MATMUL_BLEND_AFTER_ACTIVATION &&
      p.epilogue_order != TSRP_MATMUL_BLEND_BEFORE_ACTIVATION)
    return "unknown epilogue order " + std::to_string(p.epilogue_order);
  return {};
}

cache_key problem_key(const tsrpMatmulProblem& p) {
  cache_key key(kernel_name);
  key.add(p.a).add(p.b).add(p.c).add(int64_t{p.has_bias});
  if (p.has_bias) key.add(p.bias);
  key.add(int64_t{p.compute_type}).add(int64_t{p.activation_mode}).add(p.activation_coef);
  key.add(int64_t{p.epilogue_order});
  return key;
}

// Row-major packed strides: what a staged C is, so that oneDNN writes it on its fast path.
dnnl::memory::desc row_major_desc(const tsrpTensor& t, dt data_type) {
  dnnl::memory::dims dims(t.dims, t.dims + t.ndims), strides(static_cast<size_t>(t.ndims));
  int64_t running = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = running;
    running *= std::max<int64_t>(t.dims[i], 1);
  }
  return dnnl::memory::desc(dims, data_type, strides);
}

struct matmul_plan final : cached_entry {
  dnnl::memory::desc user_a, user_b, user_bias, user_c;
  dnnl::matmul::primitive_desc matmul_pd;
  dnnl::matmul matmul;
  bool has_bias = false;
  bool bias_staged = false;     // converted to f32 (staged_bias) in the workspace
  bool bias_as_binary = false;  // bias is the binary_add post-op at index binary_index
  int binary_index = 0;
  bool alpha_as_scale = false;
  float alpha = 1.0f;
  // Present when that tensor is staged through the workspace.
  std::optional<reorder_step> a_in, b_in, bias_in, c_in, c_out;
  dnnl::memory::desc staged_bias, staged_c;
  size_t a_offset = 0, b_offset = 0, bias_offset = 0, c_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;
};

struct candidate {
  bool exact_ab;     // A and B read in place
  bool exact_c;      // C written in place
  dt compute;        // type of the primitive's A and B
  bool expand_bias;  // the bias copied out to C's full dims (see try_candidate)
};

// Throws dnnl::error when oneDNN does not implement the candidate.
std::shared_ptr<matmul_plan> try_candidate(const dnnl::engine& engine, const tsrpMatmulProblem& p,
                                           const candidate& c, bool fold_into_primitive,
                                           float alpha, float beta) {
  auto plan = std::make_shared<matmul_plan>();
  const dt io = *to_dnnl_data_type(p.a.data_type);
  const bool widened = c.compute != io;  // the f32 fallback of f16/bf16
  plan->user_a = make_memory_desc(p.a);
  plan->user_b = make_memory_desc(p.b);
  plan->user_c = make_memory_desc(p.c);
  plan->has_bias = p.has_bias != 0;
  const auto a_md = c.exact_ab ? plan->user_a : make_any_desc(p.a, c.compute);
  const auto b_md = c.exact_ab ? plan->user_b : make_any_desc(p.b, c.compute);
  const dt c_stage_type = widened ? dt::f32 : *to_dnnl_data_type(p.c.data_type);
  plan->staged_c = row_major_desc(p.c, c_stage_type);
  const auto c_md = c.exact_c ? plan->user_c : plan->staged_c;
  dnnl::memory::desc bias_md;
  if (plan->has_bias && c.expand_bias) {
    // oneDNN's fast matmuls broadcast a bias only in some ways (not e.g. a [1, M, N] bias over
    // batches, an attention mask's shape). Seen through zero strides, the user's bias is a
    // tensor of C's dims, which one reorder copies into a full bias in the workspace.
    tsrpTensor view = p.bias;
    for (int i = 0; i < view.ndims; ++i) {
      if (view.dims[i] == 1 && p.c.dims[i] != 1) view.strides[i] = 0;
      view.dims[i] = p.c.dims[i];
    }
    plan->user_bias = make_memory_desc(view);
    plan->bias_staged = true;
    plan->staged_bias = row_major_desc(view, widened ? dt::f32 : *to_dnnl_data_type(p.bias.data_type));
    bias_md = plan->staged_bias;
  } else if (plan->has_bias) {
    plan->user_bias = make_memory_desc(p.bias);
    // The f32 fallback takes an f32 bias: a narrower one is converted with A and B.
    plan->bias_staged = widened && p.bias.data_type != TSRP_DATA_FLOAT;
    if (plan->bias_staged) plan->staged_bias = make_dense_desc_like(p.bias, dt::f32);
    bias_md = plan->bias_staged ? plan->staged_bias : plan->user_bias;
  }

  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  plan->alpha = alpha;
  if (fold_into_primitive) {
    // alpha as the primitive's source scale, the bias as its bias argument.
    if (alpha != 1.0f) {
      attr.set_scales_mask(DNNL_ARG_SRC, 0);  // one runtime scale for the whole of A
      plan->alpha_as_scale = true;
    }
  } else {
    // Both as post-ops: some implementations take no scales, or only some bias broadcasts
    // (e.g. no per-row [M, 1] bias) while their binary post-ops take every broadcast.
    if (alpha != 1.0f) ops.append_eltwise(alg::eltwise_linear, alpha, 0.0f);
    if (plan->has_bias) {
      plan->bias_as_binary = true;
      plan->binary_index = ops.len();
      ops.append_binary(alg::binary_add, bias_md);
    }
  }
  const std::optional<eltwise_op> act = eltwise_post_op_for(p.activation_mode, p.activation_coef);
  const bool blend_first = p.epilogue_order == TSRP_MATMUL_BLEND_BEFORE_ACTIVATION;
  if (beta != 0.0f && blend_first) ops.append_sum(beta);
  if (act) ops.append_eltwise(act->algorithm, act->alg_alpha, act->alg_beta);
  if (beta != 0.0f && !blend_first) ops.append_sum(beta);
  attr.set_post_ops(ops);

  if (plan->has_bias && !plan->bias_as_binary)
    plan->matmul_pd = dnnl::matmul::primitive_desc(engine, a_md, b_md, bias_md, c_md, attr);
  else
    plan->matmul_pd = dnnl::matmul::primitive_desc(engine, a_md, b_md, c_md, attr);

  // oneDNN may describe a C (or bias) it was given in place with other strides on its size-1
  // dims (seen for C 2x1x6 with strides 6,1,1); executing with the user's own descriptor is then
  // refused with invalid_arguments after can_implement said yes (the fuzzer found it). Such a
  // candidate does not take C in place: a later one stages C through the workspace.
  if (c.exact_c && plan->matmul_pd.dst_desc() != plan->user_c)
    throw dnnl::error(dnnl_unimplemented, "oneDNN describes C otherwise than given");
  if (plan->has_bias && !plan->bias_as_binary && !plan->bias_staged &&
      plan->matmul_pd.bias_desc() != plan->user_bias)
    throw dnnl::error(dnnl_unimplemented, "oneDNN describes the bias otherwise than given");

  workspace_layout layout;
  size_t scratchpad = scratchpad_bytes(plan->matmul_pd);
  const auto stage_in = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& chosen,
                            std::optional<reorder_step>& step, size_t& offset) {
    if (user == chosen) return;  // oneDNN took the user's own layout: read it in place
    step = make_reorder_step(engine, user, chosen, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(chosen.get_size());
  };
  stage_in(plan->user_a, plan->matmul_pd.src_desc(), plan->a_in, plan->a_offset);
  stage_in(plan->user_b, plan->matmul_pd.weights_desc(), plan->b_in, plan->b_offset);
  if (plan->bias_staged) stage_in(plan->user_bias, plan->staged_bias, plan->bias_in, plan->bias_offset);
  if (!c.exact_c) {
    plan->c_offset = layout.reserve(plan->staged_c.get_size());
    if (beta != 0.0f) {
      plan->c_in = make_reorder_step(engine, plan->user_c, plan->staged_c, 1.0f, 0.0f);
      scratchpad = std::max(scratchpad, scratchpad_bytes(plan->c_in->pd));
    }
    plan->c_out = make_reorder_step(engine, plan->staged_c, plan->user_c, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->c_out->pd));
  }
  // Steps run one after another, so they share one scratchpad region.
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  const auto type_name = [](dt t) {
    return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : t == dt::f16 ? "f16" : "s8";
  };
  plan->description = std::string("matmul=") + plan->matmul_pd.impl_info_str() + " (data " +
                      data_type_name(p.a.data_type) + "->" + data_type_name(p.c.data_type) +
                      ", compute " + type_name(c.compute) +
                      (c.exact_ab && c.exact_c ? ", user layouts" : "") +
                      (plan->alpha_as_scale ? ", alpha as scale" : "") +
                      (plan->bias_as_binary ? ", bias as binary post-op" : "") +
                      (c.expand_bias ? ", bias expanded" : "") + ")";
  if (plan->a_in) plan->description += std::string(" a_reorder=") + plan->a_in->pd.impl_info_str();
  if (plan->b_in) plan->description += std::string(" b_reorder=") + plan->b_in->pd.impl_info_str();
  if (plan->bias_in) plan->description += std::string(" bias_reorder=") + plan->bias_in->pd.impl_info_str();
  if (plan->c_out) plan->description += std::string(" c_reorder=") + plan->c_out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

// Primitive descriptors only (cheap); primitives are created by instantiate().
std::shared_ptr<matmul_plan> choose_plan(const dnnl::engine& engine, const tsrpMatmulProblem& p,
                                         float alpha, float beta) {
  const dt io = *to_dnnl_data_type(p.a.data_type);
  std::vector<candidate> candidates = {
      {true, true, io, false}, {false, true, io, false}, {false, false, io, false}};
  if (io == dt::f16 || io == dt::bf16) {
    if (p.c.data_type == TSRP_DATA_FLOAT) candidates.push_back({false, true, dt::f32, false});
    candidates.push_back({false, false, dt::f32, false});
  }
  // Last resort before oneDNN's reference code: the same layouts with the bias expanded.
  if (p.has_bias)
    for (size_t i = 0, n = candidates.size(); i < n; ++i) {
      candidate expanded = candidates[i];
      expanded.expand_bias = true;
      candidates.push_back(expanded);
    }
  std::shared_ptr<matmul_plan> reference_plan;
  std::string last_error;
  for (const candidate& c : candidates)
    for (bool fold_into_primitive : {true, false}) {
      // Neither alpha nor a bias: the two are the same plan.
      if (!fold_into_primitive && alpha == 1.0f && !p.has_bias) continue;
      try {
        auto plan = try_candidate(engine, p, c, fold_into_primitive, alpha, beta);
        if (!is_reference_impl(plan->matmul_pd)) return plan;
        if (!reference_plan) reference_plan = plan;
      } catch (const dnnl::error&) {
        last_error = current_exception_text();
      }
    }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(p.a.data_type) + " -> " +
                         data_type_name(p.c.data_type) + " matmul for this problem (last attempt: " +
                         last_error + ")");
}

void instantiate(matmul_plan& plan) {
  annotate("oneDNN matmul primitive creation", [&] {
    plan.matmul = dnnl::matmul(plan.matmul_pd);
    for (auto* step : {&plan.a_in, &plan.b_in, &plan.bias_in, &plan.c_in, &plan.c_out})
      if (*step) (*step)->instantiate();
  });
}

// What can_implement and workspace_size answer: independent of alpha/beta, so the workspace is
// the largest over the four alpha/beta shapes (alpha == 1 or not, beta == 0 or not).
struct matmul_query final : cached_entry {
  std::string reason;  // empty: implementable
  size_t workspace_bytes = 0;
};

std::shared_ptr<const matmul_query> query(const tsrpMatmulProblem& p) {
  static shared_cache answers;
  return answers.get_or_create<matmul_query>(problem_key(p).str(), [&] {
    auto q = std::make_shared<matmul_query>();
    q->reason = check_problem(p);
    if (!q->reason.empty()) return q;
    const std::pair<float, float> shapes[] = {{1.0f, 0.0f}, {2.0f, 0.0f}, {1.0f, 1.0f}, {2.0f, 1.0f}};
    for (const auto& [alpha, beta] : shapes) {
      try {
        q->workspace_bytes =
            std::max(q->workspace_bytes, choose_plan(query_engine(), p, alpha, beta)->workspace_bytes);
      } catch (const plugin_error& e) {
        if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
        q->reason = e.what();
        return q;
      }
    }
    return q;
  });
}

int can_implement(void* /*user_data*/, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpMatmulProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated matmul problem");
      return 0;
    }
    auto q = query(p);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN matmul query", reason, reason_size);
    return 0;
  }
}

tsrpStatus_t workspace_size(void* /*user_data*/, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN matmul workspace query", message, sizeof message, [&] {
    tsrpMatmulProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("matmul workspace_size: null argument");
    auto q = query(p);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

void execute(const matmul_plan& plan, context& ctx, const tsrpMatmulArgs& a, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  // oneDNN memories take void*; A, B and the bias are only read.
  dnnl::memory ma(plan.user_a, engine, const_cast<void*>(a.a));
  dnnl::memory mb(plan.user_b, engine, const_cast<void*>(a.b));
  dnnl::memory mc(plan.user_c, engine, a.c);
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);

  dnnl::memory src = ma, weights = mb, dst = mc, bias;
  if (plan.a_in) {
    src = dnnl::memory(plan.matmul_pd.src_desc(), engine, workspace_at(workspace, plan.a_offset));
    plan.a_in->execute(stream, ma, src, scratchpad);
  }
  if (plan.b_in) {
    weights = dnnl::memory(plan.matmul_pd.weights_desc(), engine, workspace_at(workspace, plan.b_offset));
    plan.b_in->execute(stream, mb, weights, scratchpad);
  }
  if (plan.has_bias) {
    bias = dnnl::memory(plan.user_bias, engine, const_cast<void*>(a.bias));
    if (plan.bias_in) {
      dnnl::memory staged(plan.staged_bias, engine, workspace_at(workspace, plan.bias_offset));
      plan.bias_in->execute(stream, bias, staged, scratchpad);
      bias = staged;
    }
  }
  if (plan.c_out) {
    dst = dnnl::memory(plan.staged_c, engine, workspace_at(workspace, plan.c_offset));
    if (plan.c_in) plan.c_in->execute(stream, mc, dst, scratchpad);
  }

  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (plan.has_bias) {
    const int slot = plan.bias_as_binary
                         ? (DNNL_ARG_ATTR_MULTIPLE_POST_OP(plan.binary_index) | DNNL_ARG_SRC_1)
                         : DNNL_ARG_BIAS;
    args.emplace(slot, bias);
  }
  if (plan.alpha_as_scale)
    args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC,
                 dnnl::memory({{1}, dt::f32, {1}}, engine, const_cast<float*>(&plan.alpha)));
  if (scratchpad_bytes(plan.matmul_pd) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.matmul_pd.scratchpad_desc(), engine, scratchpad));
  plan.matmul.execute(stream, args);
  if (plan.c_out) plan.c_out->execute(stream, dst, mc, scratchpad);
  stream.wait();
}

tsrpStatus_t run(void* /*user_data*/, void* handle, const void* problem, const void* args,
                 void* workspace, size_t workspace_bytes, char* message, size_t message_size) {
  return guard("oneDNN matmul", message, message_size, [&] {
    tsrpMatmulProblem p;
    tsrpMatmulArgs a;
    if (handle == nullptr) throw_bad_param("matmul: null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param("matmul: null or truncated problem or arguments");
    std::string reason = check_problem(p);
    if (!reason.empty()) throw_not_supported("matmul cannot run this problem: " + reason);
    if (a.a == nullptr || a.b == nullptr || a.c == nullptr || (p.has_bias && a.bias == nullptr))
      throw_bad_param("matmul: null a, b, c or bias");

    context& ctx = as_context(handle);
    cache_key key = problem_key(p);
    key.add(double{a.alpha}).add(double{a.beta});
    auto plan = ctx.cache().get_or_create<matmul_plan>(key.str(), [&] {
      auto made = choose_plan(ctx.engine(), p, a.alpha, a.beta);
      instantiate(*made);
      log_message(TSRP_LOG_DEBUG, std::string("matmul plan: ") + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param("matmul needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN matmul execution", [&] { execute(*plan, ctx, a, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

const tsrpKernel g_kernel = {
    sizeof(tsrpKernel),
    kernel_name,
    TSRP_OP_MATMUL,
    TSRP_KERNEL_DETERMINISTIC,  // oneDNN matmul: fixed order per machine and thread count
    "oneDNN matmul with a fused epilogue (alpha, bias, activation, beta as post-ops). Accumulates "
    "in f32 (s32 for s8 inputs); the epilogue runs in f32 and C is rounded once (s32: nearest "
    "even, saturated). Layouts no fast oneDNN implementation takes directly are reordered "
    "through the workspace. fp16: where oneDNN has no f16 matmul (CPUs without AVX512-FP16), "
    "A and B are converted to f32 in the workspace. Deterministic for a given machine and "
    "thread count.",
    nullptr,
    can_implement,
    workspace_size,
    run, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& matmul_kernel() noexcept { return g_kernel; }

}  // namespace tessera::onednn
