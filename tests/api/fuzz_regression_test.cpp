// Unit tests for what the C API fuzzer (tests/fuzz) found: legal but unusual descriptors that
// crashed or failed inside the CPU backend. Each has its input in tests/fuzz/corpus/regression-*.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace tessera::testing;

namespace {

tessera::tensor_desc strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  return tessera::tensor_desc(TSR_DATA_FLOAT, dims, strides);
}

class FuzzRegression : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_loaded("onednn")) GTEST_SKIP() << "oneDNN plugin not built";
  }
  tessera::handle h_{TSR_DEVICE_CPU, 0};
};

}  // namespace

// A channels-last C with one channel (dims 2x1x6, strides 6,1,1): oneDNN's gemm matmul accepted
// it when the primitive was made and refused it when run (EXECUTION_FAILED after can_implement
// said yes).
TEST_F(FuzzRegression, matmul_writes_a_c_whose_size_1_dim_has_the_inner_stride) {
  tessera::matmul_desc mm;
  tessera::tensor_desc a = strided({2, 1, 3}, {3, 1, 1});
  tessera::tensor_desc b = strided({2, 3, 6}, {18, 1, 3});  // column-major B
  tessera::tensor_desc c = strided({2, 1, 6}, {6, 1, 1});
  std::vector<float> av = {1, 2, 3, -1, 0, 1};
  std::vector<float> bv(36);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  std::vector<float> cv(12, 7.0f);
  ASSERT_OK(tsrMatmul(h_, mm, TSR_ALGO_AUTO, 1.0f, a, av.data(), b, bv.data(), nullptr, nullptr,
                      0.0f, c, cv.data(), nullptr, 0));
  for (int batch = 0; batch < 2; ++batch)
    for (int n = 0; n < 6; ++n) {
      float expect = 0;
      for (int k = 0; k < 3; ++k) expect += av[batch * 3 + k] * bv[batch * 18 + k * 1 + n * 3];
      EXPECT_EQ(cv[batch * 6 + n], expect) << "batch " << batch << " n " << n;
    }
}

// One-element tensors whose (meaningless) stride is about 9e18: oneDNN's binary primitive crashed
// (SEGV) while analysing the layout, in can_implement.
TEST_F(FuzzRegression, op_tensor_on_one_element_tensors_with_huge_strides) {
  tessera::tensor_desc a(TSR_DATA_HALF, {1}, {1});
  tessera::tensor_desc b = strided({1}, {4593600975217868735});
  tessera::tensor_desc c = strided({1}, {9196339502505792059});
  tsrOpTensorDescriptor_t op = nullptr;
  ASSERT_OK(tsrCreateOpTensorDescriptor(&op));
  ASSERT_OK(tsrSetOpTensorDescriptor(op, TSR_OP_TENSOR_ADD, TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN));
  const uint16_t a_half = 0x4000;  // 2.0 in fp16
  float bv = 3.0f, cv = 100.0f;
  EXPECT_OK(tsrOpTensor(h_, op, 1.0f, a, &a_half, 2.0f, b, &bv, 0.0f, c, &cv));
  EXPECT_EQ(cv, 8.0f);
  tsrDestroyOpTensorDescriptor(op);
}

// A matmul with M = 2^40 (only a workspace query: nothing is allocated): oneDNN's brgemm blocking
// heuristic divided by zero (SIGFPE). Dims beyond int32 are declined with a reason.
TEST_F(FuzzRegression, matmul_with_a_dim_beyond_int32_is_declined_not_a_crash) {
  const int64_t m = int64_t(1) << 40;
  tessera::matmul_desc mm;
  tessera::tensor_desc a = strided({3, 1, m, 9}, {9 * m, 9 * m, 9, 1});
  tessera::tensor_desc b = strided({3, 1, 9, 9}, {81, 81, 9, 1});
  tessera::tensor_desc c = strided({3, 1, m, 9}, {9 * m, 9 * m, 9, 1});
  size_t bytes = 0;
  EXPECT_FAILS_WITH(tsrGetMatmulWorkspaceSize(h_, mm, a, b, nullptr, c, TSR_ALGO_AUTO, &bytes),
                    TSR_STATUS_NOT_SUPPORTED_NO_KERNEL, "onednn/matmul",
                    "dim 2 = 1099511627776, above the 2^31 - 1");
}

