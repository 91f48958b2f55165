// The selection policy on a test device (tests/fake_plugins/fake_device_plugin.cpp, plugin
// "fakedev", the only CUDA-kind plugin here): deterministic-only handles, fallback to the host
// backend through host memory, cross-check against the host reference, and tuning that is
// remembered across processes in the SQLite database (real processes of
// tessera_selection_policy_worker). Which kernel ran is read from FAKEDEV_RUN_LOG.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// A 2x3x4x5 packed f32 relu (or other mode) problem on a fakedev handle.
class FakeDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_EQ(tsrGetDeviceCount(TSR_DEVICE_CUDA, &n), TSR_STATUS_SUCCESS);
    ASSERT_EQ(n, 1) << "fakedev must be the only CUDA-kind plugin (TESSERA_BACKENDS=-cuda,-cudnn)";
    ASSERT_EQ(tsrCreate(TSR_DEVICE_CUDA, 0, &h_), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
    ASSERT_EQ(tsrSetTuningMode(h_, TSR_TUNING_HEURISTIC), TSR_STATUS_SUCCESS);
    const int64_t dims[4] = {2, 3, 4, 5};
    tsrCreateTensorDescriptor(&desc_);
    tsrSetTensorNdDescriptorEx(desc_, TSR_TENSOR_NCHW, TSR_DATA_FLOAT, 4, dims);
    for (int i = 0; i < count_; ++i) x_[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    ASSERT_EQ(tsrMalloc(h_, bytes(), &dx_), TSR_STATUS_SUCCESS);
    ASSERT_EQ(tsrMalloc(h_, bytes(), &dy_), TSR_STATUS_SUCCESS);
    ASSERT_EQ(tsrMemcpyHostToDevice(h_, dx_, x_, bytes()), TSR_STATUS_SUCCESS);
    run_log_ = (fs::temp_directory_path() / ("fakedev_runs_" + std::to_string(::getpid()))).string();
    fs::remove(run_log_);
    setenv("FAKEDEV_RUN_LOG", run_log_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FAKEDEV_RUN_LOG");
    fs::remove(run_log_);
    tsrFree(h_, dx_);
    tsrFree(h_, dy_);
    tsrDestroyTensorDescriptor(desc_);
    tsrDestroy(h_);
  }
  size_t bytes() const { return sizeof(float) * count_; }
  tsrStatus_t activation(tsrActivationMode_t mode, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    tsrActivationDescriptor_t act = nullptr;
    tsrCreateActivationDescriptor(&act);
    tsrSetActivationDescriptor(act, mode, 0.0);
    // Poison y, so that an unwritten output fails.
    std::vector<float> poison(count_, std::nanf(""));
    tsrMemcpyHostToDevice(h_, dy_, poison.data(), bytes());
    const tsrStatus_t s = tsrActivationForward(h_, act, algo, 1.0f, desc_, dx_, 0.0f, desc_, dy_);
    tsrDestroyActivationDescriptor(act);
    return s;
  }
  std::vector<float> y() {
    std::vector<float> out(count_);
    tsrMemcpyDeviceToHost(h_, out.data(), dy_, bytes());
    return out;
  }
  std::vector<std::string> runs() const {
    std::vector<std::string> lines;
    std::ifstream f(run_log_);
    for (std::string line; std::getline(f, line);) lines.push_back(line);
    return lines;
  }
  tsrAlgo_t algo(const char* name) {
    tsrAlgo_t a = TSR_ALGO_AUTO;
    EXPECT_EQ(tsrGetAlgoByName(TSR_OP_ACTIVATION_FORWARD, name, &a), TSR_STATUS_SUCCESS) << name;
    return a;
  }

  static constexpr int count_ = 120;
  tsrHandle_t h_ = nullptr;
  tsrTensorDescriptor_t desc_ = nullptr;
  float x_[count_];
  void* dx_ = nullptr;
  void* dy_ = nullptr;
  std::string run_log_;
};

TEST_F(FakeDevice, heuristic_runs_the_first_kernel_in_the_table) {
  ASSERT_EQ(activation(TSR_ACTIVATION_RELU), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
  EXPECT_EQ(runs(), std::vector<std::string>{"relu_slow"});
  const std::vector<float> out = y();
  for (int i = 0; i < count_; ++i) ASSERT_EQ(out[i], x_[i] > 0 ? x_[i] : 0.0f) << i;
}

TEST_F(FakeDevice, deterministic_handle_refuses_a_nondeterministic_kernel_by_name) {
  ASSERT_EQ(tsrSetDeterministic(h_, 1), TSR_STATUS_SUCCESS);
  const tsrStatus_t s = activation(TSR_ACTIVATION_RELU, algo("fakedev/relu_fast"));
  EXPECT_EQ(s, TSR_STATUS_NOT_SUPPORTED_NO_KERNEL);
  EXPECT_NE(tessera::testing::last_error().find("not deterministic"), std::string::npos) << tessera::testing::last_error();
  EXPECT_TRUE(runs().empty());
  EXPECT_EQ(tsrSetDeterministic(h_, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  EXPECT_NE(tessera::testing::last_error().find("deterministic_only"), std::string::npos);
}

TEST_F(FakeDevice, deterministic_tuning_never_picks_a_nondeterministic_kernel) {
  ASSERT_EQ(tsrSetDeterministic(h_, 1), TSR_STATUS_SUCCESS);
  ASSERT_EQ(tsrSetTuningMode(h_, TSR_TUNING_ALWAYS), TSR_STATUS_SUCCESS);
  ASSERT_EQ(activation(TSR_ACTIVATION_RELU), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
  const std::vector<std::string> r = runs();
  ASSERT_FALSE(r.empty());
  for (const std::string& k : r) EXPECT_NE(k, "relu_fast");
  // relu_off_by_one (1 ms) beats relu_slow (2 ms) on time; it is deterministic, so it may win.
  EXPECT_TRUE(r.back() == "relu_off_by_one" || r.back() == "relu_slow") << r.back();
}

TEST_F(FakeDevice, without_fallback_a_problem_no_device_kernel_runs_names_every_reason) {
  const tsrStatus_t s = activation(TSR_ACTIVATION_SIGMOID);
  EXPECT_EQ(s, TSR_STATUS_NOT_SUPPORTED_NO_KERNEL);
  const std::string e = tessera::testing::last_error();
  EXPECT_NE(e.find("fakedev/relu_slow: fakedev runs relu only"), std::string::npos) << e;
  EXPECT_NE(e.find("fakedev/relu_fast"), std::string::npos) << e;
  for (float v : y()) ASSERT_TRUE(std::isnan(v)) << "a refused call must not write its output";
}

TEST_F(FakeDevice, with_fallback_the_host_backend_runs_it_through_host_memory) {
  ASSERT_EQ(tsrSetFallback(h_, 1), TSR_STATUS_SUCCESS);
  ASSERT_EQ(activation(TSR_ACTIVATION_SIGMOID), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
  EXPECT_TRUE(runs().empty()) << "no fakedev kernel runs sigmoid";
  char name[256] = {0};
  ASSERT_EQ(tsrGetLastKernelName(h_, name, sizeof(name)), TSR_STATUS_SUCCESS);
  const std::string ran = name;
  EXPECT_EQ(ran.rfind("onednn/", 0), 0u) << ran;
  EXPECT_NE(ran.find(" (host fallback)"), std::string::npos) << ran;
  const std::vector<float> out = y();
  for (int i = 0; i < count_; ++i)
    ASSERT_NEAR(out[i], 1.0f / (1.0f + std::exp(-x_[i])), 1e-6f) << i;
  // An explicit kernel that declines is never sent elsewhere.
  EXPECT_EQ(activation(TSR_ACTIVATION_SIGMOID, algo("fakedev/relu_slow")), TSR_STATUS_NOT_SUPPORTED_NO_KERNEL);
}

TEST_F(FakeDevice, crosscheck_counts_a_correct_call_as_checked) {
  ASSERT_EQ(tsrSetCrossCheck(h_, TSR_CROSSCHECK_ON), TSR_STATUS_SUCCESS);
  ASSERT_EQ(activation(TSR_ACTIVATION_RELU), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
  tsrCrossCheckCounts_t c{};
  c.struct_size = sizeof(c);
  ASSERT_EQ(tsrGetCrossCheckCounts(h_, &c), TSR_STATUS_SUCCESS);
  EXPECT_EQ(c.checked, 1u);
  EXPECT_EQ(c.mismatched, 0u);
  EXPECT_EQ(c.skipped, 0u);
}

TEST_F(FakeDevice, crosscheck_catches_a_wrong_kernel_and_keeps_the_primary_output) {
  ASSERT_EQ(tsrSetCrossCheck(h_, TSR_CROSSCHECK_ON), TSR_STATUS_SUCCESS);
  ASSERT_EQ(activation(TSR_ACTIVATION_RELU, algo("fakedev/relu_off_by_one")), TSR_STATUS_SUCCESS);
  tsrCrossCheckCounts_t c{};
  c.struct_size = sizeof(c);
  ASSERT_EQ(tsrGetCrossCheckCounts(h_, &c), TSR_STATUS_SUCCESS);
  EXPECT_EQ(c.checked, 1u);
  EXPECT_EQ(c.mismatched, 1u);
  const std::vector<float> out = y();
  for (int i = 0; i < count_; ++i) ASSERT_EQ(out[i], (x_[i] > 0 ? x_[i] : 0.0f) + 1.0f) << i;
  c.struct_size = 4;
  EXPECT_EQ(tsrGetCrossCheckCounts(h_, &c), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
}

TEST_F(FakeDevice, crosscheck_abort_mode_aborts_at_the_first_mismatch) {
  // The child re-executes the binary: a forked child would inherit oneDNN's OpenMP pool half
  // alive and hang in it.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(tsrSetCrossCheck(h_, TSR_CROSSCHECK_ABORT), TSR_STATUS_SUCCESS);
  const tsrAlgo_t wrong = algo("fakedev/relu_off_by_one");
  EXPECT_DEATH(activation(TSR_ACTIVATION_RELU, wrong), "cross-check mismatch");
}

TEST_F(FakeDevice, pointer_checks_name_a_tensor_that_is_not_device_memory) {
  tsrActivationDescriptor_t act = nullptr;
  tsrCreateActivationDescriptor(&act);
  tsrSetActivationDescriptor(act, TSR_ACTIVATION_RELU, 0.0);
  std::vector<float> host_y(count_, 7.0f);
  // Off (the default): the plugin is trusted with the pointer.
  ASSERT_EQ(tsrActivationForward(h_, act, TSR_ALGO_AUTO, 1.0f, desc_, dx_, 0.0f, desc_, dy_), TSR_STATUS_SUCCESS);
  ASSERT_EQ(tsrSetPointerChecks(h_, 1), TSR_STATUS_SUCCESS);
  ASSERT_EQ(tsrActivationForward(h_, act, TSR_ALGO_AUTO, 1.0f, desc_, dx_, 0.0f, desc_, dy_), TSR_STATUS_SUCCESS);
  EXPECT_EQ(tsrActivationForward(h_, act, TSR_ALGO_AUTO, 1.0f, desc_, dx_, 0.0f, desc_, host_y.data()),
            TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  const std::string e = tessera::testing::last_error();
  EXPECT_NE(e.find("tsrActivationForward: y is host memory or memory of no cuda device, but the handle is on cuda "
                   "device 0"),
            std::string::npos)
      << e;
  for (float v : host_y) ASSERT_EQ(v, 7.0f) << "a refused call must not write its output";
  EXPECT_EQ(tsrSetPointerChecks(h_, 5), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  tsrDestroyActivationDescriptor(act);
}

// ---- find on the test device (1 GiB: FAKEDEV_TOTAL_MEMORY shrinks it) ---------------------------

// A 1x4x8x8 f32 convolution with a 3x3 filter, x and w in fakedev memory; y described by the
// test. conv_fwd_naive is the device's one convolution kernel.
class FakeDeviceFind : public FakeDevice {
 protected:
  void SetUp() override {
    FakeDevice::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(tsrMalloc(h_, x_desc_.size_in_bytes(), &conv_x_), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
    ASSERT_EQ(tsrMalloc(h_, w_desc_.size_in_bytes(), &conv_w_), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
    std::vector<float> ones(64 * 4, 1.0f);
    tsrMemcpyHostToDevice(h_, conv_x_, ones.data(), x_desc_.size_in_bytes());
    tsrMemcpyHostToDevice(h_, conv_w_, ones.data(), w_desc_.size_in_bytes());
    std::memset(perf_, 0x5a, sizeof(perf_));  // poisoned: a failing find must leave every byte
    for (tsrAlgoPerf_t& p : perf_) p.struct_size = sizeof(p);
    std::memcpy(poisoned_, perf_, sizeof(perf_));
  }
  void TearDown() override {
    unsetenv("FAKEDEV_TOTAL_MEMORY");
    tsrFree(h_, conv_x_);
    tsrFree(h_, conv_w_);
    FakeDevice::TearDown();
  }
  tsrStatus_t find(const tessera::tensor_desc& y, const void* y_memory) {
    return tsrFindConvolutionForwardAlgorithm(h_, x_desc_, conv_x_, w_desc_, conv_w_, conv_, y, y_memory, 4,
                                              &returned_count_, perf_, nullptr, 0);
  }
  bool perf_untouched() const { return std::memcmp(perf_, poisoned_, sizeof(perf_)) == 0; }

  tessera::tensor_desc x_desc_{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 4, 8, 8}};
  tessera::tensor_desc w_desc_{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {4, 4, 3, 3}};
  tessera::tensor_desc packed_y_{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 4, 8, 8}};
  tessera::convolution_desc conv_{{1, 1}, {1, 1}, {1, 1}, {1, 1}};
  void* conv_x_ = nullptr;
  void* conv_w_ = nullptr;
  tsrAlgoPerf_t perf_[4];
  tsrAlgoPerf_t poisoned_[4];
  int returned_count_ = -7;
};

TEST_F(FakeDeviceFind, measures_the_device_kernel_on_a_y_that_fits) {
  ASSERT_EQ(find(packed_y_, dy_), TSR_STATUS_SUCCESS) << tessera::testing::last_error();
  ASSERT_EQ(returned_count_, 1);
  EXPECT_EQ(perf_[0].status, TSR_STATUS_SUCCESS) << perf_[0].reason;
  EXPECT_STREQ(perf_[0].kernel_name, "conv_fwd_naive");
  EXPECT_GE(perf_[0].time_ms, 0.0f);
  EXPECT_FALSE(runs().empty()) << "find runs the kernel to time it";
}

// The fuzzer's finding on a device whose size the host knows: a y whose strides span more than
// the whole device is refused up front, naming y_desc, and the allocator is never asked.
TEST_F(FakeDeviceFind, refuses_a_y_larger_than_the_device_before_asking_its_allocator) {
  const int64_t far = int64_t(1) << 28;  // elements between channels: 3 GiB from first to last
  tessera::tensor_desc huge_y(TSR_DATA_FLOAT, {1, 4, 8, 8}, {4 * far, far, 8, 1});
  const size_t span = huge_y.size_in_bytes();
  ASSERT_GT(span, size_t(1) << 30);
  EXPECT_TRUE(tessera::testing::fails_with(
      find(huge_y, dy_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
      {"tsrFindConvolutionForwardAlgorithm: y_desc spans " + std::to_string(span) + " bytes",
       "more than the device's 1073741824 bytes of memory", "scratch y"}));
  EXPECT_EQ(returned_count_, -7);
  EXPECT_TRUE(perf_untouched()) << "perf was written";
  EXPECT_TRUE(runs().empty()) << "nothing may run";
}

// A y that fits the device but not what is free now is the allocator's to refuse: a runtime
// shortage (EXECUTION_FAILED_OUT_OF_MEMORY with the byte count), not a bad parameter.
TEST_F(FakeDeviceFind, a_y_that_fits_the_device_but_not_its_free_memory_is_out_of_memory) {
  const size_t y_bytes = packed_y_.size_in_bytes();
  // The device shrinks to exactly y's size; x and w already take part of it.
  setenv("FAKEDEV_TOTAL_MEMORY", std::to_string(y_bytes).c_str(), 1);
  EXPECT_TRUE(tessera::testing::fails_with(
      find(packed_y_, dy_), TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY,
      {"tsrFindConvolutionForwardAlgorithm: allocating a " + std::to_string(y_bytes) + "-byte scratch y"}));
  EXPECT_EQ(returned_count_, -7);
  EXPECT_TRUE(perf_untouched()) << "perf was written";
  EXPECT_TRUE(runs().empty()) << "nothing may run";
}

TEST_F(FakeDevice, setters_name_bad_values) {
  EXPECT_EQ(tsrSetTuningMode(h_, static_cast<tsrTuningMode_t>(7)), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  EXPECT_NE(tessera::testing::last_error().find("tsrSetTuningMode: mode 7"), std::string::npos);
  EXPECT_EQ(tsrSetFallback(h_, -1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  EXPECT_EQ(tsrSetCrossCheck(h_, static_cast<tsrCrossCheckMode_t>(3)), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
  EXPECT_EQ(tsrSetTuningMode(nullptr, TSR_TUNING_HEURISTIC), TSR_STATUS_BAD_PARAM_NULL_POINTER);
  tsrTuningMode_t m = TSR_TUNING_ALWAYS;
  ASSERT_EQ(tsrGetTuningMode(h_, &m), TSR_STATUS_SUCCESS);
  EXPECT_EQ(m, TSR_TUNING_HEURISTIC);
}

// ---- tuning remembered across processes --------------------------------------------------------

struct worker_result {
  int exit_code = -1;
  std::vector<std::string> runs;
};

// Runs the worker (one relu call in `mode`) in a fresh process with the given environment.
worker_result run_worker(const std::string& mode, const std::string& db,
                         const std::vector<std::string>& extra_env = {}) {
  const std::string log = db + ".runs";
  fs::remove(log);
  const pid_t pid = ::fork();
  if (pid == 0) {
    setenv("TESSERA_TUNING_DB", db.c_str(), 1);
    setenv("FAKEDEV_RUN_LOG", log.c_str(), 1);
    for (const std::string& kv : extra_env) {
      const size_t eq = kv.find('=');
      setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
    std::string exe = TESSERA_SELECTION_POLICY_WORKER;
    std::vector<char*> argv = {exe.data(), const_cast<char*>(mode.c_str()), nullptr};
    ::execv(exe.c_str(), argv.data());
    _exit(127);
  }
  worker_result r;
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  for (std::string line; std::getline(f, line);) r.runs.push_back(line);
  return r;
}

class TuningAcrossProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (fs::temp_directory_path() / ("tessera_policy_" + std::to_string(::getpid()) + ".db")).string();
    fs::remove(db_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm", ".runs"}) fs::remove(db_ + suffix);
  }
  std::string db_;
};

TEST_F(TuningAcrossProcesses, a_tuned_winner_is_used_by_the_next_process_without_measuring) {
  worker_result heuristic = run_worker("heuristic", db_);
  ASSERT_EQ(heuristic.exit_code, 0);
  EXPECT_EQ(heuristic.runs, std::vector<std::string>{"relu_slow"});

  worker_result database_empty = run_worker("database", db_);
  ASSERT_EQ(database_empty.exit_code, 0);
  EXPECT_EQ(database_empty.runs, std::vector<std::string>{"relu_slow"}) << "nothing tuned yet: the heuristic";

  worker_result tuned = run_worker("tune", db_);
  ASSERT_EQ(tuned.exit_code, 0);
  ASSERT_GT(tuned.runs.size(), 3u) << "tuning measures every kernel";
  EXPECT_EQ(tuned.runs.back(), "relu_fast") << "the call runs the fastest";

  worker_result remembered = run_worker("database", db_);
  ASSERT_EQ(remembered.exit_code, 0);
  EXPECT_EQ(remembered.runs, std::vector<std::string>{"relu_fast"}) << "read from the database, nothing measured";

  worker_result tune_again = run_worker("tune", db_);
  EXPECT_EQ(tune_again.runs, std::vector<std::string>{"relu_fast"}) << "tune mode measures only what is not stored";
}

TEST_F(TuningAcrossProcesses, entries_of_another_plugin_version_or_device_are_not_trusted) {
  ASSERT_EQ(run_worker("tune", db_).exit_code, 0);
  EXPECT_EQ(run_worker("database", db_, {"FAKEDEV_VERSION=2.0"}).runs, std::vector<std::string>{"relu_slow"});
  EXPECT_EQ(run_worker("database", db_, {"FAKEDEV_FINGERPRINT=fake:other-device"}).runs,
            std::vector<std::string>{"relu_slow"});
  EXPECT_EQ(run_worker("database", db_).runs, std::vector<std::string>{"relu_fast"});
}

TEST_F(TuningAcrossProcesses, the_environment_sets_the_mode_of_new_handles) {
  ASSERT_EQ(run_worker("environment", db_, {"TESSERA_TUNING=tune"}).exit_code, 0);
  EXPECT_EQ(run_worker("environment", db_, {"TESSERA_TUNING=heuristic"}).runs,
            std::vector<std::string>{"relu_slow"});
  EXPECT_EQ(run_worker("environment", db_, {"TESSERA_TUNING=database"}).runs,
            std::vector<std::string>{"relu_fast"});
}

}  // namespace
