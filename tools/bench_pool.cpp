// tessera-bench --pool, --softmax and --lrn: the pooling header's family.
#include <cstring>

#include <tessera_common/op_descriptors.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_lrn.hpp"
#include "reference_pooling.hpp"
#include "reference_softmax.hpp"

namespace tessera::tools {
namespace {

using pooling_descriptor =
    owned<tsrPoolingDescriptor_t, tsrCreatePoolingDescriptor, tsrDestroyPoolingDescriptor>;
using lrn_descriptor = owned<tsrLrnDescriptor_t, tsrCreateLrnDescriptor, tsrDestroyLrnDescriptor>;

prepared_problem bad_problem(problem_outcome& o, const bench_problem& bp, const std::string& why) {
  o.descriptor = std::string("--") + driver_name(bp.settings.driver) + " " + bp.text;
  o.detail = "bad problem '" + bp.text + "': " + why;
  return {};
}


}  // namespace

// ---- pooling ----------------------------------------------------------------------------------

prepared_problem prepare_pool(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::pool_descriptor d;
  std::string error;
  if (!common::parse_pool_descriptor(bp.text, &d, &error)) return bad_problem(outcome, bp, error);
  const std::string alg = s.alg_given ? s.algorithm : "max";
  int32_t mode;
  if (alg == "max") mode = TSRP_POOLING_MAX;
  else if (alg == "avg_p" || alg == "pooling_avg_include_padding")
    mode = TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  else if (alg == "avg_np" || alg == "avg" || alg == "pooling_avg_exclude_padding")
    mode = TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  else return bad_problem(outcome, bp, "unknown algorithm '" + alg + "' (max, avg_p, avg_np)");
  if (s.dir != "fwd_d" && s.dir != "fwd_i" && s.dir != "bwd_d")
    return bad_problem(outcome, bp, "pooling directions are FWD_D and BWD_D");
  const bool backward = s.backward;
  set_command(outcome, s,
              command_head(s) + " --alg=" + alg + " --dir=" + (backward ? "BWD_D" : "FWD_D") +
                  " " + common::format_pool_descriptor(d));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    int64_t xd[5], yd[5];
    const int n = common::pool_tensor_dims(d, xd, yd);
    host_tensor x = host_tensor::packed(s.data_type, {xd, xd + n}, s.channels_last);
    host_tensor y = host_tensor::packed(s.data_type, {yd, yd + n}, s.channels_last);
    host_tensor dy = packed_like(y, s.channels_last), dx = packed_like(x, s.channels_last);
    tsrpPoolingProblem p{};
    p.struct_size = sizeof p;
    p.mode = mode;
    p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
    p.spatial_dims = d.spatial_dims;
    for (int i = 0; i < d.spatial_dims; ++i) {
      p.window[i] = d.k[i], p.stride[i] = d.stride[i];
      p.pad_before[i] = d.pad_before[i], p.pad_after[i] = d.pad_after[i];
    }
    p.x = x.desc(), p.y = y.desc(), p.dy = dy.desc(), p.dx = dx.desc();
    // Distinct-ish integers keep max ties rare; ties go to the first in both anyway.
    reference::fill_integers(x, {-16, 16, 1.0}, seed_x);
    std::string err;
    if (backward) {
      if (!reference::pooling_forward(p, x.data(), 1.0, 0.0, y.data(), &err))
        return reference_failed(o, err);
      y.round_to_data_type();
      reference::fill_integers(dy, {-4, 4, 1.0}, seed_dy);
    }
    host_tensor& out = backward ? dx : y;
    reference::fill_poison(out);
    tensor_rotation rotation = backward ? tensor_rotation({&x, &y, &dy}, s)
                                        : tensor_rotation({&x}, s);
    tensor_rotation* backward_input = backward ? &rotation : nullptr;
    device_tensor x_dev(handle, x, &rotation), y_dev(handle, y, backward_input),
        dy_dev(handle, dy, backward_input), dx_dev(handle, dx);
    x_dev.upload(handle, x);
    y_dev.upload(handle, y);
    if (backward) dy_dev.upload(handle, dy), dx_dev.upload(handle, dx);
    pooling_descriptor pool("tsrCreatePoolingDescriptor");
    check(tsrSetPoolingNdDescriptor(pool.get(), static_cast<tsrPoolingMode_t>(mode),
                                    TSR_NOT_PROPAGATE_NAN, d.spatial_dims, d.k, d.pad_before,
                                    d.pad_after, d.stride),
          "tsrSetPoolingNdDescriptor");
    auto call = [&](tsrAlgo_t algo) {
      return backward ? tsrPoolingBackward(handle, pool.get(), algo, 1.0f, y_dev.desc.get(),
                                           y_dev.data(), dy_dev.desc.get(),
                                           dy_dev.data(), x_dev.desc.get(),
                                           x_dev.data(), 0.0f, dx_dev.desc.get(),
                                           dx_dev.data())
                      : tsrPoolingForward(handle, pool.get(), algo, 1.0f, x_dev.desc.get(),
                                          x_dev.data(), 0.0f, y_dev.desc.get(),
                                          y_dev.data());
    };
    const char* name = backward ? "tsrPoolingBackward" : "tsrPoolingForward";
    const tsrAlgo_t algo = run_first_supported(
        kernel_candidates(backward ? TSR_OP_POOLING_BACKWARD : TSR_OP_POOLING_FORWARD, s),
        call, name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      (backward ? dx_dev : y_dev).download(handle, out);
      host_tensor expected = packed_like(out, s.channels_last);
      const bool ok = backward ? reference::pooling_backward(p, x.data(), dy.data(), 1.0, 0.0,
                                                             expected.data(), &err)
                               : reference::pooling_forward(p, x.data(), 1.0, 0.0,
                                                            expected.data(), &err);
      if (!ok) return reference_failed(o, err);
      if (!judge_rounded(o, backward ? "dx" : "y", out, expected,
                         reference::pooling_tolerance(s.data_type)))
        return;
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s,
                        backward ? tensor_bytes(x) * 2 + tensor_bytes(y) * 2
                                 : tensor_bytes(x) + tensor_bytes(y),
                        [&] { check(call(algo), name); }, &rotation);
  };
}

