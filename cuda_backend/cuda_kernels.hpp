// The kernels of the CUDA plugin, one descriptor each; the plugin entry lists them in this order.
// Every function pointer in a descriptor is noexcept at the C boundary.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::cuda {

const tsrpKernel& eltwise_fwd_kernel() noexcept;     // activation_kernels.cu
const tsrpKernel& eltwise_bwd_kernel() noexcept;     // activation_kernels.cu
const tsrpKernel& conv_fwd_direct_kernel() noexcept;  // conv_fwd_direct.cu

}  // namespace tessera::cuda
