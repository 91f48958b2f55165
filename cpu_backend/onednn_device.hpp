// The CPU device: host memory, memcpy copies and steady_clock timing.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::onednn {

const tsrpDeviceInterface& device_interface() noexcept;

}  // namespace tessera::onednn
