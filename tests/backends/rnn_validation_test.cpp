// RNN argument validation: every bad argument gives its own status and a message naming the
// function, the argument and the value, and nothing is written to the outputs.
#include "backend_fixture.hpp"
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <cstring>
#include <vector>

using namespace tessera::testing;

namespace {

constexpr float sentinel = 7.25f;

class RnnValidation : public ::testing::Test {
 protected:
  // An LSTM, 2 layers, bidirectional, input 3, hidden 4, T 5, N 2, seq-major, f32.
  static constexpr int64_t T = 5, N = 2, C = 3, H = 4, L = 2, D = 2;
  void SetUp() override {
    ASSERT_OK(tsrCreate(TSR_DEVICE_CPU, 0, &h_));
    ASSERT_OK(tsrCreateRnnDescriptor(&rnn_));
    ASSERT_OK(tsrSetRnnDescriptor(rnn_, TSR_LSTM, TSR_RNN_DOUBLE_BIAS, TSR_RNN_BIDIRECTIONAL,
                                  TSR_RNN_SEQ_MAJOR, TSR_DATA_FLOAT, TSR_DATA_FLOAT, C, H, L));
    x_ = make({T, N, C});
    y_ = make({T, N, H * D});
    hd_ = make({L * D, N, H});
    ASSERT_OK(tsrGetRnnWeightSpaceSize(h_, rnn_, &w_bytes_));
    x.assign(T * N * C, 0.5f);
    w.assign(w_bytes_ / 4, 0.125f);
    state.assign(L * D * N * H, 0.25f);
    y.assign(T * N * H * D, sentinel);
    hy.assign(state.size(), sentinel);
    reserve.assign(1 << 20, 0);
  }
  void TearDown() override {
    for (tsrTensorDescriptor_t d : owned_) tsrDestroyTensorDescriptor(d);
    tsrDestroyRnnDescriptor(rnn_);
    tsrDestroy(h_);
  }
  tsrTensorDescriptor_t make(const std::vector<int64_t>& dims, tsrDataType_t dt = TSR_DATA_FLOAT) {
    tsrTensorDescriptor_t d = nullptr;
    tsrCreateTensorDescriptor(&d);
    tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, dt, static_cast<int>(dims.size()), dims.data());
    owned_.push_back(d);
    return d;
  }
  tsrStatus_t forward(tsrTensorDescriptor_t xd, tsrTensorDescriptor_t yd, tsrTensorDescriptor_t hd,
                      tsrTensorDescriptor_t cd, tsrRnnForwardMode_t mode = TSR_RNN_FWD_INFERENCE,
                      size_t w_size = 0, void* reserve_p = nullptr, size_t reserve_size = 0) {
    return tsrRnnForward(h_, rnn_, mode, TSR_ALGO_AUTO, xd, x.data(), hd, state.data(), cd,
                         state.data(), w.data(), w_size ? w_size : w_bytes_, nullptr, 0, yd,
                         y.data(), hy.data(), hy.data(), reserve_p, reserve_size);
  }
  bool outputs_untouched() const {
    for (float v : y)
      if (v != sentinel) return false;
    for (float v : hy)
      if (v != sentinel) return false;
    return true;
  }

  tsrHandle_t h_ = nullptr;
  tsrRnnDescriptor_t rnn_ = nullptr;
  tsrTensorDescriptor_t x_ = nullptr, y_ = nullptr, hd_ = nullptr;
  size_t w_bytes_ = 0;
  std::vector<float> x, w, state, y, hy;
  std::vector<uint8_t> reserve;
  std::vector<tsrTensorDescriptor_t> owned_;
};

