// Several GPUs in one process (issue 9): a handle per device, used from a thread per device at the
// same time, must give the results of a one-device run, leave every calling thread's current CUDA
// context as it found it, keep its memory on its own device, refuse another device's pointers
// when asked to check them, and share tuning entries exactly when the devices are identical.
// Needs two CUDA devices: with fewer every test but the ordinal check skips (CI has none; the
// device tool's nvidia-h200-x2 machine runs it through tools/gpu/device_run.sh multigpu).
//
// The current context is read through the driver API (opened at run time, so that the binary
// starts on machines without a driver): the plugin links its own CUDA runtime, so the driver's
// per-thread current context is the state that the application and Tessera share.
#include "backend_fixture.hpp"
#include "cuda_driver_api.hpp"
#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"
#include "tuning_db.hpp"

#include <tessera/tessera.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

const cuda_driver_api& driver() { return cuda_driver(); }

// The primary context of a device (the one the plugin's runtime uses), retained while alive.
struct primary_context {
  CUdevice device = 0;
  CUcontext context = nullptr;
  explicit primary_context(int ordinal) {
    const cuda_driver_api& d = driver();
    if (d.device_get(&device, ordinal) == CUDA_SUCCESS) d.retain(&context, device);
  }
  ~primary_context() {
    if (context) driver().release(device);
  }
};

struct handle_owner {
  tsrHandle_t h = nullptr;
  ~handle_owner() {
    if (h) tsrDestroy(h);
  }
};

struct conv_desc_owner {
  tsrConvolutionDescriptor_t d = nullptr;
  explicit conv_desc_owner(const tsrpConvolutionProblem& p) {
    tsrCreateConvolutionDescriptor(&d);
    tsrSetConvolutionNdDescriptor(d, p.spatial_dims, p.pad_before, p.pad_after, p.stride, p.dilation,
                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT);
  }
  ~conv_desc_owner() { tsrDestroyConvolutionDescriptor(d); }
};

// A ResNet-50 layer at batch 2, fp16 channels-last (the tensor-core path).
struct layer {
  const char* name;
  int64_t c, hw, k, r, stride, pad;
};
const layer resnet_layers[] = {
    {"stem 7x7/2 3->64", 3, 56, 64, 7, 2, 3},   {"3x3 64->64", 64, 28, 64, 3, 1, 1},
    {"1x1 64->256", 64, 28, 256, 1, 1, 0},      {"3x3/2 128->128", 128, 28, 128, 3, 2, 1},
    {"1x1 256->64", 256, 14, 64, 1, 1, 0},      {"1x1/2 256->512", 256, 14, 512, 1, 2, 0},
};

tsrpConvolutionProblem conv_problem(const layer& l) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.spatial_dims = 2;
  p.groups = 1;
  p.mode = TSRP_CROSS_CORRELATION;
  p.compute_type = TSRP_DATA_FLOAT;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    p.stride[i] = i < 2 ? l.stride : 1;
    p.dilation[i] = 1;
    p.pad_before[i] = p.pad_after[i] = i < 2 ? l.pad : 0;
  }
  const int64_t out = (l.hw + 2 * l.pad - l.r) / l.stride + 1;
  p.x = ref::host_tensor::packed(TSRP_DATA_HALF, {2, l.c, l.hw, l.hw}, true).desc();
  p.w = ref::host_tensor::packed(TSRP_DATA_HALF, {l.k, l.c, l.r, l.r}, true).desc();
  p.y = ref::host_tensor::packed(TSRP_DATA_HALF, {2, l.k, out, out}, true).desc();
  return p;
}

// One workload: its inputs on the host, the naive reference's output, and per run the bytes a
// device produced.
struct workload {
  std::string name;
  tsrpConvolutionProblem problem{};
  ref::host_tensor x, w, expected;
  workload(const layer& l, uint32_t seed)
      : name(l.name), problem(conv_problem(l)), x(problem.x), w(problem.w), expected(problem.y) {
    ref::fill_integers(x, ref::fill_spec{-2, 2, 1.0}, seed);
    ref::fill_integers(w, ref::fill_spec{-1, 1, 1.0}, seed + 1);
    std::string error;
    if (!ref::convolution_forward(problem, x.data(), w.data(), 1.0, 0.0, expected.data(), &error))
      throw std::runtime_error(name + ": reference failed: " + error);
    expected.round_to_data_type();
  }
};

