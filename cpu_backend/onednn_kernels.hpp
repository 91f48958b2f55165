// The kernels this plugin offers; each is defined in the file for its operation.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::onednn {

const tsrpKernel& convolution_forward_kernel() noexcept;  // onednn_convolution.cpp
const tsrpKernel& activation_forward_kernel() noexcept;   // onednn_activation.cpp
const tsrpKernel& activation_backward_kernel() noexcept;  // onednn_activation.cpp

}  // namespace tessera::onednn
