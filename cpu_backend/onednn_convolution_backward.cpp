// Kernels "conv_bwd_data" (dx = alpha * conv_bwd_data(w, dy) + beta * dx), "conv_bwd_filter"
// (dw = alpha * conv_bwd_weights(x, dy) + beta * dw) and "conv_bwd_bias"
// (db = alpha * sum(dy over n and space) + beta * db).
//
// Data and filter share one plan shape: two inputs and one output of a oneDNN backward
// convolution, which needs a forward primitive_desc as its hint. oneDNN's backward primitives
// take no post-ops, so alpha/beta are applied by a final reorder from a staged output (in f32,
// one rounding to the output's type); with alpha == 1 and beta == 0 the output may be written in
// place. Candidates, first one oneDNN implements with something other than its reference code:
//   1. inputs in the user's layouts, output in place (alpha 1, beta 0) or staged;
//   2. inputs in oneDNN's preferred layouts (reordered into the workspace), output likewise;
//   3. (f16/bf16) everything in f32: how f16 runs on CPUs without AVX512-FP16.
// Bias is a oneDNN reduction (sum) of dy to 1,K,1,..., staged the same way.
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_convolution_shared.hpp"
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

const char* type_name(dt t) {
  return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : t == dt::f16 ? "f16" : "other";
}

// ---- data and filter ------------------------------------------------------------------------

enum class direction { data, filter };

const char* name_of(direction d) { return d == direction::data ? "conv_bwd_data" : "conv_bwd_filter"; }

std::string check_problem(const tsrpConvolutionProblem& p) {
  std::string reason = check_convolution_geometry(p);
  if (!reason.empty()) return reason;
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "dy"}};
  for (const auto& [t, name] : tensors)
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": oneDNN backward convolutions support f32, f16 and bf16";
  if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type)
    return std::string("all tensors must have one data type (got ") + data_type_name(p.x.data_type) +
           ", " + data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
  if (p.compute_type != TSRP_DATA_FLOAT)
    return std::string("compute type ") + data_type_name(p.compute_type) +
           ": oneDNN convolutions accumulate in f32 (use compute type float)";
  if (p.output_scale_count != 0) return "output scales are for the int8 forward convolution only";
  return {};
}

cache_key problem_key(direction d, const tsrpConvolutionProblem& p) {
  cache_key key(name_of(d));
  add_convolution_key(key, p);
  return key;
}

// Roles: in0 is w (data) or x (filter), in1 is dy, out is dx (data) or dw (filter).
struct bwd_plan final : cached_entry {
  dnnl::memory::desc user_in0, user_in1, user_out;
  dnnl::primitive_desc pd;  // convolution_backward_data or _weights
  dnnl::primitive primitive;
  int arg_in0 = 0, arg_out = 0;
  std::optional<reorder_step> in0_step, in1_step, out_step;
  size_t in0_offset = 0, in1_offset = 0, out_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;
  dnnl::memory::desc in0_desc() const {
    return arg_in0 == DNNL_ARG_WEIGHTS ? pd.weights_desc() : pd.src_desc();
  }
  dnnl::memory::desc out_desc() const {
    return arg_out == DNNL_ARG_DIFF_SRC ? pd.diff_src_desc() : pd.diff_weights_desc();
  }
};

struct candidate {
  bool exact_inputs;  // inputs read in place
  dt input_type;
  bool exact_output;  // output written in place (only with alpha 1, beta 0)
  dt output_type;     // of a staged output
};

