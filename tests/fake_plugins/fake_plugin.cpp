// One source, many test plugins: each compile definition below makes a real shared library with
// one defect (the Vulkan loader's test drivers are built the same way). Only FAKE_GOOD and
// FAKE_DUPLICATE_NAME load; the others must be refused with a reason while the rest keep working.
//
//   FAKE_GOOD            name "fake": kernels that decline, compute relu, fail at run time
//   FAKE_DUPLICATE_NAME  a second plugin also named "fake"
//   FAKE_NO_ENTRY        exports no tsrpPluginEntry
//   FAKE_ABI_TOO_NEW     answers an ABI version above the host's
//   FAKE_ABI_TOO_OLD     answers ABI version 0, below the host's minimum
//   FAKE_ENTRY_FAILS     the entry point returns an error status
//   FAKE_ENTRY_THROWS    the entry point throws a C++ exception
//
// Hostile plugins (tests/registry/hostile_plugin_test.cpp): they load, and then misbehave.
//
//   FAKE_WRITES_PAST_OUTPUT  "fake_overrun": relu whose kernel writes 16 floats past the end of y
//   FAKE_BLOCKS_IN_INIT      the entry point never returns (waits for a device that never comes)
//   FAKE_MANY_KERNELS        "fake_many": 5000 activation kernels; all but the last decline
//   FAKE_TIGHT_MEMORY        "fake_tight_memory": a CPU device interface with 64 KiB of memory
//                            (larger allocations fail with OUT_OF_MEMORY) and a relu kernel that
//                            stages through a workspace as large as x
#include <tessera/plugin_abi.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

int decline_all(void*, const void*, char* reason, size_t size) {
  std::snprintf(reason, size, "fake/decliner declines every problem");
  return 0;
}

bool packed_same(const tsrpTensor& a, const tsrpTensor& b) {
  if (a.ndims != b.ndims) return false;
  int64_t expect = 1;
  for (int i = a.ndims - 1; i >= 0; --i) {
    if (a.strides[i] != expect || b.strides[i] != expect || a.dims[i] != b.dims[i]) return false;
    expect *= a.dims[i];
  }
  return true;
}

int relu_can(void*, const void* problem, char* reason, size_t size) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  if (p->mode != TSRP_ACTIVATION_RELU) {
    std::snprintf(reason, size, "fake/relu_f32 runs relu only");
    return 0;
  }
  if (p->x.data_type != TSRP_DATA_FLOAT) {
    std::snprintf(reason, size, "fake/relu_f32 runs f32 only");
    return 0;
  }
  if (!packed_same(p->x, p->y)) {
    std::snprintf(reason, size, "fake/relu_f32 needs packed row-major tensors");
    return 0;
  }
  return 1;
}

tsrpStatus_t relu_run(void*, void*, const void* problem, const void* args, void*, size_t, char*,
                      size_t) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  const auto* a = static_cast<const tsrpActivationArgs*>(args);
  int64_t n = 1;
  for (int i = 0; i < p->x.ndims; ++i) n *= p->x.dims[i];
  const float* x = static_cast<const float*>(a->x);
  float* y = static_cast<float*>(a->y);
  for (int64_t i = 0; i < n; ++i) {
    float v = a->alpha * (x[i] > 0 ? x[i] : 0.0f);
    y[i] = a->beta != 0 ? v + a->beta * y[i] : v;
  }
  return TSRP_STATUS_SUCCESS;
}

int accept_all(void*, const void*, char*, size_t) { return 1; }

tsrpStatus_t failing_run(void*, void*, const void*, const void*, void*, size_t, char* message,
                         size_t size) {
  std::snprintf(message, size, "fake failure injected at run time");
  return TSRP_STATUS_EXECUTION_FAILED;
}

tsrpKernel make_kernel(const char* name, int op, int (*can)(void*, const void*, char*, size_t),
                       tsrpStatus_t (*run)(void*, void*, const void*, const void*, void*, size_t,
                                           char*, size_t)) {
  tsrpKernel k{};
  k.struct_size = sizeof(k);
  k.name = name;
  k.operation = op;
  k.flags = TSRP_KERNEL_DETERMINISTIC;
  k.notes = "test kernel";
  k.can_implement = can;
  k.run = run;
  return k;
}

const tsrpKernel k_kernels[] = {
    make_kernel("decliner", TSRP_OP_ACTIVATION_FORWARD, decline_all, relu_run),
    make_kernel("relu_f32", TSRP_OP_ACTIVATION_FORWARD, relu_can, relu_run),
    make_kernel("failing", TSRP_OP_ACTIVATION_FORWARD, accept_all, failing_run),
    // An operation this host does not know: the kernel is skipped, the plugin still loads.
    make_kernel("from_the_future", 999, accept_all, relu_run),
};

