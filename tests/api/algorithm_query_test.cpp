// get / find / workspace for convolution forward, on every device present: ranked candidates with
// kernel, backend, workspace and determinism; find times them without touching the caller's y;
// an explicit algorithm from the answer runs and gives the reference's result.
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>

#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class AlgorithmQuery : public ::testing::TestWithParam<tsrDeviceKind_t> {
 protected:
  void SetUp() override {
    if (tessera::device_count(GetParam()) == 0) GTEST_SKIP() << "no device of this kind";
    int kernels = 0;
    for (const auto& k : tessera::kernels(TSR_OP_CONVOLUTION_FORWARD))
      kernels += k.device_kind == GetParam();
    if (kernels == 0) GTEST_SKIP() << "no convolution kernel for this device";
    h_ = std::make_unique<tessera::handle>(GetParam(), 0);
  }
  std::unique_ptr<tessera::handle> h_;
  // A small NHWC fp32 problem every backend runs.
  tessera::tensor_desc x_{TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {2, 8, 9, 9}};
  tessera::tensor_desc w_{TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {4, 8, 3, 3}};
  tessera::tensor_desc y_{TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {2, 4, 9, 9}};
  tessera::convolution_desc conv_{{1, 1}, {1, 1}, {1, 1}, {1, 1}};
};

std::string device_name(const ::testing::TestParamInfo<tsrDeviceKind_t>& info) {
  return info.param == TSR_DEVICE_CPU ? "cpu" : "cuda";
}

}  // namespace

TEST_P(AlgorithmQuery, get_ranks_runnable_candidates_first_with_their_properties) {
  std::vector<tsrAlgoPerf_t> perf =
      tessera::get_convolution_forward_algorithms(*h_, x_, w_, conv_, y_);
  ASSERT_FALSE(perf.empty());
  EXPECT_EQ(perf[0].status, TSR_STATUS_SUCCESS) << perf[0].reason;
  bool seen_declined = false;
  for (const tsrAlgoPerf_t& p : perf) {
    EXPECT_GT(std::string(p.kernel_name).size(), 0u);
    EXPECT_GT(std::string(p.backend_name).size(), 0u);
    EXPECT_EQ(p.time_ms, -1.0f);
    if (p.status != TSR_STATUS_SUCCESS) {
      seen_declined = true;
    } else {
      EXPECT_FALSE(seen_declined) << "a runnable candidate follows a declined one";
    }
    tsrAlgo_t by_name = tessera::algo_by_name(
        TSR_OP_CONVOLUTION_FORWARD, std::string(p.backend_name) + "/" + p.kernel_name);
    EXPECT_EQ(by_name, p.algo);
  }
  size_t ws = tessera::convolution_forward_workspace_size(*h_, x_, w_, conv_, y_, perf[0].algo);
  EXPECT_EQ(ws, perf[0].workspace_size);
}

TEST_P(AlgorithmQuery, get_refuses_a_perf_array_without_struct_size) {
  tsrAlgoPerf_t perf[2] = {};
  int n = -1;
  EXPECT_FAILS_WITH(tsrGetConvolutionForwardAlgorithm(*h_, x_, w_, conv_, y_, 2, &n, perf),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "perf[0].struct_size is 0");
  EXPECT_EQ(n, -1);
  EXPECT_FAILS_WITH(tsrGetConvolutionForwardAlgorithm(*h_, x_, w_, conv_, y_, 0, &n, perf),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "requested_count is 0");
}

TEST_P(AlgorithmQuery, find_times_candidates_and_never_writes_y_and_its_choice_is_correct) {
  ref::host_tensor x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 8, 9, 9}, true);
  ref::host_tensor w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {4, 8, 3, 3}, true);
  ref::host_tensor y = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 4, 9, 9}, true);
  ref::fill_integers(x, {-4, 4, 1.0}, 7);
  ref::fill_integers(w, {-2, 2, 1.0}, 8);
  ref::fill_integers(y, {-3, 3, 1.0}, 9);
  void* dx = h_->malloc(x.byte_size());
  void* dw = h_->malloc(w.byte_size());
  void* dy = h_->malloc(y.byte_size());
  h_->copy_to_device(dx, x.pack().data(), x.byte_size());
  h_->copy_to_device(dw, w.pack().data(), w.byte_size());
  h_->copy_to_device(dy, y.pack().data(), y.byte_size());

  std::vector<tsrAlgoPerf_t> perf(8, tessera::make_algo_perf());
  int n = 0;
  ASSERT_OK(tsrFindConvolutionForwardAlgorithm(*h_, x_, dx, w_, dw, conv_, y_, dy, 8, &n,
                                               perf.data(), nullptr, 0));
  ASSERT_GT(n, 0);
  ASSERT_EQ(perf[0].status, TSR_STATUS_SUCCESS) << perf[0].reason;
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != TSR_STATUS_SUCCESS) continue;
    EXPECT_GE(perf[i].time_ms, 0.0f) << perf[i].kernel_name;
    if (i > 0 && perf[i - 1].status == TSR_STATUS_SUCCESS) {
      EXPECT_LE(perf[i - 1].time_ms, perf[i].time_ms) << "find is sorted by time";
    }
  }
  ref::host_tensor after = y;
  std::vector<uint8_t> bytes(y.byte_size());
  h_->copy_to_host(bytes.data(), dy, bytes.size());
  after.unpack(bytes.data());
  EXPECT_TRUE(ref::compare(after, y, {0, 0}).ok()) << "find wrote the caller's y";

  // Run the winner explicitly with beta = 1 and check against the reference.
  size_t ws = tessera::convolution_forward_workspace_size(*h_, x_, w_, conv_, y_, perf[0].algo);
  void* dws = ws ? h_->malloc(ws) : nullptr;
  tessera::convolution_forward(*h_, 1.0f, x_, dx, w_, dw, conv_, perf[0].algo, dws, ws, 1.0f, y_, dy);
  h_->copy_to_host(bytes.data(), dy, bytes.size());
  ref::host_tensor got = y;
  got.unpack(bytes.data());
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.x = x.desc();
  p.w = w.desc();
  p.y = y.desc();
  p.spatial_dims = 2;
  p.groups = 1;
  for (int i = 0; i < 2; ++i) {
    p.pad_before[i] = p.pad_after[i] = 1;
    p.stride[i] = p.dilation[i] = 1;
  }
  ref::host_tensor expected = y;
  std::string error;
  ASSERT_TRUE(ref::convolution_forward(p, x.data(), w.data(), 1.0, 1.0, expected.data(), &error)) << error;
  ref::compare_result r = ref::compare(got, expected, ref::conv_tolerance(TSRP_DATA_FLOAT, 72));
  EXPECT_TRUE(r.ok()) << perf[0].backend_name << "/" << perf[0].kernel_name << ": " << r.message;
  h_->free(dws);
  h_->free(dx);
  h_->free(dw);
  h_->free(dy);
}

