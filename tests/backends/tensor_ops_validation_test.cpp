// Argument validation of the tensor operations: each bad argument gives its specific status, a
// message naming the function, the argument and the value, and leaves every output untouched.
// Runs on the CPU handle, whose device memory is host memory, so outputs are checked directly.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <vector>

using namespace tessera::testing;

namespace {

constexpr float kSentinel = -12345.0f;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

class TensorOpsValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_OK(tsrGetDeviceCount(TSR_DEVICE_CPU, &n));
    if (n == 0) GTEST_SKIP() << "no CPU backend loaded";
    int kernels = 0;
    ASSERT_OK(tsrGetKernelCount(TSR_OP_ADD_TENSOR, &kernels));
    if (kernels == 0) GTEST_SKIP() << "no tensor-op kernels loaded";
    ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &h_));
  }
  void TearDown() override { tsrDestroy(h_); }

  tsrTensorDescriptor_t desc(std::vector<int64_t> dims, tsrDataType_t dt = TSR_DATA_FLOAT) {
    tsrTensorDescriptor_t d = nullptr;
    tsrCreateTensorDescriptor(&d);
    tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, dt, static_cast<int>(dims.size()), dims.data());
    owned_.emplace_back(d);
    return d;
  }
  tsrTensorDescriptor_t unset_desc() {
    tsrTensorDescriptor_t d = nullptr;
    tsrCreateTensorDescriptor(&d);
    owned_.emplace_back(d);
    return d;
  }
  // A buffer of sentinels, large enough for any tensor here.
  std::vector<float>& buffer() {
    buffers_.emplace_back(4096, kSentinel);
    return buffers_.back();
  }
  static bool untouched(const std::vector<float>& b) {
    for (float v : b)
      if (v != kSentinel) return false;
    return true;
  }

  tsrHandle_t h_ = nullptr;
  std::vector<tessera::detail::owner<tsrTensorDescriptor_t, tsrDestroyTensorDescriptor>> owned_;
  std::deque<std::vector<float>> buffers_;  // deque: buffer() hands out references that must stay valid
};

TEST_F(TensorOpsValidation, add_tensor_names_each_bad_argument_and_writes_nothing) {
  auto c_desc = desc({2, 3, 4, 4}), a_desc = desc({1, 3, 1, 1}), bad = desc({1, 5, 1, 1});
  auto& a = buffer();
  auto& c = buffer();
  EXPECT_FAILS_WITH(tsrAddTensor(nullptr, 1, a_desc, a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrAddTensor", "handle");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, nullptr, a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrAddTensor", "a_desc");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, a_desc, a.data(), 0, unset_desc(), c.data()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "tsrAddTensor", "c_desc", "never set");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, a_desc, nullptr, 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrAddTensor: a is NULL");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, a_desc, a.data(), 0, c_desc, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrAddTensor: c is NULL");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, kNaN, a_desc, a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrAddTensor", "alpha", "finite");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, a_desc, a.data(), INFINITY, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrAddTensor", "beta");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, bad, a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrAddTensor", "a_desc has dims 1x5x1x1",
                    "dim 1 is 5", "2x3x4x4");
  EXPECT_FAILS_WITH(tsrAddTensor(h_, 1, desc({3}), a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "a_desc has 1 dims", "c_desc's 4");
  EXPECT_TRUE(untouched(c));
  EXPECT_OK(tsrAddTensor(h_, 1, a_desc, a.data(), 0, c_desc, c.data()));
  EXPECT_EQ(c[0], kSentinel);  // a's sentinel, added with beta 0
}

