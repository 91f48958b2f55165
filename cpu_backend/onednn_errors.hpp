// Status and message handling at the C boundary: every function pointer the plugin hands to the
// host funnels through guard(), so no exception ever crosses the ABI.
#pragma once

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tessera::onednn {

// Copies `text` into a caller buffer, truncating and always NUL-terminating; tolerates a null
// buffer or a zero size because the host may not want the message.
void write_message(char* buffer, size_t buffer_size, const std::string& text) noexcept;

// An error with the Tessera status it maps to, thrown inside the plugin and turned into a status
// (and message) by guard().
class plugin_error : public std::runtime_error {
 public:
  plugin_error(tsrpStatus_t status, const std::string& what)
      : std::runtime_error(what), status_(status) {}
  tsrpStatus_t status() const noexcept { return status_; }

 private:
  tsrpStatus_t status_;
};

[[noreturn]] void throw_not_supported(const std::string& what);
[[noreturn]] void throw_bad_param(const std::string& what);

// Converts whatever was thrown while doing `what` (e.g. "oneDNN convolution primitive creation")
// into a status and a message. A dnnl::error with dnnl_unimplemented means a missing
// implementation (NOT_SUPPORTED); other oneDNN failures are EXECUTION_FAILED.
tsrpStatus_t status_from_current_exception(const char* what, char* message,
                                           size_t message_size) noexcept;

// Runs `body` (returning tsrpStatus_t) and converts any exception into a status and message.
template <class Body>
tsrpStatus_t guard(const char* what, char* message, size_t message_size, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return status_from_current_exception(what, message, message_size);
  }
}

// Text of the exception currently being handled; for boundary functions without a message
// buffer (they log instead).
std::string current_exception_text() noexcept;

// Runs `body`; a dnnl::error it throws becomes a plugin_error saying "<what> failed: <error>",
// with NOT_SUPPORTED for a missing implementation and EXECUTION_FAILED otherwise.
template <class Body>
auto annotate(const char* what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    const tsrpStatus_t status = e.status == dnnl_unimplemented ? TSRP_STATUS_NOT_SUPPORTED
                                : e.status == dnnl_out_of_memory ? TSRP_STATUS_OUT_OF_MEMORY
                                                                 : TSRP_STATUS_EXECUTION_FAILED;
    throw plugin_error(status, std::string(what) + " failed: " + current_exception_text());
  }
}

}  // namespace tessera::onednn
