// A test device: plugin "fakedev" serves device kind CUDA with a device interface of its own (host
// memory behind it) and a few relu kernels, so that the selection policy (tuning, the tuning
// database, deterministic-only, fallback through host memory, cross-check) can be tested with
// real processes on machines without a GPU. Tests load it with TESSERA_BACKENDS=-cuda,-cudnn so
// that it is the only CUDA-kind plugin.
//
// Kernels of activation forward (relu only, f32, packed):
//   relu_slow        deterministic, correct, sleeps 2 ms   (first in the table: the heuristic's pick)
//   relu_fast        NOT flagged deterministic, correct    (what tuning finds)
//   relu_off_by_one  deterministic, returns relu + 1, sleeps 1 ms (what cross-check must catch)
// and of convolution forward, so that find can be tested here:
//   conv_fwd_naive   deterministic, correct: 2-D f32 cross-correlation, one group, any strides
// The device has 1 GiB (FAKEDEV_TOTAL_MEMORY=bytes changes it, read at every call so that a test
// can shrink the device while it runs); allocations beyond what is free fail, as on a GPU.
// Environment: FAKEDEV_RUN_LOG=path appends each run kernel's name to path; FAKEDEV_VERSION and
// FAKEDEV_FINGERPRINT replace the plugin version and the device fingerprint (tuning-key tests).
//
// Built twice (tests/fake_plugins/CMakeLists.txt): as is, and with FAKEDEV_ABI_3, which speaks
// ABI 3 and hands over a device struct that ends before memory_info (an older plugin: the host
// does not know the device's size and leaves the allocator to answer).
#include <tessera/plugin_abi.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <thread>

namespace {

void log_run(const char* name) {
  const char* path = std::getenv("FAKEDEV_RUN_LOG");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", name);
    std::fclose(f);
  }
}

