// Kernels of the direct convolution family that one file defines and another registers (the
// family's add_* functions are declared in cuda_kernels.hpp).
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::cuda {

// conv_int8_direct.cu: "conv_fwd_tiled", the forward for s8 (s32 accumulation, output scales)
// and for fp32/fp16/bf16; add_conv_fused_kernels (conv_bias_activation_direct.cu) registers it.
tsrpKernel conv_fwd_tiled_kernel() noexcept;

}  // namespace tessera::cuda
