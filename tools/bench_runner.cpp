#include "bench_runner.hpp"
#include "bench_common.hpp"
#include "bench_drivers.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "tolerance.hpp"

namespace tessera::tools {
namespace {

// ---- convolution ------------------------------------------------------------------------------

// The kernel to run: the first candidate, in the library's preference order, that can run the
// problem (of the requested backend and named like --impl, when given). Throws NOT_SUPPORTED with every candidate's
// reason when there is none.
tsrAlgoPerf_t choose_conv_algorithm(tsrHandle_t handle, const device_tensor& x,
                                    const device_tensor& w, tsrConvolutionDescriptor_t conv,
                                    const device_tensor& y, const std::string& backend,
                                    const std::string& impl) {
  std::vector<tsrAlgoPerf_t> perf(64);
  for (tsrAlgoPerf_t& p : perf) p.struct_size = sizeof p;
  int returned = 0;
  check(tsrGetConvolutionForwardAlgorithm(handle, x.desc.get(), w.desc.get(), conv, y.desc.get(),
                                          static_cast<int>(perf.size()), &returned, perf.data()),
        "tsrGetConvolutionForwardAlgorithm");
  std::string reasons;
  for (int i = 0; i < returned; ++i) {
    const tsrAlgoPerf_t& p = perf[static_cast<size_t>(i)];
    if (!backend.empty() && backend != p.backend_name) continue;
    if (std::string(p.kernel_name).find(impl) == std::string::npos) continue;
    if (p.status == TSR_STATUS_SUCCESS) return p;
    reasons += std::string(reasons.empty() ? "" : "; ") + p.backend_name + "/" + p.kernel_name +
               ": " + p.reason;
  }
  if (reasons.empty()) {
    reasons = backend.empty() ? "no convolution kernel is loaded"
                              : "backend '" + backend + "' has no convolution kernel";
    if (!impl.empty()) reasons += " named like '" + impl + "'";
  }
  throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "no kernel can run it: " + reasons};
}

// Parses the problem and writes its descriptor and replay command into `outcome`; false (with
// the reason in outcome.detail) when it does not parse. Done before anything runs, so that even
// a problem skipped for want of a handle is printed in its canonical form.
bool describe_conv(const bench_problem& bp, common::conv_descriptor* d, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::string error;
  if (!common::parse_conv_descriptor(bp.text, d, &error)) {
    outcome.descriptor = "--conv " + bp.text;
    outcome.detail = "bad convolution descriptor '" + bp.text + "': " + error;
    return false;
  }
  std::string command = common::format_conv_bench_command(
      *d, s.data_type, s.channels_last ? "nhwc" : "nchw", s.backend);
  if (s.conv_mode == TSRP_CONVOLUTION)
    command.insert(std::strlen("tessera-bench --conv"), " --conv-mode=convolution");
  outcome.repro = command;
  outcome.descriptor = strip_program_name(command);
  return true;
}

void run_conv(tsrHandle_t handle, const bench_problem& bp, const common::conv_descriptor& d,
              problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::string error;
  int64_t x_dims[5], w_dims[5], y_dims[5];
  const int n = common::conv_tensor_dims(d, x_dims, w_dims, y_dims);
  host_tensor x = host_tensor::packed(s.data_type, {x_dims, x_dims + n}, s.channels_last);
  host_tensor w = host_tensor::packed(s.data_type, {w_dims, w_dims + n}, s.channels_last);
  host_tensor y = host_tensor::packed(s.data_type, {y_dims, y_dims + n}, s.channels_last);

  tsrpConvolutionProblem problem{};
  common::conv_descriptor_to_problem(d, &problem);
  problem.mode = s.conv_mode;
  problem.x = x.desc(), problem.w = w.desc(), problem.y = y.desc();
  const int64_t reduction = reference::convolution_reduction_length(problem);
  const reference::conv_fill fill = reference::choose_conv_fill(s.data_type, reduction);
  reference::fill_integers(x, fill.x, seed_x);
  reference::fill_integers(w, fill.w, seed_w);
  reference::fill_poison(y);  // a kernel that skips an element fails the comparison

  tensor_rotation rotation({&x, &w}, s);
  device_tensor x_dev(handle, x, &rotation), w_dev(handle, w, &rotation), y_dev(handle, y);
  x_dev.upload(handle, x);
  w_dev.upload(handle, w);
  y_dev.upload(handle, y);

  convolution_descriptor conv("tsrCreateConvolutionDescriptor");
  const bool integer = s.data_type == TSRP_DATA_INT8 || s.data_type == TSRP_DATA_INT32;
  check(tsrSetConvolutionNdDescriptor(conv.get(), d.spatial_dims, d.pad_before, d.pad_after,
                                      d.stride, d.dilation,
                                      static_cast<tsrConvolutionMode_t>(s.conv_mode),
                                      integer ? TSR_DATA_INT32 : TSR_DATA_FLOAT),
        "tsrSetConvolutionNdDescriptor");
  check(tsrSetConvolutionGroupCount(conv.get(), d.g), "tsrSetConvolutionGroupCount");

  // The library's choice runs on the handle's workspace pool (no workspace given): a workspace
  // sized for one kernel would keep the tuner from the kernels that need more.
  tsrAlgo_t algo = TSR_ALGO_AUTO;
  size_t workspace_size = 0;
  if (library_chooses_kernel(s)) {
    outcome.implementation = automatic_kernel_name(s);
  } else {
    const tsrAlgoPerf_t chosen = choose_conv_algorithm(handle, x_dev, w_dev, conv.get(), y_dev,
                                                       s.backend, s.impl);
    algo = chosen.algo;
    outcome.implementation = std::string(chosen.backend_name) + "/" + chosen.kernel_name;
    check(tsrGetConvolutionForwardWorkspaceSize(handle, x_dev.desc.get(), w_dev.desc.get(),
                                                conv.get(), y_dev.desc.get(), algo,
                                                &workspace_size),
          "tsrGetConvolutionForwardWorkspaceSize");
  }
  device_buffer workspace(handle, workspace_size);

  auto call = [&] {
    check(tsrConvolutionForward(handle, 1.0f, x_dev.desc.get(), x_dev.data(),
                                w_dev.desc.get(), w_dev.data(), conv.get(), algo,
                                workspace.get(), workspace_size, 0.0f, y_dev.desc.get(),
                                y_dev.data()),
          "tsrConvolutionForward");
  };
  call();
  check(tsrSynchronize(handle), "tsrSynchronize");
  outcome.status = outcome_status::passed;

  if (s.mode & mode_correctness) {
    y_dev.download(handle, y);
    host_tensor expected = packed_like(y, s.channels_last);
    if (!reference::convolution_forward(problem, x.data(), w.data(), 1.0, 0.0, expected.data(),
                                        &error)) {
      outcome.status = outcome_status::failed;
      outcome.detail = "reference: " + error;
      return;
    }
    judge(outcome, y, expected, reference::conv_tolerance(s.data_type, reduction));
    if (outcome.status == outcome_status::failed) return;
  }
  if (s.mode & mode_performance) {
    outcome.time_ms = median_time_ms(handle, s.iterations, call, &rotation);
    int64_t out_spatial = 1, kernel_spatial = 1;
    for (int i = 0; i < d.spatial_dims; ++i) out_spatial *= d.out[i], kernel_spatial *= d.k[i];
    // A multiply and an add per tap: 2 * N * K * output pixels * C/g * kernel pixels.
    const double flops = 2.0 * static_cast<double>(d.mb) * static_cast<double>(d.oc) *
                         static_cast<double>(out_spatial) * static_cast<double>(d.ic / d.g) *
                         static_cast<double>(kernel_spatial);
    outcome.rate = flops / (outcome.time_ms * 1e-3) / 1e9;
    outcome.rate_unit = "GFLOP/s";
  }
}

// ---- eltwise ----------------------------------------------------------------------------------

// As describe_conv, for an eltwise problem (dims, and the algorithm with its alpha and beta).
bool describe_eltwise(const bench_problem& bp, common::eltwise_descriptor* e,
                      problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::string error;
  if (!common::parse_dims(bp.text, &e->dims, &error) ||
      !common::parse_activation(s.algorithm, s.alpha, s.beta, &e->mode, &e->coef, &error)) {
    outcome.descriptor = "--eltwise --alg=" + s.algorithm + " " + bp.text;
    outcome.detail = "bad eltwise problem '" + bp.text + "': " + error;
    return false;
  }
  outcome.repro = common::format_eltwise_bench_command(
      *e, s.backward, s.data_type, s.channels_last ? "nhwc" : "nchw", s.backend);
  outcome.descriptor = strip_program_name(outcome.repro);
  return true;
}

void run_eltwise(tsrHandle_t handle, const bench_problem& bp, const common::eltwise_descriptor& e,
                 problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::string error;
  host_tensor x = host_tensor::packed(s.data_type, e.dims, s.channels_last);
  host_tensor y = packed_like(x, s.channels_last);
  host_tensor dy = packed_like(x, s.channels_last);
  host_tensor dx = packed_like(x, s.channels_last);
  tsrpActivationProblem problem{};
  problem.struct_size = sizeof problem;
  problem.mode = e.mode;
  problem.coef = e.coef;
  problem.x = x.desc(), problem.y = y.desc(), problem.dy = dy.desc(), problem.dx = dx.desc();

  // Backward needs the forward output as an input; the reference provides it, rounded as a
  // kernel would have stored it.
  reference::fill_activation_input(x, seed_x, s.backward);
  host_tensor& output = s.backward ? dx : y;
  if (s.backward) {
    reference::activation_forward(problem, x.data(), 1.0, 0.0, y.data(), &error);
    y.round_to_data_type();
    reference::fill_integers(dy, {-4, 4, 1.0}, seed_dy);
  }
  reference::fill_poison(output);

  // Forward reads x; backward reads x, y and dy.
  tensor_rotation rotation = s.backward ? tensor_rotation({&x, &y, &dy}, s)
                                        : tensor_rotation({&x}, s);
  tensor_rotation* backward_input = s.backward ? &rotation : nullptr;
  device_tensor x_dev(handle, x, &rotation), y_dev(handle, y, backward_input),
      dy_dev(handle, dy, backward_input), dx_dev(handle, dx);
  x_dev.upload(handle, x);
  y_dev.upload(handle, y);
  if (s.backward) {
    dy_dev.upload(handle, dy);
    dx_dev.upload(handle, dx);
  }
  activation_descriptor act("tsrCreateActivationDescriptor");
  check(tsrSetActivationDescriptor(act.get(), static_cast<tsrActivationMode_t>(e.mode), e.coef),
        "tsrSetActivationDescriptor");

  const tsrOperation_t op = s.backward ? TSR_OP_ACTIVATION_BACKWARD : TSR_OP_ACTIVATION_FORWARD;
  tsrAlgo_t algo = TSR_ALGO_AUTO;
  auto call_status = [&]() -> tsrStatus_t {
    if (s.backward)
      return tsrActivationBackward(handle, act.get(), algo, 1.0f, y_dev.desc.get(),
                                   y_dev.data(), dy_dev.desc.get(), dy_dev.data(),
                                   x_dev.desc.get(), x_dev.data(), 0.0f,
                                   dx_dev.desc.get(), dx_dev.data());
    return tsrActivationForward(handle, act.get(), algo, 1.0f, x_dev.desc.get(),
                                x_dev.data(), 0.0f, y_dev.desc.get(), y_dev.data());
  };
  const char* call_name = s.backward ? "tsrActivationBackward" : "tsrActivationForward";

  algo = run_first_supported(
      kernel_candidates(op, s),
      [&](tsrAlgo_t candidate) {
        algo = candidate;
        return call_status();
      },
      call_name, outcome);
  check(tsrSynchronize(handle), "tsrSynchronize");
  outcome.status = outcome_status::passed;

  if (s.mode & mode_correctness) {
    (s.backward ? dx_dev : y_dev).download(handle, output);
    host_tensor expected = packed_like(x, s.channels_last);
    const bool ok =
        s.backward
            ? reference::activation_backward(problem, x.data(), dy.data(), 1.0, 0.0,
                                             expected.data(), &error)
            : reference::activation_forward(problem, x.data(), 1.0, 0.0, expected.data(), &error);
    if (!ok) {
      outcome.status = outcome_status::failed;
      outcome.detail = "reference: " + error;
      return;
    }
    judge(outcome, output, expected, reference::activation_tolerance(s.data_type, s.backward));
    if (outcome.status == outcome_status::failed) return;
  }
  if (s.mode & mode_performance) {
    outcome.time_ms = median_time_ms(
        handle, s.iterations, [&] { check(call_status(), call_name); }, &rotation, s.back_to_back);
    // Bytes a kernel must move: forward reads x and writes y; backward reads x and dy and
    // writes dx (y is offered too, but no mode needs it).
    const double bytes = static_cast<double>(x.element_count()) *
                         static_cast<double>(common::data_type_size(s.data_type)) *
                         (s.backward ? 3.0 : 2.0);
    outcome.rate = bytes / (outcome.time_ms * 1e-3) / 1e9;
    outcome.rate_unit = "GB/s";
  }
}

const char* device_kind_name(int kind) { return kind == TSR_DEVICE_CUDA ? "cuda" : "cpu"; }

}  // namespace