// A broadcast x (all strides 0) whose dims multiply past int64: deriving its per-activation
// parameter tensor overflowed (UB) and gave a garbage descriptor. Now: SIZE_OVERFLOW, untouched.
TEST_F(FuzzRegression, batch_norm_parameters_of_a_huge_broadcast_x_are_a_size_overflow) {
  const int64_t big = int64_t(1) << 31;
  tessera::tensor_desc x = strided({2, big, big, big}, {0, 0, 0, 0});
  tessera::tensor_desc param(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 3, 1, 1});
  EXPECT_FAILS_WITH(tsrDeriveBatchNormTensorDescriptor(x, TSR_BATCHNORM_PER_ACTIVATION, param),
                    TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW, "tsrDeriveBatchNormTensorDescriptor",
                    "x_desc has dims", "overflows");
  int n = 0;
  int64_t dims[4], strides[4];
  tsrDataType_t type;
  ASSERT_OK(tsrGetTensorNdDescriptor(param, 4, &type, &n, dims, strides));
  EXPECT_EQ(std::vector<int64_t>(dims, dims + n), (std::vector<int64_t>{1, 3, 1, 1}));
  // The spatial mode's parameters (1 x 2^31 x 1 x 1) are fine.
  EXPECT_OK(tsrDeriveBatchNormTensorDescriptor(x, TSR_BATCHNORM_SPATIAL, param));
}

// Pooling a broadcast x whose spatial dim is 2^63 - 1: dim + padding overflowed (UB) while
// inferring the output. Now: SIZE_OVERFLOW naming the dim.
TEST_F(FuzzRegression, pooling_output_of_a_dim_near_2_63_with_padding_is_a_size_overflow) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  tessera::pooling_desc pool(TSR_POOLING_MAX, {2, 2}, {1, 1}, {1, 1}, {1, 1});
  tessera::tensor_desc x = strided({1, 1, max, 4}, {0, 0, 0, 1});
  int64_t out[4] = {0, 0, 0, 0};
  EXPECT_FAILS_WITH(tsrGetPoolingNdForwardOutputDim(pool, x, 4, out),
                    TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW, "tsrGetPoolingNdForwardOutputDim",
                    "spatial dim 0 of x_desc is 9223372036854775807");
  EXPECT_EQ(out[2], 0);
}

// A find whose y has strides spanning about 13 TB (the fuzzer's were 13194139533316 bytes;
// regression-find-scratch-y-beyond-device-memory): find asked the device's allocator for a scratch
// y of that span and failed with EXECUTION_FAILED_OUT_OF_MEMORY (ASan warning at the request). No
// such y can exist in the machine's memory, so it is now BAD_PARAM_OUT_OF_RANGE naming the
// descriptor, before any allocation, and the outputs stay as they were. Backward data's dx is
// checked the same way.
TEST_F(FuzzRegression, find_on_a_y_spanning_more_than_the_machine_is_refused_naming_y_desc) {
  const int64_t far = int64_t(3) << 40;  // elements between the two images of y
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8, 9, 9});
  tessera::tensor_desc w(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {4, 8, 3, 3});
  tessera::tensor_desc y = strided({2, 4, 9, 9}, {far, 81, 9, 1});
  tessera::convolution_desc conv({1, 1}, {1, 1}, {1, 1}, {1, 1});
  const size_t span = y.size_in_bytes();
  const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
  if (span <= physical) GTEST_SKIP() << "this machine has " << physical << " bytes: such a y fits it";
  std::vector<float> xv(2 * 8 * 9 * 9, 1.0f), wv(4 * 8 * 3 * 3, 1.0f), yv(2 * 4 * 9 * 9, 0.0f);

  // Poisoned outputs: a failing call must leave every byte of them.
  tsrAlgoPerf_t perf[4];
  std::memset(perf, 0x5a, sizeof(perf));
  for (tsrAlgoPerf_t& p : perf) p.struct_size = sizeof(p);
  tsrAlgoPerf_t poisoned[4];
  std::memcpy(poisoned, perf, sizeof(perf));
  int returned_count = -7;
  EXPECT_FAILS_WITH(tsrFindConvolutionForwardAlgorithm(h_, x, xv.data(), w, wv.data(), conv, y, yv.data(), 4,
                                                       &returned_count, perf, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrFindConvolutionForwardAlgorithm: y_desc spans " + std::to_string(span) + " bytes",
                    "more than the device's " + std::to_string(physical) + " bytes of memory",
                    "scratch y");
  EXPECT_EQ(returned_count, -7);
  EXPECT_EQ(std::memcmp(perf, poisoned, sizeof(perf)), 0) << "perf was written";

  // Backward data measures on a scratch dx: the same refusal, naming dx_desc.
  tessera::tensor_desc dy(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 4, 9, 9});
  tessera::tensor_desc dx = strided({2, 8, 9, 9}, {far, 81, 9, 1});
  EXPECT_FAILS_WITH(tsrFindConvolutionBackwardDataAlgorithm(h_, w, wv.data(), dy, yv.data(), conv, dx, xv.data(), 4,
                                                            &returned_count, perf, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrFindConvolutionBackwardDataAlgorithm: dx_desc spans " +
                        std::to_string(dx.size_in_bytes()) + " bytes");
  EXPECT_EQ(returned_count, -7);
  EXPECT_EQ(std::memcmp(perf, poisoned, sizeof(perf)), 0) << "perf was written";
}
