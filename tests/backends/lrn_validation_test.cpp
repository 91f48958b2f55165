// LRN refuses bad arguments before any kernel runs: a specific status, a message naming the
// function, the argument and the value, and the output left exactly as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <vector>

using namespace tessera::testing;

namespace {

struct LrnValidation : ::testing::Test {
  tessera::handle h{TSR_DEVICE_CPU, 0};
  tessera::tensor_desc x{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8, 3, 3}};
  tsrLrnDescriptor_t lrn = nullptr;
  std::vector<float> xs = std::vector<float>(2 * 8 * 3 * 3, 1.0f);
  std::vector<float> ys = std::vector<float>(2 * 8 * 3 * 3, 7.5f);
  void SetUp() override { ASSERT_OK(tsrCreateLrnDescriptor(&lrn)); }
  void TearDown() override { tsrDestroyLrnDescriptor(lrn); }
  void expect_output_untouched() {
    for (float v : ys) ASSERT_EQ(v, 7.5f) << "a failed call wrote its output";
  }
};

TEST_F(LrnValidation, descriptor_starts_with_cudnn_defaults_and_checks_its_limits) {
  unsigned n = 0;
  double a = 0, b = 0, k = 0;
  ASSERT_OK(tsrGetLrnDescriptor(lrn, &n, &a, &b, &k));
  EXPECT_EQ(n, 5u);
  EXPECT_DOUBLE_EQ(a, 1e-4);
  EXPECT_DOUBLE_EQ(b, 0.75);
  EXPECT_DOUBLE_EQ(k, 2.0);
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(lrn, 0, 1e-4, 0.75, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrSetLrnDescriptor", "n is 0, expected 1 to 16");
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(lrn, 17, 1e-4, 0.75, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "n is 17");
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(lrn, 5, 1e-4, 0.001, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "beta is 0.001", "TSR_LRN_MIN_BETA");
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(lrn, 5, 1e-4, 0.75, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "k is 0", "TSR_LRN_MIN_K");
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(lrn, 5, NAN, 0.75, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "alpha is not finite");
  EXPECT_FAILS_WITH(tsrSetLrnDescriptor(nullptr, 5, 1e-4, 0.75, 2),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
  ASSERT_OK(tsrGetLrnDescriptor(lrn, &n, &a, &b, &k));
  EXPECT_EQ(n, 5u) << "a refused set changed the descriptor";
}

TEST_F(LrnValidation, forward_names_each_bad_argument) {
  auto fwd = [&](tsrTensorDescriptor_t xd, const void* xp, tsrTensorDescriptor_t yd, void* yp,
                 float alpha = 1, float beta = 0) {
    return tsrLrnCrossChannelForward(h, lrn, TSR_ALGO_AUTO, alpha, xd, xp, beta, yd, yp);
  };
  EXPECT_FAILS_WITH(tsrLrnCrossChannelForward(h, nullptr, TSR_ALGO_AUTO, 1, x, xs.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrLrnCrossChannelForward", "lrn is NULL");
  EXPECT_FAILS_WITH(fwd(x, nullptr, x, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER, "x is NULL");
  EXPECT_FAILS_WITH(fwd(x, xs.data(), x, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "y is NULL");
  EXPECT_FAILS_WITH(fwd(x, xs.data(), nullptr, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "y_desc is NULL");
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 7, 3, 3});
  EXPECT_FAILS_WITH(fwd(x, xs.data(), y_wrong, ys.data()), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "y_desc has dims 2x7x3x3", "2x8x3x3");
  tessera::tensor_desc two_d(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8});
  EXPECT_FAILS_WITH(fwd(two_d, xs.data(), two_d, ys.data()), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "x_desc has 2 dims, expected 3 to 5");
  EXPECT_FAILS_WITH(fwd(x, xs.data(), x, ys.data(), NAN, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "alpha is not finite");
  expect_output_untouched();
}

TEST_F(LrnValidation, backward_names_each_bad_argument_and_even_windows_are_declined_with_why) {
  std::vector<float> dys(xs.size(), 1.0f);
  auto bwd = [&](tsrTensorDescriptor_t dyd, const void* dyp, const void* xp, void* dxp) {
    return tsrLrnCrossChannelBackward(h, lrn, TSR_ALGO_AUTO, 1, x, ys.data(), dyd, dyp, x, xp, 0,
                                      x, dxp);
  };
  EXPECT_FAILS_WITH(bwd(x, nullptr, xs.data(), ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrLrnCrossChannelBackward", "dy is NULL");
  EXPECT_FAILS_WITH(bwd(x, dys.data(), nullptr, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "x is NULL");
  tessera::tensor_desc dy_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8, 3, 1});
  EXPECT_FAILS_WITH(bwd(dy_wrong, dys.data(), xs.data(), ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dy_desc has dims 2x8x3x1");
  ASSERT_OK(tsrSetLrnDescriptor(lrn, 4, 1e-4, 0.75, 2));
  std::vector<float> dxs(xs.size(), 7.5f);
  // The oneDNN kernel declines even windows (its window differs from cuDNN's); the refusal
  // names the reason and writes nothing.
  tsrStatus_t s = bwd(x, dys.data(), xs.data(), dxs.data());
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    EXPECT_TRUE(fails_with(s, TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, {"even window n = 4"}));
    for (float v : dxs) ASSERT_EQ(v, 7.5f) << "a refused call wrote dx";
  }
  size_t bytes = 0;
  ASSERT_OK(tsrSetLrnDescriptor(lrn, 5, 1e-4, 0.75, 2));
  EXPECT_OK(tsrGetLrnCrossChannelBackwardWorkspaceSize(h, lrn, x, x, x, x, TSR_ALGO_AUTO, &bytes));
  EXPECT_OK(tsrGetLrnCrossChannelForwardWorkspaceSize(h, lrn, x, x, TSR_ALGO_AUTO, &bytes));
  expect_output_untouched();
}

}  // namespace
