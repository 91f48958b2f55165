// Kernel "conv_fwd": y = alpha * conv(x, w) + beta * y on oneDNN's forward convolution, and
// its int8 form y = saturate(round(alpha * scale[k] * conv(x, w) + beta * y)) with the output
// scales as oneDNN's runtime weights scales.
//
// A plan is chosen among these candidates, first one that oneDNN implements with something other
// than its reference code (else the first one implemented at all):
//   1. the user's exact strided x, w, y descs, alpha/beta fused as post-ops (no copies at all);
//   2. exact x and y, weights in oneDNN's preferred layout (reordered into the workspace each
//      call: cheap next to the convolution, and what lets e.g. NHWC with KCRS filters run on
//      a JIT kernel);
//   3. every tensor in oneDNN's preferred layout, in the data type of the problem;
//   4. (f16/bf16 only) every tensor in f32: x and w converted into the workspace, the result
//      converted back. This is how f16 runs on CPUs without AVX512-FP16.
// Staged outputs are written back by a reorder that also applies alpha/beta (onednn_reorder_step).
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_convolution_shared.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_reusable_memory.hpp"
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

constexpr const char* kernel_name = "conv_fwd";

}  // namespace

std::string check_convolution_geometry(const tsrpConvolutionProblem& p) {
  const int sd = p.spatial_dims;
  if (sd < 1 || sd > TSRP_MAX_SPATIAL_DIMS)
    return "spatial_dims " + std::to_string(sd) + " (oneDNN convolution supports 1 to 3)";
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "y"}};
  for (const auto& [t, name] : tensors) {
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (t->ndims != sd + 2)
      return std::string("tensor ") + name + " has " + std::to_string(t->ndims) +
             " dims, expected spatial_dims + 2 = " + std::to_string(sd + 2);
  }
  if (p.mode == TSRP_CONVOLUTION)
    return "convolution mode 'convolution' (flipped filter) not supported by oneDNN; use "
           "cross-correlation";
  if (p.mode != TSRP_CROSS_CORRELATION)
    return "unknown convolution mode " + std::to_string(p.mode);
  if (p.groups < 1) return "groups must be at least 1";
  if (p.x.dims[1] != p.w.dims[1] * p.groups)
    return "x has " + std::to_string(p.x.dims[1]) + " channels, expected w's C/groups (" +
           std::to_string(p.w.dims[1]) + ") times groups (" + std::to_string(p.groups) + ")";
  if (p.w.dims[0] % p.groups != 0)
    return "w's K (" + std::to_string(p.w.dims[0]) + ") is not a multiple of groups";
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.w.dims[0])
    return "y must be N x K x ... (N of x, K of w)";
  for (int i = 0; i < sd; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1)
      return "stride and dilation must be at least 1 (dilation 1 means none)";
    if (p.pad_before[i] < 0 || p.pad_after[i] < 0) return "padding must not be negative";
    const int64_t extent = (p.w.dims[2 + i] - 1) * p.dilation[i] + 1;
    const int64_t padded = p.x.dims[2 + i] + p.pad_before[i] + p.pad_after[i];
    const int64_t expected = padded >= extent ? (padded - extent) / p.stride[i] + 1 : 0;
    if (p.y.dims[2 + i] != expected)
      return "y spatial dim " + std::to_string(i) + " is " + std::to_string(p.y.dims[2 + i]) +
             ", expected " + std::to_string(expected);
  }
  if (element_count(p.y) != 0 && (element_count(p.x) == 0 || element_count(p.w) == 0))
    return "x or w is empty while y is not";
  return {};
}

convolution_geometry make_convolution_geometry(const tsrpConvolutionProblem& p) {
  const int sd = p.spatial_dims;
  convolution_geometry g{dnnl::memory::dims(sd), dnnl::memory::dims(sd), dnnl::memory::dims(sd),
                         dnnl::memory::dims(sd)};
  for (int i = 0; i < sd; ++i) {
    g.strides[i] = p.stride[i];
    g.dilation[i] = p.dilation[i] - 1;  // cuDNN's 1 = none is oneDNN's 0 = none
    g.pad_l[i] = p.pad_before[i];
    g.pad_r[i] = p.pad_after[i];
  }
  return g;
}

