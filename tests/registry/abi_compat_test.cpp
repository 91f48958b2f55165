// ABI compatibility: plugins built against older ABI versions' headers load and work (the frozen
// ABI 1 header; the test device as an ABI 3 plugin, whose device struct ends before memory_info);
// one claiming a future version is refused with both versions in the message.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace tessera::testing;

namespace {

// Loads the plugin at `path` and checks that the registry took it at ABI version `abi`.
void expect_loaded_at_abi(const char* path, const char* file, uint32_t abi) {
  ASSERT_OK(tsrLoadPlugin(path));
  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file(file, &info), 0);
  EXPECT_EQ(info.loaded, 1) << info.reason;
  EXPECT_EQ(info.abi_version, abi);
}

}  // namespace

TEST(AbiCompatibility, a_plugin_built_against_abi_1_still_loads_and_runs) {
  ASSERT_NO_FATAL_FAILURE(expect_loaded_at_abi(TESSERA_ABI_V1_PLUGIN, "libabi-v1-plugin.so", 1u));
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 1, 4});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 9.0f);
  tessera::activation_forward(h, relu, tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "abi_v1/relu_v1"),
                              3.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 6, 0, 12}));
}

// The test device (tests/fake_plugins/fake_device_plugin.cpp, 1 GiB) built as an ABI 3 plugin: its
// shorter device struct reads as memory_info NULL, so the host does not know the device's size.
// Find still measures on it, and a y larger than the device goes to the allocator, which refuses
// it (the path of every device that cannot say: no up-front refusal, the allocator answers).
TEST(AbiCompatibility, a_device_plugin_of_abi_3_loads_and_find_measures_on_it_without_memory_info) {
  ASSERT_NO_FATAL_FAILURE(expect_loaded_at_abi(TESSERA_FAKE_DEVICE_ABI3_PLUGIN, "libfake-device-abi3.so", 3u));
  tessera::handle h(TSR_DEVICE_CUDA, 0);  // fakedev serves device kind CUDA (TESSERA_BACKENDS: alone)
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 4, 8, 8});
  tessera::tensor_desc w(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {4, 4, 3, 3});
  tessera::tensor_desc y(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 4, 8, 8});
  tessera::convolution_desc conv({1, 1}, {1, 1}, {1, 1}, {1, 1});
  void* dx = h.malloc(x.size_in_bytes());
  void* dw = h.malloc(w.size_in_bytes());
  void* dy = h.malloc(y.size_in_bytes());
  std::vector<tsrAlgoPerf_t> perf(4, tessera::make_algo_perf());
  int n = 0;
  ASSERT_OK(tsrFindConvolutionForwardAlgorithm(h, x, dx, w, dw, conv, y, dy, 4, &n, perf.data(), nullptr, 0));
  ASSERT_EQ(n, 1);
  EXPECT_EQ(perf[0].status, TSR_STATUS_SUCCESS) << perf[0].reason;
  EXPECT_STREQ(perf[0].backend_name, "fakedev");
  EXPECT_GE(perf[0].time_ms, 0.0f);

  const int64_t far = int64_t(1) << 28;  // 3 GiB from the first channel to the last
  tessera::tensor_desc huge_y(TSR_DATA_FLOAT, {1, 4, 8, 8}, {4 * far, far, 8, 1});
  n = -7;
  EXPECT_FAILS_WITH(
      tsrFindConvolutionForwardAlgorithm(h, x, dx, w, dw, conv, huge_y, dy, 4, &n, perf.data(), nullptr, 0),
      TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
      "allocating a " + std::to_string(huge_y.size_in_bytes()) + "-byte scratch y");
  EXPECT_EQ(n, -7);
  h.free(dx);
  h.free(dw);
  h.free(dy);
}

TEST(AbiCompatibility, a_plugin_claiming_a_future_version_is_refused_with_both_versions) {
  EXPECT_FAILS_WITH(tsrLoadPlugin(TESSERA_FUTURE_ABI_PLUGIN), TSR_STATUS_NOT_SUPPORTED_PLUGIN,
                    "plugin speaks ABI version 99", "host accepts versions 1 to 4");
}
