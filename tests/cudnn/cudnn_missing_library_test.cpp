// Tessera with the cuDNN plugin present but cuDNN missing: TESSERA_CUDNN_LIBRARY names a file
// that does not exist (set here, before the registry's first use loads the plugins, so the test
// needs no environment of its own). The plugin must be listed as not loaded with a reason that
// names the path, "cudnn" must not be selectable, and everything tessera-info asks must still work.
#include "test_support.hpp"

#include <tessera/tessera.h>

#include <cstdlib>
#include <string>

using namespace tessera::testing;

namespace {

constexpr const char* missing_library = "/nonexistent/libcudnn.so.9";

// Runs during static initialisation, before main and so before any Tessera call.
const bool library_redirected = [] { return setenv("TESSERA_CUDNN_LIBRARY", missing_library, 1) == 0; }();

TEST(CudnnMissingLibrary, the_plugin_is_listed_as_not_loaded_with_the_path_in_its_reason) {
  ASSERT_TRUE(library_redirected);
  tsrPluginInfo_t info{};
  if (find_plugin_by_file("libtessera-cudnn.so", &info) < 0) GTEST_SKIP() << "the cudnn plugin is not built here";
  EXPECT_EQ(info.loaded, 0);
  EXPECT_EQ(info.kernel_count, 0);
  const std::string reason = info.reason;
  EXPECT_NE(reason.find("entry point refused"), std::string::npos) << reason;
  EXPECT_NE(reason.find(missing_library), std::string::npos) << reason;
  EXPECT_NE(reason.find("TESSERA_CUDNN_LIBRARY"), std::string::npos) << reason;
}

TEST(CudnnMissingLibrary, cudnn_is_not_a_backend_anyone_can_select) {
  tsrHandle_t h = nullptr;
  ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &h));
  EXPECT_FAILS_WITH(tsrSetBackendPreference(h, "cudnn"), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "'cudnn', which is not a loaded backend");
  tsrDestroy(h);
  tsrAlgo_t algo = TSR_ALGO_AUTO;
  EXPECT_NE(tsrGetAlgoByName(TSR_OP_CONVOLUTION_FORWARD, "cudnn/cudnn_conv_fwd_implicit_gemm", &algo),
            TSR_STATUS_SUCCESS);
}

// What tessera-info queries, in its order: nothing of it may fail because cuDNN is missing.
TEST(CudnnMissingLibrary, every_query_tessera_info_makes_still_succeeds) {
  EXPECT_GT(tsrGetVersion(), 0u);
  for (tsrDeviceKind_t kind : {TSR_DEVICE_CPU, TSR_DEVICE_CUDA}) {
    int count = -1;
    EXPECT_OK(tsrGetDeviceCount(kind, &count));
    EXPECT_GE(count, 0);
  }
  int plugins = 0;
  ASSERT_OK(tsrGetPluginCount(&plugins));
  for (int i = 0; i < plugins; ++i) {
    tsrPluginInfo_t p{};
    p.struct_size = sizeof p;
    EXPECT_OK(tsrGetPluginInfo(i, &p));
  }
  for (int op = 0; op < TSR_OP_COUNT; ++op) {
    int count = 0;
    ASSERT_OK(tsrGetKernelCount(static_cast<tsrOperation_t>(op), &count));
    for (int i = 0; i < count; ++i) {
      tsrKernelInfo_t k{};
      k.struct_size = sizeof k;
      EXPECT_OK(tsrGetKernelInfo(static_cast<tsrOperation_t>(op), i, &k));
      EXPECT_STRNE(k.backend_name, "cudnn") << k.kernel_name;
    }
  }
}

}  // namespace