void add_convolution_key(cache_key& key, const tsrpConvolutionProblem& p) {
  key.add(p.x).add(p.w).add(p.y);
  key.add(int64_t{p.spatial_dims}).add(int64_t{p.mode}).add(int64_t{p.compute_type});
  key.add(int64_t{p.math_mode}).add(p.groups);
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i)
    key.add(p.pad_before[i]).add(p.pad_after[i]).add(p.stride[i]).add(p.dilation[i]);
  key.add(int64_t{p.output_scale_count});
}

namespace {

bool is_int8_problem(const tsrpConvolutionProblem& p) {
  return p.x.data_type == TSRP_DATA_INT8 || p.w.data_type == TSRP_DATA_INT8;
}

// Geometry, then the data types: one floating type for all three, or int8 (s8 x and w, s32
// accumulation, s8/s32/f32 y, 0, 1 or K output scales).
std::string check_problem(const tsrpConvolutionProblem& p) {
  std::string reason = check_convolution_geometry(p);
  if (!reason.empty()) return reason;
  if (is_int8_problem(p)) {
    if (p.x.data_type != TSRP_DATA_INT8 || p.w.data_type != TSRP_DATA_INT8)
      return std::string("int8 convolution needs s8 x and w (got ") +
             data_type_name(p.x.data_type) + ", " + data_type_name(p.w.data_type) + ")";
    if (p.y.data_type != TSRP_DATA_INT8 && p.y.data_type != TSRP_DATA_INT32 &&
        p.y.data_type != TSRP_DATA_FLOAT)
      return std::string("int8 convolution writes s8, s32 or f32 y, not ") +
             data_type_name(p.y.data_type);
    if (p.compute_type != TSRP_DATA_INT32)
      return std::string("compute type ") + data_type_name(p.compute_type) +
             ": int8 convolutions accumulate in s32 (use compute type int32)";
    if (p.output_scale_count != 0 && p.output_scale_count != 1 &&
        p.output_scale_count != p.y.dims[1])
      return "output_scale_count " + std::to_string(p.output_scale_count) +
             ", expected 0, 1 or K = " + std::to_string(p.y.dims[1]);
    return {};
  }
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "y"}};
  for (const auto& [t, name] : tensors)
    if (!is_floating_data_type(t->data_type))
      return std::string(data_type_name(t->data_type)) + " tensor " + name +
             ": the oneDNN convolution supports f32, f16 and bf16 (and s8 x and w)";
  if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type)
    return std::string("x, w and y must have one data type (got ") + data_type_name(p.x.data_type) +
           ", " + data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
  if (p.compute_type != TSRP_DATA_FLOAT)
    return std::string("compute type ") + data_type_name(p.compute_type) +
           ": oneDNN convolutions accumulate in f32 (use compute type float)";
  if (p.output_scale_count != 0) return "output scales are for int8 convolutions only";
  return {};
}

cache_key problem_key(const tsrpConvolutionProblem& p) {
  cache_key key(kernel_name);
  add_convolution_key(key, p);
  return key;
}

struct conv_plan final : cached_entry {
  dnnl::memory::desc user_x, user_w, user_y;
  dnnl::convolution_forward::primitive_desc conv_pd;
  dnnl::convolution_forward conv;
  // Present when that tensor is staged through the workspace.
  std::optional<reorder_step> src_in, weights_in, dst_out;
  size_t src_offset = 0, weights_offset = 0, dst_offset = 0, scratchpad_offset = 0;
  size_t workspace_bytes = 0;
  int64_t output_scale_count = 0;  // int8: how many weights scales the primitive takes
  std::string description;
  bool has_scratchpad = false;  // conv_pd asks for a scratchpad
  // Per-call memories and execute() arguments, made on the first call and re-pointed on later
  // ones (onednn_reusable_memory.hpp).
  mutable reusable_memory x_memory, w_memory, y_memory, src_memory, weights_memory, dst_memory,
      scales_memory, scratchpad_memory;
  mutable std::unordered_map<int, dnnl::memory> conv_args;
};

struct candidate {
  bool exact_src, exact_weights, exact_dst;
  dt compute;  // of src and weights (and of a staged dst, for floating problems)
  dt staged_dst;
};

