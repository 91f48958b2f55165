// ABI compatibility: a plugin built against the previous ABI version's header loads and works;
// one claiming a future version is refused with both versions in the message.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

using namespace tessera::testing;

TEST(AbiCompatibility, a_plugin_built_against_abi_1_still_loads_and_runs) {
  ASSERT_OK(tsrLoadPlugin(TESSERA_ABI_V1_PLUGIN));
  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file("libabi-v1-plugin.so", &info), 0);
  EXPECT_EQ(info.loaded, 1) << info.reason;
  EXPECT_EQ(info.abi_version, 1u);
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 1, 4});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 9.0f);
  tessera::activation_forward(h, relu, tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "abi_v1/relu_v1"),
                              3.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 6, 0, 12}));
}

TEST(AbiCompatibility, a_plugin_claiming_a_future_version_is_refused_with_both_versions) {
  EXPECT_FAILS_WITH(tsrLoadPlugin(TESSERA_FUTURE_ABI_PLUGIN), TSR_STATUS_NOT_SUPPORTED_PLUGIN,
                    "plugin speaks ABI version 99", "host accepts versions 1 to 3");
}
