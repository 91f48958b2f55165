// tessera-bench --bnorm, --lnorm and --rmsnorm: the normalization header.
#include <tessera_common/op_descriptors.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_batch_norm.hpp"
#include "reference_layer_norm.hpp"
#include "reference_rms_norm.hpp"

namespace tessera::tools {
namespace {

prepared_problem bad_problem(problem_outcome& o, const bench_problem& bp, const std::string& why) {
  o.descriptor = std::string("--") + driver_name(bp.settings.driver) + " " + bp.text;
  o.detail = "bad problem '" + bp.text + "': " + why;
  return {};
}

constexpr double norm_epsilon = 1.0 / 16;  // benchdnn's default; exact in every type

host_tensor f32_packed(const std::vector<int64_t>& dims) {
  return host_tensor::packed(TSRP_DATA_FLOAT, dims, false);
}

}  // namespace

// ---- batch normalization ----------------------------------------------------------------------

// FWD_D: training (batch statistics, saved mean and inverse std checked too); FWD_I or flag G:
// inference from given statistics; BWD_DW: dx, dscale and dbias from the saved statistics.
// Flag R fuses a relu (training/inference: after the affine step; backward: through y).
// Tessera always takes a scale and a shift, so flags C and H change nothing.
prepared_problem prepare_bnorm(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::norm_descriptor d;
  std::string error;
  if (!common::parse_bnorm_descriptor(bp.text, &d, &error)) return bad_problem(outcome, bp, error);
  const bool global = s.flags.find('G') != std::string::npos;
  const bool relu = s.flags.find('R') != std::string::npos;
  enum { training, inference, backward } kind;
  if (s.dir == "fwd_d" || s.dir == "fwd_b") kind = global ? inference : training;
  else if (s.dir == "fwd_i") kind = inference;
  else if (s.dir == "bwd_dw" || s.dir == "bwd_d") kind = backward;
  else return bad_problem(outcome, bp, "batch norm directions are FWD_D, FWD_I and BWD_DW");
  if (kind == backward && global)
    return bad_problem(outcome, bp, "backward with global statistics (G) is not in Tessera's API");
  const char* dir_name = kind == training ? "FWD_D" : kind == inference ? "FWD_I" : "BWD_DW";
  std::string flags = s.flags.empty() ? "" : " --flags=" + s.flags;
  set_command(outcome, s,
              command_head(s) + " --dir=" + dir_name + flags + " " +
                  common::format_bnorm_descriptor(d));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    const std::vector<int64_t> dims = common::norm_tensor_dims(d);
    host_tensor x = host_tensor::packed(s.data_type, dims, s.channels_last);
    host_tensor y = packed_like(x, s.channels_last), dy = packed_like(x, s.channels_last),
                dx = packed_like(x, s.channels_last);
    std::vector<int64_t> pdims(dims.size(), 1);
    pdims[1] = d.ic;
    host_tensor scale = filled(f32_packed(pdims).desc(), -2, 2, seed_w);
    host_tensor bias = filled(f32_packed(pdims).desc(), -3, 3, seed_w + 1);
    host_tensor mean = filled(f32_packed(pdims).desc(), -2, 2, seed_w + 2);
    host_tensor var = filled(f32_packed(pdims).desc(), 1, 4, seed_w + 3);
    host_tensor save_mean = f32_packed(pdims), save_inv = f32_packed(pdims);
    host_tensor dscale = f32_packed(pdims), dbias = f32_packed(pdims);
    tsrpBatchNormProblem p{};
    p.struct_size = sizeof p;
    p.mode = TSR_BATCHNORM_SPATIAL;
    p.activation = relu ? TSRP_ACTIVATION_RELU : TSRP_ACTIVATION_IDENTITY;
    p.epsilon = norm_epsilon;
    p.write_saved_stats = kind == training;
    p.x = x.desc(), p.y = y.desc(), p.dy = dy.desc(), p.dx = dx.desc(), p.param = scale.desc();
    reference::fill_integers(x, {-4, 4, 1.0}, seed_x);
    std::string err;
    if (kind == backward) {
      // The saved statistics and y come from a training forward.
      if (!reference::batch_norm_forward_training(p, x.data(), scale.data(), bias.data(), 1.0,
                                                  0.0, y.data(), nullptr, nullptr,
                                                  save_mean.data(), save_inv.data(), &err))
        return reference_failed(o, err);
      y.round_to_data_type();
      reference::fill_integers(dy, {-3, 3, 1.0}, seed_dy);
    }
    host_tensor& out = kind == backward ? dx : y;
    reference::fill_poison(out);
    if (kind == training) reference::fill_poison(save_mean), reference::fill_poison(save_inv);
    if (kind == backward) reference::fill_poison(dscale), reference::fill_poison(dbias);

    // Every kind reads x; backward also y and dy. The per-channel parameters are tiny.
    tensor_rotation rotation = kind == backward ? tensor_rotation({&x, &y, &dy}, s)
                                                : tensor_rotation({&x}, s);
    tensor_rotation* backward_input = kind == backward ? &rotation : nullptr;
    device_tensor x_dev(handle, x, &rotation), y_dev(handle, y, backward_input),
        dy_dev(handle, dy, backward_input), dx_dev(handle, dx);
    device_tensor sc(handle, scale), bi(handle, bias), me(handle, mean), va(handle, var),
        sm(handle, save_mean), si(handle, save_inv), ds(handle, dscale), db(handle, dbias);
    for (auto [dev, host] : {std::pair<device_tensor*, const host_tensor*>{&x_dev, &x},
                             {&y_dev, &y}, {&dy_dev, &dy}, {&dx_dev, &dx}, {&sc, &scale},
                             {&bi, &bias}, {&me, &mean}, {&va, &var}, {&sm, &save_mean},
                             {&si, &save_inv}, {&ds, &dscale}, {&db, &dbias}})
      dev->upload(handle, *host);
    activation_descriptor act("tsrCreateActivationDescriptor");
    check(tsrSetActivationDescriptor(act.get(), TSR_ACTIVATION_RELU, 0.0),
          "tsrSetActivationDescriptor");
    tsrActivationDescriptor_t a = relu ? act.get() : nullptr;
    const auto mode = TSR_BATCHNORM_SPATIAL;
    auto call = [&](tsrAlgo_t algo) -> tsrStatus_t {
      switch (kind) {
        case training:
          return tsrBatchNormalizationForwardTraining(
              handle, mode, a, algo, 1.0f, x_dev.desc.get(), x_dev.data(), sc.desc.get(),
              sc.data(), bi.data(), 0.0, norm_epsilon, nullptr, 0, 0.0f,
              y_dev.desc.get(), y_dev.data(), nullptr, nullptr, sm.data(),
              si.data());
        case inference:
          return tsrBatchNormalizationForwardInference(
              handle, mode, a, algo, 1.0f, x_dev.desc.get(), x_dev.data(), sc.desc.get(),
              sc.data(), bi.data(), me.data(), va.data(), norm_epsilon,
              nullptr, 0, 0.0f, y_dev.desc.get(), y_dev.data());
        default:
          return tsrBatchNormalizationBackward(
              handle, mode, a, algo, 1.0f, 1.0f, x_dev.desc.get(), x_dev.data(),
              y_dev.desc.get(), y_dev.data(), dy_dev.desc.get(), dy_dev.data(),
              sc.desc.get(), sc.data(), sm.data(), si.data(), norm_epsilon,
              nullptr, 0, 0.0f, dx_dev.desc.get(), dx_dev.data(), 0.0f, ds.data(),
              db.data());
      }
    };
    const tsrOperation_t op = kind == training    ? TSR_OP_BATCH_NORM_FORWARD_TRAINING
                              : kind == inference ? TSR_OP_BATCH_NORM_FORWARD_INFERENCE
                                                  : TSR_OP_BATCH_NORM_BACKWARD;
    const char* name = tsrGetOperationName(op);
    const tsrAlgo_t algo = run_first_supported(kernel_candidates(op, s), call, name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      const int64_t length = reference::batch_norm_reduction_length(p);
      host_tensor e_out = packed_like(out, s.channels_last);
      host_tensor e_sm = f32_packed(pdims), e_si = f32_packed(pdims), e_ds = f32_packed(pdims),
                  e_db = f32_packed(pdims);
      bool ok;
      if (kind == training)
        ok = reference::batch_norm_forward_training(p, x.data(), scale.data(), bias.data(), 1.0,
                                                    0.0, e_out.data(), nullptr, nullptr,
                                                    e_sm.data(), e_si.data(), &err);
      else if (kind == inference)
        ok = reference::batch_norm_forward_inference(p, x.data(), scale.data(), bias.data(),
                                                     mean.data(), var.data(), 1.0, 0.0,
                                                     e_out.data(), &err);
      else
        ok = reference::batch_norm_backward(p, x.data(), y.data(), dy.data(), scale.data(),
                                            save_mean.data(), save_inv.data(), 1.0, 0.0, 1.0,
                                            0.0, e_out.data(), e_ds.data(), e_db.data(), &err);
      if (!ok) return reference_failed(o, err);
      (kind == backward ? dx_dev : y_dev).download(handle, out);
      if (!judge_rounded(o, kind == backward ? "dx" : "y", out, e_out,
                         reference::norm_data_tolerance(s.data_type,
                                                        kind == inference ? 1 : length)))
        return;
      if (kind == training) {
        sm.download(handle, save_mean);
        si.download(handle, save_inv);
        if (!judge_rounded(o, "save_mean", save_mean, e_sm, reference::norm_stat_tolerance(length)) ||
            !judge_rounded(o, "save_inv_variance", save_inv, e_si,
                           reference::norm_stat_tolerance(length)))
          return;
      }
      if (kind == backward) {
        ds.download(handle, dscale);
        db.download(handle, dbias);
        if (!judge_rounded(o, "dscale", dscale, e_ds, reference::norm_param_grad_tolerance(length)) ||
            !judge_rounded(o, "dbias", dbias, e_db, reference::norm_param_grad_tolerance(length)))
          return;
      }
    }
    if (s.mode & mode_performance) {
      // Training reads x twice (statistics, then normalisation); backward reads x and dy twice.
      const double passes = kind == training ? 3 : kind == inference ? 2 : 5;
      time_memory_bound(o, handle, s, tensor_bytes(x) * passes,
                        [&] { check(call(algo), name); }, &rotation);
    }
  };
}