TEST_F(RnnValidation, set_descriptor_names_each_bad_argument) {
  tsrRnnDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreateRnnDescriptor(&d));
  auto set = [&](int mode, int bias, int dir, int layout, int dt, int math, int64_t c, int64_t hs,
                 int layers) {
    return tsrSetRnnDescriptor(d, static_cast<tsrRnnMode_t>(mode), static_cast<tsrRnnBiasMode_t>(bias),
                               static_cast<tsrRnnDirectionMode_t>(dir),
                               static_cast<tsrRnnDataLayout_t>(layout),
                               static_cast<tsrDataType_t>(dt), static_cast<tsrDataType_t>(math), c,
                               hs, layers);
  };
  EXPECT_FAILS_WITH(tsrSetRnnDescriptor(nullptr, TSR_LSTM, TSR_RNN_DOUBLE_BIAS, TSR_RNN_UNIDIRECTIONAL,
                                        TSR_RNN_SEQ_MAJOR, TSR_DATA_FLOAT, TSR_DATA_FLOAT, 1, 1, 1),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrSetRnnDescriptor", "desc");
  EXPECT_FAILS_WITH(set(9, 2, 0, 0, 0, 0, 1, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "cell_mode 9");
  EXPECT_FAILS_WITH(set(2, 7, 0, 0, 0, 0, 1, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "bias_mode 7");
  EXPECT_FAILS_WITH(set(2, 2, 3, 0, 0, 0, 1, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "direction 3");
  EXPECT_FAILS_WITH(set(2, 2, 0, 5, 0, 0, 1, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "data_layout 5");
  EXPECT_FAILS_WITH(set(2, 2, 0, 0, TSR_DATA_INT8, 0, 1, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "data_type");
  EXPECT_FAILS_WITH(set(2, 2, 0, 0, TSR_DATA_FLOAT, TSR_DATA_HALF, 1, 1, 1),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "math_precision");
  EXPECT_FAILS_WITH(set(2, 2, 0, 0, 0, 0, 0, 1, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "input_size is 0");
  EXPECT_FAILS_WITH(set(2, 2, 0, 0, 0, 0, 1, -2, 1), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "hidden_size is -2");
  EXPECT_FAILS_WITH(set(2, 2, 0, 0, 0, 0, 1, 1, 0), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "num_layers is 0");
  // Never set: every use says so.
  size_t bytes = 123;
  EXPECT_FAILS_WITH(tsrGetRnnWeightSpaceSize(h_, d, &bytes), TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                    "tsrGetRnnWeightSpaceSize", "rnn", "never set");
  EXPECT_EQ(bytes, 123u);
  EXPECT_OK(set(TSR_GRU, 2, 1, 1, TSR_DATA_BFLOAT16, TSR_DATA_FLOAT, 3, 4, 2));
  tsrRnnMode_t mode;
  int layers = 0;
  tsrRnnDataLayout_t layout;
  EXPECT_OK(tsrGetRnnDescriptor(d, &mode, nullptr, nullptr, &layout, nullptr, nullptr, nullptr,
                                nullptr, &layers));
  EXPECT_EQ(mode, TSR_GRU);
  EXPECT_EQ(layout, TSR_RNN_BATCH_MAJOR);
  EXPECT_EQ(layers, 2);
  tsrDestroyRnnDescriptor(d);
}

TEST_F(RnnValidation, weight_params_reject_bad_ids_and_write_nothing) {
  size_t mo = 11, bo = 22;
  EXPECT_FAILS_WITH(tsrGetRnnWeightParams(h_, rnn_, 4, 0, nullptr, &mo, nullptr, &bo),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrGetRnnWeightParams", "pseudo_layer is 4",
                    "0 to 3");
  EXPECT_FAILS_WITH(tsrGetRnnWeightParams(h_, rnn_, 0, 8, nullptr, &mo, nullptr, &bo),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "lin_id is 8", "0 to 7", "lstm");
  EXPECT_FAILS_WITH(tsrGetRnnWeightParams(h_, rnn_, -1, 0, nullptr, &mo, nullptr, &bo),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "pseudo_layer is -1");
  EXPECT_EQ(mo, 11u);
  EXPECT_EQ(bo, 22u);
  EXPECT_FAILS_WITH(tsrGetRnnWeightSpaceSize(h_, rnn_, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "bytes");
  EXPECT_FAILS_WITH(tsrGetRnnWeightSpaceSize(nullptr, rnn_, &mo), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "handle");
}

TEST_F(RnnValidation, forward_names_each_bad_tensor_and_writes_nothing) {
  tsrTensorDescriptor_t c_ = hd_;
  EXPECT_FAILS_WITH(forward(make({T, N}), y_, hd_, c_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "tsrRnnForward", "x_desc has 2 dims", "expected 3");
  EXPECT_FAILS_WITH(forward(make({T, N, C + 1}), y_, hd_, c_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "x_desc has dims 5x2x4", "input_size");
  EXPECT_FAILS_WITH(forward(make({T, N, C}, TSR_DATA_HALF), y_, hd_, c_),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "x_desc has data type f16");
  EXPECT_FAILS_WITH(forward(x_, make({T, N, H}), hd_, c_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "y_desc has dims 5x2x4", "5x2x8");
  EXPECT_FAILS_WITH(forward(x_, y_, make({L, N, H}), c_), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "h_desc has dims 2x2x4", "4x2x4");
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "c_desc is NULL");
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, make({L * D, N + 1, H})), TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                    "c_desc has dims 4x3x4");
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, c_, TSR_RNN_FWD_INFERENCE, w_bytes_ - 4),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "weight_space_size is",
                    std::to_string(w_bytes_));
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, c_, static_cast<tsrRnnForwardMode_t>(4)),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "fwd_mode 4");
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, c_, TSR_RNN_FWD_TRAINING), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "reserve_space is NULL");
  EXPECT_FAILS_WITH(forward(x_, y_, hd_, c_, TSR_RNN_FWD_TRAINING, 0, reserve.data(), 16),
                    TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL, "reserve_space_size is 16");
  EXPECT_FAILS_WITH(tsrRnnForward(h_, rnn_, TSR_RNN_FWD_INFERENCE, TSR_ALGO_AUTO, x_, nullptr, hd_,
                                  nullptr, c_, nullptr, w.data(), w_bytes_, nullptr, 0, y_, y.data(),
                                  nullptr, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrRnnForward: x is NULL");
  EXPECT_FAILS_WITH(tsrRnnForward(h_, rnn_, TSR_RNN_FWD_INFERENCE, TSR_ALGO_AUTO, x_, x.data(), hd_,
                                  nullptr, c_, nullptr, nullptr, w_bytes_, nullptr, 0, y_, y.data(),
                                  nullptr, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "weight_space is NULL");
  EXPECT_FAILS_WITH(tsrRnnForward(h_, rnn_, TSR_RNN_FWD_INFERENCE, TSR_ALGO_AUTO, x_, x.data(), hd_,
                                  nullptr, c_, nullptr, w.data(), w_bytes_, nullptr, 64, y_, y.data(),
                                  nullptr, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "workspace is NULL but workspace_size is 64");
  EXPECT_FAILS_WITH(tsrRnnForward(h_, rnn_, TSR_RNN_FWD_INFERENCE, 1 << 20, x_, x.data(), hd_,
                                  nullptr, c_, nullptr, w.data(), w_bytes_, nullptr, 0, y_, y.data(),
                                  nullptr, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "algo 1048576");
  EXPECT_FAILS_WITH(tsrRnnForward(nullptr, rnn_, TSR_RNN_FWD_INFERENCE, TSR_ALGO_AUTO, x_, x.data(),
                                  hd_, nullptr, c_, nullptr, w.data(), w_bytes_, nullptr, 0, y_,
                                  y.data(), nullptr, nullptr, nullptr, 0),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "handle");
  EXPECT_TRUE(outputs_untouched());
  // And the same call, well formed, runs (so the failures above were the arguments).
  EXPECT_OK(forward(x_, y_, hd_, c_));
  EXPECT_FALSE(outputs_untouched());
}

TEST_F(RnnValidation, backward_calls_check_arguments_and_the_reserve_space) {
  std::vector<float> dy(y.size(), 0.5f), dx(x.size(), sentinel), dw(w.size(), sentinel);
  const size_t rs = reserve.size();
  auto backward_data = [&](const void* dyp, void* dxp, void* reserve_p) {
    return tsrRnnBackwardData(h_, rnn_, TSR_ALGO_AUTO, y_, y.data(), dyp, hd_, nullptr, nullptr,
                              hd_, nullptr, nullptr, w.data(), w_bytes_, nullptr, 0, x_, dxp,
                              nullptr, nullptr, reserve_p, rs);
  };
  auto backward_weights = [&](int mode) {
    return tsrRnnBackwardWeights(h_, rnn_, TSR_ALGO_AUTO, static_cast<tsrWgradMode_t>(mode), x_,
                                 x.data(), hd_, nullptr, y_, y.data(), nullptr, 0, reserve.data(),
                                 rs, dw.data(), w_bytes_);
  };
  EXPECT_FAILS_WITH(backward_data(nullptr, dx.data(), reserve.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrRnnBackwardData: dy is NULL");
  EXPECT_FAILS_WITH(backward_data(dy.data(), nullptr, reserve.data()), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "dx is NULL");
  EXPECT_FAILS_WITH(backward_data(dy.data(), dx.data(), nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "reserve_space is NULL");
  EXPECT_FAILS_WITH(backward_weights(2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                    "tsrRnnBackwardWeights: wgrad_mode 2");
  // A reserve space no training forward wrote is refused before anything is written.
  EXPECT_FAILS_WITH(backward_data(dy.data(), dx.data(), reserve.data()),
                    TSR_STATUS_EXECUTION_FAILED, "reserve space was not written");
  for (float v : dx) ASSERT_EQ(v, sentinel);
  // After the forward, backward weights still needs backward data first.
  ASSERT_OK(forward(x_, y_, hd_, hd_, TSR_RNN_FWD_TRAINING, 0, reserve.data(), rs));
  EXPECT_FAILS_WITH(backward_weights(TSR_WGRAD_MODE_ADD), TSR_STATUS_EXECUTION_FAILED,
                    "tsrRnnBackwardData first");
  for (float v : dw) ASSERT_EQ(v, sentinel);
  EXPECT_OK(backward_data(dy.data(), dx.data(), reserve.data()));
  EXPECT_OK(backward_weights(TSR_WGRAD_MODE_SET));
}

TEST_F(RnnValidation, temp_space_sizes_check_mode_and_x) {
  size_t ws = 5, rs = 6;
  EXPECT_FAILS_WITH(tsrGetRnnTempSpaceSizes(h_, rnn_, static_cast<tsrRnnForwardMode_t>(3), x_, &ws, &rs),
                    TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "tsrGetRnnTempSpaceSizes", "mode 3");
  EXPECT_FAILS_WITH(tsrGetRnnTempSpaceSizes(h_, rnn_, TSR_RNN_FWD_TRAINING, make({T, N, 9}), &ws, &rs),
                    TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH, "x_desc has dims 5x2x9");
  EXPECT_FAILS_WITH(tsrGetRnnTempSpaceSizes(h_, rnn_, TSR_RNN_FWD_TRAINING, nullptr, &ws, &rs),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "x_desc is NULL");
  EXPECT_EQ(ws, 5u);
  EXPECT_EQ(rs, 6u);
  EXPECT_OK(tsrGetRnnTempSpaceSizes(h_, rnn_, TSR_RNN_FWD_TRAINING, x_, &ws, &rs));
  EXPECT_GT(rs, 0u);
  EXPECT_LE(rs, reserve.size());  // the fixture's reserve buffer is large enough
  EXPECT_OK(tsrGetRnnTempSpaceSizes(h_, rnn_, TSR_RNN_FWD_INFERENCE, x_, &ws, &rs));
  EXPECT_EQ(rs, 0u);
}

}  // namespace