TEST_F(TensorOpsValidation, op_tensor_descriptor_rejects_bad_values) {
  tsrOpTensorDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreateOpTensorDescriptor(&d));
  EXPECT_FAILS_WITH(tsrSetOpTensorDescriptor(d, (tsrOpTensorOp_t)99, TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrSetOpTensorDescriptor", "op 99");
  EXPECT_FAILS_WITH(tsrSetOpTensorDescriptor(d, TSR_OP_TENSOR_ADD, TSR_DATA_HALF, TSR_NOT_PROPAGATE_NAN),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "compute_type", "TSR_DATA_FLOAT");
  EXPECT_FAILS_WITH(tsrSetOpTensorDescriptor(d, TSR_OP_TENSOR_ADD, TSR_DATA_FLOAT, (tsrNanPropagation_t)7),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nan_propagation 7");
  tsrOpTensorOp_t op;
  tsrDataType_t ct;
  tsrNanPropagation_t nan;
  EXPECT_FAILS_WITH(tsrGetOpTensorDescriptor(d, &op, &ct, &nan), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "op_desc", "never set");
  ASSERT_OK(tsrSetOpTensorDescriptor(d, TSR_OP_TENSOR_MAX, TSR_DATA_FLOAT, TSR_PROPAGATE_NAN));
  ASSERT_OK(tsrGetOpTensorDescriptor(d, &op, &ct, &nan));
  EXPECT_EQ(op, TSR_OP_TENSOR_MAX);
  EXPECT_EQ(nan, TSR_PROPAGATE_NAN);
  tsrDestroyOpTensorDescriptor(d);
}

TEST_F(TensorOpsValidation, op_tensor_names_each_bad_argument_and_writes_nothing) {
  tessera::op_tensor_desc add(TSR_OP_TENSOR_ADD), root(TSR_OP_TENSOR_SQRT);
  tsrOpTensorDescriptor_t never_set = nullptr;
  tsrCreateOpTensorDescriptor(&never_set);
  auto c_desc = desc({2, 3, 4, 4}), b_desc = desc({1, 3, 1, 1});
  auto& a = buffer();
  auto& b = buffer();
  auto& c = buffer();
  EXPECT_FAILS_WITH(tsrOpTensor(h_, nullptr, 1, c_desc, a.data(), 1, b_desc, b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrOpTensor", "op_desc is NULL");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, never_set, 1, c_desc, a.data(), 1, b_desc, b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NOT_INITIALIZED, "op_desc", "tsrSetOpTensorDescriptor");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, add, 1, c_desc, a.data(), 1, nullptr, b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "b_desc");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, add, 1, c_desc, a.data(), 1, b_desc, nullptr, 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrOpTensor: b is NULL");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, add, 1, c_desc, a.data(), kNaN, b_desc, b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "alpha2");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, add, 1, desc({2, 3, 4, 5}), a.data(), 1, b_desc, b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "a_desc has dims 2x3x4x5", "c_desc (2x3x4x4)");
  EXPECT_FAILS_WITH(tsrOpTensor(h_, add, 1, c_desc, a.data(), 1, desc({2, 3, 2, 1}), b.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "b_desc has dims 2x3x2x1", "dim 2 is 2");
  EXPECT_TRUE(untouched(c));
  tsrDestroyOpTensorDescriptor(never_set);
  // Unary ops ignore b: NULL is fine.
  std::vector<float> ones(4096, 4.0f);
  EXPECT_OK(tsrOpTensor(h_, root, 1, c_desc, ones.data(), 1, nullptr, nullptr, 0, c_desc, c.data()));
  EXPECT_EQ(c[0], 2.0f);
}

TEST_F(TensorOpsValidation, scale_set_and_transform_name_each_bad_argument) {
  auto y_desc = desc({2, 3, 4, 4});
  auto& x = buffer();
  auto& y = buffer();
  EXPECT_FAILS_WITH(tsrScaleTensor(h_, y_desc, nullptr, 2), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrScaleTensor: y is NULL");
  EXPECT_FAILS_WITH(tsrScaleTensor(h_, y_desc, y.data(), INFINITY), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrScaleTensor", "alpha");
  EXPECT_FAILS_WITH(tsrSetTensor(h_, nullptr, y.data(), 1), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrSetTensor", "y_desc");
  EXPECT_FAILS_WITH(tsrSetTensor(h_, desc({2, 3}, TSR_DATA_INT8), y.data(), NAN),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrSetTensor", "value", "s8");
  EXPECT_FAILS_WITH(tsrTransformTensor(h_, 1, desc({2, 3, 4, 5}), x.data(), 0, y_desc, y.data()),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "tsrTransformTensor", "y_desc has dims 2x3x4x4",
                    "x_desc (2x3x4x5)");
  EXPECT_FAILS_WITH(tsrTransformTensor(h_, 1, y_desc, x.data(), kNaN, y_desc, y.data()),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrTransformTensor", "beta");
  EXPECT_FAILS_WITH(tsrTransformTensor(h_, 1, y_desc, nullptr, 0, y_desc, y.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrTransformTensor: x is NULL");
  // An output whose strides make elements share memory would be scaled twice: declined.
  tsrTensorDescriptor_t overlapping = unset_desc();
  const int64_t dims[] = {4, 3}, strides[] = {0, 1};
  ASSERT_OK(tsrSetTensorNdDescriptor(overlapping, TSR_DATA_FLOAT, 2, dims, strides));
  EXPECT_FAILS_WITH(tsrScaleTensor(h_, overlapping, y.data(), 2), TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                    "overlapping strides");
  EXPECT_TRUE(untouched(y));
  // Transform converts types: f32 to f16 is accepted.
  EXPECT_OK(tsrTransformTensor(h_, 1, y_desc, x.data(), 0, desc({2, 3, 4, 4}, TSR_DATA_HALF), y.data()));
}

TEST_F(TensorOpsValidation, reduce_descriptor_rejects_bad_values) {
  tsrReduceTensorDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreateReduceTensorDescriptor(&d));
  const auto set = [&](int op, int ct, int nan, int idx, int idx_type) {
    return tsrSetReduceTensorDescriptor(d, (tsrReduceTensorOp_t)op, (tsrDataType_t)ct,
                                        (tsrNanPropagation_t)nan, (tsrReduceTensorIndices_t)idx,
                                        (tsrIndicesType_t)idx_type);
  };
  EXPECT_FAILS_WITH(set(42, 0, 0, 0, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrSetReduceTensorDescriptor", "op 42");
  EXPECT_FAILS_WITH(set(0, TSR_DATA_INT32, 0, 0, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "compute_type", "s32");
  EXPECT_FAILS_WITH(set(0, 0, 3, 0, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "nan_propagation 3");
  EXPECT_FAILS_WITH(set(0, 0, 0, 5, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "indices 5");
  EXPECT_FAILS_WITH(set(TSR_REDUCE_TENSOR_ADD, 0, 0, 1, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "FLATTENED_INDICES", "MIN, MAX and AMAX");
  EXPECT_FAILS_WITH(set(TSR_REDUCE_TENSOR_MAX, 0, 0, 1, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "indices_type 2");
  ASSERT_OK(set(TSR_REDUCE_TENSOR_AMAX, 0, 1, 1, 0));
  tsrReduceTensorOp_t op;
  tsrDataType_t ct;
  tsrNanPropagation_t nan;
  tsrReduceTensorIndices_t idx;
  tsrIndicesType_t idx_type;
  ASSERT_OK(tsrGetReduceTensorDescriptor(d, &op, &ct, &nan, &idx, &idx_type));
  EXPECT_EQ(op, TSR_REDUCE_TENSOR_AMAX);
  EXPECT_EQ(idx, TSR_REDUCE_TENSOR_FLATTENED_INDICES);
  tsrDestroyReduceTensorDescriptor(d);
}

TEST_F(TensorOpsValidation, reduce_tensor_names_each_bad_argument_and_writes_nothing) {
  tessera::reduce_tensor_desc max_idx(TSR_REDUCE_TENSOR_MAX, TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN,
                                      TSR_REDUCE_TENSOR_FLATTENED_INDICES);
  auto a_desc = desc({2, 3, 4, 4}, TSR_DATA_HALF), c_desc = desc({2, 1, 4, 4}, TSR_DATA_HALF);
  auto& a = buffer();
  auto& c = buffer();
  std::vector<uint32_t> idx(64, 77u);
  size_t idx_bytes = 0, ws_bytes = 0;
  ASSERT_OK(tsrGetReductionIndicesSize(h_, max_idx, a_desc, c_desc, &idx_bytes));
  EXPECT_EQ(idx_bytes, 32u * 4u);
  ASSERT_OK(tsrGetReductionWorkspaceSize(h_, max_idx, a_desc, c_desc, TSR_ALGO_AUTO, &ws_bytes));
  EXPECT_GT(ws_bytes, 0u);  // f16 is reduced through f32 buffers
  std::vector<uint8_t> ws(ws_bytes);
  const auto call = [&](void* indices, size_t indices_size, void* workspace, size_t workspace_size,
                        tsrTensorDescriptor_t cd, tsrAlgo_t algo = TSR_ALGO_AUTO) {
    return tsrReduceTensor(h_, max_idx, algo, indices, indices_size, workspace, workspace_size, 1.0f,
                           a_desc, a.data(), 0.0f, cd, c.data());
  };
  EXPECT_FAILS_WITH(call(nullptr, idx_bytes, ws.data(), ws_bytes, c_desc), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrReduceTensor", "indices is NULL", "FLATTENED");
  EXPECT_FAILS_WITH(call(idx.data(), 8, ws.data(), ws_bytes, c_desc), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "indices_size is 8", "at least 128");
  EXPECT_FAILS_WITH(call(idx.data(), idx_bytes, nullptr, 64, c_desc), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "workspace is NULL but workspace_size is 64");
  EXPECT_FAILS_WITH(call(idx.data(), idx_bytes, ws.data(), 1, c_desc),
                    TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL, "tsrReduceTensor", "workspace too small");
  EXPECT_FAILS_WITH(call(idx.data(), idx_bytes, ws.data(), ws_bytes, desc({2, 2, 4, 4}, TSR_DATA_HALF)),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "c_desc has dims 2x2x4x4", "dim 1 is 2",
                    "expected 1 (reduced)");
  EXPECT_FAILS_WITH(call(idx.data(), idx_bytes, ws.data(), ws_bytes, c_desc, 123456),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo 123456");
  EXPECT_FAILS_WITH(tsrReduceTensor(h_, nullptr, TSR_ALGO_AUTO, idx.data(), idx_bytes, ws.data(), ws_bytes,
                                    1, a_desc, a.data(), 0, c_desc, c.data()),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "reduce_desc is NULL");
  EXPECT_TRUE(untouched(c));
  for (uint32_t v : idx) EXPECT_EQ(v, 77u);
  // The same call with everything right succeeds, and the pool serves a NULL/0 workspace.
  EXPECT_OK(call(idx.data(), idx_bytes, ws.data(), ws_bytes, c_desc));
  EXPECT_OK(call(idx.data(), idx_bytes, nullptr, 0, c_desc));
}

}  // namespace
