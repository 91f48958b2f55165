// tessera-bench --rnn: tsrRnnForward (inference, training) and backward data + weights.
#include <tessera_common/op_descriptors.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_rnn.hpp"

namespace tessera::tools {
namespace {

using rnn_descriptor_owner =
    owned<tsrRnnDescriptor_t, tsrCreateRnnDescriptor, tsrDestroyRnnDescriptor>;

// Multiples of `step` in [-range, range] * step: exact in f16 and bf16.
host_tensor stepped(const tsrpTensor& desc, int range, double step, uint32_t seed) {
  host_tensor t(desc);
  reference::fill_integers(t, reference::fill_spec{-range, range, 1.0}, seed);
  for (int64_t i = 0; i < t.extent(); ++i) t.data()[i] = static_cast<float>(t.data()[i] * step);
  t.round_to_data_type();
  return t;
}
std::vector<double> as_doubles(const host_tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.extent());  // packed: logical order
}
host_tensor from_doubles(const tsrpTensor& desc, const std::vector<double>& v) {
  host_tensor t(desc);
  for (size_t i = 0; i < v.size(); ++i) t.data()[i] = static_cast<float>(v[i]);
  return t;
}
reference::tolerance rnn_tolerance(int32_t dt, bool gradient) {
  switch (dt) {
    case TSRP_DATA_FLOAT: return gradient ? reference::tolerance{3e-5, 3e-5}
                                          : reference::tolerance{1e-5, 1e-5};
    case TSRP_DATA_HALF: return {2e-3, 2e-3};
    default: return gradient ? reference::tolerance{8e-2, 8e-2} : reference::tolerance{4e-2, 4e-2};
  }
}

}  // namespace