std::vector<std::unique_ptr<workload>>& workloads() {
  static std::vector<std::unique_ptr<workload>> all = [] {
    std::vector<std::unique_ptr<workload>> out;
    uint32_t seed = 100;
    for (const layer& l : resnet_layers) out.push_back(std::make_unique<workload>(l, seed += 10));
    return out;
  }();
  return all;
}

// What one thread saw: the outputs' bytes per workload and run, and every failure as text (gtest
// assertions are not thread-safe on every platform, so threads report and the test asserts).
struct thread_report {
  std::vector<std::vector<std::vector<uint8_t>>> outputs;  // [workload][run]
  std::vector<std::string> failures;
};

// Runs every workload `runs` times on a handle of `ordinal`, from a thread whose current context
// is `current` (nullptr: none), checking that context before and after every Tessera call.
thread_report run_workloads(int ordinal, CUcontext current, int runs) {
  thread_report report;
  auto fail = [&](const std::string& what) { report.failures.push_back("device " + std::to_string(ordinal) + ": " + what); };
  const cuda_driver_api& d = driver();
  if (d.set_current(current) != CUDA_SUCCESS) {
    fail("cuCtxSetCurrent failed");
    return report;
  }
  auto check_current = [&](const char* when, const std::string& call) {
    CUcontext now = nullptr;
    d.get_current(&now);
    if (now != current) fail(call + ": the thread's current context changed (" + when + ")");
  };
  handle_owner owner;
  check_current("before", "tsrCreate");
  if (tsrCreate(TSR_DEVICE_CUDA, ordinal, &owner.h) != TSR_STATUS_SUCCESS) {
    fail("tsrCreate: " + last_error());
    return report;
  }
  check_current("after", "tsrCreate");
  tsrHandle_t h = owner.h;
  tsrSetTuningMode(h, TSR_TUNING_HEURISTIC);  // the same choice on identical devices
  for (const auto& wl : workloads()) {
    const tsrpConvolutionProblem& p = wl->problem;
    desc_owner xd(p.x), wd(p.w), yd(p.y);
    conv_desc_owner cd(p);
    device_buffer bx(h, wl->x.byte_size()), bw(h, wl->w.byte_size()), by(h, wl->expected.byte_size());
    if (!bx.p || !bw.p || !by.p) {
      fail(wl->name + ": tsrMalloc failed");
      report.outputs.emplace_back();
      continue;
    }
    // The memory is the handle's device's.
    int where = -1;
    if (d.pointer_attribute(&where, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(by.p)) !=
            CUDA_SUCCESS ||
        where != ordinal)
      fail(wl->name + ": tsrMalloc gave memory of device " + std::to_string(where));
    bx.upload(wl->x);
    bw.upload(wl->w);
    size_t ws_size = 0;
    tsrGetConvolutionForwardWorkspaceSize(h, xd, wd, cd.d, yd, TSR_ALGO_AUTO, &ws_size);
    device_buffer ws(h, ws_size);
    std::vector<std::vector<uint8_t>> per_run;
    for (int run = 0; run < runs; ++run) {
      check_current("before", "tsrConvolutionForward " + wl->name);
      const tsrStatus_t s = tsrConvolutionForward(h, 1.0f, xd, bx.p, wd, bw.p, cd.d, TSR_ALGO_AUTO, ws.p, ws_size,
                                                  0.0f, yd, by.p);
      check_current("after", "tsrConvolutionForward " + wl->name);
      if (s != TSR_STATUS_SUCCESS) {
        fail(wl->name + ": " + last_error());
        break;
      }
      std::vector<uint8_t> bytes(wl->expected.byte_size());
      tsrMemcpyDeviceToHost(h, bytes.data(), by.p, bytes.size());
      check_current("after", "tsrMemcpyDeviceToHost");
      per_run.push_back(std::move(bytes));
    }
    // Against the naive reference, as the cross-backend test judges every backend.
    if (!per_run.empty()) {
      ref::host_tensor got(p.y);
      got.unpack(per_run.back().data());
      const ref::compare_result r =
          ref::compare(got, wl->expected, ref::conv_tolerance(TSRP_DATA_HALF, p.w.dims[1] * p.w.dims[2] * p.w.dims[3]));
      if (!r.ok()) fail(wl->name + ": against the reference: " + r.message);
    }
    report.outputs.push_back(std::move(per_run));
  }
  check_current("before", "tsrDestroy");
  return report;
}

