// Operations refuse bad arguments before any kernel runs: a specific status, a message naming
// the argument and the value, and the output left exactly as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tessera::testing;

namespace {

struct conv_call : ::testing::Test {
  tessera::handle h{TSR_DEVICE_CPU, 0};
  tessera::tensor_desc x{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 4, 5, 5}};
  tessera::tensor_desc w{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {6, 4, 3, 3}};
  tessera::tensor_desc y{TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 6, 5, 5}};
  tessera::convolution_desc conv{{1, 1}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<float> xs = std::vector<float>(2 * 4 * 5 * 5, 1.0f);
  std::vector<float> ws = std::vector<float>(6 * 4 * 3 * 3, 1.0f);
  std::vector<float> ys = std::vector<float>(2 * 6 * 5 * 5, 7.5f);

  tsrStatus_t run(tsrTensorDescriptor_t xd, const void* xp, tsrTensorDescriptor_t wd,
                  const void* wp, tsrConvolutionDescriptor_t cd, tsrTensorDescriptor_t yd,
                  void* yp, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    return tsrConvolutionForward(h, 1.0f, xd, xp, wd, wp, cd, algo, nullptr, 0, 0.0f, yd, yp);
  }
  void expect_output_untouched() {
    for (float v : ys) ASSERT_EQ(v, 7.5f) << "a failed call wrote its output";
  }
};

}  // namespace

using ConvolutionForwardValidation = conv_call;

TEST_F(ConvolutionForwardValidation, names_each_null_pointer) {
  EXPECT_FAILS_WITH(tsrConvolutionForward(nullptr, 1, x, xs.data(), w, ws.data(), conv,
                                          TSR_ALGO_AUTO, nullptr, 0, 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrConvolutionForward", "handle is NULL");
  EXPECT_FAILS_WITH(run(x, nullptr, w, ws.data(), conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x is NULL");
  EXPECT_FAILS_WITH(run(x, xs.data(), w, nullptr, conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "w is NULL");
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), conv, y, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "y is NULL");
  EXPECT_FAILS_WITH(run(nullptr, xs.data(), w, ws.data(), conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x_desc is NULL");
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), nullptr, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "conv is NULL");
  EXPECT_FAILS_WITH(tsrConvolutionForward(h, 1, x, xs.data(), w, ws.data(), conv, TSR_ALGO_AUTO,
                                          nullptr, 64, 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL but workspace_size is 64");
  expect_output_untouched();
}

TEST_F(ConvolutionForwardValidation, refuses_inconsistent_shapes_with_the_dims_in_words) {
  tessera::tensor_desc y_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 6, 4, 5});
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), conv, y_wrong, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "y_desc has dims 2x6x4x5",
                    "2x6x5x5");
  tessera::tensor_desc w_wrong(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {6, 3, 3, 3});
  EXPECT_FAILS_WITH(run(x, xs.data(), w_wrong, ws.data(), conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "w_desc has 3 input channels per group",
                    "expected C/groups = 4");
  tessera::tensor_desc x3(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 4, 5});
  EXPECT_FAILS_WITH(run(x3, xs.data(), w, ws.data(), conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "x_desc has 3 dims, expected 4");
  tessera::tensor_desc y_half(TSR_TENSOR_NCHW, TSR_DATA_HALF, {2, 6, 5, 5});
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), conv, y_half, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "y_desc has data type f16",
                    "expected x_desc's f32");
  expect_output_untouched();
}

TEST_F(ConvolutionForwardValidation, refuses_groups_that_do_not_divide_the_channels) {
  tessera::convolution_desc grouped({1, 1}, {1, 1}, {1, 1}, {1, 1}, 3);
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), grouped, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "4 channels, not divisible by groups = 3");
  expect_output_untouched();
}

TEST_F(ConvolutionForwardValidation, refuses_a_filter_larger_than_the_padded_input) {
  tessera::tensor_desc w_big(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {6, 4, 9, 9});
  tessera::convolution_desc nopad({0, 0}, {0, 0}, {1, 1}, {1, 1});
  int64_t out[4];
  EXPECT_FAILS_WITH(tsrGetConvolutionForwardOutputDim(nopad, x, w_big, 4, out),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "spatial dim 0");
}

