// Version, status names and the last-error message.
#include "error_state.hpp"

#include <cstdio>
#include <cstring>

using namespace tessera::api;

extern "C" {

TSR_API const char* tsrGetErrorString(tsrStatus_t status) {
  switch (status) {
#define TSR_NAME(s) \
  case s:           \
    return #s;
    TSR_NAME(TSR_STATUS_SUCCESS)
    TSR_NAME(TSR_STATUS_BAD_PARAM)
    TSR_NAME(TSR_STATUS_BAD_PARAM_NULL_POINTER)
    TSR_NAME(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE)
    TSR_NAME(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH)
    TSR_NAME(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW)
    TSR_NAME(TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL)
    TSR_NAME(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED)
    TSR_NAME(TSR_STATUS_BAD_PARAM_VERSION_MISMATCH)
    TSR_NAME(TSR_STATUS_NOT_SUPPORTED)
    TSR_NAME(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL)
    TSR_NAME(TSR_STATUS_NOT_SUPPORTED_NO_DEVICE)
    TSR_NAME(TSR_STATUS_NOT_SUPPORTED_PLUGIN)
    TSR_NAME(TSR_STATUS_INTERNAL_ERROR)
    TSR_NAME(TSR_STATUS_EXECUTION_FAILED)
    TSR_NAME(TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY)
    TSR_NAME(TSR_STATUS_EXECUTION_FAILED_DEVICE)
#undef TSR_NAME
    case TSR_STATUS_ENUM_MIN_:
    case TSR_STATUS_ENUM_MAX_: break;  // range markers (TSR_ENUM_RANGE), not statuses
  }
  return "TSR_STATUS_UNKNOWN";
}

TSR_API tsrStatus_t tsrGetLastErrorString(char* message, size_t max_size) {
  // Reading the message must not clear it, so this entry does not use guarded().
  if (!message) return TSR_STATUS_BAD_PARAM_NULL_POINTER;
  if (max_size == 0) return TSR_STATUS_SUCCESS;
  std::snprintf(message, max_size, "%s", last_error().c_str());
  return TSR_STATUS_SUCCESS;
}

TSR_API size_t tsrGetVersion(void) { return TSR_VERSION; }

TSR_API tsrStatus_t tsrCheckVersion(size_t compiled_version) {
  return guarded("tsrCheckVersion", [&] {
    size_t runtime = TSR_VERSION;
    // Within a major version the API only grows, so a newer run-time library serves an older
    // caller; an older library may lack what the caller was compiled against.
    if (compiled_version / 10000 != runtime / 10000 || compiled_version > runtime)
      return fail(TSR_STATUS_BAD_PARAM_VERSION_MISMATCH,
                  "tsrCheckVersion: caller compiled against Tessera " +
                      std::to_string(compiled_version) + ", library at run time is " +
                      std::to_string(runtime) + " (same major version, not older, required)");
    return TSR_STATUS_SUCCESS;
  });
}

}  // extern "C"
