// One fuzz input's worth of C API objects, made from bytes, and the library's promises checked
// after every call (tessera.h, "Conventions"):
//  - no crash and no sanitizer report (the sanitizers and libFuzzer watch that);
//  - a failed call has a message that names the function, and a successful one none;
//  - a call that fails before running a kernel (any category but EXECUTION_FAILED) leaves every
//    output exactly as it was: outputs are poisoned before the call and compared after it;
//  - no INTERNAL_ERROR: arguments, however wrong, are refused as BAD_PARAM / NOT_SUPPORTED.
// A broken promise prints what happened and aborts, which libFuzzer reports with the input.
//
// Buffers are exactly as large as the descriptors claim (tsrGetTensorSizeInBytes), so ASan sees
// any access past them; a tensor claiming more than k_max_buffer_bytes gets NULL instead (which
// every call must refuse), so that one input stays fast.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>
#include <tessera/tessera.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace tessera::fuzz {

constexpr size_t k_max_buffer_bytes = 32 * 1024;

// Per-process counts, printed at exit (LLVMFuzzerInitialize registers it).
struct call_stats {
  long calls = 0, succeeded = 0, execution_failed = 0;
  std::vector<std::string> execution_failures;  // the first few messages, for the summary
};
inline call_stats& stats() {
  static call_stats* s = new call_stats();  // leaked: read by an atexit handler
  return *s;
}

// TESSERA_FUZZ_VERBOSE=1: print every call and descriptor, to read what a crashing input does.
inline bool verbose() {
  static const char* value = std::getenv("TESSERA_FUZZ_VERBOSE");
  static const bool on = value && *value && *value != '0';
  return on;
}

