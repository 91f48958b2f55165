// The device interface of the CUDA plugin: memory, copies and timing for CUDA devices.
#pragma once

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::cuda {

// Number of CUDA devices this process can use. No driver, no GPU, or any other failure of
// cudaGetDeviceCount counts as zero devices (a machine without a GPU is normal, not an error);
// `why_none`, when given, receives the reason in that case.
int visible_device_count(std::string* why_none = nullptr) noexcept;

// The table handed to the host; it lives until the process exits.
const tsrpDeviceInterface& device_interface() noexcept;

}  // namespace tessera::cuda
