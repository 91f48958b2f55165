// Runs with TESSERA_PLUGIN_PATH pointing at the fake plugins (tests/fake_plugins): each broken one
// is listed as not loaded, with its reason, and everything else keeps working.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tessera::testing;

namespace {

tsrPluginInfo_t plugin(const std::string& file) {
  tsrPluginInfo_t info{};
  EXPECT_GE(find_plugin_by_file(file, &info), 0) << file << " was not discovered";
  return info;
}

std::string fake_dir() {
  const char* d = std::getenv("TESSERA_PLUGIN_PATH");
  return d ? d : "";
}

}  // namespace

TEST(PluginLoading, loads_a_good_plugin_from_the_plugin_path) {
  tsrPluginInfo_t good = plugin("libfake-00-good.so");
  EXPECT_EQ(good.loaded, 1) << good.reason;
  EXPECT_STREQ(good.name, "fake");
  EXPECT_STREQ(good.version, "0.0.1");
  EXPECT_EQ(good.abi_version, 4u);  // TSRP_ABI_VERSION_CURRENT
  EXPECT_EQ(good.device_kind, TSR_DEVICE_CPU);
  // Four declared, one for an unknown operation skipped.
  EXPECT_EQ(good.kernel_count, 3);
}

TEST(PluginLoading, skips_a_file_that_is_not_a_shared_library) {
  tsrPluginInfo_t p = plugin("libfake-not-a-library.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_NE(std::string(p.reason).find("not a loadable shared library"), std::string::npos) << p.reason;
}

TEST(PluginLoading, skips_a_library_without_the_entry_point) {
  tsrPluginInfo_t p = plugin("libfake-no-entry.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_STREQ(p.reason, "no entry point 'tsrpPluginEntry'");
}

TEST(PluginLoading, skips_plugin_with_newer_abi_and_names_both_versions) {
  tsrPluginInfo_t p = plugin("libfake-abi-too-new.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_EQ(p.abi_version, 99u);
  EXPECT_NE(std::string(p.reason).find("plugin speaks ABI version 99, host accepts versions 1 to 4"),
            std::string::npos)
      << p.reason;
}

TEST(PluginLoading, skips_plugin_with_older_abi_than_the_minimum) {
  tsrPluginInfo_t p = plugin("libfake-abi-too-old.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_NE(std::string(p.reason).find("plugin speaks ABI version 0, host accepts versions 1 to 4"),
            std::string::npos)
      << p.reason;
}

TEST(PluginLoading, skips_plugin_whose_entry_point_fails) {
  tsrPluginInfo_t p = plugin("libfake-entry-fails.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_NE(std::string(p.reason).find("entry point refused (status 4000)"), std::string::npos)
      << p.reason;
}

TEST(PluginLoading, skips_plugin_whose_entry_point_throws) {
  tsrPluginInfo_t p = plugin("libfake-entry-throws.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_NE(std::string(p.reason).find("entry point threw an exception: fake plugin throws"),
            std::string::npos)
      << p.reason;
}

TEST(PluginLoading, skips_a_second_plugin_with_a_name_already_loaded) {
  tsrPluginInfo_t p = plugin("libfake-01-duplicate-name.so");
  EXPECT_EQ(p.loaded, 0);
  EXPECT_NE(std::string(p.reason).find("duplicate backend name 'fake' (already loaded from"),
            std::string::npos)
      << p.reason;
}

TEST(PluginLoading, explicit_load_of_a_broken_plugin_returns_the_reason) {
  std::string path = fake_dir() + "/libfake-abi-too-new.so";
  EXPECT_FAILS_WITH(tsrLoadPlugin(path.c_str()), TSR_STATUS_NOT_SUPPORTED_PLUGIN, "tsrLoadPlugin",
                    "refused", "host accepts versions 1 to 4");
  EXPECT_FAILS_WITH(tsrLoadPlugin("/nonexistent/libnothing.so"), TSR_STATUS_NOT_SUPPORTED_PLUGIN,
                    "no such file");
  EXPECT_FAILS_WITH(tsrLoadPlugin(nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "path is NULL");
  // Loading an already loaded plugin again changes nothing.
  int before = 0, after = 0;
  tsrGetKernelCount(TSR_OP_ACTIVATION_FORWARD, &before);
  std::string good = fake_dir() + "/libfake-00-good.so";
  EXPECT_OK(tsrLoadPlugin(good.c_str()));
  tsrGetKernelCount(TSR_OP_ACTIVATION_FORWARD, &after);
  EXPECT_EQ(before, after);
}

TEST(PluginLoading, broken_plugins_do_not_stop_the_real_backends) {
  if (!backend_loaded("onednn")) GTEST_SKIP() << "oneDNN plugin not built";
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 2, 2, 2});
  std::vector<float> in = {-2, -1, 0, 1, 2, 3, -4, 5}, out(8, 99.0f);
  h.set_backend_preference("onednn");
  tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 1, 2, 3, 0, 5}));
}