// ---- softmax ----------------------------------------------------------------------------------

prepared_problem prepare_softmax(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::vector<int64_t> dims;
  std::string error;
  if (!common::parse_dims(bp.text, &dims, &error)) return bad_problem(outcome, bp, error);
  const std::string alg = s.alg_given ? s.algorithm : "softmax";
  int32_t algorithm;
  if (alg == "softmax" || alg == "softmax_accurate") algorithm = TSRP_SOFTMAX_ACCURATE;
  else if (alg == "logsoftmax" || alg == "softmax_log") algorithm = TSRP_SOFTMAX_LOG;
  else if (alg == "fast") algorithm = TSRP_SOFTMAX_FAST;
  else return bad_problem(outcome, bp, "unknown algorithm '" + alg + "' (softmax, logsoftmax)");
  if (!s.instance && s.axis != 1)
    return bad_problem(outcome, bp, "Tessera's softmax runs over axis 1 (channels) or, with "
                                    "--sm-mode=instance, over all dims but the first");
  if (dims.size() < 2) return bad_problem(outcome, bp, "softmax needs at least 2 dims");
  const bool backward = s.backward;
  const int32_t mode = s.instance ? TSRP_SOFTMAX_MODE_INSTANCE : TSRP_SOFTMAX_MODE_CHANNEL;
  set_command(outcome, s,
              command_head(s) + " --alg=" + alg + " --dir=" + (backward ? "BWD_D" : "FWD_D") +
                  (s.instance ? " --sm-mode=instance" : " --axis=1") + " " +
                  common::format_dims(dims));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    host_tensor x = host_tensor::packed(s.data_type, dims, s.channels_last);
    host_tensor y = packed_like(x, s.channels_last), dy = packed_like(x, s.channels_last),
                dx = packed_like(x, s.channels_last);
    tsrpSoftmaxProblem p{};
    p.struct_size = sizeof p;
    p.algorithm = algorithm;
    p.mode = mode;
    p.x = x.desc(), p.y = y.desc(), p.dy = dy.desc(), p.dx = dx.desc();
    reference::fill_activation_input(x, seed_x, false);
    std::string err;
    if (backward) {
      if (!reference::softmax_forward(p, x.data(), 1.0, 0.0, y.data(), &err))
        return reference_failed(o, err);
      y.round_to_data_type();
      reference::fill_integers(dy, {-4, 4, 1.0}, seed_dy);
    }
    host_tensor& out = backward ? dx : y;
    reference::fill_poison(out);
    tensor_rotation rotation = backward ? tensor_rotation({&y, &dy}, s) : tensor_rotation({&x}, s);
    tensor_rotation* backward_input = backward ? &rotation : nullptr;
    device_tensor x_dev(handle, x, backward ? nullptr : &rotation),
        y_dev(handle, y, backward_input), dy_dev(handle, dy, backward_input), dx_dev(handle, dx);
    x_dev.upload(handle, x);
    y_dev.upload(handle, y);
    if (backward) dy_dev.upload(handle, dy), dx_dev.upload(handle, dx);
    const auto a = static_cast<tsrSoftmaxAlgorithm_t>(algorithm);
    const auto m = static_cast<tsrSoftmaxMode_t>(mode);
    auto call = [&](tsrAlgo_t algo) {
      return backward ? tsrSoftmaxBackward(handle, a, m, algo, 1.0f, y_dev.desc.get(),
                                           y_dev.data(), dy_dev.desc.get(),
                                           dy_dev.data(), 0.0f, dx_dev.desc.get(),
                                           dx_dev.data())
                      : tsrSoftmaxForward(handle, a, m, algo, 1.0f, x_dev.desc.get(),
                                          x_dev.data(), 0.0f, y_dev.desc.get(),
                                          y_dev.data());
    };
    const char* name = backward ? "tsrSoftmaxBackward" : "tsrSoftmaxForward";
    const tsrAlgo_t algo = run_first_supported(
        kernel_candidates(backward ? TSR_OP_SOFTMAX_BACKWARD : TSR_OP_SOFTMAX_FORWARD, s),
        call, name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      (backward ? dx_dev : y_dev).download(handle, out);
      host_tensor expected = packed_like(out, s.channels_last);
      const bool ok = backward ? reference::softmax_backward(p, y.data(), dy.data(), 1.0, 0.0,
                                                             expected.data(), &err)
                               : reference::softmax_forward(p, x.data(), 1.0, 0.0,
                                                            expected.data(), &err);
      if (!ok) return reference_failed(o, err);
      const int64_t row = reference::softmax_row_length(x.desc(), mode);
      if (!judge_rounded(o, backward ? "dx" : "y", out, expected,
                         reference::softmax_tolerance(s.data_type, row, backward)))
        return;
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s, tensor_bytes(x) * (backward ? 3 : 2),
                        [&] { check(call(algo), name); }, &rotation);
  };
}

