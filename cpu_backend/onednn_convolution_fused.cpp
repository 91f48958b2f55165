// Kernel "conv_bias_act_fwd": y = act(alpha1 * conv(x, w) + alpha2 * z + bias) as one oneDNN
// forward convolution with post-ops, all in f32 before one rounding to y's type.
//
// Post-op chain (oneDNN applies them in order to the f32 accumulator):
//   alpha1 == 1:  conv + bias (the convolution's own bias argument) -> sum(alpha2) -> eltwise(act)
//   otherwise:    conv -> eltwise_linear(alpha1) -> binary_add(bias) -> sum(alpha2) -> eltwise
// The first is the pattern every fast oneDNN convolution implements; the second keeps bias out
// of alpha1's reach. The sum post-op adds alpha2 * (what dst holds), so z is first copied into
// the destination (a reorder) unless it already is y's memory. Without z (or alpha2 == 0) there
// is no sum and y is never read.
// Layout candidates as conv_fwd: user layouts, weights reordered, everything in oneDNN's
// layouts (dst staged and reordered back), and for f16/bf16 everything in f32 (bias converted
// too). f16 runs that last way on CPUs without AVX512-FP16.
#include "onednn_eltwise_algorithm.hpp"
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
using alg = dnnl::algorithm;

constexpr const char* kernel_name = "conv_bias_act_fwd";

// The convolution part as the forward problem, to share its checks and geometry.
tsrpConvolutionProblem conv_part(const tsrpConvolutionBiasActivationProblem& f) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.x = f.x;
  p.w = f.w;
  p.y = f.y;
  p.spatial_dims = f.spatial_dims;
  p.mode = f.mode;
  p.compute_type = f.compute_type;
  p.math_mode = f.math_mode;
  p.groups = f.groups;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    p.pad_before[i] = f.pad_before[i];
    p.pad_after[i] = f.pad_after[i];
    p.stride[i] = f.stride[i];
    p.dilation[i] = f.dilation[i];
  }
  return p;
}


std::string check_problem(const tsrpConvolutionBiasActivationProblem& f) {
  const tsrpConvolutionProblem p = conv_part(f);
  std::string reason = check_convolution_geometry(p);
  if (!reason.empty()) return reason;
  if (!is_floating_data_type(p.x.data_type))
    return std::string(data_type_name(p.x.data_type)) +
           " x: the fused convolution supports f32, f16 and bf16";
  if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type)
    return std::string("x, w and y must have one data type (got ") + data_type_name(p.x.data_type) +
           ", " + data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
  if (p.compute_type != TSRP_DATA_FLOAT)
    return std::string("compute type ") + data_type_name(p.compute_type) +
           ": oneDNN convolutions accumulate in f32 (use compute type float)";
  if (f.has_z) {
    reason = check_tensor(f.z, "z");
    if (!reason.empty()) return reason;
    if (!same_dims(f.z, f.y) || f.z.data_type != f.y.data_type) return "z must have y's dims and data type";
  }
  reason = check_tensor(f.bias, "bias");
  if (!reason.empty()) return reason;
  if (f.bias.ndims != f.y.ndims || f.bias.data_type != f.y.data_type)
    return "bias must have y's number of dims and data type";
  for (int i = 0; i < f.bias.ndims; ++i)
    if (f.bias.dims[i] != (i == 1 ? f.y.dims[1] : 1)) return "bias must be 1 x K x 1 ...";
  if (f.activation_mode != TSRP_ACTIVATION_IDENTITY && !eltwise_op_for(f.activation_mode, f.activation_coef))
    return "unknown activation mode " + std::to_string(f.activation_mode);
  return {};
}

cache_key problem_key(const tsrpConvolutionBiasActivationProblem& f) {
  cache_key key(kernel_name);
  add_convolution_key(key, conv_part(f));
  key.add(int64_t{f.has_z});
  if (f.has_z) key.add(f.z);
  key.add(f.bias).add(int64_t{f.activation_mode}).add(f.activation_coef);
  return key;
}

