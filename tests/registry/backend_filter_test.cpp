// Runs with TESSERA_BACKENDS=-fake and the fake plugins on the path: the fake backend is found,
// listed as disabled, and its kernels are not offered.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

using namespace tessera::testing;

TEST(BackendFilter, a_backend_disabled_by_environment_is_listed_with_the_reason) {
  tsrPluginInfo_t p{};
  ASSERT_GE(find_plugin_by_file("libfake-00-good.so", &p), 0);
  EXPECT_EQ(p.loaded, 0);
  EXPECT_STREQ(p.reason, "disabled by TESSERA_BACKENDS=-fake");
  tsrAlgo_t a;
  EXPECT_FAILS_WITH(tsrGetAlgoByName(TSR_OP_ACTIVATION_FORWARD, "fake/relu_f32", &a),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "no loaded kernel");
}

TEST(BackendFilter, the_duplicate_is_not_refused_as_duplicate_once_the_first_is_disabled) {
  // Both fakes are named "fake", so both are disabled by name, not as duplicates.
  tsrPluginInfo_t p{};
  ASSERT_GE(find_plugin_by_file("libfake-01-duplicate-name.so", &p), 0);
  EXPECT_STREQ(p.reason, "disabled by TESSERA_BACKENDS=-fake");
}
