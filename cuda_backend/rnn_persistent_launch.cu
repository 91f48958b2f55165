// The host side both persistent RNN kernels share: whether a device holds a plan's grid resident,
// and the cooperative launch (rnn_persistent.hpp).
#include "cuda_errors.hpp"
#include "rnn_persistent.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::rnn {

namespace {

// How many blocks of `kernel` the context's device holds resident at once (0: none, or no
// cooperative launch at all); raises the kernel's shared-memory limit first.
int64_t query_resident_blocks(const cuda_context& ctx, const void* kernel, int threads, size_t shared_bytes) {
  int cooperative = 0;
  check_cuda(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, ctx.device_ordinal()),
             "cudaDeviceGetAttribute(cooperative launch)");
  if (cooperative == 0) return 0;
  // A device with less shared memory per block than the plan: not an error, the stepwise kernels
  // run instead. The kernel's limit is raised to the device's whole opt-in size, the same value
  // for every plan, so that calls on other threads never lower it under a launch in flight.
  int optin = 0;
  check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device_ordinal()),
             "cudaDeviceGetAttribute(shared memory per block, opt-in)");
  if (shared_bytes > static_cast<size_t>(optin)) return 0;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin),
             "cudaFuncSetAttribute(max dynamic shared memory) of a persistent RNN kernel");
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor of a persistent RNN kernel");
  return int64_t{per_sm} * ctx.sm_count();
}

}  // namespace

// Asked once per context and kernel shape (cuda_context::resident_blocks): the queries above cost
// microseconds of host time that every RNN call would otherwise pay.
bool persistent_grid_fits(const cuda_context& ctx, const persistent_plan& plan, const void* kernel) {
  const int threads = persistent_block_threads(plan);
  return ctx.resident_blocks(kernel, threads, plan.shared_bytes, [&] {
           return query_resident_blocks(ctx, kernel, threads, plan.shared_bytes);
         }) >= plan.blocks;
}

bool launch_cooperative(const cuda_context& ctx, const persistent_plan& plan, const void* kernel, void** params,
                        const char* what) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(plan.blocks));
  config.blockDim = dim3(static_cast<unsigned int>(persistent_block_threads(plan)));
  config.dynamicSmemBytes = plan.shared_bytes;
  config.stream = ctx.stream();
  // Cooperative: every block resident at once (checked by persistent_grid_fits), which the grid
  // barrier needs; valid in stream capture (a cooperative kernel node).
  cudaLaunchAttribute cooperative = {};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  // A refusal here is known at the call only outside stream capture: inside one the driver may
  // check residency when the graph is instantiated or launched, past any fallback (the
  // occupancy check of persistent_grid_fits is what guards a captured call).
  const cudaError_t launched = cudaLaunchKernelExC(&config, kernel, params);
  if (launched == cudaErrorCooperativeLaunchTooLarge) {
    (void)cudaGetLastError();  // not sticky: clear it so later launches do not report it
    return false;
  }
  check_cuda(launched, what);
  return true;
}

}  // namespace tessera::cuda::rnn
