// Logging facade over spdlog: the rest of Tessera sees levels and strings only, so spdlog (and
// fmt) stay private to the registry. The level comes from TESSERA_LOG_LEVEL (off, error, warn,
// info, debug, trace; default warn) and the sink from TESSERA_LOG_FILE (default stderr).
#pragma once

#include <string>

namespace tessera::log {

enum class level { trace = 0, debug = 1, info = 2, warn = 3, error = 4, off = 5 };

// Cheap check for the hot path: callers test it before building any message.
bool enabled(level lvl) noexcept;

void write(level lvl, const std::string& message) noexcept;

// Logs `message` at most once per distinct `key` for the life of the process (for warnings that
// would otherwise repeat on every call).
void write_once(level lvl, const std::string& key, const std::string& message) noexcept;

// Re-reads the environment (tests change TESSERA_LOG_LEVEL / TESSERA_LOG_FILE at run time).
void reconfigure_from_environment() noexcept;

}  // namespace tessera::log
