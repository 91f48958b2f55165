// Pooling refuses bad arguments before any kernel runs: a specific status, a message naming the
// function, the argument and the value, and the output left exactly as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <vector>

using namespace tessera::testing;

namespace {

struct PoolingValidation : ::testing::Test {
  tessera::handle h{TSR_DEVICE_CPU, 0};
  tessera::tensor_desc x{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 5, 5}};
  tessera::tensor_desc y{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 3, 3}};
  tsrPoolingDescriptor_t pool = nullptr;
  std::vector<float> xs = std::vector<float>(2 * 3 * 5 * 5, 1.0f);
  std::vector<float> ys = std::vector<float>(2 * 3 * 3 * 3, 7.5f);
  std::vector<float> dys = std::vector<float>(2 * 3 * 3 * 3, 1.0f);
  std::vector<float> dxs = std::vector<float>(2 * 3 * 5 * 5, 7.5f);
  const int64_t window[2] = {3, 3}, pad[2] = {1, 1}, stride[2] = {2, 2};

  void SetUp() override {
    ASSERT_OK(tsrCreatePoolingDescriptor(&pool));
    ASSERT_OK(tsrSetPoolingNdDescriptor(pool, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, window,
                                        pad, pad, stride));
  }
  void TearDown() override { tsrDestroyPoolingDescriptor(pool); }
  tsrStatus_t forward(tsrTensorDescriptor_t xd, const void* xp, tsrTensorDescriptor_t yd, void* yp,
                      float alpha = 1, float beta = 0, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    return tsrPoolingForward(h, pool, algo, alpha, xd, xp, beta, yd, yp);
  }
  void expect_outputs_untouched() {
    for (float v : ys) ASSERT_EQ(v, 7.5f) << "a failed call wrote y";
    for (float v : dxs) ASSERT_EQ(v, 7.5f) << "a failed call wrote dx";
  }
};

TEST_F(PoolingValidation, descriptor_setter_names_each_bad_value) {
  tsrPoolingDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreatePoolingDescriptor(&d));
  const int64_t big_pad[2] = {3, 0}, zero[2] = {0, 0}, neg[2] = {-1, 0};
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, static_cast<tsrPoolingMode_t>(7),
                                              TSR_NOT_PROPAGATE_NAN, 2, window, pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrSetPoolingNdDescriptor", "mode 7");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, static_cast<tsrNanPropagation_t>(2),
                                              2, window, pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nan_propagation 2");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 1, window,
                                              pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "spatial_dims is 1", "expected 2 or 3");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, zero,
                                              pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "window[0] is 0");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, window,
                                              pad, pad, zero),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "stride[0] is 0");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, window,
                                              big_pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "pad_before[0] is 3", "less than window[0] = 3");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, window,
                                              pad, neg, stride),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "pad_after[0] is -1");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(d, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2, nullptr,
                                              pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "window is NULL");
  EXPECT_FAILS_WITH(tsrSetPoolingNdDescriptor(nullptr, TSR_POOLING_MAX, TSR_NOT_PROPAGATE_NAN, 2,
                                              window, pad, pad, stride),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
  // Never set: using it is refused.
  EXPECT_FAILS_WITH(tsrPoolingForward(h, d, TSR_ALGO_AUTO, 1, x, xs.data(), 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "pool was created but never set");
  tsrDestroyPoolingDescriptor(d);
  expect_outputs_untouched();
}

TEST_F(PoolingValidation, descriptor_reads_back_and_gives_the_output_dims) {
  tsrPoolingMode_t mode;
  tsrNanPropagation_t nan;
  int sd = 0;
  int64_t w[3] = {}, pb[3] = {}, pa[3] = {}, s[3] = {};
  ASSERT_OK(tsrGetPoolingNdDescriptor(pool, 3, &mode, &nan, &sd, w, pb, pa, s));
  EXPECT_EQ(mode, TSR_POOLING_MAX);
  EXPECT_EQ(nan, TSR_NOT_PROPAGATE_NAN);
  EXPECT_EQ(sd, 2);
  EXPECT_EQ(w[1], 3);
  EXPECT_EQ(pa[0], 1);
  EXPECT_EQ(s[1], 2);
  int64_t out[4] = {};
  ASSERT_OK(tsrGetPoolingNdForwardOutputDim(pool, x, 4, out));
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 3);  // (5 + 2 - 3) / 2 + 1
  EXPECT_EQ(out[3], 3);
  EXPECT_FAILS_WITH(tsrGetPoolingNdForwardOutputDim(pool, x, 5, out),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nb_dims is 5, expected 4");
  tsrPoolingDescriptor_t wide = nullptr;
  const int64_t w5[2] = {5, 5}, one[2] = {1, 1};
  ASSERT_OK(tsrCreatePoolingDescriptor(&wide));
  ASSERT_OK(tsrSetPoolingNdDescriptor(wide, TSR_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                      TSR_NOT_PROPAGATE_NAN, 2, w5, one, one, one));
  tessera::tensor_desc tiny(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 5});
  EXPECT_FAILS_WITH(tsrGetPoolingNdForwardOutputDim(wide, tiny, 4, out),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "spatial dim 0 of x_desc is 2",
                    "padded 4", "smaller than the window 5");
  tsrDestroyPoolingDescriptor(wide);
}

