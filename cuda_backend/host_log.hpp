// The host's logger, remembered from the offer at negotiation. The plugin never prints itself:
// stdout and stderr belong to the application.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::cuda {

inline constexpr const char* plugin_name = "cuda";

void set_host_logger(void (*log)(int32_t level, const char* plugin, const char* message)) noexcept;

// Does nothing when the host gave no logger.
void log_message(tsrpLogLevel_t level, const char* message) noexcept;

}  // namespace tessera::cuda
