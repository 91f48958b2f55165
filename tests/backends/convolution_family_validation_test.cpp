// Argument validation of the convolution family's entry points: each bad argument gives its own
// status and a message naming the function, the argument and the value, and the outputs are
// left untouched. Runs on the CPU (validation happens before any kernel is chosen).
#include "test_support.hpp"

#include <tessera/tessera.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tessera::testing;

namespace {

class ConvolutionFamilyValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_OK(tsrGetDeviceCount(TSR_DEVICE_CPU, &n));
    if (n == 0) GTEST_SKIP() << "no CPU backend loaded";
    ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &h_));
    // x 2x4x6x6, w 8x4x3x3, pad 1: y 2x8x6x6.
    x_ = desc(TSR_DATA_FLOAT, {2, 4, 6, 6});
    w_ = desc(TSR_DATA_FLOAT, {8, 4, 3, 3});
    y_ = desc(TSR_DATA_FLOAT, {2, 8, 6, 6});
    bad_y_ = desc(TSR_DATA_FLOAT, {2, 8, 5, 5});
    bias_ = desc(TSR_DATA_FLOAT, {1, 8, 1, 1});
    half_x_ = desc(TSR_DATA_HALF, {2, 4, 6, 6});
    x8_ = desc(TSR_DATA_INT8, {2, 4, 6, 6});
    w8_ = desc(TSR_DATA_INT8, {8, 4, 3, 3});
    y8_ = desc(TSR_DATA_INT8, {2, 8, 6, 6});
    ASSERT_OK(tsrCreateTensorDescriptor(&unset_));
    const int64_t pad[2] = {1, 1}, one[2] = {1, 1};
    ASSERT_OK(tsrCreateConvolutionDescriptor(&conv_));
    ASSERT_OK(tsrSetConvolutionNdDescriptor(conv_, 2, pad, pad, one, one, TSR_CROSS_CORRELATION,
                                            TSR_DATA_FLOAT));
    ASSERT_OK(tsrCreateConvolutionDescriptor(&conv8_));
    ASSERT_OK(tsrSetConvolutionNdDescriptor(conv8_, 2, pad, pad, one, one, TSR_CROSS_CORRELATION,
                                            TSR_DATA_INT32));
    ASSERT_OK(tsrCreateConvolutionDescriptor(&unset_conv_));
    ASSERT_OK(tsrCreateActivationDescriptor(&act_));
    ASSERT_OK(tsrSetActivationDescriptor(act_, TSR_ACTIVATION_RELU, 0.0));
    ASSERT_OK(tsrCreateActivationDescriptor(&unset_act_));
    out_.assign(2 * 8 * 6 * 6, 7.0f);
  }
  void TearDown() override {
    for (tsrTensorDescriptor_t d : {x_, w_, y_, bad_y_, bias_, half_x_, x8_, w8_, y8_, unset_})
      tsrDestroyTensorDescriptor(d);
    tsrDestroyConvolutionDescriptor(conv_);
    tsrDestroyConvolutionDescriptor(conv8_);
    tsrDestroyConvolutionDescriptor(unset_conv_);
    tsrDestroyActivationDescriptor(act_);
    tsrDestroyActivationDescriptor(unset_act_);
    tsrDestroy(h_);
  }
  static tsrTensorDescriptor_t desc(tsrDataType_t dt, std::vector<int64_t> dims) {
    tsrTensorDescriptor_t d = nullptr;
    tsrCreateTensorDescriptor(&d);
    tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, dt, static_cast<int>(dims.size()), dims.data());
    return d;
  }
  bool output_untouched() const {
    for (float v : out_)
      if (v != 7.0f) return false;
    return true;
  }
  tsrHandle_t h_ = nullptr;
  tsrTensorDescriptor_t x_, w_, y_, bad_y_, bias_, half_x_, x8_, w8_, y8_, unset_;
  tsrConvolutionDescriptor_t conv_ = nullptr, conv8_ = nullptr, unset_conv_ = nullptr;
  tsrActivationDescriptor_t act_ = nullptr, unset_act_ = nullptr;
  float in_[4096] = {};
  std::vector<float> out_;
  float* out() { return out_.data(); }
};

