// Softmax refuses bad arguments before any kernel runs: a specific status, a message naming the
// function, the argument and the value, and the output left exactly as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <vector>

using namespace tessera::testing;

namespace {

struct SoftmaxValidation : ::testing::Test {
  tessera::handle h{TSR_DEVICE_CPU, 0};
  tessera::tensor_desc x{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 10, 3, 3}};
  std::vector<float> xs = std::vector<float>(2 * 10 * 3 * 3, 0.5f);
  std::vector<float> ys = std::vector<float>(2 * 10 * 3 * 3, 7.5f);
  tsrStatus_t forward(tsrSoftmaxAlgorithm_t a, tsrSoftmaxMode_t m, tsrTensorDescriptor_t xd,
                      const void* xp, tsrTensorDescriptor_t yd, void* yp, float alpha = 1,
                      float beta = 0, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    return tsrSoftmaxForward(h, a, m, algo, alpha, xd, xp, beta, yd, yp);
  }
  void expect_output_untouched() {
    for (float v : ys) ASSERT_EQ(v, 7.5f) << "a failed call wrote its output";
  }
};

TEST_F(SoftmaxValidation, forward_names_each_bad_argument) {
  const auto acc = TSR_SOFTMAX_ACCURATE;
  const auto ch = TSR_SOFTMAX_MODE_CHANNEL;
  EXPECT_FAILS_WITH(tsrSoftmaxForward(nullptr, acc, ch, TSR_ALGO_AUTO, 1, x, xs.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrSoftmaxForward", "handle is NULL");
  EXPECT_FAILS_WITH(forward(static_cast<tsrSoftmaxAlgorithm_t>(5), ch, x, xs.data(), x, ys.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algorithm 5 is not a tsrSoftmaxAlgorithm_t");
  EXPECT_FAILS_WITH(forward(acc, static_cast<tsrSoftmaxMode_t>(9), x, xs.data(), x, ys.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "mode 9 is not a tsrSoftmaxMode_t");
  EXPECT_FAILS_WITH(forward(acc, ch, nullptr, xs.data(), x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x_desc is NULL");
  EXPECT_FAILS_WITH(forward(acc, ch, x, nullptr, x, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "x is NULL");
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), x, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "y is NULL");
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 10, 3, 2});
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), y_wrong, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "y_desc has dims 2x10x3x2", "2x10x3x3");
  tessera::tensor_desc y_bf16(TSR_TENSOR_NCHW, TSR_DATA_BFLOAT16, {2, 10, 3, 3});
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), y_bf16, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "y_desc has data type bf16");
  tessera::tensor_desc one_d(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {10});
  EXPECT_FAILS_WITH(forward(acc, ch, one_d, xs.data(), one_d, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "x_desc has 1 dims, expected 2 or more");
  tessera::tensor_desc x_int(TSR_TENSOR_NCHW, TSR_DATA_INT32, {2, 10, 3, 3});
  EXPECT_FAILS_WITH(forward(acc, ch, x_int, xs.data(), x_int, ys.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "x_desc has data type s32");
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), x, ys.data(), INFINITY, 0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "alpha is not finite");
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), x, ys.data(), 1, NAN),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "beta is not finite");
  EXPECT_FAILS_WITH(forward(acc, ch, x, xs.data(), x, ys.data(), 1, 0, 77777),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo 77777 is not a kernel of softmax");
  expect_output_untouched();
}

TEST_F(SoftmaxValidation, backward_names_each_bad_argument) {
  const auto lg = TSR_SOFTMAX_LOG;
  const auto in = TSR_SOFTMAX_MODE_INSTANCE;
  std::vector<float> dys(xs.size(), 1.0f);
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, nullptr, x, dys.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrSoftmaxBackward", "y is NULL");
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, xs.data(), x, nullptr, 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dy is NULL");
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, xs.data(), x, dys.data(), 0, x, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dx is NULL");
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, xs.data(), nullptr, dys.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dy_desc is NULL");
  tessera::tensor_desc wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 9, 3, 3});
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, xs.data(), wrong, dys.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dy_desc has dims 2x9x3x3");
  EXPECT_FAILS_WITH(tsrSoftmaxBackward(h, lg, in, TSR_ALGO_AUTO, 1, x, xs.data(), x, dys.data(), 0, wrong, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dx_desc has dims 2x9x3x3");
  expect_output_untouched();
}

TEST_F(SoftmaxValidation, workspace_queries_answer) {
  size_t bytes = 0;
  EXPECT_OK(tsrGetSoftmaxForwardWorkspaceSize(h, TSR_SOFTMAX_ACCURATE, TSR_SOFTMAX_MODE_CHANNEL, x,
                                              x, TSR_ALGO_AUTO, &bytes));
  EXPECT_OK(tsrGetSoftmaxBackwardWorkspaceSize(h, TSR_SOFTMAX_LOG, TSR_SOFTMAX_MODE_INSTANCE, x, x,
                                               x, TSR_ALGO_AUTO, &bytes));
  EXPECT_FAILS_WITH(tsrGetSoftmaxForwardWorkspaceSize(h, TSR_SOFTMAX_ACCURATE,
                                                      TSR_SOFTMAX_MODE_CHANNEL, x, x,
                                                      TSR_ALGO_AUTO, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "bytes is NULL");
}

}  // namespace
