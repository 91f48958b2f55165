// tessera-bench --conv beyond plain forward: --dir=FWD_B (tsrConvolutionBiasActivationForward,
// --attr-post-ops=relu.. for the activation), BWD_D, BWD_W, BWD_WB (weights, then the bias
// through tsrConvolutionBackwardBias), and --dt=s8 forward (--dst-dt=f32|s32|s8, default s32).
#include <cstring>
#include <memory>

#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "reference_convolution_backward.hpp"

namespace tessera::tools {

prepared_problem prepare_conv_other(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::conv_descriptor d;
  std::string error;
  if (!common::parse_conv_descriptor(bp.text, &d, &error)) {
    outcome.descriptor = "--conv " + bp.text;
    outcome.detail = "bad convolution descriptor '" + bp.text + "': " + error;
    return {};
  }
  enum { fwd, fwd_b, bwd_d, bwd_w, bwd_wb } kind;
  if (s.dir == "fwd_d" || s.dir == "fwd_i") kind = fwd;
  else if (s.dir == "fwd_b") kind = fwd_b;
  else if (s.dir == "bwd_d") kind = bwd_d;
  else if (s.dir == "bwd_w") kind = bwd_w;
  else if (s.dir == "bwd_wb") kind = bwd_wb;
  else {
    outcome.descriptor = "--conv " + bp.text;
    outcome.detail = "convolution directions are FWD_D, FWD_B, BWD_D, BWD_W and BWD_WB";
    return {};
  }
  const bool int8 = s.data_type == TSRP_DATA_INT8;
  if (int8 && kind != fwd) {
    outcome.descriptor = "--conv " + bp.text;
    outcome.detail = "s8 convolutions are forward only (--dir=FWD_D)";
    return {};
  }
  tsrpActivationMode_t act_mode = TSRP_ACTIVATION_IDENTITY;
  double act_coef = 0.0;
  if (kind == fwd_b && !s.post_ops.empty() &&
      !common::parse_activation(s.post_ops, 0.0, 0.0, &act_mode, &act_coef, &error)) {
    outcome.descriptor = "--conv " + bp.text;
    outcome.detail = "bad --attr-post-ops: " + error;
    return {};
  }
  const int32_t y_type = int8 ? (s.dst_dt < 0 ? TSRP_DATA_INT32 : s.dst_dt) : s.data_type;
  static const char* const dir_names[] = {"FWD_D", "FWD_B", "BWD_D", "BWD_W", "BWD_WB"};
  std::string extra = std::string(" --dir=") + dir_names[kind];
  if (int8) extra += std::string(" --dst-dt=") + common::data_type_name(y_type);
  if (kind == fwd_b && !s.post_ops.empty()) extra += " --attr-post-ops=" + s.post_ops;
  if (s.conv_mode == TSRP_CONVOLUTION) extra += " --conv-mode=convolution";
  std::string command = common::format_conv_bench_command(
      d, s.data_type, s.channels_last ? "nhwc" : "nchw", s.backend);
  command.insert(std::strlen("tessera-bench --conv"), extra);
  outcome.repro = command;
  outcome.descriptor = strip_program_name(command);

  return [=](tsrHandle_t handle, problem_outcome& o) {
    int64_t xd[5], wd[5], yd[5];
    const int n = common::conv_tensor_dims(d, xd, wd, yd);
    host_tensor x = host_tensor::packed(s.data_type, {xd, xd + n}, s.channels_last);
    host_tensor w = host_tensor::packed(s.data_type, {wd, wd + n}, s.channels_last);
    host_tensor y = host_tensor::packed(y_type, {yd, yd + n}, s.channels_last);
    std::vector<int64_t> bd(static_cast<size_t>(n), 1);
    bd[1] = d.oc;
    host_tensor bias = host_tensor::packed(y_type, bd, s.channels_last);
    tsrpConvolutionProblem p{};
    common::conv_descriptor_to_problem(d, &p);
    p.mode = s.conv_mode;
    p.compute_type = int8 ? TSRP_DATA_INT32 : TSRP_DATA_FLOAT;
    p.x = x.desc(), p.w = w.desc(), p.y = y.desc();
    int64_t out_spatial = 1, kernel_spatial = 1;
    for (int i = 0; i < d.spatial_dims; ++i) out_spatial *= d.out[i], kernel_spatial *= d.k[i];
    const int64_t length = kind == bwd_d                      ? (d.oc / d.g) * kernel_spatial
                           : kind == bwd_w || kind == bwd_wb ? d.mb * out_spatial
                                                              : reference::convolution_reduction_length(p);
    const reference::conv_fill fill = reference::choose_conv_fill(s.data_type, length);
    // The inputs: x and w forward; w and dy (in y) for data; x and dy for weights.
    host_tensor& in1 = kind == bwd_d ? w : x;
    host_tensor& in2 = kind == bwd_d || kind == fwd || kind == fwd_b ? (kind == bwd_d ? y : w) : y;
    reference::fill_integers(in1, kind == bwd_d ? fill.w : fill.x, seed_x);
    reference::fill_integers(in2, kind == bwd_d ? fill.x : fill.w, seed_w);
    reference::fill_integers(bias, {-3, 3, 1.0}, seed_dy);
    host_tensor& out = kind == bwd_d ? x : kind == bwd_w || kind == bwd_wb ? w : y;
    reference::fill_poison(out);
    host_tensor db = bias;
    reference::fill_poison(db);
    device_tensor x_dev(handle, x), w_dev(handle, w), y_dev(handle, y), b_dev(handle, bias),
        db_dev(handle, db);
    x_dev.upload(handle, x);
    w_dev.upload(handle, w);
    y_dev.upload(handle, y);
    b_dev.upload(handle, bias);
    db_dev.upload(handle, db);
    convolution_descriptor conv("tsrCreateConvolutionDescriptor");
    check(tsrSetConvolutionNdDescriptor(conv.get(), d.spatial_dims, d.pad_before, d.pad_after,
                                        d.stride, d.dilation,
                                        static_cast<tsrConvolutionMode_t>(s.conv_mode),
                                        int8 ? TSR_DATA_INT32 : TSR_DATA_FLOAT),
          "tsrSetConvolutionNdDescriptor");
    check(tsrSetConvolutionGroupCount(conv.get(), d.g), "tsrSetConvolutionGroupCount");
    activation_descriptor act("tsrCreateActivationDescriptor");
    check(tsrSetActivationDescriptor(act.get(), static_cast<tsrActivationMode_t>(act_mode),
                                     act_coef),
          "tsrSetActivationDescriptor");
    std::unique_ptr<device_buffer> workspace;
    size_t workspace_size = 0;
    auto call = [&](tsrAlgo_t algo) -> tsrStatus_t {
      switch (kind) {
        case fwd: {
          size_t bytes = 0;
          tsrStatus_t st = tsrGetConvolutionForwardWorkspaceSize(
              handle, x_dev.desc.get(), w_dev.desc.get(), conv.get(), y_dev.desc.get(), algo,
              &bytes);
          if (st != TSR_STATUS_SUCCESS) return st;
          if (bytes > workspace_size)
            workspace = std::make_unique<device_buffer>(handle, bytes), workspace_size = bytes;
          return tsrConvolutionForward(handle, 1.0f, x_dev.desc.get(), x_dev.buffer.get(),
                                       w_dev.desc.get(), w_dev.buffer.get(), conv.get(), algo,
                                       workspace ? workspace->get() : nullptr, workspace_size,
                                       0.0f, y_dev.desc.get(), y_dev.buffer.get());
        }
        case fwd_b: {
          size_t bytes = 0;
          tsrStatus_t st = tsrGetConvolutionBiasActivationForwardWorkspaceSize(
              handle, x_dev.desc.get(), w_dev.desc.get(), conv.get(), nullptr, b_dev.desc.get(),
              act.get(), y_dev.desc.get(), algo, &bytes);
          if (st != TSR_STATUS_SUCCESS) return st;
          if (bytes > workspace_size)
            workspace = std::make_unique<device_buffer>(handle, bytes), workspace_size = bytes;
          return tsrConvolutionBiasActivationForward(
              handle, 1.0f, x_dev.desc.get(), x_dev.buffer.get(), w_dev.desc.get(),
              w_dev.buffer.get(), conv.get(), algo, workspace ? workspace->get() : nullptr,
              workspace_size, 0.0f, nullptr, nullptr, b_dev.desc.get(), b_dev.buffer.get(),
              act.get(), y_dev.desc.get(), y_dev.buffer.get());
        }
        case bwd_d:
          return tsrConvolutionBackwardData(handle, 1.0f, w_dev.desc.get(), w_dev.buffer.get(),
                                            y_dev.desc.get(), y_dev.buffer.get(), conv.get(),
                                            algo, nullptr, 0, 0.0f, x_dev.desc.get(),
                                            x_dev.buffer.get());
        default: {
          tsrStatus_t st = tsrConvolutionBackwardFilter(
              handle, 1.0f, x_dev.desc.get(), x_dev.buffer.get(), y_dev.desc.get(),
              y_dev.buffer.get(), conv.get(), algo, nullptr, 0, 0.0f, w_dev.desc.get(),
              w_dev.buffer.get());
          if (st != TSR_STATUS_SUCCESS || kind != bwd_wb) return st;
          return tsrConvolutionBackwardBias(handle, 1.0f, y_dev.desc.get(), y_dev.buffer.get(),
                                            0.0f, db_dev.desc.get(), db_dev.buffer.get());
        }
      }
    };
    const tsrOperation_t op = kind == fwd     ? TSR_OP_CONVOLUTION_FORWARD
                              : kind == fwd_b ? TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD
                              : kind == bwd_d ? TSR_OP_CONVOLUTION_BACKWARD_DATA
                                              : TSR_OP_CONVOLUTION_BACKWARD_FILTER;
    const char* name = tsrGetOperationName(op);
    const tsrAlgo_t algo = run_first_supported(kernel_candidates(op, s.backend, s.impl), call, name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      std::string err;
      host_tensor expected(out.desc());
      bool ok;
      switch (kind) {
        case fwd:
          ok = reference::convolution_forward_int8(p, x.data(), w.data(), nullptr, 1.0, 0.0,
                                                   expected.data(), &err);
          break;
        case fwd_b: {
          tsrpConvolutionBiasActivationProblem f{};
          f.struct_size = sizeof f;
          f.x = p.x, f.w = p.w, f.y = p.y, f.bias = bias.desc(), f.z = p.y;
          f.spatial_dims = p.spatial_dims, f.mode = p.mode, f.compute_type = p.compute_type;
          f.groups = p.groups;
          for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
            f.pad_before[i] = p.pad_before[i], f.pad_after[i] = p.pad_after[i];
            f.stride[i] = p.stride[i], f.dilation[i] = p.dilation[i];
          }
          f.activation_mode = act_mode;
          f.activation_coef = act_coef;
          ok = reference::convolution_bias_activation_forward(f, x.data(), w.data(), nullptr,
                                                              bias.data(), 1.0, 0.0,
                                                              expected.data(), &err);
          break;
        }
        case bwd_d:
          ok = reference::convolution_backward_data(p, w.data(), y.data(), 1.0, 0.0,
                                                    expected.data(), &err);
          break;
        default:
          ok = reference::convolution_backward_filter(p, x.data(), y.data(), 1.0, 0.0,
                                                      expected.data(), &err);
      }
      if (!ok) return reference_failed(o, err);
      (kind == bwd_d ? x_dev : kind == bwd_w || kind == bwd_wb ? w_dev : y_dev).download(handle, out);
      reference::tolerance tol = int8 ? reference::tolerance{0.0, 0.0}
                                      : reference::conv_tolerance(s.data_type, length);
      if (kind == fwd_b && act_mode != TSRP_ACTIVATION_IDENTITY &&
          act_mode != TSRP_ACTIVATION_RELU && act_mode != TSRP_ACTIVATION_LEAKY_RELU &&
          act_mode != TSRP_ACTIVATION_CLIPPED_RELU) {
        const reference::tolerance a = reference::activation_tolerance(s.data_type, false);
        tol.abs = std::max(tol.abs, a.abs), tol.rel = std::max(tol.rel, a.rel);
      }
      if (!judge_rounded(o, kind == bwd_d ? "dx" : kind == fwd || kind == fwd_b ? "y" : "dw",
                         out, expected, tol))
        return;
      if (kind == bwd_wb) {
        db_dev.download(handle, db);
        host_tensor e_db(db.desc());
        tsrpConvolutionBackwardBiasProblem bp2{sizeof(tsrpConvolutionBackwardBiasProblem),
                                               y.desc(), db.desc()};
        if (!reference::convolution_backward_bias(bp2, y.data(), 1.0, 0.0, e_db.data(), &err))
          return reference_failed(o, err);
        if (!judge_rounded(o, "db", db, e_db,
                           reference::conv_tolerance(s.data_type, d.mb * out_spatial)))
          return;
      }
    }
    if (s.mode & mode_performance) {
      o.time_ms = median_time_ms(handle, s.iterations, [&] { check(call(algo), name); });
      const double flops = 2.0 * static_cast<double>(d.mb) * static_cast<double>(d.oc) *
                           static_cast<double>(out_spatial) * static_cast<double>(d.ic / d.g) *
                           static_cast<double>(kernel_spatial);
      o.rate = flops / (o.time_ms * 1e-3) / 1e9;
      o.rate_unit = "GFLOP/s";
    }
  };
}

}  // namespace tessera::tools