int cuda_device_count() {
  int n = 0;
  return tsrGetDeviceCount(TSR_DEVICE_CUDA, &n) == TSR_STATUS_SUCCESS ? n : 0;
}

bool two_devices(std::string* why) {
  const int n = cuda_device_count();
  if (n < 2) {
    *why = "needs two CUDA devices; " + std::to_string(n) + " present";
    return false;
  }
  if (!driver().complete() || driver().init(0) != CUDA_SUCCESS) {
    *why = "the CUDA driver API could not be opened";
    return false;
  }
  return true;
}

TEST(MultiDevice, an_ordinal_past_the_last_device_names_it_and_the_count) {
  const int n = cuda_device_count();
  if (n == 0) GTEST_SKIP() << "no CUDA device";
  tsrHandle_t h = nullptr;
  EXPECT_FAILS_WITH(tsrCreate(TSR_DEVICE_CUDA, n, &h), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "ordinal " + std::to_string(n) + " out of range: " + std::to_string(n) + " cuda device(s) present");
  EXPECT_EQ(h, nullptr);
}

TEST(MultiDevice, two_devices_from_two_threads_match_the_one_device_run) {
  std::string why;
  if (!two_devices(&why)) GTEST_SKIP() << why;
  primary_context ctx0(0), ctx1(1);
  ASSERT_TRUE(ctx0.context && ctx1.context);
  constexpr int runs = 3;
  // The one-device run: device 0 alone, from this thread.
  const thread_report alone = run_workloads(0, ctx0.context, 1);
  for (const std::string& f : alone.failures) ADD_FAILURE() << f;
  ASSERT_EQ(alone.outputs.size(), workloads().size());
  // Both devices at once. The device-1 thread keeps device 0's context current: every call must
  // switch to its own device and switch back.
  thread_report on0, on1;
  std::thread t0([&] { on0 = run_workloads(0, ctx0.context, runs); });
  std::thread t1([&] { on1 = run_workloads(1, ctx0.context, runs); });
  t0.join();
  t1.join();
  for (const thread_report* r : {&on0, &on1}) {
    for (const std::string& f : r->failures) ADD_FAILURE() << f;
    ASSERT_EQ(r->outputs.size(), workloads().size());
    for (size_t w = 0; w < workloads().size(); ++w) {
      ASSERT_EQ(r->outputs[w].size(), static_cast<size_t>(runs)) << workloads()[w]->name;
      ASSERT_EQ(alone.outputs[w].size(), 1u) << workloads()[w]->name;
      for (int run = 0; run < runs; ++run)
        EXPECT_TRUE(r->outputs[w][run] == alone.outputs[w][0])
            << workloads()[w]->name << ", run " << run << ": differs from the one-device run";
    }
  }
  std::printf("%zu ResNet-50 layers x %d runs on each of two devices at once: bitwise equal to the one-device run\n",
              workloads().size(), runs);
}