#if defined(FAKE_WRITES_PAST_OUTPUT)
// Computes relu correctly, then keeps going past y's last element: the defect is the plugin's
// alone (the host checked every size it was given).
constexpr int64_t k_overrun_floats = 16;

tsrpStatus_t relu_overrun_run(void* user_data, void* context, const void* problem,
                              const void* args, void* workspace, size_t workspace_size,
                              char* message, size_t message_size) {
  tsrpStatus_t s = relu_run(user_data, context, problem, args, workspace, workspace_size, message,
                            message_size);
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  int64_t n = 1;
  for (int i = 0; i < p->y.ndims; ++i) n *= p->y.dims[i];
  volatile float* y = static_cast<float*>(static_cast<const tsrpActivationArgs*>(args)->y);
  for (int64_t i = n; i < n + k_overrun_floats; ++i) y[i] = -1.0f;
  return s;
}

const tsrpKernel k_overrun_kernels[] = {
    make_kernel("relu_overrun", TSRP_OP_ACTIVATION_FORWARD, relu_can, relu_overrun_run),
};
#endif

#if defined(FAKE_MANY_KERNELS)
// Thousands of kernels, as a plugin generating one per tile configuration might register.
constexpr size_t k_many = 5000;

struct many_table {
  std::vector<std::string> names;
  std::vector<tsrpKernel> kernels;
  many_table() {
    names.reserve(k_many);
    for (size_t i = 0; i + 1 < k_many; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "declines_%04zu", i);
      names.push_back(name);
    }
    names.push_back("relu_f32");
    for (size_t i = 0; i + 1 < k_many; ++i)
      kernels.push_back(make_kernel(names[i].c_str(), TSRP_OP_ACTIVATION_FORWARD, decline_all,
                                    relu_run));
    kernels.push_back(make_kernel(names.back().c_str(), TSRP_OP_ACTIVATION_FORWARD, relu_can,
                                  relu_run));
  }
};
#endif

#if defined(FAKE_TIGHT_MEMORY)
// A device with 64 KiB: what a GPU with its memory taken by other processes looks like to a
// handle. Allocations are host memory; the capacity is the only difference.
constexpr size_t k_capacity = 64 * 1024;
std::atomic<size_t> g_in_use{0};

struct tight_allocation {
  size_t bytes;
};