TEST_F(PoolingValidation, forward_names_each_null_pointer) {
  EXPECT_FAILS_WITH(tsrPoolingForward(nullptr, pool, TSR_ALGO_AUTO, 1, x, xs.data(), 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrPoolingForward", "handle is NULL");
  EXPECT_FAILS_WITH(tsrPoolingForward(h, nullptr, TSR_ALGO_AUTO, 1, x, xs.data(), 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "pool is NULL");
  EXPECT_FAILS_WITH(forward(nullptr, xs.data(), y, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "x_desc is NULL");
  EXPECT_FAILS_WITH(forward(x, nullptr, y, ys.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER, "x is NULL");
  EXPECT_FAILS_WITH(forward(x, xs.data(), y, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "y is NULL");
  expect_outputs_untouched();
}

TEST_F(PoolingValidation, forward_refuses_wrong_shapes_types_scalars_and_algos) {
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 5, 5});
  EXPECT_FAILS_WITH(forward(x, xs.data(), y_wrong, ys.data()), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "tsrPoolingForward", "y_desc has dims 2x3x5x5", "2x3x3x3");
  tessera::tensor_desc y_half(TSR_TENSOR_NCHW, TSR_DATA_HALF, {2, 3, 3, 3});
  EXPECT_FAILS_WITH(forward(x, xs.data(), y_half, ys.data()), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "y_desc has data type f16");
  tessera::tensor_desc x3(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 5});
  EXPECT_FAILS_WITH(forward(x3, xs.data(), y, ys.data()), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "x_desc has 3 dims, expected 4");
  tessera::tensor_desc x_int(TSR_TENSOR_NCHW, TSR_DATA_INT8, {2, 3, 5, 5});
  EXPECT_FAILS_WITH(forward(x_int, xs.data(), y, ys.data()), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "x_desc has data type s8");
  EXPECT_FAILS_WITH(forward(x, xs.data(), y, ys.data(), NAN, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "alpha is not finite");
  EXPECT_FAILS_WITH(forward(x, xs.data(), y, ys.data(), 1, INFINITY),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "beta is not finite");
  EXPECT_FAILS_WITH(forward(x, xs.data(), y, ys.data(), 1, 0, 100000),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo 100000 is not a kernel of pooling");
  tessera::tensor_desc unset;
  EXPECT_FAILS_WITH(forward(unset, xs.data(), y, ys.data()), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "x_desc was created but never set");
  expect_outputs_untouched();
}

TEST_F(PoolingValidation, backward_names_each_bad_argument) {
  auto backward = [&](tsrTensorDescriptor_t yd, const void* yp, tsrTensorDescriptor_t dyd,
                      const void* dyp, tsrTensorDescriptor_t xd, const void* xp,
                      tsrTensorDescriptor_t dxd, void* dxp) {
    return tsrPoolingBackward(h, pool, TSR_ALGO_AUTO, 1, yd, yp, dyd, dyp, xd, xp, 0, dxd, dxp);
  };
  EXPECT_FAILS_WITH(backward(y, nullptr, y, dys.data(), x, xs.data(), x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrPoolingBackward", "y is NULL");
  EXPECT_FAILS_WITH(backward(y, ys.data(), y, nullptr, x, xs.data(), x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dy is NULL");
  EXPECT_FAILS_WITH(backward(y, ys.data(), y, dys.data(), x, nullptr, x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x is NULL");
  EXPECT_FAILS_WITH(backward(y, ys.data(), y, dys.data(), x, xs.data(), x, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dx is NULL");
  EXPECT_FAILS_WITH(backward(y, ys.data(), nullptr, dys.data(), x, xs.data(), x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dy_desc is NULL");
  tessera::tensor_desc dy_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 3, 4});
  EXPECT_FAILS_WITH(backward(y, ys.data(), dy_wrong, dys.data(), x, xs.data(), x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dy_desc has dims 2x3x3x4");
  tessera::tensor_desc dx_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 5, 4});
  EXPECT_FAILS_WITH(backward(y, ys.data(), y, dys.data(), x, xs.data(), dx_wrong, dxs.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dx_desc has dims 2x3x5x4");
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 2, 2});
  EXPECT_FAILS_WITH(backward(y_wrong, ys.data(), y, dys.data(), x, xs.data(), x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "y_desc has dims 2x3x2x2");
  EXPECT_FAILS_WITH(tsrPoolingBackward(h, pool, TSR_ALGO_AUTO, 1, y, ys.data(), y, dys.data(), x,
                                       xs.data(), NAN, x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "beta is not finite");
  expect_outputs_untouched();
}

TEST_F(PoolingValidation, workspace_queries_answer_and_check_their_arguments) {
  size_t bytes = 1;
  EXPECT_OK(tsrGetPoolingForwardWorkspaceSize(h, pool, x, y, TSR_ALGO_AUTO, &bytes));
  EXPECT_OK(tsrGetPoolingBackwardWorkspaceSize(h, pool, y, y, x, x, TSR_ALGO_AUTO, &bytes));
  EXPECT_GT(bytes, 0u) << "max backward recomputes the argmax in the workspace";
  EXPECT_FAILS_WITH(tsrGetPoolingForwardWorkspaceSize(h, pool, x, y, TSR_ALGO_AUTO, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "bytes is NULL");
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 4, 4});
  EXPECT_FAILS_WITH(tsrGetPoolingForwardWorkspaceSize(h, pool, x, y_wrong, TSR_ALGO_AUTO, &bytes),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrGetPoolingForwardWorkspaceSize",
                    "y_desc has dims 2x3x4x4");
}

TEST_F(PoolingValidation, a_workspace_limit_below_the_need_is_refused_without_writing) {
  ASSERT_OK(tsrSetWorkspaceLimit(h, 16));
  EXPECT_FAILS_WITH(tsrPoolingBackward(h, pool, TSR_ALGO_AUTO, 1, y, ys.data(), y, dys.data(), x,
                                       xs.data(), 0, x, dxs.data()),
                    TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL, "tsrPoolingBackward");
  expect_outputs_untouched();
}

}  // namespace

// The C++ wrapper: RAII descriptors and calls that throw tessera::error with the C message.
TEST(PoolingCppWrapper, runs_a_max_pool_and_throws_the_c_message_on_bad_shapes) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::pooling_desc pool(TSR_POOLING_MAX, {2, 2}, {0, 0}, {0, 0}, {2, 2});
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 1, 2, 2});
  std::vector<int64_t> out = pool.output_dims(x, 4);
  ASSERT_EQ(out, (std::vector<int64_t>{1, 1, 1, 1}));
  tessera::tensor_desc y(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, out);
  const float xs[4] = {1, 4, 3, 2};
  float ys[1] = {0};
  tessera::pooling_forward(h, pool, TSR_ALGO_AUTO, 1.0f, x, xs, 0.0f, y, ys);
  EXPECT_EQ(ys[0], 4.0f);
  try {
    tessera::pooling_forward(h, pool, TSR_ALGO_AUTO, 1.0f, x, xs, 0.0f, x, ys);
    ADD_FAILURE() << "no exception";
  } catch (const tessera::error& e) {
    EXPECT_EQ(e.status(), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH);
    EXPECT_NE(std::string(e.what()).find("y_desc has dims 1x1x2x2"), std::string::npos) << e.what();
  }
  tessera::lrn_desc lrn;
  float ls[4] = {0, 0, 0, 0};
  tessera::lrn_cross_channel_forward(h, lrn, TSR_ALGO_AUTO, 1.0f, x, xs, 0.0f, x, ls);
  EXPECT_NEAR(ls[1], 4.0 / std::pow(2.0 + 1e-4 / 5 * 16, 0.75), 1e-5);
}
