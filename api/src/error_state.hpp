// The thread-local last error, and the guard every C entry point runs its body in: the guard
// clears the message, turns any C++ exception into a status with words, and so keeps exceptions
// from crossing the C boundary.
#pragma once

#include <tessera/tessera.h>

#include <exception>
#include <new>
#include <string>

namespace tessera::api {

// Records the message for this thread and returns `status`, so that `return fail(...)` reads
// naturally. The message should name the function, the argument and the bad value.
tsrStatus_t fail(tsrStatus_t status, std::string message);

void clear_error() noexcept;

const std::string& last_error() noexcept;

template <typename Body>
tsrStatus_t guarded(const char* function, Body&& body) noexcept {
  try {
    clear_error();
    return body();
  } catch (const std::bad_alloc&) {
    return fail(TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
                std::string(function) + ": out of host memory");
  } catch (const std::exception& e) {
    return fail(TSR_STATUS_INTERNAL_ERROR, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return fail(TSR_STATUS_INTERNAL_ERROR, std::string(function) + ": internal error");
  }
}

}  // namespace tessera::api