struct fused_plan final : cached_entry {
  dnnl::memory::desc user_x, user_w, user_y, user_z, user_bias;  // user_bias as the pd takes it
  dnnl::convolution_forward::primitive_desc conv_pd;
  dnnl::convolution_forward conv;
  bool bias_as_conv_arg = false;  // else a binary post-op (its src1 is post-op #1)
  bool uses_z = false;
  dnnl::memory::desc bias_md;     // what the primitive reads: user_bias, or a staged f32 copy
  std::optional<reorder_step> src_in, weights_in, bias_in, z_in, dst_out;
  size_t src_offset = 0, weights_offset = 0, bias_offset = 0, dst_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  std::string description;
};

struct candidate {
  bool exact_src, exact_weights, exact_dst;
  dt compute;
};

std::shared_ptr<fused_plan> try_candidate(const dnnl::engine& engine,
                                          const tsrpConvolutionBiasActivationProblem& f,
                                          const candidate& c, float alpha1, float alpha2) {
  const tsrpConvolutionProblem p = conv_part(f);
  auto plan = std::make_shared<fused_plan>();
  plan->user_x = make_memory_desc(p.x);
  plan->user_w = make_weights_desc(p.w, p.groups);
  plan->user_y = make_memory_desc(p.y);
  plan->uses_z = f.has_z && alpha2 != 0.0f;
  if (f.has_z) plan->user_z = make_memory_desc(f.z);
  const auto src_md = c.exact_src ? plan->user_x : make_any_desc(p.x, c.compute);
  const auto weights_md =
      c.exact_weights ? plan->user_w : make_weights_any_desc(p.w, p.groups, c.compute);
  const auto dst_md = c.exact_dst ? plan->user_y : make_any_desc(p.y, c.compute);

  plan->bias_as_conv_arg = alpha1 == 1.0f;
  const dt io = *to_dnnl_data_type(p.y.data_type);
  const bool bias_staged = c.compute != io;
  if (plan->bias_as_conv_arg) {
    // oneDNN's bias is 1-D {K}: the user's K stride is all that matters.
    plan->user_bias = dnnl::memory::desc({f.bias.dims[1]}, io, {f.bias.strides[1]});
    plan->bias_md = bias_staged ? dnnl::memory::desc({f.bias.dims[1]}, dt::f32, {1}) : plan->user_bias;
  } else {
    plan->user_bias = make_memory_desc(f.bias);
    plan->bias_md = bias_staged ? make_dense_desc_like(f.bias, dt::f32) : plan->user_bias;
  }

  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  if (!plan->bias_as_conv_arg) {
    ops.append_eltwise(alg::eltwise_linear, alpha1, 0.0f);
    ops.append_binary(alg::binary_add, plan->bias_md);
  }
  if (plan->uses_z) ops.append_sum(alpha2);
  if (auto e = eltwise_post_op_for(f.activation_mode, f.activation_coef))
    ops.append_eltwise(e->algorithm, e->alg_alpha, e->alg_beta);
  attr.set_post_ops(ops);

  const convolution_geometry g = make_convolution_geometry(p);
  if (plan->bias_as_conv_arg)
    plan->conv_pd = dnnl::convolution_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, alg::convolution_direct, src_md, weights_md,
        plan->bias_md, dst_md, g.strides, g.dilation, g.pad_l, g.pad_r, attr);
  else
    plan->conv_pd = dnnl::convolution_forward::primitive_desc(
        engine, dnnl::prop_kind::forward_inference, alg::convolution_direct, src_md, weights_md,
        dst_md, g.strides, g.dilation, g.pad_l, g.pad_r, attr);

  workspace_layout layout;
  size_t scratchpad = scratchpad_bytes(plan->conv_pd);
  const auto stage_in = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& chosen,
                            std::optional<reorder_step>& step, size_t& offset) {
    if (user == chosen) return;
    step = make_reorder_step(engine, user, chosen, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(chosen.get_size());
  };
  stage_in(plan->user_x, plan->conv_pd.src_desc(), plan->src_in, plan->src_offset);
  stage_in(plan->user_w, plan->conv_pd.weights_desc(), plan->weights_in, plan->weights_offset);
  stage_in(plan->user_bias, plan->bias_md, plan->bias_in, plan->bias_offset);
  const dnnl::memory::desc chosen_dst = plan->conv_pd.dst_desc();
  const bool dst_staged = !c.exact_dst && chosen_dst != plan->user_y;
  if (dst_staged) {
    plan->dst_out = make_reorder_step(engine, chosen_dst, plan->user_y, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->dst_out->pd));
    plan->dst_offset = layout.reserve(chosen_dst.get_size());
  }
  if (plan->uses_z) {
    // z into the destination the sum post-op reads: the user's y or the staged dst.
    plan->z_in = make_reorder_step(engine, plan->user_z, dst_staged ? chosen_dst : plan->user_y,
                                   1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->z_in->pd));
  }
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  const auto type_name = [](dt t) { return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : "f16"; };
  plan->description = std::string("conv=") + plan->conv_pd.impl_info_str() + " (data " +
                      data_type_name(p.x.data_type) + ", compute " + type_name(c.compute) +
                      (plan->bias_as_conv_arg ? ", bias as conv arg" : ", bias as binary post-op") +
                      (plan->uses_z ? ", sum z" : "") +
                      (c.exact_src && c.exact_weights && c.exact_dst ? ", user layouts" : "") + ")";
  if (plan->src_in) plan->description += std::string(" src_reorder=") + plan->src_in->pd.impl_info_str();
  if (plan->weights_in)
    plan->description += std::string(" weights_reorder=") + plan->weights_in->pd.impl_info_str();
  if (plan->dst_out) plan->description += std::string(" dst_reorder=") + plan->dst_out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