TEST(MultiDevice, pointer_checks_refuse_memory_of_the_other_device) {
  std::string why;
  if (!two_devices(&why)) GTEST_SKIP() << why;
  handle_owner h0, h1;
  ASSERT_OK(tsrCreate(TSR_DEVICE_CUDA, 0, &h0.h));
  ASSERT_OK(tsrCreate(TSR_DEVICE_CUDA, 1, &h1.h));
  const int64_t dims[4] = {1, 2, 3, 4};
  tsrTensorDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreateTensorDescriptor(&d));
  ASSERT_OK(tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, TSR_DATA_FLOAT, 4, dims));
  device_buffer x1(h1.h, 24 * sizeof(float)), y0(h0.h, 24 * sizeof(float)), y1(h1.h, 24 * sizeof(float));
  ASSERT_TRUE(x1.p && y0.p && y1.p);
  std::vector<float> ones(24, 1.0f), sevens(24, 7.0f), got(24, 0.0f);
  ASSERT_OK(tsrMemcpyHostToDevice(h1.h, x1.p, ones.data(), 24 * sizeof(float)));
  ASSERT_OK(tsrMemcpyHostToDevice(h0.h, y0.p, sevens.data(), 24 * sizeof(float)));
  tsrActivationDescriptor_t relu = nullptr;
  ASSERT_OK(tsrCreateActivationDescriptor(&relu));
  ASSERT_OK(tsrSetActivationDescriptor(relu, TSR_ACTIVATION_RELU, 0.0));
  ASSERT_OK(tsrSetPointerChecks(h1.h, 1));
  ASSERT_OK(tsrActivationForward(h1.h, relu, TSR_ALGO_AUTO, 1.0f, d, x1.p, 0.0f, d, y1.p));
  EXPECT_FAILS_WITH(tsrActivationForward(h1.h, relu, TSR_ALGO_AUTO, 1.0f, d, x1.p, 0.0f, d, y0.p),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "y is memory of cuda device 0, but the handle is on cuda device 1");
  ASSERT_OK(tsrMemcpyDeviceToHost(h0.h, got.data(), y0.p, 24 * sizeof(float)));
  EXPECT_EQ(got, sevens) << "a refused call must not write its output";
  tsrDestroyActivationDescriptor(relu);
  tsrDestroyTensorDescriptor(d);
}

// Tuning on device 0 stores entries under its fingerprint; device 1 then finds them when the
// two GPUs are identical (no new entry) and stores its own when they are not.
TEST(MultiDevice, tuning_entries_are_shared_exactly_between_identical_devices) {
  std::string why;
  if (!two_devices(&why)) GTEST_SKIP() << why;
  const char* db_path = std::getenv("TESSERA_TUNING_DB");
  if (!db_path || std::string(db_path) == "off")
    GTEST_SKIP() << "needs TESSERA_TUNING_DB set to a file (tools/gpu/device_run.sh multigpu sets one)";
  char name0[128] = {0}, name1[128] = {0};
  primary_context ctx0(0), ctx1(1);
  driver().device_name(name0, sizeof(name0), ctx0.device);
  driver().device_name(name1, sizeof(name1), ctx1.device);
  const workload& wl = *workloads()[1];
  auto tune_on = [&](int ordinal) {
    handle_owner owner;
    ASSERT_OK(tsrCreate(TSR_DEVICE_CUDA, ordinal, &owner.h));
    ASSERT_OK(tsrSetTuningMode(owner.h, TSR_TUNING_DATABASE_OR_TUNE));
    const tsrpConvolutionProblem& p = wl.problem;
    desc_owner xd(p.x), wd(p.w), yd(p.y);
    conv_desc_owner cd(p);
    device_buffer bx(owner.h, wl.x.byte_size()), bw(owner.h, wl.w.byte_size()), by(owner.h, wl.expected.byte_size());
    bx.upload(wl.x);
    bw.upload(wl.w);
    ASSERT_OK(tsrConvolutionForward(owner.h, 1.0f, xd, bx.p, wd, bw.p, cd.d, TSR_ALGO_AUTO, nullptr, 0, 0.0f, yd,
                                    by.p));
    ASSERT_OK(tsrSynchronize(owner.h));
  };
  auto fingerprints = [&] {
    tessera::registry::tuning_db db;
    EXPECT_TRUE(db.open(db_path, ""));
    std::set<std::string> out;
    for (const auto& r : db.list(false)) out.insert(r.key.device_fingerprint);
    return out;
  };
  const size_t before = fingerprints().size();
  tune_on(0);
  const size_t after0 = fingerprints().size();
  EXPECT_GE(after0, before);
  EXPECT_GE(after0, 1u) << "tuning on device 0 stored nothing";
  tune_on(1);
  const size_t after1 = fingerprints().size();
  if (std::strcmp(name0, name1) == 0) {
    EXPECT_EQ(after1, after0) << "identical devices (" << name0 << ") must share the entry";
  } else {
    EXPECT_EQ(after1, after0 + 1) << name0 << " and " << name1 << " must not share the entry";
  }
}

}  // namespace
