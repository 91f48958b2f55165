#include "host_log.hpp"

#include <atomic>

namespace tessera::cuda {
namespace {

using log_function = void (*)(int32_t, const char*, const char*);
// Atomic because kernels and device calls may log from any thread while the entry point is being
// called again by another host instance.
std::atomic<log_function> host_logger{nullptr};

}  // namespace

void set_host_logger(log_function log) noexcept { host_logger.store(log); }

void log_message(tsrpLogLevel_t level, const char* message) noexcept {
  log_function log = host_logger.load();
  if (log != nullptr) log(static_cast<int32_t>(level), plugin_name, message);
}

}  // namespace tessera::cuda
