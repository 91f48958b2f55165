// Errors inside the plugin are exceptions carrying a plugin status and words; at the C boundary
// (the kernel glue, the context table, the entry point) they become a status and a message. Every
// failed cuDNN call is reported with its status name, its number and cuDNN's own last error
// message, so a failure seen on the GPU machine explains itself.
#pragma once

#include <tessera/plugin_abi.h>

#include <cudnn.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tessera::cudnn_plugin {

constexpr const char* plugin_name = "cudnn";

class plugin_error : public std::runtime_error {
 public:
  plugin_error(tsrpStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  tsrpStatus_t status() const noexcept { return status_; }

 private:
  tsrpStatus_t status_;
};

// "CUDNN_STATUS_NOT_SUPPORTED (3000): <cuDNN's last error message of this thread>".
std::string cudnn_status_text(cudnnStatus_t status);

// The plugin status a cuDNN status maps to: 2xxx bad parameter, 3xxx not supported, 4003/4004
// out of memory, other 4xxx internal, 5xxx execution failed, 1xxx device (library state) errors.
tsrpStatus_t plugin_status_of(cudnnStatus_t status);

// Throws plugin_error naming `what` (the cuDNN call and its purpose) unless status is success.
void check_cudnn(cudnnStatus_t status, const char* what);

// Writes text into a caller's buffer, truncated and NUL-terminated.
void write_text(char* buffer, size_t size, const std::string& text) noexcept;

// The host's logger (set by the entry point) and one-time warnings: a condition that holds for
// the whole process (cuDNN missing, a sub-library missing) is worth one line, not one per call.
using log_function = void (*)(int32_t level, const char* plugin, const char* message);
void set_host_logger(log_function log) noexcept;
void log_message(tsrpLogLevel_t level, const std::string& message) noexcept;
void warn_once(const std::string& key, const std::string& message) noexcept;

}  // namespace tessera::cudnn_plugin
