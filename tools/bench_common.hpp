// Pieces every tessera-bench driver shares: RAII over the C API's objects, device twins of host
// tensors, the timing loop, the verdict, and the kernel candidates of an operation.
#ifndef TESSERA_TOOLS_BENCH_COMMON_HPP
#define TESSERA_TOOLS_BENCH_COMMON_HPP

#include <tessera/tessera.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bench_rotation.hpp"
#include "bench_runner.hpp"
#include <tessera_common/shape_inference.hpp>

#include "tensor_fill.hpp"
#include "tolerance.hpp"

namespace tessera::tools {

using reference::host_tensor;

// Fixed seeds: a problem sees the same data in every run, so failures replay exactly.
constexpr uint32_t seed_x = 1, seed_w = 2, seed_dy = 3;

inline std::string last_error() {
  char message[2048] = {};
  tsrGetLastErrorString(message, sizeof message);
  return message;
}

// A failed API call inside a run. NOT_SUPPORTED_* means the problem is skipped, anything else
// that it failed. Exceptions stay inside the tool: nothing crosses the C API.
struct api_failure {
  tsrStatus_t status;
  std::string message;
};

inline void check(tsrStatus_t status, const char* call) {
  if (status == TSR_STATUS_SUCCESS) return;
  throw api_failure{status, std::string(call) + ": " + tsrGetErrorString(status) + ": " +
                                last_error()};
}

inline bool is_not_supported(tsrStatus_t status) {
  return TSR_STATUS_CATEGORY(status) == TSR_STATUS_NOT_SUPPORTED;
}

// ---- RAII over the C API's objects ------------------------------------------------------------

template <class T, tsrStatus_t (*create)(T*), tsrStatus_t (*destroy)(T)>
class owned {
 public:
  explicit owned(const char* what) { check(create(&value_), what); }
  ~owned() {
    if (value_) destroy(value_);
  }
  owned(const owned&) = delete;
  owned& operator=(const owned&) = delete;
  T get() const { return value_; }