std::shared_ptr<fused_plan> choose_plan(const dnnl::engine& engine,
                                        const tsrpConvolutionBiasActivationProblem& f,
                                        float alpha1, float alpha2) {
  const dt io = *to_dnnl_data_type(f.x.data_type);
  std::vector<candidate> candidates = {
      {true, true, true, io}, {true, false, true, io}, {false, false, false, io}};
  if (io != dt::f32) candidates.push_back({false, false, false, dt::f32});
  std::shared_ptr<fused_plan> reference_plan;
  std::string last_error;
  for (const candidate& c : candidates) {
    try {
      auto plan = try_candidate(engine, f, c, alpha1, alpha2);
      if (!is_reference_impl(plan->conv_pd)) return plan;
      if (!reference_plan) reference_plan = plan;
    } catch (const dnnl::error&) {
      last_error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(f.x.data_type) +
                         " convolution with these post-ops (last attempt: " + last_error + ")");
}

struct fused_query final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0;
};

// Independent of alpha1/alpha2: the largest workspace over their shapes (alpha1 == 1 or not,
// alpha2 == 0 or not).
std::shared_ptr<const fused_query> query(const tsrpConvolutionBiasActivationProblem& f) {
  static shared_cache answers;
  return answers.get_or_create<fused_query>(problem_key(f).str(), [&] {
    auto q = std::make_shared<fused_query>();
    q->reason = check_problem(f);
    if (!q->reason.empty() || element_count(f.y) == 0) return q;
    const std::pair<float, float> shapes[] = {{1.0f, 0.0f}, {2.0f, 0.0f}, {1.0f, 1.0f}, {2.0f, 1.0f}};
    for (const auto& [alpha1, alpha2] : shapes) {
      try {
        q->workspace_bytes = std::max(q->workspace_bytes,
                                      choose_plan(query_engine(), f, alpha1, alpha2)->workspace_bytes);
      } catch (const plugin_error& e) {
        if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
        q->reason = e.what();
        return q;
      }
    }
    return q;
  });
}

int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpConvolutionBiasActivationProblem f;
    if (!read_struct(problem, f)) {
      write_message(reason, reason_size, "null or truncated fused convolution problem");
      return 0;
    }
    auto q = query(f);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN fused convolution query", reason, reason_size);
    return 0;
  }
}

tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN fused convolution workspace query", message, sizeof message, [&] {
    tsrpConvolutionBiasActivationProblem f;
    if (bytes == nullptr || !read_struct(problem, f))
      throw_bad_param("conv_bias_act_fwd workspace_size: null argument");
    auto q = query(f);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