[[noreturn]] inline void broken_promise(const std::string& what) {
  std::fprintf(stderr, "\n==tessera-fuzz== BROKEN PROMISE: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string last_message() {
  char text[4096] = {0};
  tsrGetLastErrorString(text, sizeof(text));
  return text;
}

class session {
 public:
  explicit session(FuzzedDataProvider& data) : data_(data) {}
  ~session() {
    for (tsrTensorDescriptor_t d : tensors_) tsrDestroyTensorDescriptor(d);
  }
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  FuzzedDataProvider& data() { return data_; }
  bool more() const { return data_.remaining_bytes() > 0; }

  // ---- values ---------------------------------------------------------------------------------
  template <typename T>
  T in_range(T lo, T hi) { return data_.ConsumeIntegralInRange<T>(lo, hi); }
  bool coin() { return data_.ConsumeBool(); }
  // Mostly plausible, sometimes anything.
  int64_t dim(int64_t lo, int64_t hi) {
    if (in_range<int>(0, 15) == 0) return hostile_int64();
    return in_range<int64_t>(lo, hi);
  }
  int64_t hostile_int64() {
    switch (in_range<int>(0, 7)) {
      case 0: return 0;
      case 1: return -1;
      case 2: return std::numeric_limits<int64_t>::max();
      case 3: return std::numeric_limits<int64_t>::min();
      case 4: return int64_t(1) << 31;
      case 5: return int64_t(1) << 40;
      case 6: return in_range<int64_t>(-100, 100);
      default: return data_.ConsumeIntegral<int64_t>();
    }
  }
  // An enum value: one of the `count` valid ones, now and then anything.
  template <typename E>
  E enumerated(int count) {
    if (in_range<int>(0, 15) == 0) return static_cast<E>(data_.ConsumeIntegral<int32_t>());
    return static_cast<E>(in_range<int>(0, count - 1));
  }
  float scalar() {
    switch (in_range<int>(0, 9)) {
      case 0: return 0.0f;
      case 1: return 0.5f;
      case 2: return -2.0f;
      case 3: return std::numeric_limits<float>::quiet_NaN();
      case 4: return std::numeric_limits<float>::infinity();
      case 5: return data_.ConsumeFloatingPoint<float>();
      default: return 1.0f;
    }
  }
  double real(double plausible) {
    switch (in_range<int>(0, 7)) {
      case 0: return 0.0;
      case 1: return -plausible;
      case 2: return std::numeric_limits<double>::quiet_NaN();
      case 3: return std::numeric_limits<double>::infinity();
      case 4: return data_.ConsumeFloatingPoint<double>();
      default: return plausible;
    }
  }
  tsrAlgo_t algo() {
    switch (in_range<int>(0, 7)) {
      case 0: return in_range<int64_t>(0, 300);  // some real kernel ids, of any operation
      case 1: return hostile_int64();
      default: return TSR_ALGO_AUTO;
    }
  }
  tsrDataType_t dtype() {
    switch (in_range<int>(0, 15)) {
      case 0: return TSR_DATA_HALF;
      case 1: return TSR_DATA_BFLOAT16;
      case 2: return TSR_DATA_INT8;
      case 3: return TSR_DATA_INT32;
      case 4: return static_cast<tsrDataType_t>(data_.ConsumeIntegral<int32_t>());
      default: return TSR_DATA_FLOAT;
    }
  }

  // ---- descriptors ----------------------------------------------------------------------------
  // A tensor: like `like` (same dims) most of the time when given, else its own dims; packed,
  // strided or hostile. The set call's promises are checked (a failed set leaves it as it was).
  tsrTensorDescriptor_t tensor(const std::vector<int64_t>* like = nullptr, int rank = 4,
                               tsrDataType_t dtype_hint = TSR_DATA_FLOAT) {
    tsrTensorDescriptor_t d = nullptr;
    if (tsrCreateTensorDescriptor(&d) != TSR_STATUS_SUCCESS) broken_promise("tsrCreateTensorDescriptor failed");
    tensors_.push_back(d);
    if (in_range<int>(0, 31) == 0) return d;  // never set
    std::vector<int64_t> dims;
    if (like && in_range<int>(0, 5) != 0) {
      dims = *like;
      if (!dims.empty() && in_range<int>(0, 7) == 0)
        dims[in_range<size_t>(0, dims.size() - 1)] = dim(1, 6);
    } else {
      int n = in_range<int>(0, 15) == 0 ? in_range<int>(-1, 10) : rank;
      for (int i = 0; i < std::max(n, 0); ++i) dims.push_back(dim(1, 6));
    }
    tsrDataType_t type = in_range<int>(0, 3) == 0 ? dtype() : dtype_hint;
    set_tensor(d, type, dims);
    return d;
  }

  static std::vector<int64_t> dims_of(tsrTensorDescriptor_t d) {
    tsrDataType_t t;
    int n = 0;
    int64_t dims[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
    if (tsrGetTensorNdDescriptor(d, TSR_MAX_DIMS, &t, &n, dims, strides) != TSR_STATUS_SUCCESS)
      return {};
    return std::vector<int64_t>(dims, dims + std::min(n, TSR_MAX_DIMS));
  }

  // ---- buffers --------------------------------------------------------------------------------
  // Input memory for the tensor, filled from the fuzz data; NULL when the descriptor has no size
  // or claims more than the cap.
  void* input(tsrTensorDescriptor_t d) { return buffer_for(d, false); }
  // Output memory: poisoned, and compared after the next check() when the call fails.
  void* output(tsrTensorDescriptor_t d) { return buffer_for(d, true); }
  // Memory of a given size (statistics, workspaces, indices).
  void* input_bytes(size_t bytes) { return raw_buffer(bytes, false); }
  void* output_bytes(size_t bytes) { return raw_buffer(bytes, true); }
  // An output struct whose leading size_t struct_size the caller sets (info and perf structs):
  // poisoned, then struct_size written, then remembered as it is.
  template <typename T>
  T* output_struct(size_t struct_size) {
    auto* p = static_cast<T*>(raw_buffer(sizeof(T), true));
    p->struct_size = struct_size;
    outputs_.back().before = *outputs_.back().memory;
    return p;
  }
  // A workspace: none (use the handle's pool), or a buffer of some size.
  std::pair<void*, size_t> workspace() {
    switch (in_range<int>(0, 5)) {
      case 0: return {nullptr, in_range<size_t>(1, 4096)};  // size without memory: refused
      case 1: {
        size_t n = in_range<size_t>(0, 1 << 16);
        return {raw_buffer(n, false), n};
      }
      default: return {nullptr, 0};
    }
  }

  // ---- promises -------------------------------------------------------------------------------
  // Checks the call just made; forgets the outputs registered for it.
  void check(const char* function, tsrStatus_t status) {
    ++stats().calls;
    std::string message = last_message();
    if (verbose()) std::fprintf(stderr, "  %s -> %s %s\n", function, tsrGetErrorString(status), message.c_str());
    int category = TSR_STATUS_CATEGORY(status);
    if (std::string(tsrGetErrorString(status)).find("UNKNOWN") != std::string::npos ||
        (category != 0 && category != 2000 && category != 3000 && category != 4000 &&
         category != 5000))
      broken_promise(std::string(function) + " returned an unknown status " + std::to_string(status));
    if (status == TSR_STATUS_SUCCESS) {
      ++stats().succeeded;
      if (!message.empty())
        broken_promise(std::string(function) + " succeeded but left the message '" + message + "'");
      outputs_.clear();
      return;
    }
    if (message.empty())
      broken_promise(std::string(function) + " returned " + tsrGetErrorString(status) +
                     " without a message");
    if (message.find(function) == std::string::npos)
      broken_promise(std::string(function) + " returned " + tsrGetErrorString(status) +
                     " with a message that does not name it: '" + message + "'");
    if (status == TSR_STATUS_INTERNAL_ERROR)
      broken_promise(std::string(function) + " returned TSR_STATUS_INTERNAL_ERROR: '" + message + "'");
    if (category == TSR_STATUS_EXECUTION_FAILED) {
      // A kernel failed while running: it may have written part of its output (tessera.h).
      ++stats().execution_failed;
      if (stats().execution_failures.size() < 8) stats().execution_failures.push_back(message);
      // TESSERA_FUZZ_STRICT=1: a kernel that accepted a problem and then failed is a finding too
      // (to hunt those down; the library's contract allows it).
      const char* strict = std::getenv("TESSERA_FUZZ_STRICT");
      if (strict && *strict && *strict != '0')
        broken_promise(std::string(function) + " failed while running: " + message);
      outputs_.clear();
      return;
    }
    for (const poisoned& o : outputs_)
      if (std::memcmp(o.memory->data(), o.before.data(), o.before.size()) != 0)
        broken_promise(std::string(function) + " returned " + tsrGetErrorString(status) + " ('" +
                       message + "') but wrote a " + std::to_string(o.before.size()) +
                       "-byte output");
    outputs_.clear();
  }

 private:
  struct poisoned {
    std::vector<uint8_t>* memory;
    std::vector<uint8_t> before;
  };

  void set_tensor(tsrTensorDescriptor_t d, tsrDataType_t type, const std::vector<int64_t>& dims) {
    const int n = static_cast<int>(dims.size());
    int64_t before_dims[TSR_MAX_DIMS], before_strides[TSR_MAX_DIMS];
    tsrDataType_t before_type;
    int before_n = 0;
    tsrStatus_t before = tsrGetTensorNdDescriptor(d, TSR_MAX_DIMS, &before_type, &before_n,
                                                  before_dims, before_strides);
    tsrStatus_t s;
    const char* fn;
    int layout = in_range<int>(0, 7);
    if (layout <= 3) {
      fn = "tsrSetTensorNdDescriptorEx";
      tsrTensorFormat_t format = layout == 3 ? enumerated<tsrTensorFormat_t>(2)
                                             : (layout == 2 ? TSR_TENSOR_NHWC : TSR_TENSOR_NCHW);
      s = tsrSetTensorNdDescriptorEx(d, format, type, n, dims.empty() ? nullptr : dims.data());
    } else {
      fn = "tsrSetTensorNdDescriptor";
      std::vector<int64_t> strides(dims.size());
      int64_t packed = 1;
      // Saturating: the fuzzer itself must not overflow on hostile dims.
      auto times = [](int64_t a, int64_t b) {
        int64_t r;
        return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
      };
      for (int i = n - 1; i >= 0; --i) {
        switch (layout) {
          case 4: strides[i] = packed; break;                                 // packed
          case 5: strides[i] = times(packed, i == n - 1 ? 1 : 2); break;      // padded
          case 6: strides[i] = in_range<int64_t>(0, 64); break;               // anything small
          default: strides[i] = hostile_int64(); break;
        }
        if (dims[i] > 0) packed = times(packed, dims[i]);
      }
      s = tsrSetTensorNdDescriptor(d, type, n, dims.empty() ? nullptr : dims.data(),
                                   strides.empty() ? nullptr : strides.data());
    }
    check_descriptor_set(fn, s, d, before, before_type, before_n, before_dims, before_strides);
    if (verbose() && s == TSR_STATUS_SUCCESS) {
      int64_t got_dims[TSR_MAX_DIMS], got_strides[TSR_MAX_DIMS];
      tsrDataType_t got_type;
      int got_n = 0;
      tsrGetTensorNdDescriptor(d, TSR_MAX_DIMS, &got_type, &got_n, got_dims, got_strides);
      std::fprintf(stderr, "  tensor %p dtype %d dims/strides", static_cast<void*>(d),
                   static_cast<int>(got_type));
      for (int i = 0; i < got_n; ++i)
        std::fprintf(stderr, " %lld/%lld", static_cast<long long>(got_dims[i]),
                     static_cast<long long>(got_strides[i]));
      std::fprintf(stderr, "\n");
    }
  }

  // Checks a call made while preparing another (a set, a size query): the outputs already
  // registered for that other call stay registered.
  void check_aside(const char* function, tsrStatus_t status) {
    std::vector<poisoned> pending = std::move(outputs_);
    outputs_.clear();
    check(function, status);
    outputs_ = std::move(pending);
  }

  // A failed set leaves the descriptor as it was (its previous contents, or still unset).
  void check_descriptor_set(const char* fn, tsrStatus_t s, tsrTensorDescriptor_t d,
                            tsrStatus_t before, tsrDataType_t before_type, int before_n,
                            const int64_t* before_dims, const int64_t* before_strides) {
    check_aside(fn, s);
    if (s == TSR_STATUS_SUCCESS) return;
    int64_t dims[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
    tsrDataType_t type;
    int n = 0;
    tsrStatus_t after = tsrGetTensorNdDescriptor(d, TSR_MAX_DIMS, &type, &n, dims, strides);
    bool same = after == before;
    if (same && after == TSR_STATUS_SUCCESS) {
      same = type == before_type && n == before_n;
      for (int i = 0; same && i < std::min(n, TSR_MAX_DIMS); ++i)
        same = dims[i] == before_dims[i] && strides[i] == before_strides[i];
    }
    if (!same) broken_promise(std::string(fn) + " failed but changed the descriptor");
  }

  void* buffer_for(tsrTensorDescriptor_t d, bool is_output) {
    size_t bytes = 0;
    tsrStatus_t s = tsrGetTensorSizeInBytes(d, &bytes);
    check_aside("tsrGetTensorSizeInBytes", s);
    if (s != TSR_STATUS_SUCCESS) return nullptr;
    if (bytes > k_max_buffer_bytes) return nullptr;
    return raw_buffer(bytes, is_output);
  }

  void* raw_buffer(size_t bytes, bool is_output) {
    if (bytes == 0 || bytes > k_max_buffer_bytes) return nullptr;
    memory_.push_back(std::make_unique<std::vector<uint8_t>>(bytes));
    std::vector<uint8_t>& m = *memory_.back();
    if (is_output) {
      std::memset(m.data(), 0xA5, m.size());  // a finite float (-2.9e-16), recognizable in dumps
      outputs_.push_back({&m, m});
    } else {
      // Small integers as floats mostly, raw fuzz bytes now and then (NaN, denormals, ...).
      if (in_range<int>(0, 3) == 0) {
        std::vector<uint8_t> raw = data_.ConsumeBytes<uint8_t>(m.size());
        if (!raw.empty()) std::memcpy(m.data(), raw.data(), raw.size());
      } else {
        uint8_t seed = data_.ConsumeIntegral<uint8_t>();
        for (size_t i = 0; i + 4 <= m.size(); i += 4) {
          float v = static_cast<float>(static_cast<int>((i / 4 * 7 + seed) % 9) - 4);
          std::memcpy(&m[i], &v, 4);
        }
      }
    }
    return m.data();
  }

  FuzzedDataProvider& data_;
  std::vector<tsrTensorDescriptor_t> tensors_;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> memory_;
  std::vector<poisoned> outputs_;
};

}  // namespace tessera::fuzz
