// Small helpers shared by the GoogleTest suites.
#pragma once

#include <tessera/tessera.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace tessera::testing {

inline std::string last_error() {
  char message[2048] = {0};
  tsrGetLastErrorString(message, sizeof(message));
  return message;
}

// Checks the status and that the last message contains every given fragment.
inline ::testing::AssertionResult fails_with(tsrStatus_t got, tsrStatus_t expected,
                                             const std::vector<std::string>& words) {
  std::string message = last_error();
  if (got != expected)
    return ::testing::AssertionFailure() << "status " << tsrGetErrorString(got) << ", expected "
                                         << tsrGetErrorString(expected) << " (message: '"
                                         << message << "')";
  for (const std::string& w : words)
    if (message.find(w) == std::string::npos)
      return ::testing::AssertionFailure() << "message '" << message << "' lacks '" << w << "'";
  return ::testing::AssertionSuccess();
}

#define EXPECT_FAILS_WITH(call, status, ...) \
  EXPECT_TRUE(::tessera::testing::fails_with((call), (status), {__VA_ARGS__}))
#define ASSERT_OK(call)                                                                   \
  do {                                                                                    \
    tsrStatus_t s_ = (call);                                                              \
    ASSERT_EQ(s_, TSR_STATUS_SUCCESS) << tsrGetErrorString(s_) << ": "                    \
                                      << ::tessera::testing::last_error();                \
  } while (0)
#define EXPECT_OK(call)                                                                   \
  do {                                                                                    \
    tsrStatus_t s_ = (call);                                                              \
    EXPECT_EQ(s_, TSR_STATUS_SUCCESS) << tsrGetErrorString(s_) << ": "                    \
                                      << ::tessera::testing::last_error();                \
  } while (0)

// Index of the plugin whose path ends with `file_name`, or -1.
inline int find_plugin_by_file(const std::string& file_name, tsrPluginInfo_t* out) {
  int n = 0;
  tsrGetPluginCount(&n);
  for (int i = 0; i < n; ++i) {
    tsrPluginInfo_t info{};
    info.struct_size = sizeof(info);
    tsrGetPluginInfo(i, &info);
    std::string path = info.path;
    if (path.size() >= file_name.size() &&
        path.compare(path.size() - file_name.size(), file_name.size(), file_name) == 0) {
      if (out) *out = info;
      return i;
    }
  }
  return -1;
}

inline bool backend_loaded(const std::string& name) {
  int n = 0;
  tsrGetPluginCount(&n);
  for (int i = 0; i < n; ++i) {
    tsrPluginInfo_t info{};
    info.struct_size = sizeof(info);
    tsrGetPluginInfo(i, &info);
    if (info.loaded && name == info.name) return true;
  }
  return false;
}

}  // namespace tessera::testing