 private:
  T value_ = nullptr;
};
using tensor_descriptor =
    owned<tsrTensorDescriptor_t, tsrCreateTensorDescriptor, tsrDestroyTensorDescriptor>;
using activation_descriptor = owned<tsrActivationDescriptor_t, tsrCreateActivationDescriptor,
                                    tsrDestroyActivationDescriptor>;
using convolution_descriptor = owned<tsrConvolutionDescriptor_t, tsrCreateConvolutionDescriptor,
                                     tsrDestroyConvolutionDescriptor>;

class device_buffer {
 public:
  device_buffer(tsrHandle_t handle, size_t bytes) : handle_(handle) {
    if (bytes) check(tsrMalloc(handle, bytes, &pointer_), "tsrMalloc");
  }
  ~device_buffer() {
    if (pointer_) tsrFree(handle_, pointer_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  void* get() const { return pointer_; }

 private:
  tsrHandle_t handle_;
  void* pointer_ = nullptr;
};

// A host tensor's twin on the device, with its descriptor. An input of a timed problem is
// given the problem's rotation: it then holds one copy per rotation step, uploads go to every
// copy, and data() is the copy of the current step.
class device_tensor {
 public:
  tensor_descriptor desc{"tsrCreateTensorDescriptor"};

  device_tensor(tsrHandle_t handle, const host_tensor& t,
                const tensor_rotation* rotation = nullptr)
      : rotation_(rotation),
        stride_(tensor_rotation::copy_stride(t.byte_size())),
        storage_(handle, rotation ? stride_ * static_cast<size_t>(rotation->copies())
                                  : t.byte_size()) {
    const tsrpTensor& d = t.desc();
    check(tsrSetTensorNdDescriptor(desc.get(), static_cast<tsrDataType_t>(d.data_type), d.ndims,
                                   d.dims, d.strides),
          "tsrSetTensorNdDescriptor");
  }
  void* data() const {
    const size_t copy = rotation_ ? static_cast<size_t>(rotation_->current()) : 0;
    return static_cast<char*>(storage_.get()) + copy * stride_;
  }
  void upload(tsrHandle_t handle, const host_tensor& t) {
    const std::vector<uint8_t> bytes = t.pack();
    const int copies = rotation_ ? rotation_->copies() : 1;
    for (int i = 0; i < copies; ++i)
      check(tsrMemcpyHostToDevice(handle, static_cast<char*>(storage_.get()) + i * stride_,
                                  bytes.data(), bytes.size()),
            "tsrMemcpyHostToDevice");
  }
  void download(tsrHandle_t handle, host_tensor& t) const {
    std::vector<uint8_t> bytes(t.byte_size());
    check(tsrMemcpyDeviceToHost(handle, bytes.data(), data(), bytes.size()),
          "tsrMemcpyDeviceToHost");
    t.unpack(bytes.data());
  }

 private:
  const tensor_rotation* rotation_;
  size_t stride_;
  device_buffer storage_;
};

// ---- shared steps -----------------------------------------------------------------------------

// A timing event on the handle's stream (CUDA events on a GPU, the host clock on the CPU).
class timing_event {
 public:
  explicit timing_event(tsrHandle_t handle) {
    check(tsrCreateEvent(handle, &event_), "tsrCreateEvent");
  }
  ~timing_event() { tsrDestroyEvent(event_); }
  timing_event(const timing_event&) = delete;
  timing_event& operator=(const timing_event&) = delete;
  void record() { check(tsrRecordEvent(event_), "tsrRecordEvent"); }
  // Milliseconds from `start` to this event, once this one has completed.
  double elapsed_since(const timing_event& start) const {
    float ms = 0;
    check(tsrGetEventElapsedTime(start.event_, event_, &ms), "tsrGetEventElapsedTime");
    return ms;
  }

 private:
  tsrEvent_t event_ = nullptr;
};

// Warm-up runs before the timed ones: module loads, primitive creation, tuning and the clocks'
// ramp stay out of the figure.
constexpr int warmup_runs = 3;

// Median of `iterations` runs, each timed by events around it on the handle's stream (device
// time: a host clock around an asynchronous call would time its launch), after the warm-up runs.
// Each run first steps `rotation` (when given) to the next copy of the inputs. The median keeps
// one slow run (a page fault, a context switch) from moving the result.
// back_to_back: the runs queued one after another between one pair of events instead, their mean
// returned: what the kernels themselves take, without the launch each per-call run also times
// (the device idles while the host launches it). The rotation still steps between runs.
inline double median_time_ms(tsrHandle_t handle, int iterations, const std::function<void()>& call,
                             tensor_rotation* rotation = nullptr, bool back_to_back = false) {
  auto step = [&] {
    if (rotation) rotation->advance();
  };
  for (int i = 0; i < warmup_runs; ++i) step(), call();
  check(tsrSynchronize(handle), "tsrSynchronize");
  timing_event start(handle), end(handle);
  if (back_to_back) {
    start.record();
    for (int i = 0; i < iterations; ++i) step(), call();
    end.record();
    return end.elapsed_since(start) / iterations;
  }
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    step();
    start.record();
    call();
    end.record();
    times.push_back(end.elapsed_since(start));
  }
  std::sort(times.begin(), times.end());
  const size_t mid = times.size() / 2;
  return times.size() % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
}

inline std::string strip_program_name(const std::string& command) {
  const std::string prefix = "tessera-bench ";
  return command.rfind(prefix, 0) == 0 ? command.substr(prefix.size()) : command;
}

inline host_tensor packed_like(const host_tensor& t, bool channels_last) {
  const tsrpTensor& d = t.desc();
  return host_tensor::packed(d.data_type, {d.dims, d.dims + d.ndims}, channels_last);
}

// Runs the correctness comparison and records its verdict in `outcome`.
inline void judge(problem_outcome& outcome, const host_tensor& result, const host_tensor& expected,
           const reference::tolerance& tol) {
  const reference::compare_result r = reference::compare(result, expected, tol);
  outcome.status = r.ok() ? outcome_status::passed : outcome_status::failed;
  if (!r.ok()) outcome.detail = r.message;
}

// The algorithms to try, in order: the library's choice, or each kernel of the requested
// backend for the operation (the API has no "get algorithm" for activations, so the first that
// does not answer NOT_SUPPORTED is the one used).
struct candidate {
  tsrAlgo_t algo;
  std::string name;
};

// Explicit algorithms bypass the tuning database and the tuner: with --tuning (other than
// heuristic) the library is given TSR_ALGO_AUTO and picks among every backend of the device.
inline bool library_chooses_kernel(const bench_settings& s) {
  return s.tuning != tuning_default && s.tuning != TSR_TUNING_HEURISTIC;
}

// The name shown for a kernel the library chose: the API does not say which one ran.
inline std::string automatic_kernel_name(const bench_settings& s) {
  return s.backend.empty() ? "auto" : s.backend + "/auto";
}

// The kernels to try, in the library's order: every kernel of the settings' backend whose name
// contains --impl (when given), or the automatic choice when neither narrows it or when the
// library is to choose (library_chooses_kernel).
inline std::vector<candidate> kernel_candidates(tsrOperation_t op, const bench_settings& s) {
  const std::string& backend = s.backend;
  const std::string& impl = s.impl;
  if ((backend.empty() && impl.empty()) || library_chooses_kernel(s))
    return {{TSR_ALGO_AUTO, automatic_kernel_name(s)}};
  std::vector<candidate> list;
  int count = 0;
  check(tsrGetKernelCount(op, &count), "tsrGetKernelCount");
  for (int i = 0; i < count; ++i) {
    tsrKernelInfo_t k{};
    k.struct_size = sizeof k;
    check(tsrGetKernelInfo(op, i, &k), "tsrGetKernelInfo");
    if ((backend.empty() || backend == k.backend_name) &&
        std::string(k.kernel_name).find(impl) != std::string::npos)
      list.push_back({k.algo, std::string(k.backend_name) + "/" + k.kernel_name});
  }
  if (list.empty())
    throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                      "backend '" + backend + "' has no " + tsrGetOperationName(op) + " kernel" +
                          (impl.empty() ? std::string() : " named like '" + impl + "'")};
  return list;
}

// Runs `call` with each candidate until one does not answer NOT_SUPPORTED; records its name
// in outcome.implementation and returns the algo used. Throws NOT_SUPPORTED with every reason.
inline tsrAlgo_t run_first_supported(const std::vector<candidate>& list,
                                     const std::function<tsrStatus_t(tsrAlgo_t)>& call,
                                     const char* call_name, problem_outcome& outcome) {
  std::string reasons;
  for (const candidate& c : list) {
    const tsrStatus_t status = call(c.algo);
    if (is_not_supported(status)) {
      reasons += (reasons.empty() ? "" : "; ") + c.name + ": " + last_error();
      continue;
    }
    check(status, call_name);
    outcome.implementation = c.name;
    return c.algo;
  }
  throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, reasons};
}