TEST(KernelSelection, first_kernel_that_can_run_wins_in_preference_order) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("fake");
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 0.0f);
  // fake/decliner declines, fake/relu_f32 runs.
  tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 2.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 4, 0, 8}));
}

TEST(KernelSelection, explicit_algorithm_runs_that_kernel_or_says_why_not) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 5.0f);
  tsrAlgo_t decliner = tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "fake/decliner");
  EXPECT_FAILS_WITH(tsrActivationForward(h, relu, decliner, 1, x, in.data(), 0, x, out.data()),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "cannot run this activation_forward problem",
                    "fake/decliner: fake/decliner declines every problem");
  EXPECT_EQ(out, (std::vector<float>(4, 5.0f)));
  EXPECT_FAILS_WITH(tsrGetAlgoByName(TSR_OP_ACTIVATION_FORWARD, "fake/nothing", &decliner),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "'fake/nothing' is no loaded kernel");
}

TEST(KernelSelection, a_kernel_failing_at_run_time_gives_execution_failed_with_its_message) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> in(4, 1.0f), out(4, 0.0f);
  tsrAlgo_t failing = tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "fake/failing");
  EXPECT_FAILS_WITH(tsrActivationForward(h, relu, failing, 1, x, in.data(), 0, x, out.data()),
                    TSR_STATUS_EXECUTION_FAILED, "kernel fake/failing failed",
                    "fake failure injected at run time");
  // The handle stays usable.
  tessera::activation_forward(h, relu, tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "fake/relu_f32"),
                              1.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(out, (std::vector<float>(4, 1.0f)));
}

TEST(KernelSelection, not_supported_lists_every_kernel_and_its_reason) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("fake");
  tessera::activation_desc act(TSR_ACTIVATION_SIGMOID);
  tessera::tensor_desc x(TSR_DATA_INT32, {2, 3}, {3, 1});
  tessera::tensor_desc y(TSR_DATA_INT32, {2, 3}, {1, 2});
  std::vector<int32_t> in(6, 1), out(6, 0);
  // fake/failing accepts everything, so the automatic choice would run it: ask for relu_f32.
  tsrAlgo_t relu_f32 = tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "fake/relu_f32");
  EXPECT_FAILS_WITH(tsrActivationForward(h, act, relu_f32, 1, x, in.data(), 0, y, out.data()),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "fake/relu_f32: fake/relu_f32 runs relu only");
  EXPECT_EQ(out, std::vector<int32_t>(6, 0));
}