// Throws dnnl::error when oneDNN does not implement the candidate.
std::shared_ptr<conv_plan> try_candidate(const dnnl::engine& engine,
                                         const tsrpConvolutionProblem& p, const candidate& c,
                                         float alpha, float beta) {
  auto plan = std::make_shared<conv_plan>();
  plan->output_scale_count = p.output_scale_count;
  plan->user_x = make_memory_desc(p.x);
  plan->user_w = make_weights_desc(p.w, p.groups);
  plan->user_y = make_memory_desc(p.y);
  const auto src_md = c.exact_src ? plan->user_x : make_any_desc(p.x, c.compute);
  const auto weights_md =
      c.exact_weights ? plan->user_w : make_weights_any_desc(p.w, p.groups, c.compute);
  const auto dst_md = c.exact_dst ? plan->user_y : make_any_desc(p.y, c.staged_dst);

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (p.output_scale_count > 0) {
    // int8: scale[k] multiplies the s32 accumulator before the post-ops (oneDNN's weights
    // scales; mask over the output-channel dim, which is dim 0, or dims 0 and 1 when grouped).
    const int mask = p.output_scale_count == 1 ? 0 : p.groups > 1 ? 0x3 : 0x1;
    attr.set_scales_mask(DNNL_ARG_WEIGHTS, mask);
  }
  if (c.exact_dst) {
    // conv -> linear(alpha) -> sum(beta) is alpha*conv + beta*y, all in f32 before the one
    // rounding to y's type. The sum is left out for beta == 0 so that y is never read then.
    dnnl::post_ops ops;
    if (alpha != 1.0f) ops.append_eltwise(dnnl::algorithm::eltwise_linear, alpha, 0.0f);
    if (beta != 0.0f) ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  const convolution_geometry g = make_convolution_geometry(p);
  plan->conv_pd = dnnl::convolution_forward::primitive_desc(
      engine, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
      weights_md, dst_md, g.strides, g.dilation, g.pad_l, g.pad_r, attr);

  workspace_layout layout;
  size_t scratchpad = scratchpad_bytes(plan->conv_pd);
  plan->has_scratchpad = scratchpad > 0;
  const auto stage_in = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& chosen,
                            std::optional<reorder_step>& step, size_t& offset) {
    if (user == chosen) return;  // oneDNN picked the user's own layout: read it in place
    step = make_reorder_step(engine, user, chosen, 1.0f, 0.0f);
    scratchpad = std::max(scratchpad, scratchpad_bytes(step->pd));
    offset = layout.reserve(chosen.get_size());
  };
  stage_in(plan->user_x, plan->conv_pd.src_desc(), plan->src_in, plan->src_offset);
  stage_in(plan->user_w, plan->conv_pd.weights_desc(), plan->weights_in, plan->weights_offset);
  if (!c.exact_dst &&
      (plan->conv_pd.dst_desc() != plan->user_y || alpha != 1.0f || beta != 0.0f)) {
    plan->dst_out = make_reorder_step(engine, plan->conv_pd.dst_desc(), plan->user_y, alpha, beta);
    scratchpad = std::max(scratchpad, scratchpad_bytes(plan->dst_out->pd));
    plan->dst_offset = layout.reserve(plan->conv_pd.dst_desc().get_size());
  }
  // Steps run one after another, so they share one scratchpad region.
  plan->scratchpad_offset = layout.reserve(scratchpad);
  plan->workspace_bytes = layout.required_bytes();

  const auto type_name = [](dt t) {
    return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : t == dt::s8 ? "s8" : "f16";
  };
  plan->description = std::string("conv=") + plan->conv_pd.impl_info_str() + " (data " +
                      data_type_name(p.x.data_type) + ", compute " + type_name(c.compute) +
                      (c.exact_src && c.exact_weights && c.exact_dst ? ", user layouts" : "") + ")";
  if (plan->src_in) plan->description += std::string(" src_reorder=") + plan->src_in->pd.impl_info_str();
  if (plan->weights_in)
    plan->description += std::string(" weights_reorder=") + plan->weights_in->pd.impl_info_str();
  if (plan->dst_out) plan->description += std::string(" dst_reorder=") + plan->dst_out->pd.impl_info_str();
  plan->description += " workspace=" + std::to_string(plan->workspace_bytes);
  return plan;
}