std::shared_ptr<bwd_plan> try_candidate(direction d, const dnnl::engine& engine,
                                        const tsrpConvolutionProblem& p, const candidate& c,
                                        float alpha, float beta) {
  auto plan = std::make_shared<bwd_plan>();
  const auto user_x = make_memory_desc(p.x);
  const auto user_w = make_weights_desc(p.w, p.groups);
  const auto user_dy = make_memory_desc(p.y);
  const auto any_x = [&](dt t) { return make_any_desc(p.x, t); };
  const auto any_w = [&](dt t) { return make_weights_any_desc(p.w, p.groups, t); };
  const auto any_dy = make_any_desc(p.y, c.input_type);
  const auto dy_md = c.exact_inputs ? user_dy : any_dy;
  const convolution_geometry g = make_convolution_geometry(p);
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  const auto alg = dnnl::algorithm::convolution_direct;
  plan->user_in1 = user_dy;
  if (d == direction::data) {
    plan->user_in0 = user_w;
    plan->user_out = user_x;
    plan->arg_in0 = DNNL_ARG_WEIGHTS;
    plan->arg_out = DNNL_ARG_DIFF_SRC;
    const auto w_md = c.exact_inputs ? user_w : any_w(c.input_type);
    const auto dx_md = c.exact_output ? user_x : any_x(c.output_type);
    const auto hint = dnnl::convolution_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_training, alg, dx_md, w_md, dy_md, g.strides, g.dilation,
        g.pad_l, g.pad_r);
    plan->pd = dnnl::convolution_backward_data::primitive_desc(
        engine, alg, dx_md, w_md, dy_md, g.strides, g.dilation, g.pad_l, g.pad_r, hint, attr);
  } else {
    plan->user_in0 = user_x;
    plan->user_out = user_w;
    plan->arg_in0 = DNNL_ARG_SRC;
    plan->arg_out = DNNL_ARG_DIFF_WEIGHTS;
    const auto x_md = c.exact_inputs ? user_x : any_x(c.input_type);
    const auto dw_md = c.exact_output ? user_w : any_w(c.output_type);
    const auto hint = dnnl::convolution_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_training, alg, x_md, dw_md, dy_md, g.strides, g.dilation,
        g.pad_l, g.pad_r);
    plan->pd = dnnl::convolution_backward_weights::primitive_desc(
        engine, alg, x_md, dw_md, dy_md, g.strides, g.dilation, g.pad_l, g.pad_r, hint, attr);
  }

  workspace_layout layout;
  size_t scratchpad = scratchpad_bytes(plan->pd);
  const auto stage_in = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& chosen,
                            std::optional<reorder_step>& step, size_t& offset) {
    if (user == chosen) return;
    step = make_reorder_step(engine, user, chosen, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(chosen.get_size());
  };
  stage_in(plan->user_in0, plan->in0_desc(), plan->in0_step, plan->in0_offset);
  stage_in(plan->user_in1, plan->pd.diff_dst_desc(), plan->in1_step, plan->in1_offset);
  if (!c.exact_output) {
    plan->out_step = make_reorder_step(engine, plan->out_desc(), plan->user_out, alpha, beta);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->out_step->pd));
    plan->out_offset = layout.reserve(plan->out_desc().get_size());
  }
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  plan->description = std::string(d == direction::data ? "bwd_data=" : "bwd_weights=") +
                      plan->pd.impl_info_str() + " (data " + data_type_name(p.x.data_type) +
                      ", inputs " + type_name(c.input_type) +
                      (c.exact_inputs ? " in user layouts" : "") + ", output " +
                      (c.exact_output ? "in place" : std::string("staged ") + type_name(c.output_type)) +
                      ")";
  if (plan->in0_step) plan->description += std::string(" in0_reorder=") + plan->in0_step->pd.impl_info_str();
  if (plan->in1_step) plan->description += std::string(" dy_reorder=") + plan->in1_step->pd.impl_info_str();
  if (plan->out_step) plan->description += std::string(" out_reorder=") + plan->out_step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<bwd_plan> choose_plan(direction d, const dnnl::engine& engine,
                                      const tsrpConvolutionProblem& p, float alpha, float beta) {
  const dt io = *to_dnnl_data_type(p.x.data_type);
  const bool in_place_ok = alpha == 1.0f && beta == 0.0f;
  // A staged output keeps f32 when alpha/beta still have to be applied: one rounding.
  const dt staged = in_place_ok ? io : dt::f32;
  std::vector<candidate> candidates;
  if (in_place_ok) candidates.push_back({true, io, true, io});
  candidates.push_back({true, io, false, staged});
  if (in_place_ok) candidates.push_back({false, io, true, io});
  candidates.push_back({false, io, false, staged});
  if (io != dt::f32) candidates.push_back({false, dt::f32, false, dt::f32});
  std::shared_ptr<bwd_plan> reference_plan;
  std::string last_error;
  for (const candidate& c : candidates) {
    try {
      auto plan = try_candidate(d, engine, p, c, alpha, beta);
      if (!is_reference_impl(plan->pd)) return plan;
      if (!reference_plan) reference_plan = plan;
    } catch (const dnnl::error&) {
      last_error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(p.x.data_type) + " " +
                         name_of(d) + " for this problem (last attempt: " + last_error + ")");
}

void instantiate(direction d, bwd_plan& plan) {
  annotate("oneDNN backward convolution primitive creation", [&] {
    if (d == direction::data)
      plan.primitive = dnnl::convolution_backward_data(
          dnnl::convolution_backward_data::primitive_desc(plan.pd.get()));
    else
      plan.primitive = dnnl::convolution_backward_weights(
          dnnl::convolution_backward_weights::primitive_desc(plan.pd.get()));
    for (auto* step : {&plan.in0_step, &plan.in1_step, &plan.out_step})
      if (*step) (*step)->instantiate();
  });
}

struct query_answer final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0;
};