prepared_problem prepare_rnn(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  common::rnn_descriptor d;
  std::string error;
  auto bad = [&](const std::string& why) -> prepared_problem {
    outcome.descriptor = "--rnn " + bp.text;
    outcome.detail = "bad problem '" + bp.text + "': " + why;
    return {};
  };
  if (!common::parse_rnn_descriptor(bp.text, &d, &error)) return bad(error);
  const std::string prop = s.dir == "fwd_i" ? "FWD_I" : s.dir == "bwd_dw" ? "BWD_DW" : "FWD_D";
  if (s.dir != "fwd_i" && s.dir != "fwd_d" && s.dir != "bwd_dw")
    return bad("rnn propagations are FWD_I, FWD_D and BWD_DW");
  std::string command = command_head(s, false) + " --cell=" + s.cell;
  if (s.cell == "vanilla_rnn") command += " --activation=" + s.rnn_activation;
  command += " --direction=" + s.rnn_direction + " --prop=" + prop;
  set_command(outcome, s, command + " " + common::format_rnn_descriptor(d));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    if (d.sic != d.dhc || d.dic != d.dhc)
      throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                        "Tessera's RNN needs sic = dhc = dic (one hidden size)"};
    if (s.rnn_direction == "right2left" || s.rnn_direction == "sum")
      throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                        "Tessera's RNN runs left2right or bidirectional concat only"};
    const tsrRnnMode_t cell = s.cell == "vanilla_lstm"  ? TSR_LSTM
                              : s.cell == "vanilla_gru" ? TSR_GRU
                              : s.rnn_activation == "tanh" ? TSR_RNN_TANH
                                                           : TSR_RNN_RELU;
    const bool bidir = s.rnn_direction == "concat";
    const bool training = s.dir != "fwd_i", backward = s.dir == "bwd_dw";
    reference::rnn_config cfg;
    cfg.cell_mode = cell;
    cfg.dirs = bidir ? 2 : 1;
    cfg.layers = static_cast<int32_t>(d.layers);
    cfg.bias_mode = TSRP_RNN_DOUBLE_BIAS;
    cfg.input_size = d.slc;
    cfg.hidden_size = d.dhc;
    cfg.seq_length = d.steps;
    cfg.batch = d.mb;
    const int32_t dt = s.data_type;
    const auto tdt = static_cast<tsrDataType_t>(dt);
    rnn_descriptor_owner rnn("tsrCreateRnnDescriptor");
    check(tsrSetRnnDescriptor(rnn.get(), cell, TSR_RNN_DOUBLE_BIAS,
                              bidir ? TSR_RNN_BIDIRECTIONAL : TSR_RNN_UNIDIRECTIONAL,
                              TSR_RNN_SEQ_MAJOR, tdt, TSR_DATA_FLOAT, d.slc, d.dhc,
                              static_cast<int>(d.layers)),
          "tsrSetRnnDescriptor");
    const int64_t D = cfg.dirs, H = d.dhc;
    host_tensor x = stepped(host_tensor::packed(dt, {d.steps, d.mb, d.slc}, false).desc(), 8,
                            0.125, seed_x);
    const tsrpTensor yt = host_tensor::packed(dt, {d.steps, d.mb, H * D}, false).desc();
    const tsrpTensor ht = host_tensor::packed(dt, {d.layers * D, d.mb, H}, false).desc();
    const tsrpTensor wt =
        host_tensor::packed(dt, {reference::rnn_weight_count(cfg)}, false).desc();
    host_tensor hx = stepped(ht, 4, 0.125, seed_x + 1), cx = stepped(ht, 4, 0.125, seed_x + 2);
    host_tensor w = stepped(wt, 8, 0.0625, seed_w);
    host_tensor y(yt), hy(ht), cy(ht);
    reference::fill_poison(y), reference::fill_poison(hy), reference::fill_poison(cy);
    size_t w_bytes = 0, ws_bytes = 0, rs_bytes = 0;
    check(tsrGetRnnWeightSpaceSize(handle, rnn.get(), &w_bytes), "tsrGetRnnWeightSpaceSize");
    device_tensor x_dev(handle, x), y_dev(handle, y), hx_dev(handle, hx), cx_dev(handle, cx),
        hy_dev(handle, hy), cy_dev(handle, cy);
    device_buffer w_dev(handle, w_bytes), dw_dev(handle, w_bytes);
    x_dev.upload(handle, x), y_dev.upload(handle, y), hx_dev.upload(handle, hx);
    cx_dev.upload(handle, cx), hy_dev.upload(handle, hy), cy_dev.upload(handle, cy);
    {
      const std::vector<uint8_t> bytes = w.pack();
      check(tsrMemcpyHostToDevice(handle, w_dev.get(), bytes.data(), bytes.size()),
            "tsrMemcpyHostToDevice");
    }
    const tsrRnnForwardMode_t fmode = training ? TSR_RNN_FWD_TRAINING : TSR_RNN_FWD_INFERENCE;
    check(tsrGetRnnTempSpaceSizes(handle, rnn.get(), fmode, x_dev.desc.get(), &ws_bytes,
                                  &rs_bytes),
          "tsrGetRnnTempSpaceSizes");
    device_buffer ws(handle, ws_bytes), rs(handle, rs_bytes);
    const bool lstm = cell == TSR_LSTM;
    tsrTensorDescriptor_t cdesc = lstm ? hx_dev.desc.get() : nullptr;
    tsrAlgo_t fwd_algo = TSR_ALGO_AUTO;
    auto forward = [&](tsrAlgo_t algo) {
      return tsrRnnForward(handle, rnn.get(), fmode, algo, x_dev.desc.get(), x_dev.buffer.get(),
                           hx_dev.desc.get(), hx_dev.buffer.get(), cdesc,
                           lstm ? cx_dev.buffer.get() : nullptr, w_dev.get(), w_bytes, ws.get(),
                           ws_bytes, y_dev.desc.get(), y_dev.buffer.get(), hy_dev.buffer.get(),
                           lstm ? cy_dev.buffer.get() : nullptr, rs.get(), rs_bytes);
    };
    fwd_algo = run_first_supported(
        kernel_candidates(training ? TSR_OP_RNN_FORWARD_TRAINING : TSR_OP_RNN_FORWARD_INFERENCE,
                          s.backend, s.impl),
        forward, "tsrRnnForward", o);
    // Backward: dy, dhy, dcy given; dx, dhx, dcx and dw (SET) checked.
    host_tensor dy = stepped(yt, 8, 0.125, seed_dy), dhy = stepped(ht, 8, 0.125, seed_dy + 1),
                dcy = stepped(ht, 8, 0.125, seed_dy + 2);
    host_tensor dx(x.desc()), dhx(ht), dcx(ht), dw(wt);
    reference::fill_poison(dx), reference::fill_poison(dhx), reference::fill_poison(dcx);
    reference::fill_poison(dw);
    device_tensor dy_dev(handle, dy), dhy_dev(handle, dhy), dcy_dev(handle, dcy),
        dx_dev(handle, dx), dhx_dev(handle, dhx), dcx_dev(handle, dcx);
    auto backward_call = [&](tsrAlgo_t algo) {
      tsrStatus_t st = tsrRnnBackwardData(
          handle, rnn.get(), algo, y_dev.desc.get(), y_dev.buffer.get(), dy_dev.buffer.get(),
          hx_dev.desc.get(), hx_dev.buffer.get(), dhy_dev.buffer.get(), cdesc,
          lstm ? cx_dev.buffer.get() : nullptr, lstm ? dcy_dev.buffer.get() : nullptr,
          w_dev.get(), w_bytes, ws.get(), ws_bytes, x_dev.desc.get(), dx_dev.buffer.get(),
          dhx_dev.buffer.get(), lstm ? dcx_dev.buffer.get() : nullptr, rs.get(), rs_bytes);
      if (st != TSR_STATUS_SUCCESS) return st;
      return tsrRnnBackwardWeights(handle, rnn.get(), algo, TSR_WGRAD_MODE_SET, x_dev.desc.get(),
                                   x_dev.buffer.get(), hx_dev.desc.get(), hx_dev.buffer.get(),
                                   y_dev.desc.get(), y_dev.buffer.get(), ws.get(), ws_bytes,
                                   rs.get(), rs_bytes, dw_dev.get(), w_bytes);
    };
    if (backward) {
      for (auto [dev, host] : {std::pair<device_tensor*, host_tensor*>{&dy_dev, &dy},
                               {&dhy_dev, &dhy}, {&dcy_dev, &dcy}, {&dx_dev, &dx},
                               {&dhx_dev, &dhx}, {&dcx_dev, &dcx}})
        dev->upload(handle, *host);
      const std::vector<uint8_t> bytes = dw.pack();
      check(tsrMemcpyHostToDevice(handle, dw_dev.get(), bytes.data(), bytes.size()),
            "tsrMemcpyHostToDevice");
      check(backward_call(TSR_ALGO_AUTO), "tsrRnnBackwardData/Weights");
    }
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      const std::vector<double> rx = as_doubles(x), rhx = as_doubles(hx), rw = as_doubles(w);
      const std::vector<double> rcx = lstm ? as_doubles(cx) : std::vector<double>();
      const reference::rnn_forward_result f = reference::rnn_forward(cfg, rx, rhx, rcx, rw);
      const reference::tolerance ftol = rnn_tolerance(dt, false), btol = rnn_tolerance(dt, true);
      y_dev.download(handle, y), hy_dev.download(handle, hy);
      if (!judge_rounded(o, "y", y, from_doubles(yt, f.y), ftol) ||
          !judge_rounded(o, "hy", hy, from_doubles(ht, f.hy), ftol))
        return;
      if (lstm) {
        cy_dev.download(handle, cy);
        if (!judge_rounded(o, "cy", cy, from_doubles(ht, f.cy), ftol)) return;
      }
      if (backward) {
        const reference::rnn_backward_result b = reference::rnn_backward(
            cfg, rx, rhx, rcx, rw, as_doubles(dy), as_doubles(dhy),
            lstm ? as_doubles(dcy) : std::vector<double>());
        dx_dev.download(handle, dx), dhx_dev.download(handle, dhx);
        std::vector<uint8_t> bytes(dw.byte_size());
        check(tsrMemcpyDeviceToHost(handle, bytes.data(), dw_dev.get(), bytes.size()),
              "tsrMemcpyDeviceToHost");
        dw.unpack(bytes.data());
        if (!judge_rounded(o, "dx", dx, from_doubles(x.desc(), b.dx), btol) ||
            !judge_rounded(o, "dhx", dhx, from_doubles(ht, b.dhx), btol) ||
            !judge_rounded(o, "dw", dw, from_doubles(wt, b.dw), btol))
          return;
        if (lstm) {
          dcx_dev.download(handle, dcx);
          if (!judge_rounded(o, "dcx", dcx, from_doubles(ht, b.dcx), btol)) return;
        }
      }
    }
    if (s.mode & mode_performance) {
      double flops = 0;
      for (int l = 0; l < cfg.layers; ++l)
        flops += 2.0 * static_cast<double>(d.steps * d.mb * reference::rnn_gates(cell) * H *
                                           (reference::rnn_layer_input_size(cfg, l) + H) * D);
      if (backward) {
        o.time_ms = median_time_ms(handle, s.iterations, [&] {
          check(forward(fwd_algo), "tsrRnnForward");
          check(backward_call(TSR_ALGO_AUTO), "tsrRnnBackwardData/Weights");
        });
        flops *= 3;  // forward + backward data + backward weights
      } else {
        o.time_ms = median_time_ms(handle, s.iterations,
                                   [&] { check(forward(fwd_algo), "tsrRnnForward"); });
      }
      o.rate = flops / (o.time_ms * 1e-3) / 1e9;
      o.rate_unit = "GFLOP/s";
    }
  };
}

}  // namespace tessera::tools
