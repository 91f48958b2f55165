// Plugins that load and then misbehave (tests/fake_plugins, FAKE_WRITES_PAST_OUTPUT,
// FAKE_BLOCKS_IN_INIT, FAKE_MANY_KERNELS): what the host guards against, and what it documents as
// the plugin's fault (docs/PluginInterface.md, "Hostile plugins").
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace tessera::testing;
using clock_type = std::chrono::steady_clock;

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_TEST_ASAN 1
#endif
#endif

namespace {

std::string hostile_plugin(const std::string& variant) {
  return std::string(TESSERA_HOSTILE_PLUGIN_DIR) + "/" + variant + "/libfake-" + variant + ".so";
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// relu through the kernel `name` of `backend` on a fresh CPU handle.
tsrStatus_t run_relu(const std::string& backend, const std::vector<float>& in, float* out) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 1, static_cast<int64_t>(in.size())});
  h.set_backend_preference(backend.c_str());
  return tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out);
}

}  // namespace

// ---- a kernel that writes past its output ----------------------------------------------------

#if defined(TESSERA_TEST_ASAN)
TEST(HostilePluginDeathTest, a_kernel_writing_past_its_output_is_reported_by_asan_in_the_plugin) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_OK(tsrLoadPlugin(hostile_plugin("writes-past-output").c_str()));
  // y is a heap block of exactly the size its descriptor claims: the kernel's 17th float past
  // the end lands in ASan's redzone, and the report's stack names the plugin's kernel.
  auto call_the_overrunning_kernel = [] {
    std::vector<float> in = {-1, 2, -3, 4};
    std::vector<float> out(in.size(), 0.0f);
    run_relu("fake_overrun", in, out.data());
  };
  EXPECT_DEATH(call_the_overrunning_kernel(), "heap-buffer-overflow.*WRITE of size 4.*relu_overrun_run");
}
#else
TEST(HostilePlugin, a_kernel_writing_past_its_output_is_invisible_to_the_host_without_asan) {
  // What the host cannot protect: it hands the kernel a pointer and sizes; a kernel that writes
  // beyond them corrupts the caller's memory and the call still reports success. This test pins
  // that limit down (run the ASan job to catch such a plugin).
  ASSERT_OK(tsrLoadPlugin(hostile_plugin("writes-past-output").c_str()));
  std::vector<float> in = {-1, 2, -3, 4};
  std::vector<float> memory(in.size() + 16, 7.0f);  // y, then 16 floats of the caller's
  EXPECT_OK(run_relu("fake_overrun", in, memory.data()));
  EXPECT_EQ(std::vector<float>(memory.begin(), memory.begin() + 4), (std::vector<float>{0, 2, 0, 4}));
  EXPECT_EQ(memory[4], -1.0f) << "the plugin's overrun reached the caller's memory";
}
#endif

// ---- a plugin that blocks in its entry point -------------------------------------------------

TEST(HostilePlugin, a_plugin_blocking_in_its_entry_point_is_abandoned_at_the_load_timeout) {
  int before = 0;
  ASSERT_OK(tsrGetPluginCount(&before));  // the registry exists before the timeout is set
  setenv("TESSERA_PLUGIN_LOAD_TIMEOUT_MS", "3000", 1);
  std::string path = hostile_plugin("blocks-in-init");

  std::atomic<bool> load_returned{false};
  tsrStatus_t load_status = TSR_STATUS_SUCCESS;
  std::string load_message;
  auto start = clock_type::now();
  std::thread loader([&] {
    load_status = tsrLoadPlugin(path.c_str());
    load_message = last_error();
    load_returned = true;
  });

  // While the plugin's entry point hangs, other threads keep using Tessera: the load does not
  // hold the registry's lock while foreign code runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int during = 0;
  EXPECT_OK(tsrGetPluginCount(&during));
  EXPECT_EQ(during, before);
  if (backend_loaded("onednn")) {
    std::vector<float> in = {-1, 2}, out(2, 9.0f);
    EXPECT_OK(run_relu("onednn", in, out.data()));
    EXPECT_EQ(out, (std::vector<float>{0, 2}));
  }
  EXPECT_FALSE(load_returned) << "the calls above should not have waited for the load";

  loader.join();
  double waited = seconds_since(start);
  EXPECT_TRUE(fails_with(load_status, TSR_STATUS_NOT_SUPPORTED_PLUGIN, {}));
  EXPECT_NE(load_message.find("did not finish loading within 3000 ms"), std::string::npos)
      << load_message;
  EXPECT_GE(waited, 2.9);
  EXPECT_LT(waited, 15.0);

  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file("libfake-blocks-in-init.so", &info), 0);
  EXPECT_EQ(info.loaded, 0);
  EXPECT_NE(std::string(info.reason).find("TESSERA_PLUGIN_LOAD_TIMEOUT_MS"), std::string::npos)
      << info.reason;
  unsetenv("TESSERA_PLUGIN_LOAD_TIMEOUT_MS");
}

