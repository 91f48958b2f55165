// The CPU's device interface: host memory and a steady clock. The registry owns it because host
// memory belongs to no plugin; a CPU plugin may still provide its own, which then takes over.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::registry {

const tsrpDeviceInterface& host_device_interface();

}  // namespace tessera::registry
