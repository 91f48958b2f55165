// A plugin built against the frozen ABI 1 header (tests/abi_compat/v1/tessera/plugin_abi.h, the
// header as Tessera 0.1 shipped it). The host speaks a later ABI now and must still load it and run its
// kernel: nothing of ABI 1 changed, only things were appended.
#include <tessera/plugin_abi.h>

#include <cstdio>

static_assert(TSRP_ABI_VERSION_CURRENT == 1u, "this plugin must be built against the ABI 1 header");

namespace {

int can(void*, const void* problem, char* reason, size_t size) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  if (p->mode != TSRP_ACTIVATION_RELU || p->x.data_type != TSRP_DATA_FLOAT) {
    std::snprintf(reason, size, "v1 plugin runs f32 relu only");
    return 0;
  }
  return 1;
}

tsrpStatus_t run(void*, void*, const void* problem, const void* args, void*, size_t, char*, size_t) {
  const auto* p = static_cast<const tsrpActivationProblem*>(problem);
  const auto* a = static_cast<const tsrpActivationArgs*>(args);
  int64_t n = 1;
  for (int i = 0; i < p->x.ndims; ++i) n *= p->x.dims[i];
  const float* x = static_cast<const float*>(a->x);
  float* y = static_cast<float*>(a->y);
  for (int64_t i = 0; i < n; ++i) y[i] = a->alpha * (x[i] > 0 ? x[i] : 0.0f);
  return TSRP_STATUS_SUCCESS;
}

const tsrpKernel k_kernels[] = {{sizeof(tsrpKernel), "relu_v1", TSRP_OP_ACTIVATION_FORWARD,
                                 TSRP_KERNEL_DETERMINISTIC, "built against ABI 1", nullptr, can,
                                 nullptr, run}};

}  // namespace

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  if (offer->host_abi_min > 1u) return TSRP_STATUS_NOT_SUPPORTED;
  desc->abi_version = 1u;
  desc->name = "abi_v1";
  desc->version = "0.1.0";
  desc->device_kind = TSRP_DEVICE_CPU;
  desc->kernels = k_kernels;
  desc->kernel_count = 1;
  return TSRP_STATUS_SUCCESS;
}
