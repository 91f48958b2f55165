#include "cudnn_errors.hpp"

#include "cudnn_symbols.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

namespace tessera::cudnn_plugin {
namespace {

std::atomic<log_function> host_logger{nullptr};

}  // namespace

std::string cudnn_status_text(cudnnStatus_t status) {
  std::string text = "status " + std::to_string(static_cast<int>(status));
  if (!cudnn_library_instance().loaded) return text;
  const char* name = cudnn().cudnnGetErrorString(status);
  text = std::string(name ? name : "CUDNN_STATUS_?") + " (" + std::to_string(static_cast<int>(status)) + ")";
  char last[512] = {};
  cudnn().cudnnGetLastErrorString(last, sizeof last);
  last[sizeof last - 1] = '\0';
  if (last[0] != '\0') text += ": " + std::string(last);
  return text;
}

tsrpStatus_t plugin_status_of(cudnnStatus_t status) {
  if (status == CUDNN_STATUS_SUCCESS) return TSRP_STATUS_SUCCESS;
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    return TSRP_STATUS_OUT_OF_MEMORY;
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_BAD_PARAM: return TSRP_STATUS_BAD_PARAM;
    case CUDNN_STATUS_NOT_SUPPORTED: return TSRP_STATUS_NOT_SUPPORTED;
    case CUDNN_STATUS_INTERNAL_ERROR: return TSRP_STATUS_INTERNAL_ERROR;
    case CUDNN_STATUS_EXECUTION_FAILED: return TSRP_STATUS_EXECUTION_FAILED;
    default: return TSRP_STATUS_DEVICE_ERROR;  // 1xxx: the library or its context is not usable
  }
}

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw plugin_error(plugin_status_of(status), std::string(what) + ": " + cudnn_status_text(status));
}

void write_text(char* buffer, size_t size, const std::string& text) noexcept {
  if (buffer == nullptr || size == 0) return;
  std::snprintf(buffer, size, "%s", text.c_str());
}

void set_host_logger(log_function log) noexcept { host_logger.store(log); }

void log_message(tsrpLogLevel_t level, const std::string& message) noexcept {
  log_function log = host_logger.load();
  if (log != nullptr) log(static_cast<int32_t>(level), plugin_name, message.c_str());
}

void warn_once(const std::string& key, const std::string& message) noexcept {
  try {
    static std::mutex mutex;
    static std::set<std::string> said;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!said.insert(key).second) return;
    }
    log_message(TSRP_LOG_WARN, message);
  } catch (...) {
  }
}

}  // namespace tessera::cudnn_plugin
