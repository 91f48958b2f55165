// tessera-bench --matmul: tsrMatmul with its bias and activation epilogue.
#include <utility>

#include <tessera_common/op_descriptors.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_matmul.hpp"

namespace tessera::tools {
namespace {

using matmul_descriptor_owner =
    owned<tsrMatmulDescriptor_t, tsrCreateMatmulDescriptor, tsrDestroyMatmulDescriptor>;

// A [.., rows, cols] tensor, stored transposed (the last two dims' strides swapped) when asked.
tsrpTensor matrix_desc(int32_t dt, std::vector<int64_t> dims, bool transposed) {
  const size_t n = dims.size();
  if (!transposed) return host_tensor::packed(dt, dims, false).desc();
  std::swap(dims[n - 1], dims[n - 2]);
  tsrpTensor d = host_tensor::packed(dt, dims, false).desc();
  std::swap(d.dims[n - 1], d.dims[n - 2]);
  std::swap(d.strides[n - 1], d.strides[n - 2]);
  return d;
}

}  // namespace

// --stag=ba (2-D) / abdc (4-D)... i.e. the last two letters swapped, or --transpose-a=true,
// stores A transposed; --wtag= is not read: B's transpose is --transpose-b=true.
prepared_problem prepare_matmul(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::matmul_descriptor d;
  std::string error;
  if (!common::parse_matmul_descriptor(bp.text, &d, &error)) {
    outcome.descriptor = "--matmul " + bp.text;
    outcome.detail = "bad problem '" + bp.text + "': " + error;
    return {};
  }
  auto swapped_tag = [](const std::string& t) {
    return t.size() >= 2 && t[t.size() - 1] < t[t.size() - 2];
  };
  const bool ta = s.transpose_a || swapped_tag(s.stag), tb = s.transpose_b;
  tsrpActivationMode_t act_mode = TSRP_ACTIVATION_IDENTITY;
  double act_coef = 0.0;
  if (!s.post_ops.empty() &&
      !common::parse_activation(s.post_ops, 0.0, 0.0, &act_mode, &act_coef, &error)) {
    outcome.descriptor = "--matmul " + bp.text;
    outcome.detail = "bad --attr-post-ops: " + error;
    return {};
  }
  const bool integer = s.data_type == TSRP_DATA_INT8;
  const int32_t c_type = integer ? (s.dst_dt < 0 ? TSRP_DATA_INT32 : s.dst_dt)
                                 : s.data_type;
  std::string command = command_head(s, false);
  if (integer) command += std::string(" --dst-dt=") + common::data_type_name(c_type);
  if (ta) command += " --transpose-a=true";
  if (tb) command += " --transpose-b=true";
  if (s.matmul_bias) command += " --bia-dt=f32";
  if (!s.post_ops.empty()) command += " --attr-post-ops=" + s.post_ops;
  set_command(outcome, s, command + " " + common::format_matmul_descriptor(d));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    std::vector<int64_t> c_dims;
    std::string err;
    common::matmul_output_dims(d, &c_dims, &err);
    host_tensor a(matrix_desc(s.data_type, d.a, ta)), b(matrix_desc(s.data_type, d.b, tb));
    host_tensor c = host_tensor::packed(c_type, c_dims, false);
    std::vector<int64_t> bias_dims(c_dims.size(), 1);
    bias_dims.back() = c_dims.back();
    // The bias in C's type (f32 for an s8 problem's f32/s32 output).
    host_tensor bias = host_tensor::packed(integer ? TSRP_DATA_FLOAT : c_type, bias_dims, false);
    tsrpMatmulProblem p{};
    p.struct_size = sizeof p;
    p.a = a.desc(), p.b = b.desc(), p.c = c.desc(), p.bias = bias.desc();
    p.has_bias = s.matmul_bias;
    p.compute_type = integer ? TSRP_DATA_INT32 : TSRP_DATA_FLOAT;
    p.activation_mode = act_mode;
    p.activation_coef = act_coef;
    const int64_t K = d.a.back();
    const reference::conv_fill fill = reference::choose_conv_fill(c_type, K);
    reference::fill_integers(a, fill.x, seed_x);
    reference::fill_integers(b, fill.w, seed_w);
    reference::fill_integers(bias, {-3, 3, 1.0}, seed_dy);
    reference::fill_poison(c);
    device_tensor a_dev(handle, a), b_dev(handle, b), c_dev(handle, c), bias_dev(handle, bias);
    a_dev.upload(handle, a);
    b_dev.upload(handle, b);
    c_dev.upload(handle, c);
    bias_dev.upload(handle, bias);
    activation_descriptor act("tsrCreateActivationDescriptor");
    check(tsrSetActivationDescriptor(act.get(), static_cast<tsrActivationMode_t>(act_mode),
                                     act_coef),
          "tsrSetActivationDescriptor");
    matmul_descriptor_owner md("tsrCreateMatmulDescriptor");
    check(tsrSetMatmulDescriptor(md.get(), integer ? TSR_DATA_INT32 : TSR_DATA_FLOAT,
                                 act_mode == TSRP_ACTIVATION_IDENTITY ? nullptr : act.get(),
                                 TSR_MATMUL_BLEND_AFTER_ACTIVATION),
          "tsrSetMatmulDescriptor");
    auto call = [&](tsrAlgo_t algo) {
      return tsrMatmul(handle, md.get(), algo, 1.0f, a_dev.desc.get(), a_dev.buffer.get(),
                       b_dev.desc.get(), b_dev.buffer.get(),
                       s.matmul_bias ? bias_dev.desc.get() : nullptr,
                       s.matmul_bias ? bias_dev.buffer.get() : nullptr, 0.0f, c_dev.desc.get(),
                       c_dev.buffer.get(), nullptr, 0);
    };
    const tsrAlgo_t algo =
        run_first_supported(kernel_candidates(TSR_OP_MATMUL, s.backend, s.impl), call, "tsrMatmul", o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      c_dev.download(handle, c);
      host_tensor expected(c.desc());
      if (!reference::matmul(p, a.data(), b.data(), s.matmul_bias ? bias.data() : nullptr, 1.0,
                             0.0, expected.data(), &err))
        return reference_failed(o, err);
      if (!judge_rounded(o, "dst", c, expected, reference::matmul_tolerance(p))) return;
    }
    if (s.mode & mode_performance) {
      o.time_ms = median_time_ms(handle, s.iterations, [&] { check(call(algo), "tsrMatmul"); });
      const double flops = 2.0 * static_cast<double>(c.element_count()) * static_cast<double>(K);
      o.rate = flops / (o.time_ms * 1e-3) / 1e9;
      o.rate_unit = "GFLOP/s";
    }
  };
}

}  // namespace tessera::tools
