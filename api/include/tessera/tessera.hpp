// Header-only C++ wrapper over tessera.h: RAII owners for handles and descriptors, and
// tessera::error (status + message) thrown where the C API returns a failure. Enums are the C
// ones; every method maps 1:1 to a C function (oneDNN's dnnl.h / dnnl.hpp split is the model).
#ifndef TESSERA_TESSERA_HPP
#define TESSERA_TESSERA_HPP

#include <tessera/tessera.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

class error : public std::runtime_error {
 public:
  error(tsrStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  tsrStatus_t status() const noexcept { return status_; }
  tsrStatus_t category() const noexcept { return TSR_STATUS_CATEGORY(status_); }

 private:
  tsrStatus_t status_;
};

// Throws tessera::error carrying the status and this thread's last message.
inline void check(tsrStatus_t status) {
  if (status == TSR_STATUS_SUCCESS) return;
  char message[1024] = {0};
  tsrGetLastErrorString(message, sizeof(message));
  std::string text = message[0] ? message : tsrGetErrorString(status);
  throw error(status, text);
}

// The library at run time must serve code compiled against this header.
inline void check_version() { check(tsrCheckVersion(TSR_VERSION)); }

namespace detail {
// Owns one C object; `Destroy` is its tsrDestroy* function.
template <typename T, tsrStatus_t (*Destroy)(T)>
class owner {
 public:
  owner() = default;
  explicit owner(T raw) : raw_(raw) {}
  owner(const owner&) = delete;
  owner& operator=(const owner&) = delete;
  owner(owner&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  owner& operator=(owner&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  ~owner() { reset(); }
  T get() const noexcept { return raw_; }
  operator T() const noexcept { return raw_; }

 protected:
  void reset() noexcept {
    if (raw_) Destroy(raw_);
    raw_ = nullptr;
  }
  T raw_ = nullptr;
};
}  // namespace detail

class handle : public detail::owner<tsrHandle_t, tsrDestroy> {
 public:
  explicit handle(tsrDeviceKind_t kind = TSR_DEVICE_CPU, int ordinal = 0) {
    check(tsrCreate(kind, ordinal, &raw_));
  }
  void set_stream(void* stream) { check(tsrSetStream(raw_, stream)); }
  void* stream() const {
    void* s = nullptr;
    check(tsrGetStream(raw_, &s));
    return s;
  }
  void set_backend_preference(const std::string& backends) {
    check(tsrSetBackendPreference(raw_, backends.c_str()));
  }
  void set_backends_exclusive(bool exclusive) { check(tsrSetBackendsExclusive(raw_, exclusive ? 1 : 0)); }
  // The kernel the last operation call ran ("backend/kernel"; "" before any).
  std::string last_kernel_name() const {
    char name[512] = {0};
    check(tsrGetLastKernelName(raw_, name, sizeof(name)));
    return name;
  }
  void set_math_mode(tsrMathMode_t mode) { check(tsrSetMathMode(raw_, mode)); }
  void* malloc(size_t bytes) {
    void* p = nullptr;
    check(tsrMalloc(raw_, bytes, &p));
    return p;
  }
  void free(void* p) { check(tsrFree(raw_, p)); }
  void copy_to_device(void* dst, const void* src, size_t bytes) {
    check(tsrMemcpyHostToDevice(raw_, dst, src, bytes));
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) {
    check(tsrMemcpyDeviceToHost(raw_, dst, src, bytes));
  }
  void synchronize() { check(tsrSynchronize(raw_)); }
};

// A timing event on a handle's stream (tsrCreateEvent); destroy it before its handle.
class event : public detail::owner<tsrEvent_t, tsrDestroyEvent> {
 public:
  explicit event(tsrHandle_t on) { check(tsrCreateEvent(on, &raw_)); }
  void record() { check(tsrRecordEvent(raw_)); }
  // Milliseconds from `start` to this event; waits until this one has completed.
  float elapsed_since(const event& start) const {
    float ms = 0.0f;
    check(tsrGetEventElapsedTime(start.get(), raw_, &ms));
    return ms;
  }
};

class tensor_desc : public detail::owner<tsrTensorDescriptor_t, tsrDestroyTensorDescriptor> {
 public:
  tensor_desc() { check(tsrCreateTensorDescriptor(&raw_)); }
  tensor_desc(tsrDataType_t dtype, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& strides)
      : tensor_desc() {
    if (dims.size() != strides.size())
      throw error(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  "tessera::tensor_desc: dims and strides differ in length");
    check(tsrSetTensorNdDescriptor(raw_, dtype, static_cast<int>(dims.size()), dims.data(),
                                   strides.data()));
  }
  tensor_desc(tsrTensorFormat_t format, tsrDataType_t dtype, const std::vector<int64_t>& dims)
      : tensor_desc() {
    check(tsrSetTensorNdDescriptorEx(raw_, format, dtype, static_cast<int>(dims.size()),
                                     dims.data()));
  }
  size_t size_in_bytes() const {
    size_t b = 0;
    check(tsrGetTensorSizeInBytes(raw_, &b));
    return b;
  }
};

class activation_desc
    : public detail::owner<tsrActivationDescriptor_t, tsrDestroyActivationDescriptor> {
 public:
  explicit activation_desc(tsrActivationMode_t mode, double coef = 0.0) {
    check(tsrCreateActivationDescriptor(&raw_));
    check(tsrSetActivationDescriptor(raw_, mode, coef));
  }
};

class convolution_desc
    : public detail::owner<tsrConvolutionDescriptor_t, tsrDestroyConvolutionDescriptor> {
 public:
  // One value per spatial dim in each vector.
  convolution_desc(const std::vector<int64_t>& pad_before, const std::vector<int64_t>& pad_after,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                   int64_t groups = 1, tsrConvolutionMode_t mode = TSR_CROSS_CORRELATION,
                   tsrDataType_t compute_type = TSR_DATA_FLOAT) {
    check(tsrCreateConvolutionDescriptor(&raw_));
    size_t n = pad_before.size();
    if (pad_after.size() != n || stride.size() != n || dilation.size() != n)
      throw error(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  "tessera::convolution_desc: pad, stride and dilation differ in length");
    check(tsrSetConvolutionNdDescriptor(raw_, static_cast<int>(n), pad_before.data(),
                                        pad_after.data(), stride.data(), dilation.data(), mode,
                                        compute_type));
    check(tsrSetConvolutionGroupCount(raw_, groups));
  }
  std::vector<int64_t> output_dims(const tensor_desc& x, const tensor_desc& w, int nb_dims) const {
    std::vector<int64_t> out(static_cast<size_t>(nb_dims));
    check(tsrGetConvolutionForwardOutputDim(raw_, x, w, nb_dims, out.data()));
    return out;
  }
};

inline tsrAlgoPerf_t make_algo_perf() {
  tsrAlgoPerf_t p{};
  p.struct_size = sizeof(p);
  return p;
}

inline std::vector<tsrAlgoPerf_t> get_convolution_forward_algorithms(
    const handle& h, const tensor_desc& x, const tensor_desc& w, const convolution_desc& conv,
    const tensor_desc& y, int max_count = 16) {
  std::vector<tsrAlgoPerf_t> perf(static_cast<size_t>(max_count), make_algo_perf());
  int n = 0;
  check(tsrGetConvolutionForwardAlgorithm(h, x, w, conv, y, max_count, &n, perf.data()));
  perf.resize(static_cast<size_t>(n));
  return perf;
}

inline size_t convolution_forward_workspace_size(const handle& h, const tensor_desc& x,
                                                 const tensor_desc& w, const convolution_desc& conv,
                                                 const tensor_desc& y, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetConvolutionForwardWorkspaceSize(h, x, w, conv, y, algo, &b));
  return b;
}

inline void convolution_forward(const handle& h, float alpha, const tensor_desc& x_desc,
                                const void* x, const tensor_desc& w_desc, const void* w,
                                const convolution_desc& conv, tsrAlgo_t algo, void* workspace,
                                size_t workspace_size, float beta, const tensor_desc& y_desc,
                                void* y) {
  check(tsrConvolutionForward(h, alpha, x_desc, x, w_desc, w, conv, algo, workspace,
                              workspace_size, beta, y_desc, y));
}

inline void activation_forward(const handle& h, const activation_desc& act, tsrAlgo_t algo,
                               float alpha, const tensor_desc& x_desc, const void* x, float beta,
                               const tensor_desc& y_desc, void* y) {
  check(tsrActivationForward(h, act, algo, alpha, x_desc, x, beta, y_desc, y));
}

inline void activation_backward(const handle& h, const activation_desc& act, tsrAlgo_t algo,
                                float alpha, const tensor_desc& y_desc, const void* y,
                                const tensor_desc& dy_desc, const void* dy,
                                const tensor_desc& x_desc, const void* x, float beta,
                                const tensor_desc& dx_desc, void* dx) {
  check(tsrActivationBackward(h, act, algo, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta,
                              dx_desc, dx));
}

inline tsrAlgo_t algo_by_name(tsrOperation_t op, const std::string& name) {
  tsrAlgo_t a = TSR_ALGO_AUTO;
  check(tsrGetAlgoByName(op, name.c_str(), &a));
  return a;
}

inline void load_plugin(const std::string& path) { check(tsrLoadPlugin(path.c_str())); }

inline std::vector<tsrPluginInfo_t> plugins() {
  int n = 0;
  check(tsrGetPluginCount(&n));
  std::vector<tsrPluginInfo_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i].struct_size = sizeof(tsrPluginInfo_t);
    check(tsrGetPluginInfo(i, &out[i]));
  }
  return out;
}

inline std::vector<tsrKernelInfo_t> kernels(tsrOperation_t op) {
  int n = 0;
  check(tsrGetKernelCount(op, &n));
  std::vector<tsrKernelInfo_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i].struct_size = sizeof(tsrKernelInfo_t);
    check(tsrGetKernelInfo(op, i, &out[i]));
  }
  return out;
}

inline int device_count(tsrDeviceKind_t kind) {
  int n = 0;
  check(tsrGetDeviceCount(kind, &n));
  return n;
}

}  // namespace tessera

// C++ wrappers of the operation families, one header each (as tessera.h includes its families).
#include <tessera/tessera_convolution.hpp>
#include <tessera/tessera_pooling.hpp>
#include <tessera/tessera_normalization.hpp>
#include <tessera/tessera_tensor_ops.hpp>
#include <tessera/tessera_matmul.hpp>
#include <tessera/tessera_rnn.hpp>

#endif  // TESSERA_TESSERA_HPP
