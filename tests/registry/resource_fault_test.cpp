// Device memory running out, simulated through the device interface: the tight-memory fake plugin
// (tests/fake_plugins, FAKE_TIGHT_MEMORY) owns CPU memory here (this binary runs with
// TESSERA_BACKENDS=-onednn, so no other CPU device interface is loaded) and has 64 KiB of it.
// A failed allocation is "execution failed / out of memory" with the size asked, nothing is
// written, and the same handle serves the next call.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <string>
#include <vector>

using namespace tessera::testing;

namespace {

constexpr size_t k_device_capacity = 64 * 1024;

class ResourceFault : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string path = std::string(TESSERA_HOSTILE_PLUGIN_DIR) + "/tight-memory/libfake-tight-memory.so";
    ASSERT_EQ(tsrLoadPlugin(path.c_str()), TSR_STATUS_SUCCESS) << last_error();
  }
  void SetUp() override { ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &handle_)); }
  void TearDown() override { tsrDestroy(handle_); }

  // relu of n floats through the kernel that needs an n-float workspace from the handle's pool.
  tsrStatus_t relu(const std::vector<float>& in, std::vector<float>& out) {
    tessera::activation_desc relu(TSR_ACTIVATION_RELU);
    tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT,
                           {1, 1, 1, static_cast<int64_t>(in.size())});
    return tsrActivationForward(handle_, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x,
                                out.data());
  }

  static std::vector<float> ramp(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    return v;
  }
  static std::vector<float> relu_of(const std::vector<float>& v) {
    std::vector<float> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) r[i] = v[i] > 0 ? v[i] : 0.0f;
    return r;
  }

  tsrHandle_t handle_ = nullptr;
};

}  // namespace

TEST_F(ResourceFault, the_tight_memory_plugin_owns_cpu_memory_in_this_test) {
  tsrPluginInfo_t info{};
  ASSERT_GE(find_plugin_by_file("libfake-tight-memory.so", &info), 0);
  EXPECT_EQ(info.loaded, 1) << info.reason;
  EXPECT_FALSE(backend_loaded("onednn"));
}

TEST_F(ResourceFault, malloc_beyond_the_device_memory_is_out_of_memory_with_the_size) {
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_FAILS_WITH(tsrMalloc(handle_, 1 << 20, &p), TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
                    "tsrMalloc", "allocating 1048576 bytes", "OUT_OF_MEMORY");
  EXPECT_EQ(p, reinterpret_cast<void*>(0x1)) << "a failed call writes no output";
  // The handle stays usable.
  ASSERT_OK(tsrMalloc(handle_, 1024, &p));
  EXPECT_NE(p, nullptr);
  EXPECT_OK(tsrFree(handle_, p));
}

TEST_F(ResourceFault, a_workspace_that_cannot_be_allocated_fails_the_call_and_the_handle_recovers) {
  // Small first: the pool holds 4 KiB.
  std::vector<float> small_in = ramp(1024), small_out(1024, 9.0f);
  ASSERT_OK(relu(small_in, small_out));
  EXPECT_EQ(small_out, relu_of(small_in));

  // 32768 floats need a 131072-byte workspace: more than the device has.
  const size_t n = 32768;
  ASSERT_GT(n * sizeof(float), k_device_capacity);
  std::vector<float> big_in = ramp(n), big_out(n, 9.0f);
  EXPECT_FAILS_WITH(relu(big_in, big_out), TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
                    "tsrActivationForward", "allocating 131072 bytes",
                    "TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY");
  EXPECT_EQ(TSR_STATUS_CATEGORY(TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY),
            TSR_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(big_out, std::vector<float>(n, 9.0f)) << "the failed call wrote its output";

  // The same handle runs the next call that fits (the failed growth left it without a pool, so
  // this allocates again), and fails the same way again for the one that does not.
  std::vector<float> again_out(1024, 9.0f);
  ASSERT_OK(relu(small_in, again_out));
  EXPECT_EQ(again_out, relu_of(small_in));
  EXPECT_FAILS_WITH(relu(big_in, big_out), TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
                    "allocating 131072 bytes");
  std::vector<float> last_out(4096, 9.0f);
  std::vector<float> last_in = ramp(4096);
  ASSERT_OK(relu(last_in, last_out));
  EXPECT_EQ(last_out, relu_of(last_in));
}

TEST_F(ResourceFault, every_allocation_failure_leaves_device_memory_as_it_was) {
  // Fill the device almost completely, so that even the small workspace fails; freeing makes room.
  void* hog = nullptr;
  ASSERT_OK(tsrMalloc(handle_, k_device_capacity - 1024, &hog));
  std::vector<float> in = ramp(1024), out(1024, 9.0f);
  EXPECT_FAILS_WITH(relu(in, out), TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY, "allocating 4096 bytes");
  EXPECT_EQ(out, std::vector<float>(1024, 9.0f));
  ASSERT_OK(tsrFree(handle_, hog));
  ASSERT_OK(relu(in, out));
  EXPECT_EQ(out, relu_of(in));
}