tsrpStatus_t tight_count(int32_t* count) {
  *count = 1;
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_name(int32_t, char* name, size_t size) {
  std::snprintf(name, size, "tight memory test device");
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_allocate(void*, size_t bytes, void** pointer) {
  if (bytes == 0) {
    *pointer = nullptr;
    return TSRP_STATUS_SUCCESS;
  }
  size_t used = g_in_use.load();
  do {
    if (bytes > k_capacity - used) return TSRP_STATUS_OUT_OF_MEMORY;
  } while (!g_in_use.compare_exchange_weak(used, used + bytes));
  // A header before the block remembers its size for deallocate.
  auto* block = static_cast<tight_allocation*>(std::malloc(sizeof(tight_allocation) + bytes));
  if (!block) {
    g_in_use -= bytes;
    return TSRP_STATUS_OUT_OF_MEMORY;
  }
  block->bytes = bytes;
  *pointer = block + 1;
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_deallocate(void*, void* pointer) {
  if (!pointer) return TSRP_STATUS_SUCCESS;
  auto* block = static_cast<tight_allocation*>(pointer) - 1;
  g_in_use -= block->bytes;
  std::free(block);
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_copy(void*, void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_sync(void*) { return TSRP_STATUS_SUCCESS; }
tsrpStatus_t tight_event_create(void*, void** event) {
  *event = new std::chrono::steady_clock::time_point();
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_event_record(void*, void* event) {
  *static_cast<std::chrono::steady_clock::time_point*>(event) = std::chrono::steady_clock::now();
  return TSRP_STATUS_SUCCESS;
}
tsrpStatus_t tight_event_elapsed(void*, void* start, void* end, float* ms) {
  auto d = *static_cast<std::chrono::steady_clock::time_point*>(end) -
           *static_cast<std::chrono::steady_clock::time_point*>(start);
  *ms = std::chrono::duration<float, std::milli>(d).count();
  return TSRP_STATUS_SUCCESS;
}
void tight_event_destroy(void*, void* event) {
  delete static_cast<std::chrono::steady_clock::time_point*>(event);
}

const tsrpDeviceInterface k_tight_device = {
    sizeof(tsrpDeviceInterface), tight_count,        tight_name,          tight_allocate,
    tight_deallocate,            tight_copy,         tight_copy,          tight_sync,
    tight_event_create,          tight_event_record, tight_event_elapsed, tight_event_destroy,
    nullptr /* fingerprint: none */, nullptr /* pointer_device: none */,
    nullptr /* memory_info: unknown, so only the allocator tells of the 64 KiB */};

tsrpStatus_t staged_workspace(void*, const void* problem, size_t* bytes) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  int64_t n = 1;
  for (int i = 0; i < p->x.ndims; ++i) n *= p->x.dims[i];
  *bytes = static_cast<size_t>(n) * sizeof(float);
  return TSRP_STATUS_SUCCESS;
}

// relu computed into the workspace, then copied to y: y is written only once the result exists.
tsrpStatus_t staged_relu_run(void*, void*, const void* problem, const void* args, void* workspace,
                             size_t workspace_size, char* message, size_t message_size) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  const auto* a = static_cast<const tsrpActivationArgs*>(args);
  size_t needed = 0;
  staged_workspace(nullptr, problem, &needed);
  if (!workspace || workspace_size < needed) {
    std::snprintf(message, message_size, "relu_staged needs %zu bytes of workspace, got %zu",
                  needed, workspace_size);
    return TSRP_STATUS_BAD_PARAM;
  }
  const size_t n = needed / sizeof(float);
  const float* x = static_cast<const float*>(a->x);
  float* staged = static_cast<float*>(workspace);
  for (size_t i = 0; i < n; ++i) staged[i] = a->alpha * (x[i] > 0 ? x[i] : 0.0f);
  float* y = static_cast<float*>(a->y);
  for (size_t i = 0; i < n; ++i) y[i] = a->beta != 0 ? staged[i] + a->beta * y[i] : staged[i];
  (void)p;
  return TSRP_STATUS_SUCCESS;
}

tsrpKernel make_staged_kernel() {
  tsrpKernel k = make_kernel("relu_staged", TSRP_OP_ACTIVATION_FORWARD, relu_can, staged_relu_run);
  k.workspace_size = staged_workspace;
  return k;
}

const tsrpKernel k_tight_kernels[] = {make_staged_kernel()};
#endif

}  // namespace

#ifndef FAKE_NO_ENTRY
extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer,
                                                    tsrpPluginDesc* desc) {
  (void)offer;
#if defined(FAKE_ENTRY_THROWS)
  (void)desc;
  throw std::runtime_error("fake plugin throws from its entry point");
#elif defined(FAKE_BLOCKS_IN_INIT)
  // Waits for something that never happens; the host must not wait with it.
  (void)desc;
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
#elif defined(FAKE_WRITES_PAST_OUTPUT) || defined(FAKE_MANY_KERNELS) || defined(FAKE_TIGHT_MEMORY)
  desc->abi_version = TSRP_ABI_VERSION_CURRENT;
  desc->version = "0.0.1";
  desc->device_kind = TSRP_DEVICE_CPU;
#if defined(FAKE_WRITES_PAST_OUTPUT)
  desc->name = "fake_overrun";
  desc->kernels = k_overrun_kernels;
  desc->kernel_count = sizeof(k_overrun_kernels) / sizeof(k_overrun_kernels[0]);
#elif defined(FAKE_MANY_KERNELS)
  static const many_table table;  // lives until the process exits, as the ABI asks
  desc->name = "fake_many";
  desc->kernels = table.kernels.data();
  desc->kernel_count = table.kernels.size();
#else
  desc->name = "fake_tight_memory";
  desc->device = &k_tight_device;
  desc->kernels = k_tight_kernels;
  desc->kernel_count = sizeof(k_tight_kernels) / sizeof(k_tight_kernels[0]);
#endif
  return TSRP_STATUS_SUCCESS;
#elif defined(FAKE_ENTRY_FAILS)
  (void)desc;
  return TSRP_STATUS_INTERNAL_ERROR;
#else
#if defined(FAKE_ABI_TOO_NEW)
  desc->abi_version = 99;
#elif defined(FAKE_ABI_TOO_OLD)
  desc->abi_version = 0;
#else
  desc->abi_version = TSRP_ABI_VERSION_CURRENT;
#endif
  desc->name = "fake";
#if defined(FAKE_DUPLICATE_NAME)
  desc->version = "0.0.2-duplicate";
#else
  desc->version = "0.0.1";
#endif
  desc->device_kind = TSRP_DEVICE_CPU;
  desc->kernels = k_kernels;
  desc->kernel_count = sizeof(k_kernels) / sizeof(k_kernels[0]);
  return TSRP_STATUS_SUCCESS;
#endif
}
#else
extern "C" TSRP_EXPORT int tsrpSomethingElse(void) { return 42; }
#endif
