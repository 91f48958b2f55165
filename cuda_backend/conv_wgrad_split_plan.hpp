// How the split-K backward filter (conv_igemm_wgrad_split_k.cuh) divides N*P*Q among CTAs; host
// arithmetic only, so that tests/cuda/wgrad_split_plan_host_test.cpp checks it without a GPU.
//
// The split count fills one wave of the device (these tiles take most of an SM's shared memory,
// so one CTA per SM) with at least min_k_tiles_per_split k-tiles per CTA and at most max_splits.
// The workspace is sized with split_planning_sms, so the device's own SM count (at most that) can
// only shrink the split count, never outgrow the workspace.
#pragma once

#include "conv_igemm_geometry.hpp"

#include <algorithm>
#include <cstdint>

namespace tessera::cuda::igemm {

struct wgrad_split_plan {
  int64_t dw_tiles = 0;           // CTAs of the unsplit kernel
  int64_t k_tiles = 0;            // k-tiles of N*P*Q
  int splits = 1;                 // CTAs per dw tile, none of them without k-tiles
  int64_t k_tiles_per_split = 0;  // the last split may have fewer
  int64_t slice_elements = 0;     // dw's elements: one fp32 partial sum per split
};

constexpr int max_splits = 128;
constexpr int64_t min_k_tiles_per_split = 8;
constexpr int split_planning_sms = 256;  // the workspace bound: no GPU we target has more SMs

// `sms`: the device's SM count at run time, split_planning_sms when sizing the workspace.
inline wgrad_split_plan plan_wgrad_split(const nhwc_geometry& g, int tile_m, int tile_n, int tile_k, int sms) {
  wgrad_split_plan plan;
  const int64_t tiles_m = (int64_t{g.k} + tile_m - 1) / tile_m;
  const int64_t tiles_n = (int64_t{g.c} + tile_n - 1) / tile_n * g.r * g.s;
  plan.dw_tiles = tiles_m * tiles_n;
  plan.k_tiles = (int64_t{g.n} * g.p * g.q + tile_k - 1) / tile_k;
  plan.slice_elements = int64_t{g.k} * g.r * g.s * g.c;
  int64_t splits = std::max<int64_t>(1, std::min(sms, split_planning_sms) / std::max<int64_t>(plan.dw_tiles, 1));
  splits = std::min<int64_t>({splits, plan.k_tiles / min_k_tiles_per_split, max_splits});
  splits = std::max<int64_t>(splits, 1);
  plan.k_tiles_per_split = std::max<int64_t>((plan.k_tiles + splits - 1) / splits, 1);
  // With the range rounded up, fewer splits may cover every k-tile: no split is left empty.
  plan.splits = static_cast<int>((plan.k_tiles + plan.k_tiles_per_split - 1) / plan.k_tiles_per_split);
  plan.splits = std::max(plan.splits, 1);
  return plan;
}

template <typename Config>
wgrad_split_plan plan_wgrad_split(const nhwc_geometry& g, int sms) {
  return plan_wgrad_split(g, Config::tile_m, Config::tile_n, Config::tile_k, sms);
}

}  // namespace tessera::cuda::igemm
