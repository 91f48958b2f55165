// Kernels "set_tensor" (y = value) and "scale_tensor" (y = alpha * y), each in place on y.
//
// set_tensor is one oneDNN reorder from a single value seen through all-zero strides (every
// element of the source view is that value) into y: the conversion to y's type (round to nearest
// even, integers saturating) is oneDNN's, and only the elements y's strides address are written.
// The value lives in a local of run(), so nothing is allocated; int32 outputs take an s32 source
// so that values above 2^24 stay exact.
//
// scale_tensor: oneDNN's eltwise_linear in place when a non-reference implementation takes y as
// it is (dense f32/bf16); else y is converted into a dense f32 buffer in the workspace with alpha
// as the reorder's scale and converted back (f16 on CPUs without AVX512-FP16, strided tensors,
// int8/int32). Reorders do not run in place, hence the buffer.
#include "onednn_kernels.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_tensor_op_kernel.hpp"
#include "onednn_workspace.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;

// ---- set ----------------------------------------------------------------------------------

struct set_plan final : tensor_op_plan {
  dnnl::memory::desc value_view, user_y;
  dt value_type = dt::f32;
  std::optional<reorder_step> fill;
  size_t scratchpad_offset = 0;
};

struct set_traits {
  using problem = tsrpSetTensorProblem;
  using args = tsrpSetTensorArgs;
  using plan = set_plan;
  static constexpr const char* name = "set_tensor";

  static std::string check(const problem& p) { return check_tensor(p.y, "y"); }
  static bool empty(const problem& p) { return element_count(p.y) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(p.y);
    return k;
  }
  static void add_args(cache_key&, const args&) {}  // the value is read per call
  static std::vector<args> shapes() { return {args{sizeof(args), nullptr, 0.0}}; }
  static std::string check_args(const problem& p, const args& a) {
    if (!a.y) return "null y";
    if ((p.y.data_type == TSRP_DATA_INT8 || p.y.data_type == TSRP_DATA_INT32) && !std::isfinite(a.value))
      return "a non-finite value for an integer tensor";
    return {};
  }
  static std::shared_ptr<plan> build(const dnnl::engine& engine, const problem& p, const args&) {
    auto pl = std::make_shared<set_plan>();
    pl->value_type = p.y.data_type == TSRP_DATA_INT32 ? dt::s32 : dt::f32;
    pl->user_y = make_memory_desc(p.y);
    // y's dims, all strides 0: every element of the view is the one value.
    tsrpTensor view = p.y;
    for (int i = 0; i < view.ndims; ++i) view.strides[i] = 0;
    view.data_type = pl->value_type == dt::s32 ? TSRP_DATA_INT32 : TSRP_DATA_FLOAT;
    pl->value_view = make_memory_desc(view);
    try {
      pl->fill = make_reorder_step(engine, pl->value_view, pl->user_y, 1.0f, 0.0f);
    } catch (const dnnl::error&) {
      throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                         std::string("oneDNN has no reorder filling ") + data_type_name(p.y.data_type) +
                             ": " + current_exception_text());
    }
    workspace_layout layout;
    pl->scratchpad_offset = layout.reserve(scratchpad_bytes(pl->fill->pd));
    pl->workspace_bytes = layout.required_bytes();
    pl->description = std::string("reorder=") + pl->fill->pd.impl_info_str() + " from a stride-0 " +
                      (pl->value_type == dt::s32 ? "s32" : "f32") + " value to " +
                      data_type_name(p.y.data_type);
    return pl;
  }
  static void instantiate(plan& pl) { pl.fill->instantiate(); }
  static void execute(const plan& pl, context& ctx, const problem&, const args& a, void* ws) {
    // The source view has all-zero strides: it addresses one element, this local.
    union {
      float f;
      int32_t i;
    } value;
    if (pl.value_type == dt::s32) {
      const double r = std::nearbyint(a.value);  // round half to even, as oneDNN's conversions
      value.i = r >= 2147483647.0    ? std::numeric_limits<int32_t>::max()
                : r <= -2147483648.0 ? std::numeric_limits<int32_t>::min()
                                     : static_cast<int32_t>(r);
    } else {
      value.f = static_cast<float>(a.value);
    }
    dnnl::memory src(pl.value_view, ctx.engine(), &value);
    dnnl::memory dst(pl.user_y, ctx.engine(), a.y);
    pl.fill->execute(ctx.stream(), src, dst, workspace_at(ws, pl.scratchpad_offset));
    ctx.stream().wait();
  }
};

// ---- scale --------------------------------------------------------------------------------

struct scale_plan final : tensor_op_plan {
  dnnl::memory::desc user_y, stage;
  // direct: the eltwise; staged: the two reorders
  dnnl::eltwise_forward::primitive_desc eltwise_pd;
  dnnl::eltwise_forward eltwise;
  std::optional<reorder_step> to_stage, back;
  size_t stage_offset = 0, scratchpad_offset = 0;
};

struct scale_traits {
  using problem = tsrpScaleTensorProblem;
  using args = tsrpScaleTensorArgs;
  using plan = scale_plan;
  static constexpr const char* name = "scale_tensor";