void execute(const fused_plan& plan, context& ctx, const tsrpConvolutionBiasActivationArgs& a,
             bool z_is_y, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  dnnl::memory x(plan.user_x, engine, const_cast<void*>(a.x));
  dnnl::memory w(plan.user_w, engine, const_cast<void*>(a.w));
  dnnl::memory bias(plan.user_bias, engine, const_cast<void*>(a.bias));
  dnnl::memory y(plan.user_y, engine, a.y);
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);
  dnnl::memory src = x, weights = w, b = bias, dst = y;
  if (plan.src_in) {
    src = dnnl::memory(plan.conv_pd.src_desc(), engine, workspace_at(workspace, plan.src_offset));
    plan.src_in->execute(stream, x, src, scratchpad);
  }
  if (plan.weights_in) {
    weights = dnnl::memory(plan.conv_pd.weights_desc(), engine,
                           workspace_at(workspace, plan.weights_offset));
    plan.weights_in->execute(stream, w, weights, scratchpad);
  }
  if (plan.bias_in) {
    b = dnnl::memory(plan.bias_md, engine, workspace_at(workspace, plan.bias_offset));
    plan.bias_in->execute(stream, bias, b, scratchpad);
  }
  if (plan.dst_out)
    dst = dnnl::memory(plan.conv_pd.dst_desc(), engine, workspace_at(workspace, plan.dst_offset));
  if (plan.z_in && (plan.dst_out || !z_is_y)) {
    dnnl::memory z(plan.user_z, engine, const_cast<void*>(a.z));
    plan.z_in->execute(stream, z, dst, scratchpad);
  }
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (plan.bias_as_conv_arg)
    args.emplace(DNNL_ARG_BIAS, b);
  else
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, b);
  if (scratchpad_bytes(plan.conv_pd) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.conv_pd.scratchpad_desc(), engine, scratchpad));
  plan.conv.execute(stream, args);
  if (plan.dst_out) plan.dst_out->execute(stream, dst, y, scratchpad);
  stream.wait();
}

tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  return guard("oneDNN fused convolution", message, message_size, [&] {
    tsrpConvolutionBiasActivationProblem f;
    tsrpConvolutionBiasActivationArgs a;
    if (handle == nullptr) throw_bad_param("conv_bias_act_fwd: null context");
    if (!read_struct(problem, f) || !read_struct(args, a))
      throw_bad_param("conv_bias_act_fwd: null or truncated problem or arguments");
    std::string reason = check_problem(f);
    if (!reason.empty()) throw_not_supported("conv_bias_act_fwd cannot run this problem: " + reason);
    if (element_count(f.y) == 0) return TSRP_STATUS_SUCCESS;
    if (a.x == nullptr || a.w == nullptr || a.bias == nullptr || a.y == nullptr)
      throw_bad_param("conv_bias_act_fwd: null x, w, bias or y");
    if (f.has_z && a.z == nullptr) throw_bad_param("conv_bias_act_fwd: has_z but z is null");

    context& ctx = as_context(handle);
    cache_key key = problem_key(f);
    key.add(double{a.alpha1}).add(double{a.alpha2 != 0.0f ? a.alpha2 : 0.0f});
    auto plan = ctx.cache().get_or_create<fused_plan>(key.str(), [&] {
      auto made = choose_plan(ctx.engine(), f, a.alpha1, a.alpha2);
      annotate("oneDNN fused convolution primitive creation", [&] {
        made->conv = dnnl::convolution_forward(made->conv_pd);
        for (auto* step : {&made->src_in, &made->weights_in, &made->bias_in, &made->z_in, &made->dst_out})
          if (*step) (*step)->instantiate();
      });
      log_message(TSRP_LOG_DEBUG, std::string("conv_bias_act_fwd plan: ") + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param("conv_bias_act_fwd needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    const bool z_is_y = f.z_aliases_y != 0 || (f.has_z && a.z == a.y);
    annotate("oneDNN fused convolution execution", [&] { execute(*plan, ctx, a, z_is_y, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

const tsrpKernel g_kernel = {
    sizeof(tsrpKernel),
    kernel_name,
    TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,
    "oneDNN forward convolution with post-ops (bias, sum for z, eltwise for the activation), "
    "cross-correlation only; every activation mode. f32 accumulation and post-ops, one rounding "
    "to y's type. z not aliasing y is copied into y first. fp16 runs in f32 on CPUs without "
    "AVX512-FP16.",
    nullptr,
    can_implement,
    workspace_size,
    run, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& convolution_bias_activation_forward_kernel() noexcept { return g_kernel; }

}  // namespace tessera::onednn
