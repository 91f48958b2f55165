// The tensor-core convolutions' heuristic (cuda_backend/conv_igemm_wave_model.hpp) against the
// choices measured on the H200: ResNet-50 at N=256, fp16 NHWC, each layer's fastest kernel of
// ours by measurement (tessera-bench --tuning=tune --backend=cuda, device run 6 of the evening of
// 2026-12-03, docs/performance/run_2026-12-03_evening_ours_tuned_vs_torch_*.json). The model
// must rank the measured winner first among the same direction's tensor-core configurations, so
// that an untuned handle gets it too. Needs no GPU.
#include "conv_igemm_wave_model.hpp"
#include "conv_wgrad_split_plan.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace igemm = tessera::cuda::igemm;

igemm::nhwc_geometry layer(int c, int hw, int k, int rs, int stride, int pad) {
  igemm::nhwc_geometry g{};
  g.n = 256;
  g.c = c;
  g.h = g.w = hw;
  g.k = k;
  g.r = g.s = rs;
  g.p = g.q = (hw + 2 * pad - rs) / stride + 1;
  for (int i = 0; i < 2; ++i) {
    g.pad_before[i] = g.pad_after[i] = pad;
    g.stride[i] = stride;
    g.dilation[i] = 1;
  }
  return g;
}

struct tile {
  int m, n;
};
constexpr tile t128x128{128, 128}, t128x64{128, 64}, t64x64{64, 64};

double fprop_us(const igemm::nhwc_geometry& g, tile t) {
  return igemm::wave_estimate_us(t.m, t.n, 64, igemm::fprop_work(g, 64, 0.0));
}
double dgrad_us(const igemm::nhwc_geometry& g, tile t) {
  return igemm::wave_estimate_us(t.m, t.n, 64, igemm::dgrad_work(g, 64));
}
double wgrad_us(const igemm::nhwc_geometry& g, tile t, bool split) {
  const int splits = split ? igemm::plan_wgrad_split(g, t.m, t.n, 64, igemm::model_sms).splits : 1;
  return igemm::wave_estimate_us(t.m, t.n, 64, igemm::wgrad_work(g, t.n, 64, splits, split));
}

// Forward: 128x64 where the layer has 64 filters, 128x128 otherwise.
TEST(IgemmWaveModel, forward_ranks_the_measured_tiles_first) {
  EXPECT_LT(fprop_us(layer(64, 56, 64, 1, 1, 0), t128x64), fprop_us(layer(64, 56, 64, 1, 1, 0), t128x128));
  EXPECT_LT(fprop_us(layer(256, 56, 64, 1, 1, 0), t128x64), fprop_us(layer(256, 56, 64, 1, 1, 0), t128x128));
  EXPECT_LT(fprop_us(layer(64, 56, 256, 1, 1, 0), t128x128), fprop_us(layer(64, 56, 256, 1, 1, 0), t128x64));
  EXPECT_LT(fprop_us(layer(128, 28, 512, 1, 1, 0), t128x128), fprop_us(layer(128, 28, 512, 1, 1, 0), t128x64));
}

// Backward data (N is dx's channels): 128x64 for C = 64 (measured 0.145 against 0.181 ms on the
// 56x56 1x1 layer), 128x128 from C = 256 up.
TEST(IgemmWaveModel, backward_data_ranks_the_measured_tiles_first) {
  EXPECT_LT(dgrad_us(layer(64, 56, 64, 1, 1, 0), t128x64), dgrad_us(layer(64, 56, 64, 1, 1, 0), t128x128));
  EXPECT_LT(dgrad_us(layer(64, 56, 64, 3, 1, 1), t128x64), dgrad_us(layer(64, 56, 64, 3, 1, 1), t128x128));
  EXPECT_LT(dgrad_us(layer(64, 56, 256, 1, 1, 0), t128x64), dgrad_us(layer(64, 56, 256, 1, 1, 0), t128x128));
  EXPECT_LT(dgrad_us(layer(256, 56, 64, 1, 1, 0), t128x128), dgrad_us(layer(256, 56, 64, 1, 1, 0), t128x64));
  EXPECT_LT(dgrad_us(layer(512, 28, 128, 1, 1, 0), t128x128), dgrad_us(layer(512, 28, 128, 1, 1, 0), t128x64));
}

// Backward filter: split-K wherever dw has few tiles (64x64 tiles for 64 filters), the unsplit
// 128x64 kernel where dw fills the GPU by itself (the 7x7 layers).
TEST(IgemmWaveModel, backward_filter_ranks_the_measured_kernels_first) {
  const auto small = layer(64, 56, 64, 1, 1, 0);
  EXPECT_LT(wgrad_us(small, t64x64, true), wgrad_us(small, t128x64, true));
  EXPECT_LT(wgrad_us(small, t64x64, true), wgrad_us(small, t64x64, false));
  const auto taps = layer(64, 56, 64, 3, 1, 1);
  EXPECT_LT(wgrad_us(taps, t64x64, true), wgrad_us(taps, t128x64, false));
  const auto wide = layer(256, 56, 128, 1, 1, 0);
  EXPECT_LT(wgrad_us(wide, t128x64, true), wgrad_us(wide, t128x64, false));
  for (const auto& g : {layer(512, 14, 512, 3, 2, 1), layer(2048, 7, 512, 1, 1, 0)}) {
    SCOPED_TRACE("C=" + std::to_string(g.c) + " K=" + std::to_string(g.k) + " P=" + std::to_string(g.p));
    EXPECT_LT(wgrad_us(g, t128x64, false), wgrad_us(g, t128x64, true));
    EXPECT_LT(wgrad_us(g, t128x64, false), wgrad_us(g, t64x64, false));
  }
}

// The model's parts move the way they should: more splits of the same work never cost more
// waves than one, partial sums cost something, and staging costs what it moves.
TEST(IgemmWaveModel, its_terms_behave) {
  igemm::gemm_work w = igemm::wgrad_work(layer(64, 56, 64, 1, 1, 0), 64, 64, 1, false);
  const double unsplit = igemm::wave_estimate_us(64, 64, 64, w);
  w.splits = 128;
  EXPECT_LT(igemm::wave_estimate_us(64, 64, 64, w), unsplit / 50);
  const double without_partials = igemm::wave_estimate_us(64, 64, 64, w);
  w.fp32_partials = true;
  w.partial_elements = 64 * 64;
  EXPECT_GT(igemm::wave_estimate_us(64, 64, 64, w), without_partials);
  igemm::gemm_work staged = igemm::fprop_work(layer(64, 56, 64, 1, 1, 0), 64, 0.0);
  const double direct = igemm::wave_estimate_us(128, 64, 64, staged);
  staged.staging_bytes = 3.5e6;  // one microsecond's worth of DRAM, written and read
  EXPECT_NEAR(igemm::wave_estimate_us(128, 64, 64, staged) - direct, 2.0, 1e-9);
}

}  // namespace
