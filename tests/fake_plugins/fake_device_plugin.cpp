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
// Environment: FAKEDEV_RUN_LOG=path appends each run kernel's name to path; FAKEDEV_VERSION and
// FAKEDEV_FINGERPRINT replace the plugin version and the device fingerprint (tuning-key tests).
#include <tessera/plugin_abi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
tsrpStatus_t allocate(void*, size_t bytes, void** p) {
  *p = bytes ? std::malloc(bytes) : nullptr;
  return (bytes && !*p) ? TSRP_STATUS_OUT_OF_MEMORY : TSRP_STATUS_SUCCESS;
}
tsrpStatus_t deallocate(void*, void* p) {
  std::free(p);
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

const tsrpDeviceInterface k_device = {sizeof(tsrpDeviceInterface), count, name, allocate, deallocate, copy, copy,
                                      sync, event_create, event_record, event_elapsed, event_destroy, fingerprint};

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

tsrpKernel make(const char* kernel_name, uint32_t flags,
                tsrpStatus_t (*run)(void*, void*, const void*, const void*, void*, size_t, char*, size_t)) {
  tsrpKernel k{};
  k.struct_size = sizeof(k);
  k.name = kernel_name;
  k.operation = TSRP_OP_ACTIVATION_FORWARD;
  k.flags = flags;
  k.notes = "fakedev test kernel";
  k.user_data = const_cast<char*>(kernel_name);
  k.can_implement = relu_can;
  k.run = run;
  return k;
}

const tsrpKernel k_kernels[] = {
    make("relu_slow", TSRP_KERNEL_DETERMINISTIC, relu_run<2, 0>),
    make("relu_fast", 0u, relu_run<0, 0>),
    make("relu_off_by_one", TSRP_KERNEL_DETERMINISTIC, relu_run<1, 1>),
};

}  // namespace

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer*, tsrpPluginDesc* desc) {
  desc->abi_version = TSRP_ABI_VERSION_CURRENT;
  desc->name = "fakedev";
  const char* version = std::getenv("FAKEDEV_VERSION");
  desc->version = version ? version : "1.0";
  desc->device_kind = TSRP_DEVICE_CUDA;
  desc->device = &k_device;
  desc->kernels = k_kernels;
  desc->kernel_count = sizeof(k_kernels) / sizeof(k_kernels[0]);
  return TSRP_STATUS_SUCCESS;
}