// Rounds the expected values to the result's type and judges; `what` prefixes a failure.
inline bool judge_rounded(problem_outcome& outcome, const char* what, const host_tensor& result,
                          host_tensor expected, const reference::tolerance& tol) {
  expected.round_to_data_type();
  const reference::compare_result r = reference::compare(result, expected, tol);
  if (r.ok()) return true;
  outcome.status = outcome_status::failed;
  outcome.detail = std::string(what) + ": " + r.message;
  return false;
}

inline void reference_failed(problem_outcome& outcome, const std::string& error) {
  outcome.status = outcome_status::failed;
  outcome.detail = "reference: " + error;
}

// Performance in GB/s from the bytes a kernel must read and write.
inline void time_memory_bound(problem_outcome& outcome, tsrHandle_t handle, const bench_settings& s,
                              double bytes, const std::function<void()>& call,
                              tensor_rotation* rotation) {
  outcome.time_ms = median_time_ms(handle, s.iterations, call, rotation, s.back_to_back);
  outcome.rate = bytes / (outcome.time_ms * 1e-3) / 1e9;
  outcome.rate_unit = "GB/s";
}

inline double tensor_bytes(const host_tensor& t) {
  return static_cast<double>(t.element_count()) *
         static_cast<double>(common::data_type_size(t.data_type()));
}

// Fills with integers in [lo, hi].
inline host_tensor filled(const tsrpTensor& desc, int lo, int hi, uint32_t seed) {
  host_tensor t(desc);
  reference::fill_integers(t, reference::fill_spec{lo, hi, 1.0}, seed);
  return t;
}

// "--pool --dt=f32 --tag=nchw" and so on: the replay command's common head.
inline std::string command_head(const bench_settings& s, bool with_tag = true) {
  std::string c = std::string("tessera-bench --") + driver_name(s.driver) +
                  " --dt=" + common::data_type_name(s.data_type);
  if (with_tag) c += std::string(" --tag=") + (s.channels_last ? "nhwc" : "nchw");
  return c;
}
inline void set_command(problem_outcome& outcome, const bench_settings& s, std::string command) {
  if (!s.backend.empty()) command += " --backend=" + s.backend;
  if (s.mode != (mode_correctness | mode_performance))
    command += s.mode == mode_correctness    ? " --mode=C"
               : s.mode == mode_performance ? " --mode=P"
                                            : " --mode=R";
  outcome.repro = command;
  outcome.descriptor = strip_program_name(command);
}

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_COMMON_HPP
