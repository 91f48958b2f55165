// Logging through the host's logger (tsrpHostOffer::log), which the entry point records.
#pragma once

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::onednn {

using host_log_fn = void (*)(int32_t level, const char* plugin, const char* message);

// Set once by tsrpPluginEntry; null means the host offered no logger.
void set_host_logger(host_log_fn log) noexcept;

// Never throws: logging must not turn a success into a failure.
void log_message(tsrpLogLevel_t level, const std::string& text) noexcept;

}  // namespace tessera::onednn