// Primitive descriptors only (cheap); primitives are created by instantiate().
std::shared_ptr<conv_plan> choose_plan(const dnnl::engine& engine,
                                       const tsrpConvolutionProblem& p, float alpha, float beta) {
  const dt io = *to_dnnl_data_type(p.x.data_type);
  std::vector<candidate> candidates = {
      {true, true, true, io, io}, {true, false, true, io, io}, {false, false, false, io, io}};
  if (is_int8_problem(p)) {
    // A staged int8 dst is kept in f32 so that alpha/beta and the rounding to y's type happen
    // once, in the final reorder (an s8 staging buffer would round twice).
    candidates.back().staged_dst = dt::f32;
  } else if (io != dt::f32) {
    candidates.push_back({false, false, false, dt::f32, dt::f32});
  }
  std::shared_ptr<conv_plan> reference_plan;
  std::string last_error;
  for (const candidate& c : candidates) {
    try {
      auto plan = try_candidate(engine, p, c, alpha, beta);
      if (!is_reference_impl(plan->conv_pd)) return plan;
      if (!reference_plan) reference_plan = plan;
    } catch (const dnnl::error&) {
      last_error = current_exception_text();
    }
  }
  if (reference_plan) return reference_plan;
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(p.x.data_type) +
                         " convolution for this problem (last attempt: " + last_error + ")");
}

void instantiate(conv_plan& plan) {
  annotate("oneDNN convolution primitive creation", [&] {
    plan.conv = dnnl::convolution_forward(plan.conv_pd);
    for (auto* step : {&plan.src_in, &plan.weights_in, &plan.dst_out})
      if (*step) (*step)->instantiate();
  });
}

// What can_implement and workspace_size answer; independent of alpha/beta, so the workspace is
// the largest over the four alpha/beta shapes (alpha == 1 or not, beta == 0 or not).
struct conv_query final : cached_entry {
  std::string reason;  // empty: implementable
  size_t workspace_bytes = 0;
};

std::shared_ptr<const conv_query> query(const tsrpConvolutionProblem& p) {
  static shared_cache answers;
  return answers.get_or_create<conv_query>(problem_key(p).str(), [&] {
    auto q = std::make_shared<conv_query>();
    q->reason = check_problem(p);
    if (!q->reason.empty() || element_count(p.y) == 0) return q;
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
    tsrpConvolutionProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated convolution problem");
      return 0;
    }
    auto q = query(p);
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN convolution query", reason, reason_size);
    return 0;
  }
}

tsrpStatus_t workspace_size(void* /*user_data*/, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN convolution workspace query", message, sizeof message, [&] {
    tsrpConvolutionProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("conv_fwd workspace_size: null argument");
    auto q = query(p);
    if (!q->reason.empty()) throw_not_supported(q->reason);
    *bytes = q->workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

void execute(const conv_plan& plan, context& ctx, const tsrpConvolutionProblem& p,
             const tsrpConvolutionForwardArgs& a, void* workspace) {
  dnnl::engine& engine = ctx.engine();
  dnnl::stream& stream = ctx.stream();
  const auto& pd = plan.conv_pd;
  // oneDNN memories take void*; x and w are only read.
  dnnl::memory& x = plan.x_memory.bind(plan.user_x, engine, const_cast<void*>(a.x));
  dnnl::memory& w = plan.w_memory.bind(plan.user_w, engine, const_cast<void*>(a.w));
  dnnl::memory& y = plan.y_memory.bind(plan.user_y, engine, a.y);
  void* scratchpad = workspace_at(workspace, plan.scratchpad_offset);

  dnnl::memory* src = &x;
  dnnl::memory* weights = &w;
  dnnl::memory* dst = &y;
  if (plan.src_in) {
    src = &plan.src_memory.bind([&] { return pd.src_desc(); }, engine, workspace_at(workspace, plan.src_offset));
    plan.src_in->execute(stream, x, *src, scratchpad);
  }
  if (plan.weights_in && p.weights_generation != 0) {
    // The caller promised constant filters: reorder once per filter and promise, then reuse.
    const dnnl::memory::desc& desc = pd.weights_desc();
    void* kept = ctx.constant_weights().find_or_make(a.w, p.weights_generation, &plan, desc.get_size(),
                                                     [&](void* memory) {
                                                       dnnl::memory target(desc, engine, memory);
                                                       plan.weights_in->execute(stream, w, target, scratchpad);
                                                       stream.wait();
                                                     });
    weights = &plan.weights_memory.bind(desc, engine, kept);
  } else if (plan.weights_in) {
    weights = &plan.weights_memory.bind([&] { return pd.weights_desc(); }, engine,
                                        workspace_at(workspace, plan.weights_offset));
    plan.weights_in->execute(stream, w, *weights, scratchpad);
  }
  if (plan.dst_out)
    dst = &plan.dst_memory.bind([&] { return pd.dst_desc(); }, engine, workspace_at(workspace, plan.dst_offset));
  dnnl::memory* scales = nullptr;
  if (plan.output_scale_count > 0) {
    const dnnl::memory::dims count{plan.output_scale_count};
    scales = &plan.scales_memory.bind([&] { return dnnl::memory::desc(count, dt::f32, {1}); }, engine,
                                      const_cast<float*>(a.output_scales));
  }
  dnnl::memory* scratch = nullptr;
  if (plan.has_scratchpad)
    scratch = &plan.scratchpad_memory.bind([&] { return pd.scratchpad_desc(); }, engine, scratchpad);

  // Made on the first call from the plan's own memories, which the binds above re-point.
  std::unordered_map<int, dnnl::memory>& args = plan.conv_args;
  if (args.empty()) {
    args = {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *weights}, {DNNL_ARG_DST, *dst}};
    if (scales) args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, *scales);
    if (scratch) args.emplace(DNNL_ARG_SCRATCHPAD, *scratch);
  }
  plan.conv.execute(stream, args);
  if (plan.dst_out) plan.dst_out->execute(stream, *dst, y, scratchpad);
  stream.wait();
}

