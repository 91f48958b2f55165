// Runs with TESSERA_LOG_LEVEL=trace and TESSERA_LOG_FILE set: each call is logged with its
// problem, the kernel chosen, the reasons of those that declined, and a replay command.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tessera::testing;

namespace {
// The log file is appended to across runs: read only what this test added after `from`.
std::streamoff log_size() {
  if (!std::getenv("TESSERA_LOG_FILE")) return -1;
  int n = 0;
  tsrGetPluginCount(&n);  // makes sure the registry (and with it the logger) is up
  std::ifstream f(std::getenv("TESSERA_LOG_FILE"), std::ios::ate);
  return f ? static_cast<std::streamoff>(f.tellg()) : 0;
}
std::string log_text(std::streamoff from) {
  std::ifstream f(std::getenv("TESSERA_LOG_FILE"));
  f.seekg(from);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST(TraceLog, a_call_logs_descriptor_kernel_and_a_replay_command) {
  if (!backend_loaded("onednn")) GTEST_SKIP() << "oneDNN plugin not built";
  std::streamoff from = log_size();
  if (from < 0) GTEST_SKIP() << "run with TESSERA_LOG_LEVEL=trace and TESSERA_LOG_FILE set (ctest does)";
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {2, 3, 4, 5});
  std::vector<float> in(120, 1.0f), out(120);
  tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out.data());
  std::string text = log_text(from);
  EXPECT_NE(text.find("tsrActivationForward cpu:0"), std::string::npos) << text;
  EXPECT_NE(text.find("--alg=relu"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel=onednn/"), std::string::npos) << text;
  EXPECT_NE(text.find("replay: tessera-bench --eltwise"), std::string::npos) << text;
  EXPECT_NE(text.find("2x3x4x5"), std::string::npos) << text;
}

TEST(TraceLog, a_refused_call_logs_every_reason) {
  std::streamoff from = log_size();
  if (from < 0) GTEST_SKIP() << "run with TESSERA_LOG_LEVEL=trace and TESSERA_LOG_FILE set (ctest does)";
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_INT32, {2, 3});
  std::vector<int32_t> in(6, 1), out(6);
  tsrStatus_t s = tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1, x, in.data(), 0, x, out.data());
  if (s == TSR_STATUS_SUCCESS) GTEST_SKIP() << "some backend runs int32 relu";
  std::string text = log_text(from);
  EXPECT_NE(text.find("status=TSR_STATUS_NOT_SUPPORTED_NO_KERNEL"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel=none"), std::string::npos) << text;
}
