#include "onednn_errors.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

#include <cstring>
#include <new>

namespace tessera::onednn {

void write_message(char* buffer, size_t buffer_size, const std::string& text) noexcept {
  if (buffer == nullptr || buffer_size == 0) return;
  const size_t n = text.size() < buffer_size - 1 ? text.size() : buffer_size - 1;
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

void throw_not_supported(const std::string& what) {
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, what);
}

void throw_bad_param(const std::string& what) { throw plugin_error(TSRP_STATUS_BAD_PARAM, what); }

std::string current_exception_text() noexcept {
  try {
    throw;
  } catch (const dnnl::error& e) {
    try {
      return std::string(e.what()) + " (" + dnnl_status2str(e.status) + ")";
    } catch (...) {
      return "oneDNN error";
    }
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

tsrpStatus_t status_from_current_exception(const char* what, char* message,
                                           size_t message_size) noexcept {
  tsrpStatus_t status = TSRP_STATUS_INTERNAL_ERROR;
  try {
    throw;
  } catch (const plugin_error& e) {
    // Already phrased for the user, including what failed.
    write_message(message, message_size, e.what());
    return e.status();
  } catch (const dnnl::error& e) {
    status = e.status == dnnl_unimplemented ? TSRP_STATUS_NOT_SUPPORTED
             : e.status == dnnl_out_of_memory ? TSRP_STATUS_OUT_OF_MEMORY
                                              : TSRP_STATUS_EXECUTION_FAILED;
  } catch (const std::bad_alloc&) {
    status = TSRP_STATUS_OUT_OF_MEMORY;
  } catch (...) {
    status = TSRP_STATUS_INTERNAL_ERROR;
  }
  try {
    write_message(message, message_size,
                  std::string(what) + " failed: " + current_exception_text());
  } catch (...) {
    write_message(message, message_size, what);
  }
  return status;
}

}  // namespace tessera::onednn