  static std::string check(const problem& p) {
    std::string reason = check_tensor(p.y, "y");
    if (reason.empty()) reason = check_output_does_not_overlap(p.y, "y");
    return reason;
  }
  static bool empty(const problem& p) { return element_count(p.y) == 0; }
  static cache_key key(const problem& p) {
    cache_key k(name);
    k.add(p.y);
    return k;
  }
  static void add_args(cache_key& k, const args& a) { k.add(double{a.alpha}); }
  static std::vector<args> shapes() {
    std::vector<args> out;
    for (float alpha : k_scale_classes) out.push_back(args{sizeof(args), nullptr, alpha});
    return out;
  }
  static std::string check_args(const problem&, const args& a) {
    return a.y ? std::string() : std::string("null y");
  }
  static std::shared_ptr<plan> build(const dnnl::engine& engine, const problem& p, const args& a) {
    return build_within(engine, p, a, k_no_workspace_limit);
  }
  // The in-place eltwise unless it is oneDNN's reference code; then the staged reorders, unless
  // they need more than `limit` bytes (the run passes what workspace_size reported, see
  // k_scale_classes) and the reference eltwise fits.
  static std::shared_ptr<plan> build_within(const dnnl::engine& engine, const problem& p,
                                            const args& a, size_t limit) {
    std::shared_ptr<scale_plan> in_place;  // the reference eltwise, kept as the fallback
    if (is_floating_data_type(p.y.data_type)) {
      try {
        auto pl = std::make_shared<scale_plan>();
        pl->user_y = make_memory_desc(p.y);
        pl->eltwise_pd = dnnl::eltwise_forward::primitive_desc(
            engine, dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, pl->user_y,
            pl->user_y, a.alpha, 0.0f, user_scratchpad_attr());
        workspace_layout layout;
        pl->scratchpad_offset = layout.reserve(scratchpad_bytes(pl->eltwise_pd));
        pl->workspace_bytes = layout.required_bytes();
        pl->description = std::string("in place eltwise=") + pl->eltwise_pd.impl_info_str();
        if (pl->workspace_bytes <= limit) {
          if (!is_reference_impl(pl->eltwise_pd)) return pl;
          in_place = pl;
        }
      } catch (const dnnl::error&) {
        // no eltwise for this type here (f16 without AVX512-FP16): stage
      }
    }
    auto pl = std::make_shared<scale_plan>();
    pl->user_y = make_memory_desc(p.y);
    pl->stage = make_dense_desc_like(p.y, dt::f32);
    try {
      pl->to_stage = make_reorder_step(engine, pl->user_y, pl->stage, a.alpha, 0.0f);
      pl->back = make_reorder_step(engine, pl->stage, pl->user_y, 1.0f, 0.0f);
    } catch (const dnnl::error&) {
      throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                         std::string("oneDNN has no reorder between ") + data_type_name(p.y.data_type) +
                             " and f32: " + current_exception_text());
    }
    workspace_layout layout;
    pl->stage_offset = layout.reserve(pl->stage.get_size());
    pl->scratchpad_offset =
        layout.reserve(std::max(scratchpad_bytes(pl->to_stage->pd), scratchpad_bytes(pl->back->pd)));
    pl->workspace_bytes = layout.required_bytes();
    pl->description = std::string("staged through f32: reorder=") + pl->to_stage->pd.impl_info_str() +
                      " (scaled) then reorder=" + pl->back->pd.impl_info_str();
    if (pl->workspace_bytes > limit) {
      if (in_place) return in_place;
      throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                         pl->description + ": more than the " + std::to_string(limit) +
                             " bytes workspace_size reported");
    }
    return pl;
  }
  static void instantiate(plan& pl) {
    if (pl.to_stage) {
      pl.to_stage->instantiate();
      pl.back->instantiate();
    } else {
      pl.eltwise = dnnl::eltwise_forward(pl.eltwise_pd);
    }
  }
  static void execute(const plan& pl, context& ctx, const problem&, const args& a, void* ws) {
    dnnl::engine& engine = ctx.engine();
    dnnl::stream& stream = ctx.stream();
    void* scratchpad = workspace_at(ws, pl.scratchpad_offset);
    dnnl::memory y(pl.user_y, engine, a.y);
    if (pl.to_stage) {
      dnnl::memory staged(pl.stage, engine, workspace_at(ws, pl.stage_offset));
      pl.to_stage->execute(stream, y, staged, scratchpad);
      pl.back->execute(stream, staged, y, scratchpad);
    } else {
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, y}, {DNNL_ARG_DST, y}};
      if (scratchpad_bytes(pl.eltwise_pd) > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pl.eltwise_pd.scratchpad_desc(), engine, scratchpad));
      pl.eltwise.execute(stream, args);
    }
    stream.wait();
  }
};

const tsrpKernel g_set = tensor_op_kernel<set_traits>::make(
    TSRP_OP_SET_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN reorder from one value through stride-0 dims: the value is rounded to f32 first "
    "(exact for int32 outputs), then to y's type.");

const tsrpKernel g_scale = tensor_op_kernel<scale_traits>::make(
    TSRP_OP_SCALE_TENSOR, TSRP_KERNEL_DETERMINISTIC,
    "oneDNN eltwise_linear in place, or (strided, f16 without AVX512-FP16, integer tensors) a "
    "scaled reorder into an f32 buffer in the workspace and back: computed in f32, rounded once.");

}  // namespace

const tsrpKernel& set_tensor_kernel() noexcept { return g_set; }
const tsrpKernel& scale_tensor_kernel() noexcept { return g_scale; }

}  // namespace tessera::onednn
