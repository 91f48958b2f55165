// The split-K backward filter's plan (cuda_backend/conv_wgrad_split_plan.hpp) on the host: for
// ResNet-50's layers and odd shapes, on devices of 1 to 1000 SMs, every k-tile of N*P*Q goes to
// exactly one split as the kernel assigns them (split z: [z * per, min((z + 1) * per, k_tiles))),
// no split is empty, the splits fit one wave, and the run-time plan never needs more workspace
// than the one sized before the device was known. Needs no GPU: the kernels themselves are
// checked by the conformance test's wgrad_split_* shapes.
#include "conv_wgrad_split_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace igemm = tessera::cuda::igemm;

igemm::nhwc_geometry geometry(int n, int c, int h, int w, int k, int r, int s, int stride, int pad) {
  igemm::nhwc_geometry g{};
  g.n = n;
  g.c = c;
  g.h = h;
  g.w = w;
  g.k = k;
  g.r = r;
  g.s = s;
  g.p = (h + 2 * pad - r) / stride + 1;
  g.q = (w + 2 * pad - s) / stride + 1;
  for (int i = 0; i < 2; ++i) {
    g.pad_before[i] = g.pad_after[i] = pad;
    g.stride[i] = stride;
    g.dilation[i] = 1;
  }
  return g;
}

std::vector<igemm::nhwc_geometry> shapes() {
  std::vector<igemm::nhwc_geometry> out;
  for (int n : {1, 3, 32, 256}) {
    out.push_back(geometry(n, 64, 56, 56, 64, 1, 1, 1, 0));
    out.push_back(geometry(n, 64, 56, 56, 64, 3, 3, 1, 1));
    out.push_back(geometry(n, 256, 56, 56, 128, 1, 1, 1, 0));
    out.push_back(geometry(n, 128, 56, 56, 128, 3, 3, 2, 1));
    out.push_back(geometry(n, 512, 14, 14, 512, 3, 3, 1, 1));
    out.push_back(geometry(n, 2048, 7, 7, 512, 1, 1, 1, 0));
    out.push_back(geometry(n, 8, 23, 23, 24, 1, 1, 1, 0));
    out.push_back(geometry(n, 16, 24, 24, 16, 3, 3, 1, 1));
    out.push_back(geometry(n, 8, 5, 3, 8, 3, 3, 1, 1));
  }
  return out;
}

std::string label(const igemm::nhwc_geometry& g, int tile_m, int sms) {
  return "N=" + std::to_string(g.n) + " C=" + std::to_string(g.c) + " HxW=" + std::to_string(g.h) + "x" +
         std::to_string(g.w) + " K=" + std::to_string(g.k) + " RxS=" + std::to_string(g.r) + "x" +
         std::to_string(g.s) + " tile " + std::to_string(tile_m) + "x64, " + std::to_string(sms) + " SMs";
}

TEST(WgradSplitPlan, covers_every_k_tile_once_within_one_wave_and_the_workspace) {
  for (const auto& g : shapes()) {
    for (int tile_m : {128, 64}) {
      const auto sized = igemm::plan_wgrad_split(g, tile_m, 64, 64, igemm::split_planning_sms);
      for (int sms : {1, 16, 78, 114, 132, 144, 256, 1000}) {
        SCOPED_TRACE(label(g, tile_m, sms));
        const auto plan = igemm::plan_wgrad_split(g, tile_m, 64, 64, sms);
        ASSERT_GE(plan.splits, 1);
        ASSERT_LE(plan.splits, igemm::max_splits);
        EXPECT_EQ(plan.k_tiles, (int64_t{g.n} * g.p * g.q + 63) / 64);
        EXPECT_EQ(plan.slice_elements, int64_t{g.k} * g.r * g.s * g.c);
        // The kernel's assignment, split by split: contiguous, in order, nothing twice or missed.
        int64_t next = 0;
        for (int z = 0; z < plan.splits; ++z) {
          const int64_t begin = z * plan.k_tiles_per_split;
          const int64_t count = std::min(plan.k_tiles_per_split, plan.k_tiles - begin);
          ASSERT_EQ(begin, next);
          ASSERT_GT(count, 0) << "split " << z << " is empty";
          next = begin + count;
        }
        EXPECT_EQ(next, plan.k_tiles);
        if (plan.splits > 1) {
          EXPECT_LE(plan.splits * plan.dw_tiles, std::min(sms, igemm::split_planning_sms)) << "more than one wave";
          EXPECT_GE(plan.k_tiles_per_split, igemm::min_k_tiles_per_split);
        }
        // The workspace holds sized.splits slices; the run may use fewer, never more.
        EXPECT_LE(plan.splits, sized.splits);
      }
    }
  }
}

// The case the split exists for: ResNet-50's 56x56 layer with 64 filters and channels at N=256 is
// one dw tile at 64x64, which the unsplit kernel runs on one SM of 132.
TEST(WgradSplitPlan, spreads_a_one_tile_layer_over_the_gpu) {
  const auto plan = igemm::plan_wgrad_split(geometry(256, 64, 56, 56, 64, 1, 1, 1, 0), 64, 64, 64, 132);
  EXPECT_EQ(plan.dw_tiles, 1);
  EXPECT_EQ(plan.k_tiles, 12544);
  EXPECT_EQ(plan.splits, igemm::max_splits);
  EXPECT_EQ(plan.k_tiles_per_split, 98);
  // Nine taps of 64x64 (the 3x3 layer): 14 splits of nine tiles, 126 CTAs.
  const auto taps = igemm::plan_wgrad_split(geometry(256, 64, 56, 56, 64, 3, 3, 1, 1), 64, 64, 64, 132);
  EXPECT_EQ(taps.dw_tiles, 9);
  EXPECT_EQ(taps.splits, 14);
}

// Too few pixels to give each split min_k_tiles_per_split k-tiles, or enough dw tiles to fill the
// device: no split.
TEST(WgradSplitPlan, does_not_split_small_reductions_or_large_filters) {
  EXPECT_EQ(igemm::plan_wgrad_split(geometry(1, 8, 5, 3, 8, 3, 3, 1, 1), 64, 64, 64, 132).splits, 1);
  EXPECT_EQ(igemm::plan_wgrad_split(geometry(256, 512, 14, 14, 512, 3, 3, 1, 1), 128, 64, 64, 132).splits, 1);
}

}  // namespace