// can_implement and workspace_size do not know alpha/beta: the workspace is the largest over
// the four alpha/beta shapes.
std::shared_ptr<const query_answer> query(direction d, const tsrpConvolutionProblem& p) {
  static shared_cache answers;
  return answers.get_or_create<query_answer>(problem_key(d, p).str(), [&] {
    auto q = std::make_shared<query_answer>();
    q->reason = check_problem(p);
    if (!q->reason.empty()) return q;
    const tsrpTensor& out = d == direction::data ? p.x : p.w;
    if (element_count(out) == 0) return q;
    const std::pair<float, float> shapes[] = {{1.0f, 0.0f}, {2.0f, 0.0f}, {1.0f, 1.0f}, {2.0f, 1.0f}};
    for (const auto& [alpha, beta] : shapes) {
      try {
        q->workspace_bytes = std::max(
            q->workspace_bytes, choose_plan(d, query_engine(), p, alpha, beta)->workspace_bytes);
      } catch (const plugin_error& e) {
        if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
        q->reason = e.what();
        return q;
      }
    }
    return q;
  });
}

template <direction D>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpConvolutionProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated convolution problem");
      return 0;
    }
    auto q = query(D, p);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN backward convolution query", reason, reason_size);
    return 0;
  }
}

template <direction D>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN backward convolution workspace query", message,
                                    sizeof message, [&] {
    tsrpConvolutionProblem p;
    if (bytes == nullptr || !read_struct(problem, p))
      throw_bad_param(std::string(name_of(D)) + " workspace_size: null argument");
    auto q = query(D, p);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

void execute(const bwd_plan& plan, context& ctx, const void* in0_ptr, const void* dy_ptr,
             void* out_ptr, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  dnnl::memory in0(plan.user_in0, engine, const_cast<void*>(in0_ptr));
  dnnl::memory dy(plan.user_in1, engine, const_cast<void*>(dy_ptr));
  dnnl::memory out(plan.user_out, engine, out_ptr);
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  dnnl::memory a = in0, b = dy, o = out;
  if (plan.in0_step) {
    a = dnnl::memory(plan.in0_desc(), engine, workspace_at(workspace, plan.in0_offset));
    plan.in0_step->execute(stream, in0, a, scratchpad);
  }
  if (plan.in1_step) {
    b = dnnl::memory(plan.pd.diff_dst_desc(), engine, workspace_at(workspace, plan.in1_offset));
    plan.in1_step->execute(stream, dy, b, scratchpad);
  }
  if (plan.out_step) o = dnnl::memory(plan.out_desc(), engine, workspace_at(workspace, plan.out_offset));
  std::unordered_map<int, dnnl::memory> args{
      {plan.arg_in0, a}, {DNNL_ARG_DIFF_DST, b}, {plan.arg_out, o}};
  if (scratchpad_bytes(plan.pd) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.pd.scratchpad_desc(), engine, scratchpad));
  plan.primitive.execute(stream, args);
  if (plan.out_step) plan.out_step->execute(stream, o, out, scratchpad);
  stream.wait();
}