// Run by its own ctest entry with the blocking plugin on TESSERA_PLUGIN_PATH and a timeout: the
// first call of the process, which discovers the plugins, returns instead of hanging.
TEST(HostilePluginDiscovery, the_first_call_returns_when_a_discovered_plugin_blocks) {
  const char* folders = std::getenv("TESSERA_PLUGIN_PATH");
  if (!folders || std::string(folders).find("blocks-in-init") == std::string::npos)
    GTEST_SKIP() << "run by the tessera_hostile_plugin_discovery_test entry";
  auto start = clock_type::now();
  int count = 0;
  ASSERT_OK(tsrGetPluginCount(&count));
  EXPECT_LT(seconds_since(start), 10.0);
  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file("libfake-blocks-in-init.so", &info), 0);
  EXPECT_EQ(info.loaded, 0);
  EXPECT_NE(std::string(info.reason).find("did not finish loading within"), std::string::npos)
      << info.reason;
  if (backend_loaded("onednn")) {
    std::vector<float> in = {-1, 2}, out(2, 9.0f);
    EXPECT_OK(run_relu("onednn", in, out.data()));
    EXPECT_EQ(out, (std::vector<float>{0, 2}));
  }
}

// ---- a plugin with thousands of kernels ------------------------------------------------------

TEST(HostilePlugin, a_plugin_with_5000_kernels_loads_lists_and_selects_quickly) {
  int before = 0;
  ASSERT_OK(tsrGetKernelCount(TSR_OP_ACTIVATION_FORWARD, &before));
  auto start = clock_type::now();
  ASSERT_OK(tsrLoadPlugin(hostile_plugin("many-kernels").c_str()));
  double load_s = seconds_since(start);

  int after = 0;
  ASSERT_OK(tsrGetKernelCount(TSR_OP_ACTIVATION_FORWARD, &after));
  EXPECT_EQ(after - before, 5000);
  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file("libfake-many-kernels.so", &info), 0);
  EXPECT_EQ(info.loaded, 1) << info.reason;
  EXPECT_EQ(info.kernel_count, 5000);

  start = clock_type::now();
  std::vector<tsrKernelInfo_t> listed = tessera::kernels(TSR_OP_ACTIVATION_FORWARD);
  double list_s = seconds_since(start);
  ASSERT_EQ(static_cast<int>(listed.size()), after);
  EXPECT_STREQ(listed.back().backend_name, "fake_many");
  EXPECT_STREQ(listed.back().kernel_name, "relu_f32");
  tsrAlgo_t last = -1;
  ASSERT_OK(tsrGetAlgoByName(TSR_OP_ACTIVATION_FORWARD, "fake_many/relu_f32", &last));
  EXPECT_EQ(last, listed.back().algo);

  // The automatic choice asks 4999 kernels before the one that runs; the handle remembers it, so
  // the second call asks none.
  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("fake_many");
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 0.0f);
  start = clock_type::now();
  ASSERT_OK(tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1, x, in.data(), 0, x, out.data()));
  double cold_s = seconds_since(start);
  EXPECT_EQ(out, (std::vector<float>{0, 2, 0, 4}));
  start = clock_type::now();
  for (int i = 0; i < 100; ++i)
    ASSERT_OK(tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1, x, in.data(), 0, x, out.data()));
  double warm_s = seconds_since(start) / 100;

  // A problem none of them runs: the message stays bounded and says how many were left out.
  tessera::activation_desc sigmoid(TSR_ACTIVATION_SIGMOID);
  std::vector<float> untouched(4, 5.0f);
  EXPECT_FAILS_WITH(tsrActivationForward(h, sigmoid, last, 1, x, in.data(), 0, x, untouched.data()),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "fake_many/relu_f32: fake/relu_f32 runs relu only");
  EXPECT_EQ(untouched, std::vector<float>(4, 5.0f));
  tessera::handle only_many(TSR_DEVICE_CPU, 0);
  only_many.set_backend_preference("fake_many");
  tessera::tensor_desc ints(TSR_DATA_INT32, {2, 2}, {2, 1});
  std::vector<int32_t> iin(4, 1), iout(4, 3);
  tsrStatus_t s = tsrActivationForward(only_many, sigmoid, TSR_ALGO_AUTO, 1, ints, iin.data(), 0,
                                       ints, iout.data());
  EXPECT_EQ(s, TSR_STATUS_NOT_SUPPORTED_NO_KERNEL);
  std::vector<char> whole(1 << 20, '\0');
  tsrGetLastErrorString(whole.data(), whole.size());
  std::string message = whole.data();
  EXPECT_NE(message.find("more kernels declined"), std::string::npos)
      << message.substr(message.size() > 300 ? message.size() - 300 : 0);
  EXPECT_LT(message.size(), 16384u);
  EXPECT_EQ(iout, std::vector<int32_t>(4, 3));

  std::printf("5000 kernels: load %.1f ms, listing %.1f ms, first call %.2f ms, warm call %.1f us\n",
              load_s * 1e3, list_s * 1e3, cold_s * 1e3, warm_s * 1e6);
  // Generous bounds (sanitizer builds run these too): the point is "not quadratic".
  EXPECT_LT(load_s, 5.0);
  EXPECT_LT(list_s, 5.0);
  EXPECT_LT(cold_s, 2.0);
  EXPECT_LT(warm_s, 0.01);
}