bench_runner::~bench_runner() {
  for (auto& [name, entry] : handles_)
    if (entry.handle) tsrDestroy(entry.handle);
}

const bench_runner::handle_entry& bench_runner::handle_for(const std::string& backend,
                                                            int slot) {
  auto found = handles_.find({backend, slot});
  if (found != handles_.end()) return found->second;
  handle_entry& entry = handles_[{backend, slot}];

  tsrDeviceKind_t kind = TSR_DEVICE_CPU;
  if (backend.empty()) {
    int cuda_devices = 0;
    if (tsrGetDeviceCount(TSR_DEVICE_CUDA, &cuda_devices) == TSR_STATUS_SUCCESS && cuda_devices > 0)
      kind = TSR_DEVICE_CUDA;
  } else {
    // The backend's own device: a CPU handle for onednn, a CUDA one for cuda.
    int count = 0;
    tsrGetPluginCount(&count);
    std::string found_names;
    bool known = false;
    for (int i = 0; i < count && !known; ++i) {
      tsrPluginInfo_t info{};
      info.struct_size = sizeof info;
      if (tsrGetPluginInfo(i, &info) != TSR_STATUS_SUCCESS) continue;
      found_names += std::string(found_names.empty() ? "" : ", ") + info.name;
      if (backend != info.name) continue;
      known = true;
      if (!info.loaded) {
        entry.status = TSR_STATUS_NOT_SUPPORTED_PLUGIN;
        entry.message = "backend '" + backend + "' was not loaded: " + info.reason;
        return entry;
      }
      kind = info.device_kind;
    }
    if (!known) {
      entry.status = TSR_STATUS_NOT_SUPPORTED_PLUGIN;
      entry.message = "backend '" + backend + "' is not among the plugins found (" +
                      (found_names.empty() ? "none" : found_names) + ")";
      return entry;
    }
  }
  entry.status = tsrCreate(kind, 0, &entry.handle);
  if (entry.status != TSR_STATUS_SUCCESS) {
    entry.message = std::string("tsrCreate(") + device_kind_name(kind) + ", 0): " +
                    tsrGetErrorString(entry.status) + ": " + last_error();
    entry.handle = nullptr;
    return entry;
  }
  if (!backend.empty()) {
    // Exclusive: when the library chooses (--tuning=database|tune|always), the named backend's
    // own choice runs, or the problem is skipped with every kernel's reason; a plain preference
    // would let another backend's kernel run under this backend's name (the cudnn column of a
    // side-by-side run showed Tessera's layer norm, 2026-12-03).
    entry.status = tsrSetBackendPreference(entry.handle, backend.c_str());
    if (entry.status == TSR_STATUS_SUCCESS) entry.status = tsrSetBackendsExclusive(entry.handle, 1);
    if (entry.status != TSR_STATUS_SUCCESS) {
      entry.message = "tsrSetBackendPreference: " + last_error();
      tsrDestroy(entry.handle);
      entry.handle = nullptr;
    }
  }
  return entry;
}