TEST_F(ConvolutionForwardValidation, refuses_unset_descriptors_and_unknown_algorithms) {
  tsrTensorDescriptor_t unset = nullptr;
  ASSERT_OK(tsrCreateTensorDescriptor(&unset));
  EXPECT_FAILS_WITH(run(x, xs.data(), unset, ws.data(), conv, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "w_desc was created but never set");
  tsrDestroyTensorDescriptor(unset);
  EXPECT_FAILS_WITH(run(x, xs.data(), w, ws.data(), conv, y, ys.data(), 123456),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo 123456 is not a kernel of convolution_forward");
  expect_output_untouched();
}

TEST_F(ConvolutionForwardValidation, refuses_non_finite_scalars) {
  EXPECT_FAILS_WITH(tsrConvolutionForward(h, std::nanf(""), x, xs.data(), w, ws.data(), conv,
                                          TSR_ALGO_AUTO, nullptr, 0, 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "alpha is not finite");
  expect_output_untouched();
}

TEST(ActivationValidation, refuses_mismatched_tensors_and_leaves_output_untouched) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 4, 4});
  tessera::tensor_desc y(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 3, 4, 5});
  std::vector<float> xs(2 * 3 * 4 * 5, -1.0f), ys(2 * 3 * 4 * 5, 3.0f);
  EXPECT_FAILS_WITH(tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1, x, xs.data(), 0, y, ys.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrActivationForward",
                    "y_desc has dims 2x3x4x5", "x_desc (2x3x4x4)");
  EXPECT_FAILS_WITH(tsrActivationForward(h, nullptr, TSR_ALGO_AUTO, 1, x, xs.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "act is NULL");
  EXPECT_FAILS_WITH(tsrActivationBackward(h, relu, TSR_ALGO_AUTO, 1, x, xs.data(), x, nullptr, x,
                                          xs.data(), 0, x, ys.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrActivationBackward", "dy is NULL");
  for (float v : ys) ASSERT_EQ(v, 3.0f);
}

TEST(HandleCreation, refuses_unknown_kinds_and_absent_devices_with_the_count) {
  tsrHandle_t h = nullptr;
  EXPECT_FAILS_WITH(tsrCreate(static_cast<tsrDeviceKind_t>(9), 0, &h),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "kind 9");
  EXPECT_FAILS_WITH(tsrCreate(TSR_DEVICE_CPU, 1, &h), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "ordinal 1 out of range: 1 cpu device(s) present");
  EXPECT_FAILS_WITH(tsrCreate(TSR_DEVICE_CPU, 0, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "handle is NULL");
  int cuda = 0;
  ASSERT_OK(tsrGetDeviceCount(TSR_DEVICE_CUDA, &cuda));
  tsrStatus_t s = tsrCreate(TSR_DEVICE_CUDA, cuda, &h);
  std::string message = last_error();  // before backend_loaded(), whose call clears it
  EXPECT_EQ(TSR_STATUS_CATEGORY(s), cuda > 0 || backend_loaded("cuda")
                                        ? TSR_STATUS_BAD_PARAM
                                        : TSR_STATUS_NOT_SUPPORTED);
  if (backend_loaded("cuda")) {
    EXPECT_NE(message.find(std::to_string(cuda) + " cuda device(s) present"), std::string::npos)
        << message;
  }
  EXPECT_EQ(h, nullptr);
}

TEST(HandleSettings, backend_preference_must_name_loaded_backends) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  EXPECT_FAILS_WITH(tsrSetBackendPreference(h, "nosuchbackend"), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "'nosuchbackend', which is not a loaded backend");
  EXPECT_OK(tsrSetBackendPreference(h, ""));
  EXPECT_FAILS_WITH(tsrSetStream(h, reinterpret_cast<void*>(0x10)),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "stream must be NULL for a CPU handle");
  EXPECT_FAILS_WITH(tsrSetMathMode(h, static_cast<tsrMathMode_t>(5)),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "mode 5");
}

TEST(DeviceMemory, cpu_handle_allocates_copies_and_frees) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  void* p = h.malloc(1024);
  ASSERT_NE(p, nullptr);
  std::vector<unsigned char> in(1024), out(1024, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
  h.copy_to_device(p, in.data(), in.size());
  h.copy_to_host(out.data(), p, out.size());
  EXPECT_EQ(in, out);
  h.free(p);
  EXPECT_FAILS_WITH(tsrMemcpyHostToDevice(h, nullptr, in.data(), 4),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "dst is NULL");
}