// ---- device interface: one device, host memory ----
tsrpStatus_t count(int32_t* n) {
  *n = 1;
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t name(int32_t, char* text, size_t size) {
  std::snprintf(text, size, "fake device");
  return TSRP_STATUS_SUCCESS;
}
size_t total_memory() {
  if (const char* v = std::getenv("FAKEDEV_TOTAL_MEMORY")) {
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(v, &end, 10);
    if (*v && *end == '\0' && bytes > 0) return static_cast<size_t>(bytes);
  }
  return size_t(1) << 30;
}

// Allocations are remembered, so that pointer_device can tell this device's memory from any other
// and memory_info can say what is free.
std::mutex g_allocations_mutex;
std::map<const char*, size_t> g_allocations;
size_t g_bytes_in_use = 0;

size_t free_memory_locked() {
  const size_t total = total_memory();
  return g_bytes_in_use < total ? total - g_bytes_in_use : 0;
}

tsrpStatus_t allocate(void*, size_t bytes, void** p) {
  *p = nullptr;
  if (bytes == 0) return TSRP_STATUS_SUCCESS;
  std::lock_guard<std::mutex> lock(g_allocations_mutex);
  if (bytes > free_memory_locked()) return TSRP_STATUS_OUT_OF_MEMORY;
  *p = std::malloc(bytes);
  if (!*p) return TSRP_STATUS_OUT_OF_MEMORY;
  g_allocations[static_cast<const char*>(*p)] = bytes;
  g_bytes_in_use += bytes;
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t deallocate(void*, void* p) {
  {
    std::lock_guard<std::mutex> lock(g_allocations_mutex);
    auto it = g_allocations.find(static_cast<const char*>(p));
    if (it != g_allocations.end()) {
      g_bytes_in_use -= it->second;
      g_allocations.erase(it);
    }
  }
  std::free(p);
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t memory_info(void*, size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(g_allocations_mutex);
  *free_bytes = free_memory_locked();
  *total_bytes = total_memory();
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t pointer_device(const void* pointer, int32_t* ordinal) {
  std::lock_guard<std::mutex> lock(g_allocations_mutex);
  const char* c = static_cast<const char*>(pointer);
  auto it = g_allocations.upper_bound(c);
  *ordinal = (it != g_allocations.begin() && c < std::prev(it)->first + std::prev(it)->second) ? 0 : -1;
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t copy(void*, void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t sync(void*) { return TSRP_STATUS_SUCCESS; }
using clock_type = std::chrono::steady_clock;
tsrpStatus_t event_create(void*, void** e) {
  *e = new (std::nothrow) clock_type::time_point();
  return *e ? TSRP_STATUS_SUCCESS : TSRP_STATUS_OUT_OF_MEMORY;
}
tsrpStatus_t event_record(void*, void* e) {
  *static_cast<clock_type::time_point*>(e) = clock_type::now();
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t event_elapsed(void*, void* a, void* b, float* ms) {
  *ms = std::chrono::duration<float, std::milli>(*static_cast<clock_type::time_point*>(b) -
                                                 *static_cast<clock_type::time_point*>(a))
            .count();
  return TSRP_STATUS_SUCCESS;
}
void event_destroy(void*, void* e) { delete static_cast<clock_type::time_point*>(e); }
tsrpStatus_t fingerprint(int32_t, char* text, size_t size) {
  const char* f = std::getenv("FAKEDEV_FINGERPRINT");
  std::snprintf(text, size, "%s", f ? f : "fake:device;v=1");
  return TSRP_STATUS_SUCCESS;
}

#if defined(FAKEDEV_ABI_3)
// What a plugin built against the ABI 3 header hands over: the struct ends before memory_info.
constexpr size_t k_device_struct_size = offsetof(tsrpDeviceInterface, memory_info);
constexpr uint32_t k_abi_version = 3u;
#else
constexpr size_t k_device_struct_size = sizeof(tsrpDeviceInterface);
constexpr uint32_t k_abi_version = TSRP_ABI_VERSION_CURRENT;
#endif

const tsrpDeviceInterface k_device = {k_device_struct_size, count, name, allocate, deallocate, copy, copy,
                                      sync, event_create, event_record, event_elapsed, event_destroy, fingerprint,
                                      pointer_device, memory_info};

// ---- kernels ----
bool packed(const tsrpTensor& t) {
  int64_t expect = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    if (t.strides[i] != expect) return false;
    expect *= t.dims[i];
  }
  return true;
}

int relu_can(void*, const void* problem, char* reason, size_t size) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  if (p->mode != TSRP_ACTIVATION_RELU) {
    std::snprintf(reason, size, "fakedev runs relu only");
    return 0;
  }
  if (p->x.data_type != TSRP_DATA_FLOAT || p->y.data_type != TSRP_DATA_FLOAT || !packed(p->x) || !packed(p->y)) {
    std::snprintf(reason, size, "fakedev runs packed f32 only");
    return 0;
  }
  return 1;
}

template <int SleepMs, int Offset>
tsrpStatus_t relu_run(void* user_data, void*, const void* problem, const void* args, void*, size_t, char*, size_t) {
  log_run(static_cast<const char*>(user_data));
  if (SleepMs) std::this_thread::sleep_for(std::chrono::milliseconds(SleepMs));
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  const auto* a = static_cast<const tsrpActivationArgs*>(args);
  int64_t n = 1;
  for (int i = 0; i < p->x.ndims; ++i) n *= p->x.dims[i];
  const float* x = static_cast<const float*>(a->x);
  float* y = static_cast<float*>(a->y);
  for (int64_t i = 0; i < n; ++i) {
    const float v = a->alpha * ((x[i] > 0 ? x[i] : 0.0f) + Offset);
    y[i] = a->beta != 0 ? v + a->beta * y[i] : v;
  }
  return TSRP_STATUS_SUCCESS;
}

int conv_can(void*, const void* problem, char* reason, size_t size) {
  const auto* p = static_cast<const tsrpConvolutionProblem*>(problem);
  if (p->spatial_dims != 2 || p->groups != 1 || p->mode != TSRP_CROSS_CORRELATION || p->output_scale_count != 0 ||
      p->x.data_type != TSRP_DATA_FLOAT || p->w.data_type != TSRP_DATA_FLOAT || p->y.data_type != TSRP_DATA_FLOAT) {
    std::snprintf(reason, size, "fakedev runs 2-D f32 cross-correlation with one group only");
    return 0;
  }
  return 1;
}

// y = alpha * conv(x, w) + beta * y, one output element at a time, through the strides.
tsrpStatus_t conv_run(void* user_data, void*, const void* problem, const void* args, void*, size_t, char*, size_t) {
  log_run(static_cast<const char*>(user_data));
  const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
  const auto& a = *static_cast<const tsrpConvolutionForwardArgs*>(args);
  const float* x = static_cast<const float*>(a.x);
  const float* w = static_cast<const float*>(a.w);
  float* y = static_cast<float*>(a.y);
  const int64_t *xs = p.x.strides, *ws = p.w.strides, *ys = p.y.strides;
  for (int64_t n = 0; n < p.y.dims[0]; ++n)
    for (int64_t k = 0; k < p.y.dims[1]; ++k)
      for (int64_t oh = 0; oh < p.y.dims[2]; ++oh)
        for (int64_t ow = 0; ow < p.y.dims[3]; ++ow) {
          double sum = 0;
          for (int64_t c = 0; c < p.w.dims[1]; ++c)
            for (int64_t r = 0; r < p.w.dims[2]; ++r)
              for (int64_t q = 0; q < p.w.dims[3]; ++q) {
                const int64_t ih = oh * p.stride[0] - p.pad_before[0] + r * p.dilation[0];
                const int64_t iw = ow * p.stride[1] - p.pad_before[1] + q * p.dilation[1];
                if (ih < 0 || ih >= p.x.dims[2] || iw < 0 || iw >= p.x.dims[3]) continue;
                sum += double(x[n * xs[0] + c * xs[1] + ih * xs[2] + iw * xs[3]]) *
                       w[k * ws[0] + c * ws[1] + r * ws[2] + q * ws[3]];
              }
          float& out = y[n * ys[0] + k * ys[1] + oh * ys[2] + ow * ys[3]];
          const float v = a.alpha * static_cast<float>(sum);
          out = a.beta != 0 ? v + a.beta * out : v;
        }
  return TSRP_STATUS_SUCCESS;
}

tsrpKernel make(const char* kernel_name, uint32_t flags,
                tsrpStatus_t (*run)(void*, void*, const void*, const void*, void*, size_t, char*, size_t),
                int32_t operation = TSRP_OP_ACTIVATION_FORWARD,
                int (*can_implement)(void*, const void*, char*, size_t) = relu_can) {
  tsrpKernel k{};
  k.struct_size = sizeof(k);
  k.name = kernel_name;
  k.operation = operation;
  k.flags = flags;
  k.notes = "fakedev test kernel";
  k.user_data = const_cast<char*>(kernel_name);
  k.can_implement = can_implement;
  k.run = run;
  return k;
}

const tsrpKernel k_kernels[] = {
    make("relu_slow", TSRP_KERNEL_DETERMINISTIC, relu_run<2, 0>),
    make("relu_fast", 0u, relu_run<0, 0>),
    make("relu_off_by_one", TSRP_KERNEL_DETERMINISTIC, relu_run<1, 1>),
    make("conv_fwd_naive", TSRP_KERNEL_DETERMINISTIC, conv_run, TSRP_OP_CONVOLUTION_FORWARD, conv_can),
};

}  // namespace

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer*, tsrpPluginDesc* desc) {
  desc->abi_version = k_abi_version;
  desc->name = "fakedev";
  const char* version = std::getenv("FAKEDEV_VERSION");
  desc->version = version ? version : "1.0";
  desc->device_kind = TSRP_DEVICE_CUDA;
  desc->device = &k_device;
  desc->kernels = k_kernels;
  desc->kernel_count = sizeof(k_kernels) / sizeof(k_kernels[0]);
  return TSRP_STATUS_SUCCESS;
}