problem_outcome bench_runner::run(const bench_problem& problem, int handle_slot) {
  problem_outcome outcome;  // failed until a run says otherwise
  const bench_driver driver = problem.settings.driver;
  common::conv_descriptor conv_desc;
  common::eltwise_descriptor eltwise_desc;
  prepared_problem prepared;
  switch (driver) {
    case bench_driver::conv:
      if ((problem.settings.dir != "fwd_d" && problem.settings.dir != "fwd_i") ||
          problem.settings.data_type == TSRP_DATA_INT8) {
        prepared = prepare_conv_other(problem, outcome);
        break;
      }
      if (!describe_conv(problem, &conv_desc, outcome)) return outcome;
      prepared = [&](tsrHandle_t h, problem_outcome& o) { run_conv(h, problem, conv_desc, o); };
      break;
    case bench_driver::eltwise:
      if (!describe_eltwise(problem, &eltwise_desc, outcome)) return outcome;
      prepared = [&](tsrHandle_t h, problem_outcome& o) {
        run_eltwise(h, problem, eltwise_desc, o);
      };
      break;
    case bench_driver::pool: prepared = prepare_pool(problem, outcome); break;
    case bench_driver::softmax: prepared = prepare_softmax(problem, outcome); break;
    case bench_driver::lrn: prepared = prepare_lrn(problem, outcome); break;
    case bench_driver::bnorm: prepared = prepare_bnorm(problem, outcome); break;
    case bench_driver::lnorm:
    case bench_driver::rmsnorm: prepared = prepare_lnorm(problem, outcome); break;
    case bench_driver::binary: prepared = prepare_binary(problem, outcome); break;
    case bench_driver::reorder: prepared = prepare_reorder(problem, outcome); break;
    case bench_driver::reduction: prepared = prepare_reduction(problem, outcome); break;
    case bench_driver::matmul: prepared = prepare_matmul(problem, outcome); break;
    case bench_driver::rnn: prepared = prepare_rnn(problem, outcome); break;
    default:
      outcome.descriptor = std::string("--") + driver_name(driver) + " " + problem.text;
      outcome.status = outcome_status::skipped;
      outcome.detail = std::string("the --") + driver_name(driver) +
                       " driver is not implemented yet in tessera-bench";
      return outcome;
  }
  if (!prepared) return outcome;

  const handle_entry& entry = handle_for(problem.settings.backend, handle_slot);
  if (!entry.handle) {
    outcome.status =
        is_not_supported(entry.status) ? outcome_status::skipped : outcome_status::failed;
    outcome.detail = entry.message;
    return outcome;
  }
  try {
    // Per problem, not per handle: a batch file may change --tuning between problems.
    if (problem.settings.tuning != tuning_default)
      check(tsrSetTuningMode(entry.handle, static_cast<tsrTuningMode_t>(problem.settings.tuning)),
            "tsrSetTuningMode");
    check(tsrSetMathMode(entry.handle, static_cast<tsrMathMode_t>(problem.settings.math_mode)), "tsrSetMathMode");
    prepared(entry.handle, outcome);
    // The library chose: name the kernel that ran rather than "auto".
    if (library_chooses_kernel(problem.settings) && outcome.status == outcome_status::passed) {
      char name[512] = {0};
      if (tsrGetLastKernelName(entry.handle, name, sizeof(name)) == TSR_STATUS_SUCCESS && name[0])
        outcome.implementation = name;
    }
  } catch (const api_failure& failure) {
    outcome.status = is_not_supported(failure.status) ? outcome_status::skipped
                                                      : outcome_status::failed;
    outcome.detail = failure.message;
  } catch (const std::exception& e) {  // host-side set-up (an absurd size, out of memory)
    outcome.status = outcome_status::failed;
    outcome.detail = e.what();
  }
  return outcome;
}

std::string format_outcome(const problem_outcome& o) {
  static const char* const names[] = {"PASSED", "SKIPPED", "FAILED"};
  std::string line = std::string(names[static_cast<int>(o.status)]) + " " + o.implementation +
                     " " + o.descriptor;
  char number[64];
  if (o.time_ms >= 0) {
    std::snprintf(number, sizeof number, " %.4gms %.4g%s", o.time_ms, o.rate, o.rate_unit);
    line += number;
  } else {
    line += " - -";
  }
  if (o.status != outcome_status::passed) line += "\n    " + o.detail;
  if (o.status == outcome_status::failed && !o.repro.empty()) line += "\n    repro: " + o.repro;
  return line;
}

}  // namespace tessera::tools
