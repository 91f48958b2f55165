#include "error_state.hpp"

#include "logging.hpp"

namespace tessera::api {
namespace {
thread_local std::string t_last_error;
}

tsrStatus_t fail(tsrStatus_t status, std::string message) {
  if (log::enabled(log::level::debug))
    log::write(log::level::debug, std::string(tsrGetErrorString(status)) + ": " + message);
  t_last_error = std::move(message);
  return status;
}

void clear_error() noexcept { t_last_error.clear(); }

const std::string& last_error() noexcept { return t_last_error; }

}  // namespace tessera::api
