#include "cuda_errors.hpp"

#include "host_log.hpp"

#include <cstring>

namespace tessera::cuda {

void throw_cuda_error(cudaError_t error, const std::string& what) {
  // Sticky errors stay in the slot whatever we do; non-sticky ones would otherwise be returned by
  // the next cudaGetLastError and blamed on an innocent launch.
  (void)cudaGetLastError();
  std::string message = what;
  message += ": ";
  message += cudaGetErrorName(error);
  message += ": ";
  message += cudaGetErrorString(error);
  throw status_error(
      error == cudaErrorMemoryAllocation ? TSRP_STATUS_OUT_OF_MEMORY : TSRP_STATUS_DEVICE_ERROR,
      message);
}

void write_text(char* buffer, size_t buffer_size, const char* text) noexcept {
  if (buffer == nullptr || buffer_size == 0) return;
  if (text == nullptr) text = "";
  size_t length = std::strlen(text);
  if (length >= buffer_size) length = buffer_size - 1;
  std::memcpy(buffer, text, length);
  buffer[length] = '\0';
}

tsrpStatus_t log_failure(const char* entry_point, tsrpStatus_t status, const char* message) noexcept {
  try {
    std::string text = entry_point;
    text += ": ";
    text += message;
    log_message(TSRP_LOG_ERROR, text.c_str());
  } catch (...) {
    // Logging is best effort: the status still reaches the host.
  }
  return status;
}

}  // namespace tessera::cuda