// ---- LRN --------------------------------------------------------------------------------------

prepared_problem prepare_lrn(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::norm_descriptor d;
  std::string error;
  if (!common::parse_lrn_descriptor(bp.text, &d, &error)) return bad_problem(outcome, bp, error);
  const std::string alg = s.alg_given ? s.algorithm : "across";
  if (alg != "across" && alg != "lrn_across_channels")
    return bad_problem(outcome, bp, "Tessera's LRN is across channels only (--alg=across)");
  // benchdnn's defaults: alpha 1e-4, beta 0.75, k 1 (its --alpha/--beta default to 0 for
  // eltwise here, so 0 means "not given").
  const double alpha = s.alpha != 0.0 ? s.alpha : 1e-4, beta = s.beta != 0.0 ? s.beta : 0.75;
  const bool backward = s.backward;
  set_command(outcome, s,
              command_head(s) + " --alg=across --dir=" + (backward ? "BWD_D" : "FWD_D") +
                  " --alpha=" + common::format_number(alpha) + " --beta=" +
                  common::format_number(beta) + " --k=" + common::format_number(s.k) + " " +
                  common::format_lrn_descriptor(d));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    const std::vector<int64_t> dims = common::norm_tensor_dims(d);
    host_tensor x = host_tensor::packed(s.data_type, dims, s.channels_last);
    host_tensor y = packed_like(x, s.channels_last), dy = packed_like(x, s.channels_last),
                dx = packed_like(x, s.channels_last);
    tsrpLrnProblem p{};
    p.struct_size = sizeof p;
    p.n = d.local_size, p.alpha = alpha, p.beta = beta, p.k = s.k;
    p.x = x.desc(), p.y = y.desc(), p.dy = dy.desc(), p.dx = dx.desc();
    reference::fill_activation_input(x, seed_x, false);
    std::string err;
    if (backward) {
      if (!reference::lrn_forward(p, x.data(), 1.0, 0.0, y.data(), &err))
        return reference_failed(o, err);
      y.round_to_data_type();
      reference::fill_integers(dy, {-4, 4, 1.0}, seed_dy);
    }
    host_tensor& out = backward ? dx : y;
    reference::fill_poison(out);
    tensor_rotation rotation = backward ? tensor_rotation({&x, &y, &dy}, s)
                                        : tensor_rotation({&x}, s);
    tensor_rotation* backward_input = backward ? &rotation : nullptr;
    device_tensor x_dev(handle, x, &rotation), y_dev(handle, y, backward_input),
        dy_dev(handle, dy, backward_input), dx_dev(handle, dx);
    x_dev.upload(handle, x);
    y_dev.upload(handle, y);
    if (backward) dy_dev.upload(handle, dy), dx_dev.upload(handle, dx);
    lrn_descriptor lrn("tsrCreateLrnDescriptor");
    check(tsrSetLrnDescriptor(lrn.get(), static_cast<unsigned>(d.local_size), alpha, beta, s.k),
          "tsrSetLrnDescriptor");
    auto call = [&](tsrAlgo_t algo) {
      return backward ? tsrLrnCrossChannelBackward(handle, lrn.get(), algo, 1.0f,
                                                   y_dev.desc.get(), y_dev.data(),
                                                   dy_dev.desc.get(), dy_dev.data(),
                                                   x_dev.desc.get(), x_dev.data(), 0.0f,
                                                   dx_dev.desc.get(), dx_dev.data())
                      : tsrLrnCrossChannelForward(handle, lrn.get(), algo, 1.0f,
                                                  x_dev.desc.get(), x_dev.data(), 0.0f,
                                                  y_dev.desc.get(), y_dev.data());
    };
    const char* name = backward ? "tsrLrnCrossChannelBackward" : "tsrLrnCrossChannelForward";
    const tsrAlgo_t algo = run_first_supported(
        kernel_candidates(backward ? TSR_OP_LRN_BACKWARD : TSR_OP_LRN_FORWARD, s), call,
        name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      (backward ? dx_dev : y_dev).download(handle, out);
      host_tensor expected = packed_like(out, s.channels_last);
      const bool ok = backward ? reference::lrn_backward(p, x.data(), dy.data(), 1.0, 0.0,
                                                         expected.data(), &err)
                               : reference::lrn_forward(p, x.data(), 1.0, 0.0, expected.data(),
                                                        &err);
      if (!ok) return reference_failed(o, err);
      if (!judge_rounded(o, backward ? "dx" : "y", out, expected,
                         reference::lrn_tolerance(s.data_type, backward)))
        return;
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s, tensor_bytes(x) * (backward ? 4 : 2),
                        [&] { check(call(algo), name); }, &rotation);
  };
}

}  // namespace tessera::tools
