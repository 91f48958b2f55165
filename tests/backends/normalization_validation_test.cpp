// Argument validation of the normalization entry points: each bad argument gives its own status
// and a message naming the function, the argument and the value, and leaves the outputs as they
// were (checked on poisoned host-side copies after each refused call).
#include "backend_fixture.hpp"
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tessera::testing;

namespace {

class NormValidation : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &h_)); }
  void TearDown() override { tsrDestroy(h_); }
  tsrHandle_t h_ = nullptr;
  // Host memory is the CPU device's memory: plain vectors serve as tensors.
  std::vector<float> x_ = std::vector<float>(2 * 3 * 4 * 5, 1.0f);
  std::vector<float> y_ = std::vector<float>(2 * 3 * 4 * 5, 7.0f);
  std::vector<float> p1_ = std::vector<float>(3 * 4 * 5, 1.0f), p2_ = p1_, p3_ = p1_, p4_ = p1_;
  tessera::tensor_desc x_desc_{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 4, 5}};
  tessera::tensor_desc param_desc_{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 3, 1, 1}};
  bool y_untouched() const {
    for (float v : y_)
      if (v != 7.0f) return false;
    return true;
  }
  tsrStatus_t training(tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t param_desc,
                       double eps = 1e-5, double factor = 0.1, float alpha = 1, void* rm = nullptr,
                       int mode = TSR_BATCHNORM_SPATIAL, const void* x = nullptr) {
    return tsrBatchNormalizationForwardTraining(
        h_, static_cast<tsrBatchNormMode_t>(mode), nullptr, TSR_ALGO_AUTO, alpha, x_desc,
        x ? x : x_.data(), param_desc, p1_.data(), p2_.data(), factor, eps, nullptr, 0, 0.0f,
        x_desc_, y_.data(), rm, nullptr, nullptr, nullptr);
  }
};

TEST_F(NormValidation, batch_norm_training_runs_with_good_arguments) {
  ASSERT_OK(training(x_desc_, param_desc_));
  EXPECT_FALSE(y_untouched());
}

