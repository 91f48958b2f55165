// Every descriptor setter refuses bad values with a specific status and a message naming the
// argument, and leaves the descriptor as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace tessera::testing;

namespace {
struct tensor_fixture : ::testing::Test {
  tsrTensorDescriptor_t d = nullptr;
  void SetUp() override { ASSERT_OK(tsrCreateTensorDescriptor(&d)); }
  void TearDown() override { tsrDestroyTensorDescriptor(d); }
};
}  // namespace

using TensorDescriptor = tensor_fixture;

TEST_F(TensorDescriptor, rejects_dim_counts_outside_one_to_eight) {
  int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, strides[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 0, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nb_dims is 0", "expected 1 to 8");
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 9, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nb_dims is 9");
  EXPECT_OK(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 8, dims, strides));
}

TEST_F(TensorDescriptor, rejects_zero_and_negative_dims_and_negative_strides) {
  int64_t dims[4] = {2, 3, 0, 4}, strides[4] = {12, 4, 4, 1};
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 4, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrSetTensorNdDescriptor", "dims[2] is 0");
  dims[2] = -5;
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 4, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "dims[2] is -5");
  dims[2] = 1;
  strides[1] = -4;
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 4, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "strides[1] is -4");
}

TEST_F(TensorDescriptor, rejects_sizes_whose_byte_count_overflows) {
  int64_t big = std::numeric_limits<int64_t>::max() / 2;
  int64_t dims[2] = {big, 4}, strides[2] = {4, 1};
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 2, dims, strides),
                    TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW, "spans more bytes than size_t holds");
  int64_t many[4] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, TSR_DATA_FLOAT, 4, many),
                    TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW, "overflows");
}

TEST_F(TensorDescriptor, rejects_unknown_dtype_and_format_and_null_arrays) {
  int64_t dims[1] = {4}, strides[1] = {1};
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, static_cast<tsrDataType_t>(42), 1, dims, strides),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "dtype 42");
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptorEx(d, static_cast<tsrTensorFormat_t>(7),
                                               TSR_DATA_FLOAT, 1, dims),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "format 7");
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 1, nullptr, strides),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dims is NULL");
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(d, TSR_DATA_FLOAT, 1, dims, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "strides is NULL");
  EXPECT_FAILS_WITH(tsrSetTensorNdDescriptor(nullptr, TSR_DATA_FLOAT, 1, dims, strides),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
}

TEST_F(TensorDescriptor, a_failed_set_leaves_the_previous_values) {
  int64_t dims[4] = {2, 3, 5, 7};
  ASSERT_OK(tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NHWC, TSR_DATA_HALF, 4, dims));
  int64_t bad[4] = {2, 3, 0, 7};
  EXPECT_NE(tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, TSR_DATA_FLOAT, 4, bad),
            TSR_STATUS_SUCCESS);
  tsrDataType_t dt;
  int nd = 0;
  int64_t got[8], strides[8];
  ASSERT_OK(tsrGetTensorNdDescriptor(d, 8, &dt, &nd, got, strides));
  EXPECT_EQ(dt, TSR_DATA_HALF);
  EXPECT_EQ(nd, 4);
  EXPECT_EQ(got[2], 5);
  // NHWC packed strides of 2x3x5x7 (N, C, H, W order): C innermost.
  EXPECT_EQ(strides[0], 3 * 5 * 7);
  EXPECT_EQ(strides[1], 1);
  EXPECT_EQ(strides[2], 7 * 3);
  EXPECT_EQ(strides[3], 3);
  size_t bytes = 0;
  ASSERT_OK(tsrGetTensorSizeInBytes(d, &bytes));
  EXPECT_EQ(bytes, 2u * 3 * 5 * 7 * 2);
}

TEST_F(TensorDescriptor, an_unset_descriptor_is_refused_where_it_is_read) {
  size_t bytes = 0;
  EXPECT_FAILS_WITH(tsrGetTensorSizeInBytes(d, &bytes), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "desc was created but never set");
}

TEST(ActivationDescriptor, rejects_unknown_mode_nan_coef_and_bad_clip) {
  tsrActivationDescriptor_t a = nullptr;
  ASSERT_OK(tsrCreateActivationDescriptor(&a));
  EXPECT_FAILS_WITH(tsrSetActivationDescriptor(a, static_cast<tsrActivationMode_t>(77), 0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "mode 77");
  EXPECT_FAILS_WITH(tsrSetActivationDescriptor(a, TSR_ACTIVATION_ELU, std::nan("")),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "coef is not finite");
  EXPECT_FAILS_WITH(tsrSetActivationDescriptor(a, TSR_ACTIVATION_CLIPPED_RELU, 0.0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "expected > 0");
  ASSERT_OK(tsrSetActivationDescriptor(a, TSR_ACTIVATION_LEAKY_RELU, 0.25));
  tsrActivationMode_t m;
  double c;
  ASSERT_OK(tsrGetActivationDescriptor(a, &m, &c));
  EXPECT_EQ(m, TSR_ACTIVATION_LEAKY_RELU);
  EXPECT_EQ(c, 0.25);
  tsrDestroyActivationDescriptor(a);
}

TEST(ConvolutionDescriptor, rejects_bad_spatial_dims_pads_strides_dilations_and_groups) {
  tsrConvolutionDescriptor_t c = nullptr;
  ASSERT_OK(tsrCreateConvolutionDescriptor(&c));
  int64_t pad[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 4, pad, pad, stride, dil,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "spatial_dims is 4");
  int64_t neg[2] = {1, -1};
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 2, neg, pad, stride, dil,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "pad_before[1] is -1");
  int64_t zero[2] = {1, 0};
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 2, pad, pad, zero, dil,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "stride[1] is 0");
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 2, pad, pad, stride, zero,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "dilation[1] is 0", "1 means none");
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 2, pad, pad, stride, dil,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_HALF),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "compute_type f16");
  EXPECT_FAILS_WITH(tsrSetConvolutionNdDescriptor(c, 2, nullptr, pad, stride, dil,
                                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "pad_before is NULL");
  EXPECT_FAILS_WITH(tsrSetConvolutionGroupCount(c, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "groups is 0");
  tsrDestroyConvolutionDescriptor(c);
}