// ---- layer and RMS normalization --------------------------------------------------------------

// Over the last dim (begin_norm_axis = rank - 1), with scale (and, for layer norm, shift).
// FWD_D also checks the saved statistics; BWD_DW checks dx, dscale (and dbias).
prepared_problem prepare_lnorm(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  const bool rms = s.driver == bench_driver::rmsnorm;
  std::vector<int64_t> dims;
  std::string error;
  if (!common::parse_dims(bp.text, &dims, &error)) return bad_problem(outcome, bp, error);
  if (dims.size() < 2) return bad_problem(outcome, bp, "needs at least 2 dims");
  bool backward;
  if (s.dir == "fwd_d" || s.dir == "fwd_i") backward = false;
  else if (s.dir == "bwd_dw" || s.dir == "bwd_d") backward = true;
  else return bad_problem(outcome, bp, "directions are FWD_D and BWD_DW");
  set_command(outcome, s,
              command_head(s, false) + " --dir=" + (backward ? "BWD_DW" : "FWD_D") + " " +
                  common::format_dims(dims));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    const int axis = static_cast<int>(dims.size()) - 1;
    host_tensor x = host_tensor::packed(s.data_type, dims, false);
    host_tensor y = packed_like(x, false), dy = packed_like(x, false), dx = packed_like(x, false);
    std::vector<int64_t> sdims(dims.size(), 1), tdims = dims;
    sdims.back() = dims.back();
    tdims.back() = 1;
    host_tensor scale = filled(f32_packed(sdims).desc(), -2, 2, seed_w);
    host_tensor bias = filled(f32_packed(sdims).desc(), -3, 3, seed_w + 1);
    host_tensor mean = f32_packed(tdims), inv = f32_packed(tdims);
    host_tensor dscale = f32_packed(sdims), dbias = f32_packed(sdims);
    tsrpLayerNormProblem lp{};
    lp.struct_size = sizeof lp;
    lp.begin_norm_axis = axis;
    lp.has_scale = lp.has_bias = lp.has_dscale = lp.write_saved_stats = 1;
    lp.epsilon = norm_epsilon;
    lp.x = x.desc(), lp.y = y.desc(), lp.dy = dy.desc(), lp.dx = dx.desc();
    lp.scale = scale.desc(), lp.stats = mean.desc();
    tsrpRmsNormProblem rp{};
    rp.struct_size = sizeof rp;
    rp.begin_norm_axis = axis;
    rp.has_saved_stats = rp.has_dscale = 1;
    rp.epsilon = norm_epsilon;
    rp.x = x.desc(), rp.y = y.desc(), rp.dy = dy.desc(), rp.dx = dx.desc();
    rp.scale = scale.desc(), rp.stats = inv.desc();
    reference::fill_integers(x, {-4, 4, 1.0}, seed_x);
    std::string err;
    auto forward_ref = [&](float* out, float* m, float* i) {
      return rms ? reference::rms_norm_forward(rp, x.data(), scale.data(), out, i, &err)
                 : reference::layer_norm_forward(lp, x.data(), scale.data(), bias.data(), out, m,
                                                 i, &err);
    };
    if (backward) {
      host_tensor unused = packed_like(x, false);
      if (!forward_ref(unused.data(), mean.data(), inv.data())) return reference_failed(o, err);
      reference::fill_integers(dy, {-3, 3, 1.0}, seed_dy);
    }
    host_tensor& out = backward ? dx : y;
    reference::fill_poison(out);
    if (backward) reference::fill_poison(dscale), reference::fill_poison(dbias);
    else reference::fill_poison(mean), reference::fill_poison(inv);
    tensor_rotation rotation = backward ? tensor_rotation({&x, &dy}, s) : tensor_rotation({&x}, s);
    device_tensor x_dev(handle, x, &rotation), y_dev(handle, y),
        dy_dev(handle, dy, backward ? &rotation : nullptr), dx_dev(handle, dx),
        sc(handle, scale), bi(handle, bias), me(handle, mean), iv(handle, inv),
        ds(handle, dscale), db(handle, dbias);
    for (auto [dev, host] : {std::pair<device_tensor*, const host_tensor*>{&x_dev, &x},
                             {&y_dev, &y}, {&dy_dev, &dy}, {&dx_dev, &dx}, {&sc, &scale},
                             {&bi, &bias}, {&me, &mean}, {&iv, &inv}, {&ds, &dscale},
                             {&db, &dbias}})
      dev->upload(handle, *host);
    auto call = [&](tsrAlgo_t algo) -> tsrStatus_t {
      if (rms)
        return backward
                   ? tsrRmsNormalizationBackward(handle, algo, axis, norm_epsilon,
                                                 x_dev.desc.get(), x_dev.data(),
                                                 dy_dev.desc.get(), dy_dev.data(),
                                                 sc.desc.get(), sc.data(), iv.desc.get(),
                                                 iv.data(), nullptr, 0, dx_dev.desc.get(),
                                                 dx_dev.data(), ds.data())
                   : tsrRmsNormalizationForward(handle, algo, axis, norm_epsilon,
                                                x_dev.desc.get(), x_dev.data(),
                                                sc.desc.get(), sc.data(), iv.desc.get(),
                                                nullptr, 0, y_dev.desc.get(), y_dev.data(),
                                                iv.data());
      return backward
                 ? tsrLayerNormalizationBackward(handle, algo, axis, norm_epsilon,
                                                 x_dev.desc.get(), x_dev.data(),
                                                 dy_dev.desc.get(), dy_dev.data(),
                                                 sc.desc.get(), sc.data(), me.desc.get(),
                                                 me.data(), iv.data(), nullptr, 0,
                                                 dx_dev.desc.get(), dx_dev.data(),
                                                 ds.data(), db.data())
                 : tsrLayerNormalizationForward(handle, algo, axis, norm_epsilon,
                                                x_dev.desc.get(), x_dev.data(),
                                                sc.desc.get(), sc.data(), bi.data(),
                                                me.desc.get(), nullptr, 0, y_dev.desc.get(),
                                                y_dev.data(), me.data(),
                                                iv.data());
    };
    const tsrOperation_t op = rms ? (backward ? TSR_OP_RMS_NORM_BACKWARD : TSR_OP_RMS_NORM_FORWARD)
                                  : (backward ? TSR_OP_LAYER_NORM_BACKWARD
                                              : TSR_OP_LAYER_NORM_FORWARD);
    const char* name = tsrGetOperationName(op);
    const tsrAlgo_t algo = run_first_supported(kernel_candidates(op, s), call, name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      const int64_t length = dims.back();
      const int64_t rows = x.element_count() / length;
      host_tensor e_out = packed_like(out, false), e_m = f32_packed(tdims),
                  e_i = f32_packed(tdims), e_ds = f32_packed(sdims), e_db = f32_packed(sdims);
      bool ok;
      if (!backward)
        ok = forward_ref(e_out.data(), e_m.data(), e_i.data());
      else if (rms)
        ok = reference::rms_norm_backward(rp, x.data(), dy.data(), scale.data(), inv.data(),
                                          e_out.data(), e_ds.data(), &err);
      else
        ok = reference::layer_norm_backward(lp, x.data(), dy.data(), scale.data(), mean.data(),
                                            inv.data(), e_out.data(), e_ds.data(), e_db.data(),
                                            &err);
      if (!ok) return reference_failed(o, err);
      (backward ? dx_dev : y_dev).download(handle, out);
      if (!judge_rounded(o, backward ? "dx" : "y", out, e_out,
                         reference::norm_data_tolerance(s.data_type, length)))
        return;
      if (!backward) {
        iv.download(handle, inv);
        if (!judge_rounded(o, rms ? "inv_rms" : "inv_std", inv, e_i,
                           reference::norm_stat_tolerance(length)))
          return;
        if (!rms) {
          me.download(handle, mean);
          if (!judge_rounded(o, "mean", mean, e_m, reference::norm_stat_tolerance(length))) return;
        }
      } else {
        ds.download(handle, dscale);
        if (!judge_rounded(o, "dscale", dscale, e_ds, reference::norm_param_grad_tolerance(rows)))
          return;
        if (!rms) {
          db.download(handle, dbias);
          if (!judge_rounded(o, "dbias", dbias, e_db, reference::norm_param_grad_tolerance(rows)))
            return;
        }
      }
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s, tensor_bytes(x) * (backward ? 3 : 2),
                        [&] { check(call(algo), name); }, &rotation);
  };
}

}  // namespace tessera::tools
