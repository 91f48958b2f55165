// Errors inside the plugin travel as C++ exceptions and are turned into a tsrpStatus_t plus a
// message at the C boundary; nothing may escape an entry point handed to the host.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tessera::cuda {

class status_error : public std::runtime_error {
 public:
  status_error(tsrpStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  tsrpStatus_t status() const noexcept { return status_; }

 private:
  tsrpStatus_t status_;
};

// Throws a status_error for `error` (OUT_OF_MEMORY for cudaErrorMemoryAllocation, DEVICE_ERROR
// otherwise) whose message is "<what>: <cuda error name>: <cuda error text>". It also consumes the
// runtime's last-error slot, so a failed call is never reported again by a later
// cudaGetLastError check after an unrelated kernel launch.
[[noreturn]] void throw_cuda_error(cudaError_t error, const std::string& what);

inline void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw_cuda_error(error, what);
}

// Copies `text` into the caller's buffer, truncated and always NUL-terminated; a null or empty
// buffer is allowed (the host may not want the text).
void write_text(char* buffer, size_t buffer_size, const char* text) noexcept;
inline void write_text(char* buffer, size_t buffer_size, const std::string& text) noexcept {
  write_text(buffer, buffer_size, text.c_str());
}

// Runs `body` (returning void) and maps whatever it throws to a status and a message. Used by
// every entry point that has a message buffer; `message` may be null.
template <typename Body>
tsrpStatus_t call_with_message(char* message, size_t message_size, Body&& body) noexcept {
  try {
    body();
    return TSRP_STATUS_SUCCESS;
  } catch (const status_error& e) {
    write_text(message, message_size, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    write_text(message, message_size, "host memory exhausted in the CUDA plugin");
    return TSRP_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_text(message, message_size, e.what());
    return TSRP_STATUS_INTERNAL_ERROR;
  } catch (...) {
    write_text(message, message_size, "unknown exception in the CUDA plugin");
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

// For entry points without a message buffer (the device interface): the message goes to the
// host's logger instead, prefixed with the entry point's name.
tsrpStatus_t log_failure(const char* entry_point, tsrpStatus_t status, const char* message) noexcept;

template <typename Body>
tsrpStatus_t call_with_log(const char* entry_point, Body&& body) noexcept {
  try {
    body();
    return TSRP_STATUS_SUCCESS;
  } catch (const status_error& e) {
    return log_failure(entry_point, e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return log_failure(entry_point, TSRP_STATUS_OUT_OF_MEMORY, "host memory exhausted");
  } catch (const std::exception& e) {
    return log_failure(entry_point, TSRP_STATUS_INTERNAL_ERROR, e.what());
  } catch (...) {
    return log_failure(entry_point, TSRP_STATUS_INTERNAL_ERROR, "unknown exception");
  }
}

}  // namespace tessera::cuda