TEST(KernelSelection, an_exclusive_preference_never_runs_another_backends_kernel) {
  if (!backend_loaded("onednn")) GTEST_SKIP() << "oneDNN plugin not built";
  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("onednn");
  // An int32 sigmoid between different layouts: oneDNN declines it, fake/failing accepts
  // everything (and fails when run), so which backend ran shows in the status.
  tessera::activation_desc sigmoid(TSR_ACTIVATION_SIGMOID);
  tessera::tensor_desc xi(TSR_DATA_INT32, {2, 3}, {3, 1});
  tessera::tensor_desc yi(TSR_DATA_INT32, {2, 3}, {1, 2});
  std::vector<int32_t> in(6, 1), out(6, 7);
  for (tsrTuningMode_t mode : {TSR_TUNING_HEURISTIC, TSR_TUNING_ALWAYS}) {
    SCOPED_TRACE(mode);
    ASSERT_EQ(tsrSetTuningMode(h, mode), TSR_STATUS_SUCCESS);
    h.set_backends_exclusive(false);
    // A plain preference: the other backends follow, and fake's kernel runs.
    EXPECT_FAILS_WITH(tsrActivationForward(h, sigmoid, TSR_ALGO_AUTO, 1, xi, in.data(), 0, yi, out.data()),
                      TSR_STATUS_EXECUTION_FAILED, "fake failure injected at run time");
    h.set_backends_exclusive(true);
    // Exclusive: nothing else is tried, and the refusal says why each other kernel was passed over.
    EXPECT_FAILS_WITH(tsrActivationForward(h, sigmoid, TSR_ALGO_AUTO, 1, xi, in.data(), 0, yi, out.data()),
                      TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                      "fake/failing: backend fake is not in the handle's exclusive backend list");
    EXPECT_EQ(out, std::vector<int32_t>(6, 7)) << "a refused call must not write its output";
  }
  // The preferred backend's own choice still runs, and explicit algorithms of any backend too.
  ASSERT_EQ(tsrSetTuningMode(h, TSR_TUNING_HEURISTIC), TSR_STATUS_SUCCESS);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> xf = {-1, 2, -3, 4}, yf(4, 0.0f);
  tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 1.0f, x, xf.data(), 0.0f, x, yf.data());
  EXPECT_EQ(yf, (std::vector<float>{0, 2, 0, 4}));
  std::fill(yf.begin(), yf.end(), 0.0f);
  tessera::activation_forward(h, relu, tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "fake/relu_f32"), 3.0f, x,
                              xf.data(), 0.0f, x, yf.data());
  EXPECT_EQ(yf, (std::vector<float>{0, 6, 0, 12}));
  EXPECT_FAILS_WITH(tsrSetBackendsExclusive(h, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrSetBackendsExclusive: exclusive is 2; expected 0 or 1");
  EXPECT_FAILS_WITH(tsrSetBackendsExclusive(nullptr, 1), TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrSetBackendsExclusive");
}

TEST(KernelSelection, the_last_kernel_a_call_ran_is_named) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  EXPECT_EQ(h.last_kernel_name(), "") << "no call has run yet";
  h.set_backend_preference("fake");
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 0.0f);
  // fake/decliner declines, fake/relu_f32 runs.
  tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out.data());
  EXPECT_EQ(h.last_kernel_name(), "fake/relu_f32");
  char small[4] = {'a', 'b', 'c', '\0'};
  EXPECT_FAILS_WITH(tsrGetLastKernelName(h, small, sizeof(small)), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "size is 4; the name needs 14 bytes");
  EXPECT_STREQ(small, "abc") << "a refused call must leave name as it was";
  EXPECT_FAILS_WITH(tsrGetLastKernelName(h, nullptr, 8), TSR_STATUS_BAD_PARAM_NULL_POINTER, "name is NULL");
  EXPECT_FAILS_WITH(tsrGetLastKernelName(nullptr, small, sizeof(small)), TSR_STATUS_BAD_PARAM_NULL_POINTER);
  if (backend_loaded("onednn")) {
    h.set_backend_preference("onednn");
    tessera::activation_forward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out.data());
    EXPECT_EQ(h.last_kernel_name().rfind("onednn/", 0), 0u) << h.last_kernel_name();
  }
}

TEST(KernelListing, lists_kernels_per_operation_with_backend_and_determinism) {
  std::vector<tsrKernelInfo_t> ks = tessera::kernels(TSR_OP_ACTIVATION_FORWARD);
  bool found = false;
  for (const auto& k : ks)
    if (std::string(k.backend_name) == "fake" && std::string(k.kernel_name) == "relu_f32") {
      found = true;
      EXPECT_EQ(k.deterministic, 1);
      EXPECT_EQ(k.device_kind, TSR_DEVICE_CPU);
      EXPECT_STREQ(k.notes, "test kernel");
    }
  EXPECT_TRUE(found);
  int n = 0;
  EXPECT_FAILS_WITH(tsrGetKernelCount(static_cast<tsrOperation_t>(50), &n),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "op 50");
  tsrKernelInfo_t small{};
  small.struct_size = 8;
  EXPECT_FAILS_WITH(tsrGetKernelInfo(TSR_OP_ACTIVATION_FORWARD, 0, &small),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "struct_size is 8");
}
