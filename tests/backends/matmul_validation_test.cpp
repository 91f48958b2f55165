// Matmul refuses bad arguments before any kernel runs: a specific status, a message naming the
// function, the argument and the value, and C left exactly as it was.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace tessera::testing;

namespace {

constexpr float k_untouched = 7.5f;

tessera::tensor_desc row_major(tsrDataType_t dt, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t running = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = running;
    running *= dims[i];
  }
  return tessera::tensor_desc(dt, dims, strides);
}

struct MatmulValidation : ::testing::Test {
  tessera::handle h{TSR_DEVICE_CPU, 0};
  // [2, 3, 4] @ [2, 4, 5] = [2, 3, 5], per-column bias [1, 1, 5].
  tessera::tensor_desc a = row_major(TSR_DATA_FLOAT, {2, 3, 4});
  tessera::tensor_desc b = row_major(TSR_DATA_FLOAT, {2, 4, 5});
  tessera::tensor_desc c = row_major(TSR_DATA_FLOAT, {2, 3, 5});
  tessera::tensor_desc bias_d = row_major(TSR_DATA_FLOAT, {1, 1, 5});
  tessera::matmul_desc mm{TSR_DATA_FLOAT};
  // Sized for the largest tensor any test below describes, so a wrongly accepted call cannot
  // write out of bounds.
  std::vector<float> as = std::vector<float>(256, 1.0f);
  std::vector<float> bs = std::vector<float>(256, 1.0f);
  std::vector<float> biases = std::vector<float>(256, 1.0f);
  std::vector<float> cs = std::vector<float>(256, k_untouched);

  tsrStatus_t run(tsrTensorDescriptor_t ad, tsrTensorDescriptor_t bd, tsrTensorDescriptor_t biasd,
                  tsrTensorDescriptor_t cd, tsrMatmulDescriptor_t m = nullptr, float alpha = 1.0f,
                  float beta = 0.0f, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    return tsrMatmul(h, m ? m : mm.get(), algo, alpha, ad, as.data(), bd, bs.data(), biasd,
                     biasd ? biases.data() : nullptr, beta, cd, cs.data(), nullptr, 0);
  }
  void expect_output_untouched() {
    for (float v : cs) ASSERT_EQ(v, k_untouched) << "a failed call wrote its output";
  }
};

TEST_F(MatmulValidation, a_valid_call_succeeds_so_the_refusals_below_are_about_their_argument) {
  ASSERT_OK(run(a, b, bias_d, c));
  // 4 products of ones plus a bias of one.
  for (int i = 0; i < 30; ++i) EXPECT_EQ(cs[static_cast<size_t>(i)], 5.0f) << "element " << i;
}