template <direction D>
tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  return guard("oneDNN backward convolution", message, message_size, [&] {
    const std::string name = name_of(D);
    tsrpConvolutionProblem p;
    const void *in0 = nullptr, *dy = nullptr;
    void* out = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    if (handle == nullptr) throw_bad_param(name + ": null context");
    if (!read_struct(problem, p)) throw_bad_param(name + ": null or truncated problem");
    if (D == direction::data) {
      tsrpConvolutionBackwardDataArgs a;
      if (!read_struct(args, a)) throw_bad_param(name + ": null or truncated arguments");
      in0 = a.w, dy = a.dy, out = a.dx, alpha = a.alpha, beta = a.beta;
    } else {
      tsrpConvolutionBackwardFilterArgs a;
      if (!read_struct(args, a)) throw_bad_param(name + ": null or truncated arguments");
      in0 = a.x, dy = a.dy, out = a.dw, alpha = a.alpha, beta = a.beta;
    }
    std::string reason = check_problem(p);
    if (!reason.empty()) throw_not_supported(name + " cannot run this problem: " + reason);
    if (element_count(D == direction::data ? p.x : p.w) == 0) return TSRP_STATUS_SUCCESS;
    if (in0 == nullptr || dy == nullptr || out == nullptr) throw_bad_param(name + ": null pointer argument");

    context& ctx = as_context(handle);
    cache_key key = problem_key(D, p);
    key.add(double{alpha}).add(double{beta});
    auto plan = ctx.cache().get_or_create<bwd_plan>(key.str(), [&] {
      auto made = choose_plan(D, ctx.engine(), p, alpha, beta);
      instantiate(D, *made);
      log_message(TSRP_LOG_DEBUG, name + " plan: " + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param(name + " needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN backward convolution execution",
             [&] { execute(*plan, ctx, in0, dy, out, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

// ---- bias -----------------------------------------------------------------------------------

constexpr const char* bias_name = "conv_bwd_bias";

std::string check_bias_problem(const tsrpConvolutionBackwardBiasProblem& p) {
  std::string reason = check_tensor(p.dy, "dy");
  if (reason.empty()) reason = check_tensor(p.db, "db");
  if (!reason.empty()) return reason;
  if (p.dy.ndims < 3 || p.dy.ndims > 5) return "dy has " + std::to_string(p.dy.ndims) + " dims, expected 3 to 5";
  if (p.db.ndims != p.dy.ndims) return "db must have as many dims as dy";
  for (int i = 0; i < p.db.ndims; ++i)
    if (p.db.dims[i] != (i == 1 ? p.dy.dims[1] : 1)) return "db must be 1 x K x 1 ... (K of dy)";
  if (!is_floating_data_type(p.dy.data_type) || p.db.data_type != p.dy.data_type)
    return std::string("dy and db must share one of f32, f16, bf16 (got ") +
           data_type_name(p.dy.data_type) + ", " + data_type_name(p.db.data_type) + ")";
  return {};
}

cache_key bias_key(const tsrpConvolutionBackwardBiasProblem& p) {
  cache_key key(bias_name);
  key.add(p.dy).add(p.db);
  return key;
}

struct bias_plan final : cached_entry {
  dnnl::memory::desc user_dy, user_db;
  dnnl::reduction::primitive_desc pd;
  dnnl::reduction primitive;
  std::optional<reorder_step> dy_step, db_step;
  size_t dy_offset = 0, db_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;
};

std::shared_ptr<bias_plan> try_bias_candidate(const dnnl::engine& engine,
                                              const tsrpConvolutionBackwardBiasProblem& p,
                                              bool exact_dy, bool exact_db, float alpha,
                                              float beta) {
  auto plan = std::make_shared<bias_plan>();
  plan->user_dy = make_memory_desc(p.dy);
  plan->user_db = make_memory_desc(p.db);
  const auto dy_md = exact_dy ? plan->user_dy : make_dense_desc_like(p.dy, dt::f32);
  const auto db_md = exact_db ? plan->user_db : make_dense_desc_like(p.db, dt::f32);
  plan->pd = dnnl::reduction::primitive_desc(engine, dnnl::algorithm::reduction_sum, dy_md, db_md,
                                             0.0f, 0.0f, user_scratchpad_attr());
  workspace_layout layout;
  size_t scratchpad = scratchpad_bytes(plan->pd);
  if (!exact_dy) {
    plan->dy_step = make_reorder_step(engine, plan->user_dy, dy_md, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->dy_step->pd));
    plan->dy_offset = layout.reserve(dy_md.get_size());
  }
  if (!exact_db) {
    plan->db_step = make_reorder_step(engine, db_md, plan->user_db, alpha, beta);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->db_step->pd));
    plan->db_offset = layout.reserve(db_md.get_size());
  }
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();
  plan->description = std::string("reduction=") + plan->pd.impl_info_str() + " (data " +
                      data_type_name(p.dy.data_type) + (exact_dy ? ", dy in place" : ", dy staged f32") +
                      (exact_db ? ", db in place" : ", db staged f32") + ")";
  if (plan->dy_step) plan->description += std::string(" dy_reorder=") + plan->dy_step->pd.impl_info_str();
  if (plan->db_step) plan->description += std::string(" db_reorder=") + plan->db_step->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<bias_plan> choose_bias_plan(const dnnl::engine& engine,
                                            const tsrpConvolutionBackwardBiasProblem& p,
                                            float alpha, float beta) {
  // db is written in place only when nothing is left to blend (the reduction itself sums in f32
  // and rounds once); otherwise the sum is staged in f32 and blended by the final reorder.
  const bool in_place_ok = alpha == 1.0f && beta == 0.0f;
  std::vector<std::pair<bool, bool>> candidates;
  if (in_place_ok) candidates.push_back({true, true});
  candidates.push_back({true, false});
  candidates.push_back({false, false});
  std::shared_ptr<bias_plan> reference_plan;
  std::string last_error;
  for (const auto& [exact_dy, exact_db] : candidates) {
    try {
      auto plan = try_bias_candidate(engine, p, exact_dy, exact_db, alpha, beta);
      if (!is_reference_impl(plan->pd)) return plan;
      if (!reference_plan) reference_plan = plan;
    } catch (const dnnl::error&) {
      last_error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(p.dy.data_type) +
                         " sum reduction for this bias gradient (last attempt: " + last_error + ")");
}

std::shared_ptr<const query_answer> bias_query(const tsrpConvolutionBackwardBiasProblem& p) {
  static shared_cache answers;
  return answers.get_or_create<query_answer>(bias_key(p).str(), [&] {
    auto q = std::make_shared<query_answer>();
    q->reason = check_bias_problem(p);
    if (!q->reason.empty() || element_count(p.db) == 0) return q;
    const std::pair<float, float> shapes[] = {{1.0f, 0.0f}, {2.0f, 0.0f}, {1.0f, 1.0f}, {2.0f, 1.0f}};
    for (const auto& [alpha, beta] : shapes) {
      try {
        q->workspace_bytes = std::max(q->workspace_bytes,
                                      choose_bias_plan(query_engine(), p, alpha, beta)->workspace_bytes);
      } catch (const plugin_error& e) {
        if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
        q->reason = e.what();
        return q;
      }
    }
    return q;
  });
}

int bias_can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpConvolutionBackwardBiasProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated bias problem");
      return 0;
    }
    auto q = bias_query(p);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN bias gradient query", reason, reason_size);
    return 0;
  }
}

tsrpStatus_t bias_workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN bias gradient workspace query", message, sizeof message, [&] {
    tsrpConvolutionBackwardBiasProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("conv_bwd_bias workspace_size: null argument");
    auto q = bias_query(p);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

tsrpStatus_t bias_run(void*, void* handle, const void* problem, const void* args, void* workspace,
                      size_t workspace_bytes, char* message, size_t message_size) {
  return guard("oneDNN bias gradient", message, message_size, [&] {
    tsrpConvolutionBackwardBiasProblem p;
    tsrpConvolutionBackwardBiasArgs a;
    if (handle == nullptr) throw_bad_param("conv_bwd_bias: null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param("conv_bwd_bias: null or truncated problem or arguments");
    std::string reason = check_bias_problem(p);
    if (!reason.empty()) throw_not_supported("conv_bwd_bias cannot run this problem: " + reason);
    if (element_count(p.db) == 0) return TSRP_STATUS_SUCCESS;
    if (a.dy == nullptr || a.db == nullptr) throw_bad_param("conv_bwd_bias: null dy or db");
    context& ctx = as_context(handle);
    cache_key key = bias_key(p);
    key.add(double{a.alpha}).add(double{a.beta});
    auto plan = ctx.cache().get_or_create<bias_plan>(key.str(), [&] {
      auto made = choose_bias_plan(ctx.engine(), p, a.alpha, a.beta);
      annotate("oneDNN reduction primitive creation", [&] {
        made->primitive = dnnl::reduction(made->pd);
        for (auto* step : {&made->dy_step, &made->db_step})
          if (*step) (*step)->instantiate();
      });
      log_message(TSRP_LOG_DEBUG, std::string("conv_bwd_bias plan: ") + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param("conv_bwd_bias needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN reduction execution", [&] {
      dnnl::engine& engine = ctx.engine();
      dnnl::stream& stream = ctx.stream();
      dnnl::memory dy(plan->user_dy, engine, const_cast<void*>(a.dy));
      dnnl::memory db(plan->user_db, engine, a.db);
      void* scratchpad = workspace_at(workspace, plan->scratchpad_offset);
      dnnl::memory src = dy, dst = db;
      if (plan->dy_step) {
        src = dnnl::memory(plan->pd.src_desc(), engine, workspace_at(workspace, plan->dy_offset));
        plan->dy_step->execute(stream, dy, src, scratchpad);
      }
      if (plan->db_step)
        dst = dnnl::memory(plan->pd.dst_desc(), engine, workspace_at(workspace, plan->db_offset));
      std::unordered_map<int, dnnl::memory> margs{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
      if (scratchpad_bytes(plan->pd) > 0)
        margs.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan->pd.scratchpad_desc(), engine, scratchpad));
      plan->primitive.execute(stream, margs);
      if (plan->db_step) plan->db_step->execute(stream, dst, db, scratchpad);
      stream.wait();
    });
    return TSRP_STATUS_SUCCESS;
  });
}

constexpr const char* backward_notes =
    "oneDNN backward convolution, cross-correlation only. Accumulates in f32; alpha and beta are "
    "applied by a reorder from an f32 staging buffer (one rounding to the output's type), or the "
    "output is written in place when alpha is 1 and beta 0. fp16 runs in f32 on CPUs without "
    "AVX512-FP16.";

const tsrpKernel g_data_kernel = {
    sizeof(tsrpKernel), "conv_bwd_data", TSRP_OP_CONVOLUTION_BACKWARD_DATA,
    TSRP_KERNEL_DETERMINISTIC,  // no atomics in oneDNN's CPU backward data
    backward_notes, nullptr, can_implement<direction::data>,
    workspace_size<direction::data>, run<direction::data>, nullptr /* estimate_us */};

const tsrpKernel g_filter_kernel = {
    sizeof(tsrpKernel), "conv_bwd_filter", TSRP_OP_CONVOLUTION_BACKWARD_FILTER,
    TSRP_KERNEL_DETERMINISTIC,  // reductions over the batch in a fixed order per thread count
    backward_notes, nullptr, can_implement<direction::filter>,
    workspace_size<direction::filter>, run<direction::filter>, nullptr /* estimate_us */};

const tsrpKernel g_bias_kernel = {
    sizeof(tsrpKernel), bias_name, TSRP_OP_CONVOLUTION_BACKWARD_BIAS, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN sum reduction of dy over N and space, in f32; alpha/beta applied by a reorder from f32 "
    "(one rounding), or db written in place when alpha is 1 and beta 0.",
    nullptr, bias_can_implement, bias_workspace_size, bias_run, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& convolution_backward_data_kernel() noexcept { return g_data_kernel; }
const tsrpKernel& convolution_backward_filter_kernel() noexcept { return g_filter_kernel; }
const tsrpKernel& convolution_backward_bias_kernel() noexcept { return g_bias_kernel; }

}  // namespace tessera::onednn
