#include "onednn_log.hpp"

#include <atomic>

namespace tessera::onednn {
namespace {
// Atomic because kernels on different handles (threads) log while the entry point may, in
// principle, be called again by a second host instance.
std::atomic<host_log_fn> g_host_log{nullptr};
}  // namespace

void set_host_logger(host_log_fn log) noexcept { g_host_log.store(log); }

void log_message(tsrpLogLevel_t level, const std::string& text) noexcept {
  host_log_fn log = g_host_log.load();
  if (log != nullptr) log(static_cast<int32_t>(level), "onednn", text.c_str());
}

}  // namespace tessera::onednn