tsrpStatus_t run(void* /*user_data*/, void* handle, const void* problem, const void* args,
                 void* workspace, size_t workspace_bytes, char* message, size_t message_size) {
  return guard("oneDNN convolution", message, message_size, [&] {
    tsrpConvolutionProblem p;
    tsrpConvolutionForwardArgs a;
    if (handle == nullptr) throw_bad_param("conv_fwd: null context");
    if (!read_struct(problem, p) || !read_struct(args, a))
      throw_bad_param("conv_fwd: null or truncated problem or arguments");
    std::string reason = check_problem(p);
    if (!reason.empty()) throw_not_supported("conv_fwd cannot run this problem: " + reason);
    if (element_count(p.y) == 0) return TSRP_STATUS_SUCCESS;
    if (a.x == nullptr || a.w == nullptr || a.y == nullptr) throw_bad_param("conv_fwd: null x, w or y");
    if (p.output_scale_count > 0 && a.output_scales == nullptr)
      throw_bad_param("conv_fwd: output_scale_count is " + std::to_string(p.output_scale_count) +
                      " but output_scales is null");

    context& ctx = as_context(handle);
    cache_key key = problem_key(p);
    key.add(double{a.alpha}).add(double{a.beta});
    auto plan = ctx.cache().get_or_create<conv_plan>(key.str(), [&] {
      auto made = choose_plan(ctx.engine(), p, a.alpha, a.beta);
      instantiate(*made);
      log_message(TSRP_LOG_DEBUG, std::string("conv_fwd plan: ") + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param("conv_fwd needs a workspace of " + std::to_string(plan->workspace_bytes) +
                      " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
    annotate("oneDNN convolution execution", [&] { execute(*plan, ctx, p, a, workspace); });
    return TSRP_STATUS_SUCCESS;
  });
}

const tsrpKernel g_kernel = {
    sizeof(tsrpKernel),
    kernel_name,
    TSRP_OP_CONVOLUTION_FORWARD,
    TSRP_KERNEL_DETERMINISTIC,  // oneDNN forward convolution: fixed order per machine and thread count
    "oneDNN forward convolution, cross-correlation only. Accumulates in f32; alpha and beta are "
    "applied in f32 before one rounding to y's type. Layouts that no fast oneDNN implementation "
    "takes directly are reordered through the workspace. fp16: where oneDNN has no f16 "
    "convolution (CPUs without AVX512-FP16), x and w are converted to f32 in the workspace, "
    "convolved in f32 and the result rounded once to f16. int8: s8 x and w accumulate exactly "
    "in s32; alpha * scale[k] * acc + beta * y in f32, rounded half to even and saturated once. "
    "Deterministic for a given machine and thread count.",
    nullptr,
    can_implement,
    workspace_size,
    run, nullptr /* estimate_us */};

}  // namespace

const tsrpKernel& convolution_forward_kernel() noexcept { return g_kernel; }

}  // namespace tessera::onednn
