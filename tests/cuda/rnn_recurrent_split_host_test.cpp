// The RNN forward's default split of its recurrent GEMM into k-slices
// (cuda_backend/rnn_space_layout.hpp, default_recurrent_slices) on the host: the anchor LSTM gets
// the 4 slices measured fastest on the H200, every split divides H into slices of at least 256 and
// keeps the tiles within two per SM, two directions and short hidden sizes are never split, and
// an override that does not divide H falls back to one slice. Needs no GPU: the kernels are checked
// by the conformance test's RNN shapes (and under TESSERA_CUDA_RNN_RECURRENT_SPLIT=4 by the device run).
#include "rnn_space_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using tessera::cuda::rnn::backward_data_workspace_of;
using tessera::cuda::rnn::backward_slices;
using tessera::cuda::rnn::default_backward_slices;
using tessera::cuda::rnn::default_recurrent_slices;
using tessera::cuda::rnn::recurrent_slices;
using tessera::cuda::rnn::no_region;
using tessera::cuda::rnn::rnn_geometry;

rnn_geometry lstm(int64_t n, int64_t h, int64_t dirs) {
  rnn_geometry g;
  g.D = dirs;
  g.G = 4;
  g.H = h;
  g.N = n;
  g.GH = g.G * g.H;
  g.lstm = true;
  return g;
}

constexpr int h200_sms = 132;

TEST(RnnRecurrentSplit, the_anchor_lstm_takes_four_slices) {
  EXPECT_EQ(default_recurrent_slices(lstm(64, 1024, 1), h200_sms), 4);
}

TEST(RnnRecurrentSplit, splits_divide_h_into_long_slices_within_two_tiles_per_sm) {
  for (int64_t n : {1, 8, 64, 100, 256, 1024}) {
    for (int64_t h : {32, 96, 256, 512, 1000, 1024, 2048, 4096}) {
      SCOPED_TRACE(testing::Message() << "N=" << n << " H=" << h);
      const rnn_geometry g = lstm(n, h, 1);
      const int64_t s = default_recurrent_slices(g, h200_sms);
      ASSERT_GE(s, 1);
      EXPECT_EQ(h % s, 0);
      if (s > 1) {
        EXPECT_GE(h / s, 256);
        EXPECT_LE(((n + 63) / 64) * ((g.GH + 63) / 64) * s, 2 * h200_sms);
      }
      EXPECT_EQ(recurrent_slices(g, s), s);  // the run takes the default as it is
    }
  }
}

TEST(RnnRecurrentSplit, filled_gpus_short_states_and_two_directions_stay_whole) {
  EXPECT_EQ(default_recurrent_slices(lstm(256, 1024, 1), h200_sms), 1);  // 256 tiles already
  EXPECT_EQ(default_recurrent_slices(lstm(64, 256, 1), h200_sms), 1);    // slices would be < 256
  EXPECT_EQ(default_recurrent_slices(lstm(64, 1024, 2), h200_sms), 1);   // directions take the batch dim
  EXPECT_EQ(recurrent_slices(lstm(64, 1000, 1), 3), 1);                  // 3 does not divide 1000
}

// Backward data's step GEMM (k over G*H) splits only where asked, for one direction and slices
// dividing G*H, and its workspace then holds one [N][H] fp32 block per slice.
TEST(RnnRecurrentSplit, backward_slices_divide_gh_for_one_direction_and_get_their_workspace) {
  const rnn_geometry g = lstm(64, 1024, 1);
  EXPECT_EQ(backward_slices(g, 0), 1);
  EXPECT_EQ(backward_slices(g, 8), 8);
  EXPECT_EQ(backward_slices(lstm(64, 1024, 2), 8), 1);
  EXPECT_EQ(backward_slices(lstm(64, 1000, 1), 3), 1);  // 3 does not divide 4000
  EXPECT_EQ(backward_slices(lstm(64, 1000, 1), 5), 5);  // 5 divides G*H = 4000
  EXPECT_EQ(backward_data_workspace_of(g, 1).parts, no_region);
  const auto one = backward_data_workspace_of(g, 1), eight = backward_data_workspace_of(g, 8);
  ASSERT_NE(eight.parts, no_region);
  EXPECT_GE(eight.bytes - one.bytes, size_t{8} * 64 * 1024 * 4);
}

// The default backward split: 16 slices for the anchor LSTM (measured best with 8, on the H200),
// none for two directions or short G*H, and every default a valid split of G*H.
TEST(RnnRecurrentSplit, backward_default_splits_the_anchor_into_sixteen) {
  EXPECT_EQ(default_backward_slices(lstm(64, 1024, 1), h200_sms), 16);
  EXPECT_EQ(default_backward_slices(lstm(64, 1024, 2), h200_sms), 1);
  EXPECT_EQ(default_backward_slices(lstm(64, 32, 1), h200_sms), 1);  // G*H = 128 < 2 * 256
  for (int64_t n : {1, 64, 256, 1024})
    for (int64_t h : {16, 96, 512, 1000, 1024, 4096}) {
      const rnn_geometry g = lstm(n, h, 1);
      const int64_t s = default_backward_slices(g, h200_sms);
      EXPECT_EQ(backward_slices(g, s), s) << "N=" << n << " H=" << h;
      if (s > 1) {
        EXPECT_GE(g.GH / s, 256);
        EXPECT_LE(((n + 63) / 64) * ((h + 63) / 64) * s, 2 * h200_sms);
      }
    }
}

}  // namespace