TEST_F(NormValidation, batch_norm_rejects_a_param_desc_of_the_wrong_shape_naming_both_shapes) {
  tessera::tensor_desc bad(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 4, 1, 1});
  EXPECT_FAILS_WITH(training(x_desc_, bad), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "tsrBatchNormalizationForwardTraining", "param_desc", "1x4x1x1", "1x3x1x1");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_rejects_half_parameters) {
  tessera::tensor_desc bad(TSR_TENSOR_NCHW, TSR_DATA_HALF, {1, 3, 1, 1});
  EXPECT_FAILS_WITH(training(x_desc_, bad), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "param_desc", "f16",
                    "expected f32");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_rejects_non_positive_epsilon_and_bad_factor) {
  EXPECT_FAILS_WITH(training(x_desc_, param_desc_, 0.0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "epsilon is 0");
  EXPECT_FAILS_WITH(training(x_desc_, param_desc_, 1e-5, 1.5), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "exponential_average_factor is 1.5");
  EXPECT_FAILS_WITH(training(x_desc_, param_desc_, 1e-5, 0.1, NAN), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "alpha is not finite");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_wants_running_statistics_in_pairs) {
  EXPECT_FAILS_WITH(training(x_desc_, param_desc_, 1e-5, 0.1, 1, p3_.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "running_variance is NULL", "running_mean");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_rejects_bad_mode_null_x_and_an_unset_descriptor) {
  EXPECT_FAILS_WITH(training(x_desc_, param_desc_, 1e-5, 0.1, 1, nullptr, 7),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "mode 7");
  tsrTensorDescriptor_t unset = nullptr;
  ASSERT_OK(tsrCreateTensorDescriptor(&unset));
  EXPECT_FAILS_WITH(training(unset, param_desc_), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "x_desc");
  tsrDestroyTensorDescriptor(unset);
  EXPECT_FAILS_WITH(tsrBatchNormalizationForwardTraining(h_, TSR_BATCHNORM_SPATIAL, nullptr, TSR_ALGO_AUTO, 1,
                                                         x_desc_, nullptr, param_desc_, p1_.data(),
                                                         p2_.data(), 0.1, 1e-5, nullptr, 0, 0, x_desc_,
                                                         y_.data(), nullptr, nullptr, nullptr, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x is NULL");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_refuses_activations_it_does_not_fuse) {
  tessera::activation_desc tanh_act(TSR_ACTIVATION_TANH);
  EXPECT_FAILS_WITH(tsrBatchNormalizationForwardInference(h_, TSR_BATCHNORM_SPATIAL, tanh_act, TSR_ALGO_AUTO, 1,
                                                          x_desc_, x_.data(), param_desc_, p1_.data(),
                                                          p2_.data(), p3_.data(), p4_.data(), 1e-5,
                                                          nullptr, 0, 0, x_desc_, y_.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "act has mode 3", "TSR_ACTIVATION_RELU");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, batch_norm_backward_needs_y_with_relu_and_the_saved_statistics) {
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  std::vector<float> dx(y_);
  EXPECT_FAILS_WITH(tsrBatchNormalizationBackward(h_, TSR_BATCHNORM_SPATIAL, relu, TSR_ALGO_AUTO, 1, 1, x_desc_,
                                                  x_.data(), x_desc_, nullptr, x_desc_, x_.data(), param_desc_,
                                                  p1_.data(), p2_.data(), p3_.data(), 1e-5, nullptr, 0, 0,
                                                  x_desc_, y_.data(), 0, p4_.data(), p4_.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrBatchNormalizationBackward", "y is NULL");
  EXPECT_FAILS_WITH(tsrBatchNormalizationBackward(h_, TSR_BATCHNORM_SPATIAL, nullptr, TSR_ALGO_AUTO, 1, 1, x_desc_,
                                                  x_.data(), nullptr, nullptr, x_desc_, x_.data(), param_desc_,
                                                  p1_.data(), nullptr, p3_.data(), 1e-5, nullptr, 0, 0,
                                                  x_desc_, y_.data(), 0, p4_.data(), p4_.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "saved_mean is NULL");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, derive_gives_per_channel_and_per_activation_layouts) {
  tessera::tensor_desc d = tessera::derive_batch_norm_desc(x_desc_, TSR_BATCHNORM_PER_ACTIVATION);
  tsrDataType_t dt;
  int n = 0;
  int64_t dims[8], strides[8];
  ASSERT_OK(tsrGetTensorNdDescriptor(d, 8, &dt, &n, dims, strides));
  EXPECT_EQ(dt, TSR_DATA_FLOAT);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(std::vector<int64_t>(dims, dims + 4), (std::vector<int64_t>{1, 3, 4, 5}));
  tessera::tensor_desc one_d(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {7});
  tessera::tensor_desc out;
  EXPECT_FAILS_WITH(tsrDeriveBatchNormTensorDescriptor(one_d, TSR_BATCHNORM_SPATIAL, out),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "x_desc has 1 dims", "2 to 5");
}

TEST_F(NormValidation, layer_norm_checks_axis_scale_and_stats_descriptors) {
  tessera::tensor_desc scale(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {4, 5});
  tessera::tensor_desc stats(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3});
  const auto forward = [&](int axis, tsrTensorDescriptor_t sd, tsrTensorDescriptor_t td, double eps) {
    return tsrLayerNormalizationForward(h_, TSR_ALGO_AUTO, axis, eps, x_desc_, x_.data(), sd, p1_.data(),
                                        p2_.data(), td, nullptr, 0, x_desc_, y_.data(), p3_.data(), p4_.data());
  };
  EXPECT_FAILS_WITH(forward(4, scale, stats, 1e-5), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrLayerNormalizationForward", "begin_norm_axis is 4", "1 to 3");
  EXPECT_FAILS_WITH(forward(1, scale, stats, 1e-5), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "scale_desc",
                    "4x5", "expected 3x4x5");
  EXPECT_FAILS_WITH(forward(2, scale, scale, 1e-5), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "stats_desc",
                    "expected 2x3");
  EXPECT_FAILS_WITH(forward(2, scale, stats, -1.0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "epsilon is -1");
  EXPECT_FAILS_WITH(forward(2, nullptr, stats, 1e-5), TSR_STATUS_BAD_PARAM_NULL_POINTER, "scale_desc is NULL");
  EXPECT_TRUE(y_untouched());
  ASSERT_OK(forward(2, scale, stats, 1e-5));
  EXPECT_FALSE(y_untouched());
}

TEST_F(NormValidation, layer_norm_rejects_strided_scale_and_mismatched_dy) {
  tessera::tensor_desc strided(TSR_DATA_FLOAT, {4, 5}, {10, 2});
  tessera::tensor_desc stats(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3});
  EXPECT_FAILS_WITH(tsrLayerNormalizationForward(h_, TSR_ALGO_AUTO, 2, 1e-5, x_desc_, x_.data(), strided,
                                                 p1_.data(), nullptr, stats, nullptr, 0, x_desc_, y_.data(),
                                                 nullptr, nullptr),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "scale_desc is not packed");
  tessera::tensor_desc other(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 4, 6});
  EXPECT_FAILS_WITH(tsrLayerNormalizationBackward(h_, TSR_ALGO_AUTO, 2, 1e-5, x_desc_, x_.data(), other,
                                                  x_.data(), nullptr, nullptr, stats, p1_.data(), p2_.data(),
                                                  nullptr, 0, x_desc_, y_.data(), nullptr, nullptr),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "dy_desc has dims 2x3x4x6");
  EXPECT_TRUE(y_untouched());
}

TEST_F(NormValidation, rms_norm_needs_scale_and_floating_data) {
  tessera::tensor_desc scale(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {5});
  EXPECT_FAILS_WITH(tsrRmsNormalizationForward(h_, TSR_ALGO_AUTO, 3, 1e-5, x_desc_, x_.data(), scale, nullptr,
                                               nullptr, nullptr, 0, x_desc_, y_.data(), nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrRmsNormalizationForward", "scale is NULL");
  tessera::tensor_desc ints(TSR_TENSOR_NCHW, TSR_DATA_INT32, {2, 3, 4, 5});
  EXPECT_FAILS_WITH(tsrRmsNormalizationForward(h_, TSR_ALGO_AUTO, 3, 1e-5, ints, x_.data(), scale, p1_.data(),
                                               nullptr, nullptr, 0, x_desc_, y_.data(), nullptr),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "x_desc has data type s32");
  EXPECT_FAILS_WITH(tsrRmsNormalizationForward(h_, TSR_ALGO_AUTO, 3, 1e-5, x_desc_, x_.data(), scale, p1_.data(),
                                               nullptr, nullptr, 4, x_desc_, y_.data(), nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL but workspace_size is 4");
  EXPECT_TRUE(y_untouched());
  ASSERT_OK(tsrRmsNormalizationForward(h_, TSR_ALGO_AUTO, 3, 1e-5, x_desc_, x_.data(), scale, p1_.data(),
                                       nullptr, nullptr, 0, x_desc_, y_.data(), nullptr));
  EXPECT_FALSE(y_untouched());
}

TEST_F(NormValidation, a_too_small_workspace_is_refused_before_anything_is_written) {
  tessera::tensor_desc nhwc(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {2, 3, 4, 5});  // staged: needs scratch
  size_t need = 0;
  ASSERT_OK(tsrGetBatchNormalizationForwardInferenceWorkspaceSize(h_, TSR_BATCHNORM_SPATIAL, nullptr, x_desc_,
                                                                  nhwc, param_desc_, TSR_ALGO_AUTO, &need));
  ASSERT_GT(need, 0u);
  std::vector<char> ws(need - 1);
  EXPECT_FAILS_WITH(tsrBatchNormalizationForwardInference(h_, TSR_BATCHNORM_SPATIAL, nullptr, TSR_ALGO_AUTO, 1,
                                                          x_desc_, x_.data(), param_desc_, p1_.data(),
                                                          p2_.data(), p3_.data(), p4_.data(), 1e-5, ws.data(),
                                                          ws.size(), 0, nhwc, y_.data()),
                    TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL);
  EXPECT_TRUE(y_untouched());
}

}  // namespace