TEST_F(MatmulValidation, names_each_null_pointer) {
  EXPECT_FAILS_WITH(tsrMatmul(nullptr, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), nullptr,
                              nullptr, 0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrMatmul", "handle is NULL");
  EXPECT_FAILS_WITH(tsrMatmul(h, nullptr, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), nullptr,
                              nullptr, 0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrMatmul: matmul_desc is NULL");
  EXPECT_FAILS_WITH(run(nullptr, b, nullptr, c), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrMatmul: a_desc is NULL");
  EXPECT_FAILS_WITH(run(a, nullptr, nullptr, c), TSR_STATUS_BAD_PARAM_NULL_POINTER, "b_desc is NULL");
  EXPECT_FAILS_WITH(run(a, b, nullptr, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "c_desc is NULL");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, nullptr, b, bs.data(), nullptr, nullptr,
                              0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrMatmul: a is NULL");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, nullptr, nullptr, nullptr,
                              0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "b is NULL");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), nullptr,
                              nullptr, 0, c, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "c is NULL");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), bias_d,
                              nullptr, 0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "bias is NULL but bias_desc is not");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), nullptr,
                              biases.data(), 0, c, cs.data(), nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "bias_desc is NULL but bias is not");
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, a, as.data(), b, bs.data(), nullptr,
                              nullptr, 0, c, cs.data(), nullptr, 64),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL but workspace_size is 64");
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_descriptors_that_were_never_set) {
  tsrMatmulDescriptor_t unset = nullptr;
  ASSERT_OK(tsrCreateMatmulDescriptor(&unset));
  EXPECT_FAILS_WITH(run(a, b, nullptr, c, unset), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "tsrMatmul: matmul_desc was created but never set", "tsrSetMatmulDescriptor");
  tsrDestroyMatmulDescriptor(unset);
  tsrTensorDescriptor_t unset_tensor = nullptr;
  ASSERT_OK(tsrCreateTensorDescriptor(&unset_tensor));
  EXPECT_FAILS_WITH(run(a, unset_tensor, nullptr, c), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "b_desc was created but never set");
  EXPECT_FAILS_WITH(run(a, b, unset_tensor, c), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "bias_desc was created but never set");
  tsrDestroyTensorDescriptor(unset_tensor);
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_shapes_that_do_not_multiply_with_the_dims_in_words) {
  tessera::tensor_desc b_k = row_major(TSR_DATA_FLOAT, {2, 3, 5});
  EXPECT_FAILS_WITH(run(a, b_k, nullptr, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "b_desc has dims 2x3x5", "its K (dim 1) is 3", "expected a_desc's K = 4");
  tessera::tensor_desc c_wrong = row_major(TSR_DATA_FLOAT, {2, 3, 6});
  EXPECT_FAILS_WITH(run(a, b, nullptr, c_wrong), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "c_desc has dims 2x3x6, expected 2x3x5");
  tessera::tensor_desc a_rank2 = row_major(TSR_DATA_FLOAT, {3, 4});
  EXPECT_FAILS_WITH(run(a_rank2, b, nullptr, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "have 2, 3 and 3 dims, expected one rank");
  tessera::tensor_desc a_rank1 = row_major(TSR_DATA_FLOAT, {4});
  tessera::tensor_desc b_rank1 = row_major(TSR_DATA_FLOAT, {4});
  tessera::tensor_desc c_rank1 = row_major(TSR_DATA_FLOAT, {1});
  EXPECT_FAILS_WITH(run(a_rank1, b_rank1, nullptr, c_rank1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "a_desc has 1 dims, expected 2 to 8");
  tessera::tensor_desc a_batch3 = row_major(TSR_DATA_FLOAT, {3, 3, 4});
  EXPECT_FAILS_WITH(run(a_batch3, b, nullptr, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "batch dim 0 is 3 in a_desc", "and 2 in b_desc", "equal or one of them 1");
  // A broadcast batch dim of A is fine, but then C must still be the broadcast shape.
  tessera::tensor_desc a_bcast = row_major(TSR_DATA_FLOAT, {1, 3, 4});
  tessera::tensor_desc c_small = row_major(TSR_DATA_FLOAT, {1, 3, 5});
  EXPECT_FAILS_WITH(run(a_bcast, b, nullptr, c_small), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "c_desc has dims 1x3x5, expected 2x3x5");
  tessera::tensor_desc c_overlap(TSR_DATA_FLOAT, {2, 3, 5}, {15, 0, 1});
  EXPECT_FAILS_WITH(run(a, b, nullptr, c_overlap), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "c_desc has stride 0 in dim 1 (extent 3)", "overlap");
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_a_bias_that_does_not_broadcast_to_c) {
  tessera::tensor_desc bias_k = row_major(TSR_DATA_FLOAT, {1, 1, 4});
  EXPECT_FAILS_WITH(run(a, b, bias_k, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "bias_desc has dims 1x1x4", "each 1 or c_desc's (2x3x5)", "[1..., 1, 5]");
  tessera::tensor_desc bias_rank2 = row_major(TSR_DATA_FLOAT, {1, 5});
  EXPECT_FAILS_WITH(run(a, b, bias_rank2, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "bias_desc has dims 1x5", "expected 3 dims");
  tessera::tensor_desc bias_half = row_major(TSR_DATA_HALF, {1, 1, 5});
  EXPECT_FAILS_WITH(run(a, b, bias_half, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "bias_desc has data type f16, expected f32 (c_desc's type, or f32)");
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_data_types_and_compute_types_that_do_not_agree) {
  tessera::tensor_desc b_half = row_major(TSR_DATA_HALF, {2, 4, 5});
  EXPECT_FAILS_WITH(run(a, b_half, nullptr, c), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "b_desc has data type f16, expected a_desc's f32");
  tessera::tensor_desc c_half = row_major(TSR_DATA_HALF, {2, 3, 5});
  EXPECT_FAILS_WITH(run(a, b, nullptr, c_half), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "c_desc has data type f16, expected f32 for f32 inputs");
  tessera::tensor_desc a8 = row_major(TSR_DATA_INT8, {2, 3, 4});
  tessera::tensor_desc b8 = row_major(TSR_DATA_INT8, {2, 4, 5});
  tessera::tensor_desc c8 = row_major(TSR_DATA_INT8, {2, 3, 5});
  tessera::matmul_desc mm_int(TSR_DATA_INT32);
  EXPECT_FAILS_WITH(run(a8, b8, nullptr, c8, mm_int), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "c_desc has data type s8, expected s32 or f32 for s8 inputs");
  tessera::tensor_desc c32 = row_major(TSR_DATA_INT32, {2, 3, 5});
  EXPECT_FAILS_WITH(run(a8, b8, nullptr, c32), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "matmul_desc has compute type f32, expected s32 for s8 inputs");
  EXPECT_FAILS_WITH(run(a, b, nullptr, c, mm_int), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "matmul_desc has compute type s32, expected f32 for f32 inputs");
  tessera::tensor_desc a32 = row_major(TSR_DATA_INT32, {2, 3, 4});
  tessera::tensor_desc b32 = row_major(TSR_DATA_INT32, {2, 4, 5});
  EXPECT_FAILS_WITH(run(a32, b32, nullptr, c32, mm_int), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "a_desc has data type s32");
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_non_finite_scalars_and_foreign_algorithms) {
  EXPECT_FAILS_WITH(run(a, b, nullptr, c, nullptr, std::numeric_limits<float>::infinity()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrMatmul: alpha is not finite");
  EXPECT_FAILS_WITH(run(a, b, nullptr, c, nullptr, 1.0f, std::nanf("")),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrMatmul: beta is not finite");
  int n = 0;
  ASSERT_OK(tsrGetKernelCount(TSR_OP_ACTIVATION_FORWARD, &n));
  if (n > 0) {
    tsrKernelInfo_t k{};
    k.struct_size = sizeof(k);
    ASSERT_OK(tsrGetKernelInfo(TSR_OP_ACTIVATION_FORWARD, 0, &k));
    EXPECT_FAILS_WITH(run(a, b, nullptr, c, nullptr, 1.0f, 0.0f, k.algo),
                      TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "is not a kernel of matmul");
  }
  expect_output_untouched();
}

TEST_F(MatmulValidation, refuses_a_workspace_smaller_than_the_query_says) {
  // f16 is staged through f32 on CPUs without AVX512-FP16, and transposed C is staged anyway:
  // some workspace is needed. Where none is, there is nothing to refuse.
  tessera::tensor_desc ah = row_major(TSR_DATA_HALF, {2, 3, 4});
  tessera::tensor_desc bh = row_major(TSR_DATA_HALF, {2, 4, 5});
  tessera::tensor_desc ch(TSR_DATA_HALF, {2, 3, 5}, {15, 1, 3});
  size_t bytes = 0;
  ASSERT_OK(tsrGetMatmulWorkspaceSize(h, mm, ah, bh, nullptr, ch, TSR_ALGO_AUTO, &bytes));
  if (bytes == 0) GTEST_SKIP() << "the chosen kernel needs no workspace here";
  std::vector<uint8_t> small(1);
  EXPECT_FAILS_WITH(tsrMatmul(h, mm, TSR_ALGO_AUTO, 1, ah, as.data(), bh, bs.data(), nullptr,
                              nullptr, 0, ch, cs.data(), small.data(), 1),
                    TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL, "tsrMatmul: workspace too small");
  expect_output_untouched();
}

TEST_F(MatmulValidation, queries_validate_like_the_call) {
  size_t bytes = 0;
  EXPECT_FAILS_WITH(tsrGetMatmulWorkspaceSize(h, mm, a, b, nullptr, c, TSR_ALGO_AUTO, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrGetMatmulWorkspaceSize: bytes is NULL");
  tessera::tensor_desc c_wrong = row_major(TSR_DATA_FLOAT, {2, 3, 6});
  EXPECT_FAILS_WITH(tsrGetMatmulWorkspaceSize(h, mm, a, b, nullptr, c_wrong, TSR_ALGO_AUTO, &bytes),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrGetMatmulWorkspaceSize: c_desc has dims 2x3x6");
  tsrAlgoPerf_t perf[2] = {};
  perf[0].struct_size = perf[1].struct_size = sizeof(tsrAlgoPerf_t);
  int returned = 0;
  EXPECT_FAILS_WITH(tsrGetMatmulAlgorithm(h, mm, a, b, nullptr, c, 0, &returned, perf),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrGetMatmulAlgorithm: requested_count is 0");
  EXPECT_FAILS_WITH(tsrGetMatmulAlgorithm(h, mm, a, b, nullptr, c, 2, nullptr, perf),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "returned_count is NULL");
  tessera::tensor_desc b_k = row_major(TSR_DATA_FLOAT, {2, 3, 5});
  EXPECT_FAILS_WITH(tsrGetMatmulAlgorithm(h, mm, a, b_k, nullptr, c, 2, &returned, perf),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrGetMatmulAlgorithm: b_desc has dims 2x3x5");
}

TEST(MatmulDescriptor, set_validates_and_get_reads_back_a_copy_of_the_activation) {
  tsrMatmulDescriptor_t mm = nullptr;
  EXPECT_FAILS_WITH(tsrCreateMatmulDescriptor(nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrCreateMatmulDescriptor: desc is NULL");
  ASSERT_OK(tsrCreateMatmulDescriptor(&mm));
  tsrDataType_t t;
  tsrActivationMode_t mode;
  double coef;
  tsrMatmulEpilogueOrder_t order;
  EXPECT_FAILS_WITH(tsrGetMatmulDescriptor(mm, &t, &mode, &coef, &order),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "desc was created but never set");
  EXPECT_FAILS_WITH(tsrSetMatmulDescriptor(nullptr, TSR_DATA_FLOAT, nullptr,
                                           TSR_MATMUL_BLEND_AFTER_ACTIVATION),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrSetMatmulDescriptor: desc is NULL");
  EXPECT_FAILS_WITH(tsrSetMatmulDescriptor(mm, TSR_DATA_HALF, nullptr, TSR_MATMUL_BLEND_AFTER_ACTIVATION),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "compute_type f16 is not an accumulation type");
  EXPECT_FAILS_WITH(tsrSetMatmulDescriptor(mm, TSR_DATA_FLOAT, nullptr,
                                           static_cast<tsrMatmulEpilogueOrder_t>(5)),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "order 5 is not a tsrMatmulEpilogueOrder_t");
  tsrActivationDescriptor_t act = nullptr;
  ASSERT_OK(tsrCreateActivationDescriptor(&act));
  EXPECT_FAILS_WITH(tsrSetMatmulDescriptor(mm, TSR_DATA_FLOAT, act, TSR_MATMUL_BLEND_AFTER_ACTIVATION),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "act was created but never set");
  ASSERT_OK(tsrSetActivationDescriptor(act, TSR_ACTIVATION_LEAKY_RELU, 0.25));
  ASSERT_OK(tsrSetMatmulDescriptor(mm, TSR_DATA_FLOAT, act, TSR_MATMUL_BLEND_BEFORE_ACTIVATION));
  ASSERT_OK(tsrSetActivationDescriptor(act, TSR_ACTIVATION_TANH, 0));  // must not reach mm
  tsrDestroyActivationDescriptor(act);
  ASSERT_OK(tsrGetMatmulDescriptor(mm, &t, &mode, &coef, &order));
  EXPECT_EQ(t, TSR_DATA_FLOAT);
  EXPECT_EQ(mode, TSR_ACTIVATION_LEAKY_RELU);
  EXPECT_EQ(coef, 0.25);
  EXPECT_EQ(order, TSR_MATMUL_BLEND_BEFORE_ACTIVATION);
  EXPECT_FAILS_WITH(tsrGetMatmulDescriptor(mm, &t, nullptr, &coef, &order),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "act_mode is NULL");
  ASSERT_OK(tsrSetMatmulDescriptor(mm, TSR_DATA_INT32, nullptr, TSR_MATMUL_BLEND_AFTER_ACTIVATION));
  ASSERT_OK(tsrGetMatmulDescriptor(mm, &t, &mode, &coef, &order));
  EXPECT_EQ(t, TSR_DATA_INT32);
  EXPECT_EQ(mode, TSR_ACTIVATION_IDENTITY);
  EXPECT_EQ(coef, 0.0);
  EXPECT_OK(tsrDestroyMatmulDescriptor(mm));
  EXPECT_OK(tsrDestroyMatmulDescriptor(nullptr));
}

}  // namespace
