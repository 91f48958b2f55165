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
#include <tessera/plugin_abi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

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

}  // namespace

#ifndef FAKE_NO_ENTRY
extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer,
                                                    tsrpPluginDesc* desc) {
  (void)offer;
#if defined(FAKE_ENTRY_THROWS)
  (void)desc;
  throw std::runtime_error("fake plugin throws from its entry point");
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