TEST_P(AlgorithmQuery, backward_finds_time_candidates_and_never_write_their_output) {
  // Backward data: dx = conv_bwd_data(w, dy); backward filter: dw = conv_bwd_filter(x, dy). The
  // caller's dx / dw hold known values that find must leave alone.
  ref::host_tensor x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 8, 9, 9}, true);
  ref::host_tensor w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {4, 8, 3, 3}, true);
  ref::host_tensor y = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 4, 9, 9}, true);
  ref::fill_integers(x, {-4, 4, 1.0}, 17);
  ref::fill_integers(w, {-2, 2, 1.0}, 18);
  ref::fill_integers(y, {-3, 3, 1.0}, 19);
  void* dx = h_->malloc(x.byte_size());
  void* dw = h_->malloc(w.byte_size());
  void* dy = h_->malloc(y.byte_size());
  h_->copy_to_device(dx, x.pack().data(), x.byte_size());
  h_->copy_to_device(dw, w.pack().data(), w.byte_size());
  h_->copy_to_device(dy, y.pack().data(), y.byte_size());
  auto unchanged = [&](void* device, const ref::host_tensor& expected) {
    std::vector<uint8_t> bytes(expected.byte_size());
    h_->copy_to_host(bytes.data(), device, bytes.size());
    ref::host_tensor got = expected;
    got.unpack(bytes.data());
    return ref::compare(got, expected, {0, 0}).ok();
  };
  auto check_sorted = [](const std::vector<tsrAlgoPerf_t>& perf, int n) {
    ASSERT_GT(n, 0);
    ASSERT_EQ(perf[0].status, TSR_STATUS_SUCCESS) << perf[0].reason;
    for (int i = 0; i < n; ++i) {
      if (perf[i].status != TSR_STATUS_SUCCESS) continue;
      EXPECT_GE(perf[i].time_ms, 0.0f) << perf[i].kernel_name;
      if (i > 0 && perf[i - 1].status == TSR_STATUS_SUCCESS) {
        EXPECT_LE(perf[i - 1].time_ms, perf[i].time_ms);
      }
    }
  };
  std::vector<tsrAlgoPerf_t> perf(8, tessera::make_algo_perf());
  int n = 0;
  ASSERT_OK(tsrFindConvolutionBackwardDataAlgorithm(*h_, w_, dw, y_, dy, conv_, x_, dx, 8, &n, perf.data(),
                                                    nullptr, 0));
  check_sorted(perf, n);
  EXPECT_TRUE(unchanged(dx, x)) << "find wrote the caller's dx";
  ASSERT_OK(tsrFindConvolutionBackwardFilterAlgorithm(*h_, x_, dx, y_, dy, conv_, w_, dw, 8, &n, perf.data(),
                                                      nullptr, 0));
  check_sorted(perf, n);
  EXPECT_TRUE(unchanged(dw, w)) << "find wrote the caller's dw";
  EXPECT_FAILS_WITH(tsrFindConvolutionBackwardFilterAlgorithm(*h_, x_, nullptr, y_, dy, conv_, w_, dw, 8, &n,
                                                              perf.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x");
  h_->free(dx);
  h_->free(dw);
  h_->free(dy);
}

TEST_P(AlgorithmQuery, a_caller_workspace_too_small_is_refused_by_name) {
  std::vector<tsrAlgoPerf_t> perf =
      tessera::get_convolution_forward_algorithms(*h_, x_, w_, conv_, y_);
  for (const tsrAlgoPerf_t& p : perf) {
    if (p.status != TSR_STATUS_SUCCESS || p.workspace_size == 0) continue;
    void* ws = h_->malloc(1);
    EXPECT_FAILS_WITH(tsrConvolutionForward(*h_, 1, x_, ws, w_, ws, conv_, p.algo, ws, 1, 0, y_, ws),
                      TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL, "workspace too small",
                      "1 given");
    h_->free(ws);
    return;
  }
  GTEST_SKIP() << "no candidate needs a workspace here";
}

INSTANTIATE_TEST_SUITE_P(EveryDevice, AlgorithmQuery,
                         ::testing::Values(TSR_DEVICE_CPU, TSR_DEVICE_CUDA), device_name);