TEST_F(ConvolutionFamilyValidation, backward_data_names_each_bad_argument) {
  const char* fn = "tsrConvolutionBackwardData";
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(nullptr, 1, w_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "handle");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, nullptr, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "w_desc");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, unset_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, fn, "dy_desc");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, y_, in_, unset_conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, fn, "conv");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, bad_y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn, "dy_desc has dims 2x8x5x5",
                    "dx_desc (*) w_desc", "2x8x6x6");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, half_x_, out()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn, "w_desc has data type f32",
                    "dx_desc's f16");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, nullptr, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "w is NULL");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "dx is NULL");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, NAN, w_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "alpha is not finite");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 64, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "workspace is NULL", "64");
  EXPECT_TRUE(output_untouched());
}

TEST_F(ConvolutionFamilyValidation, backward_filter_names_each_bad_argument) {
  const char* fn = "tsrConvolutionBackwardFilter";
  EXPECT_FAILS_WITH(tsrConvolutionBackwardFilter(h_, 1, x_, in_, bad_y_, in_, conv_, TSR_ALGO_AUTO,
                                                 nullptr, 0, 0, w_, out()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn, "dy_desc has dims 2x8x5x5",
                    "x_desc (*) dw_desc");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardFilter(h_, 1, x8_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                                 nullptr, 0, 0, w_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "x_desc has data type s8",
                    "f32, f16 or bf16");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardFilter(h_, 1, x_, in_, y_, nullptr, conv_, TSR_ALGO_AUTO,
                                                 nullptr, 0, 0, w_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "dy is NULL");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardFilter(h_, 1, x_, in_, y_, in_, conv_, TSR_ALGO_AUTO,
                                                 nullptr, 0, INFINITY, w_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "beta is not finite");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardFilter(h_, 1, x_, in_, y_, in_, conv_, 1 << 30, nullptr,
                                                 0, 0, w_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo");
  size_t bytes = 0;
  EXPECT_FAILS_WITH(tsrGetConvolutionBackwardFilterWorkspaceSize(h_, x_, y_, conv_, bias_,
                                                                 TSR_ALGO_AUTO, &bytes),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrGetConvolutionBackwardFilterWorkspaceSize",
                    "dw_desc");
  EXPECT_TRUE(output_untouched());
}

TEST_F(ConvolutionFamilyValidation, backward_bias_checks_db_shape_and_types) {
  const char* fn = "tsrConvolutionBackwardBias";
  EXPECT_FAILS_WITH(tsrConvolutionBackwardBias(h_, 1, y_, in_, 0, x_, out()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn, "db_desc has dims 2x4x6x6", "1x8x1x1");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardBias(h_, 1, y8_, in_, 0, bias_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "dy_desc has data type s8");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardBias(h_, 1, y_, nullptr, 0, bias_, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "dy is NULL");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardBias(h_, 1, y_, in_, 0, nullptr, out()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, fn, "db_desc");
  EXPECT_FAILS_WITH(tsrConvolutionBackwardBias(h_, NAN, y_, in_, 0, bias_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "alpha is not finite");
  EXPECT_TRUE(output_untouched());
}

TEST_F(ConvolutionFamilyValidation, fused_forward_names_each_bad_argument) {
  const char* fn = "tsrConvolutionBiasActivationForward";
  auto call = [&](tsrTensorDescriptor_t z_desc, const void* z, tsrTensorDescriptor_t bias_desc,
                  const void* bias, tsrActivationDescriptor_t act, float alpha1 = 1) {
    return tsrConvolutionBiasActivationForward(h_, alpha1, x_, in_, w_, in_, conv_, TSR_ALGO_AUTO,
                                               nullptr, 0, 1, z_desc, z, bias_desc, bias, act, y_,
                                               out());
  };
  EXPECT_FAILS_WITH(call(bad_y_, in_, bias_, in_, act_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn,
                    "z_desc has dims 2x8x5x5");
  EXPECT_FAILS_WITH(call(y_, nullptr, bias_, in_, act_), TSR_STATUS_BAD_PARAM_NULL_POINTER, fn,
                    "z is NULL but z_desc is given");
  EXPECT_FAILS_WITH(call(nullptr, in_, bias_, in_, act_), TSR_STATUS_BAD_PARAM_NULL_POINTER, fn,
                    "z is given but z_desc is NULL");
  EXPECT_FAILS_WITH(call(nullptr, nullptr, x_, in_, act_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, fn,
                    "bias_desc has dims 2x4x6x6", "1x8x1x1");
  EXPECT_FAILS_WITH(call(nullptr, nullptr, bias_, nullptr, act_), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    fn, "bias is NULL");
  EXPECT_FAILS_WITH(call(nullptr, nullptr, bias_, in_, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    fn, "act is NULL");
  EXPECT_FAILS_WITH(call(nullptr, nullptr, bias_, in_, unset_act_),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, fn, "act was created but never set");
  EXPECT_FAILS_WITH(call(nullptr, nullptr, bias_, in_, act_, NAN),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "alpha1 is not finite");
  // z aliasing y with other strides cannot be honoured.
  tsrTensorDescriptor_t z_nhwc = nullptr;
  tsrCreateTensorDescriptor(&z_nhwc);
  const int64_t dims[4] = {2, 8, 6, 6};
  tsrSetTensorNdDescriptorEx(z_nhwc, TSR_TENSOR_NHWC, TSR_DATA_FLOAT, 4, dims);
  EXPECT_FAILS_WITH(tsrConvolutionBiasActivationForward(h_, 1, x_, in_, w_, in_, conv_,
                                                        TSR_ALGO_AUTO, nullptr, 0, 1, z_nhwc,
                                                        out(), bias_, in_, act_, y_, out()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn, "z aliases y", "strides");
  tsrDestroyTensorDescriptor(z_nhwc);
  EXPECT_TRUE(output_untouched());
}

TEST_F(ConvolutionFamilyValidation, quantized_forward_checks_types_and_scales) {
  const char* fn = "tsrConvolutionForwardQuantized";
  const float scales[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const float bad_scales[8] = {1, 1, NAN, 1, 1, 1, 1, 1};
  auto call = [&](tsrTensorDescriptor_t x, tsrTensorDescriptor_t w, tsrConvolutionDescriptor_t c,
                  int count, const float* s, tsrTensorDescriptor_t y) {
    return tsrConvolutionForwardQuantized(h_, 1, x, in_, w, in_, c, count, s, TSR_ALGO_AUTO,
                                          nullptr, 0, 0, y, out());
  };
  EXPECT_FAILS_WITH(call(x_, w8_, conv8_, 1, scales, y8_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn,
                    "x_desc has data type f32, expected s8");
  EXPECT_FAILS_WITH(call(x8_, w_, conv8_, 1, scales, y8_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn,
                    "w_desc has data type f32, expected s8");
  EXPECT_FAILS_WITH(call(x8_, w8_, conv_, 1, scales, y8_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn,
                    "compute_type f32", "s32");
  tsrTensorDescriptor_t y_half = desc(TSR_DATA_HALF, {2, 8, 6, 6});
  EXPECT_FAILS_WITH(call(x8_, w8_, conv8_, 1, scales, y_half), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    fn, "y_desc has data type f16", "s8, s32 or f32");
  tsrDestroyTensorDescriptor(y_half);
  EXPECT_FAILS_WITH(call(x8_, w8_, conv8_, 3, scales, y8_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, fn,
                    "scale_count is 3", "1 (per tensor) or 8");
  EXPECT_FAILS_WITH(call(x8_, w8_, conv8_, 8, nullptr, y8_), TSR_STATUS_BAD_PARAM_NULL_POINTER, fn,
                    "scales is NULL");
  EXPECT_FAILS_WITH(call(x8_, w8_, conv8_, 8, bad_scales, y8_), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    fn, "scales[2] is not finite");
  EXPECT_TRUE(output_untouched());
}

TEST_F(ConvolutionFamilyValidation, oneDNN_declines_the_flipped_filter_mode_with_words) {
  if (!backend_loaded("onednn")) GTEST_SKIP() << "onednn backend not loaded";
  const int64_t pad[2] = {1, 1}, one[2] = {1, 1};
  tsrConvolutionDescriptor_t flipped = nullptr;
  tsrCreateConvolutionDescriptor(&flipped);
  tsrSetConvolutionNdDescriptor(flipped, 2, pad, pad, one, one, TSR_CONVOLUTION, TSR_DATA_FLOAT);
  ASSERT_OK(tsrSetBackendPreference(h_, "onednn"));
  EXPECT_FAILS_WITH(tsrConvolutionBackwardData(h_, 1, w_, in_, y_, in_, flipped, TSR_ALGO_AUTO,
                                               nullptr, 0, 0, x_, out()),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "tsrConvolutionBackwardData", "flipped");
  EXPECT_FAILS_WITH(tsrConvolutionBiasActivationForward(h_, 1, x_, in_, w_, in_, flipped,
                                                        TSR_ALGO_AUTO, nullptr, 0, 1, nullptr,
                                                        nullptr, bias_, in_, act_, y_, out()),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "flipped");
  tsrDestroyConvolutionDescriptor(flipped);
  EXPECT_TRUE(output_untouched());
}

}  // namespace
