// The depthwise backward filter's chunk plan (cuda_backend/conv_depthwise_wgrad_plan.hpp) on the
// host: for MobileNet's depthwise layers, odd and tiny shapes and shapes past the workspace cap,
// every output pixel falls in exactly one chunk (chunk i: [i * per, min((i + 1) * per, pixels)),
// none empty), chunks stay within [4, 264] pixels unless the 64 MiB cap makes them larger, the
// workspace never passes the cap (or one slice, when a slice alone is larger), the pass-1 threads
// fit one wave of the planning GPU when the chunk size is not clamped, and the chunk size fits the
// kernel's int. Needs no GPU: the kernels are checked by the conformance test's depthwise_* shapes.
#include "conv_depthwise_wgrad_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace dw = tessera::cuda::depthwise;

struct plan_case {
  int64_t pixels, taps, channels;
  int vector;
};

std::vector<plan_case> cases() {
  std::vector<plan_case> out;
  // MobileNet-v2's depthwise layers at N = 1, 32 and 256 (3x3, fp16 vectors of 8 and fp32 of 4).
  const int64_t extents[] = {112, 56, 28, 14, 7};
  const int64_t channels[] = {32, 96, 144, 192, 384, 576, 960};
  for (int64_t n : {1, 32, 256})
    for (int64_t e : extents)
      for (int64_t c : channels)
        for (int vector : {8, 4}) out.push_back({n * e * e, 9, c, vector});
  // Tiny and odd: fewer pixels than the smallest chunk, chunk boundaries, C below a vector.
  for (int64_t pixels : {1, 15, 16, 17, 263, 264, 265, 8100, 100003})
    for (int64_t taps : {1, 4, 9})
      for (int64_t c : {1, 3, 12, 136}) out.push_back({pixels, taps, c, 8});
  // Past the 64 MiB cap: 256 x 224 x 224 pixels of 960 channels, and a slice alone above the cap.
  out.push_back({256 * 224 * 224, 9, 960, 8});
  out.push_back({1 << 20, 9, int64_t{1} << 21, 4});
  return out;
}

std::string label(const plan_case& c) {
  return "pixels " + std::to_string(c.pixels) + " taps " + std::to_string(c.taps) + " C " +
         std::to_string(c.channels) + " vector " + std::to_string(c.vector);
}

TEST(DepthwiseWgradPlan, every_pixel_is_in_exactly_one_nonempty_chunk) {
  for (const plan_case& c : cases()) {
    SCOPED_TRACE(label(c));
    const dw::chunk_plan plan = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector);
    ASSERT_GT(plan.chunks, 0);
    ASSERT_GT(plan.pixels_per_chunk, 0);
    EXPECT_EQ(plan.pixels, c.pixels);
    EXPECT_EQ(plan.slice, c.taps * c.channels);
    EXPECT_GE(plan.chunks * plan.pixels_per_chunk, c.pixels) << "pixels left without a chunk";
    EXPECT_LT((plan.chunks - 1) * plan.pixels_per_chunk, c.pixels) << "an empty last chunk";
    EXPECT_LE(plan.pixels_per_chunk, int64_t{std::numeric_limits<int32_t>::max()});
  }
}

TEST(DepthwiseWgradPlan, chunks_stay_in_range_and_the_workspace_under_the_cap) {
  for (const plan_case& c : cases()) {
    SCOPED_TRACE(label(c));
    const dw::chunk_plan plan = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector);
    const int64_t slice_bytes = plan.slice * int64_t{sizeof(float)};
    const int64_t cap = std::max(dw::wgrad_max_workspace_bytes, slice_bytes);
    EXPECT_EQ(static_cast<int64_t>(plan.workspace_bytes()), plan.chunks * slice_bytes);
    EXPECT_LE(static_cast<int64_t>(plan.workspace_bytes()), cap);
    EXPECT_GE(plan.pixels_per_chunk, dw::wgrad_min_pixels_per_chunk);
    // Above the target only when the target's chunks would not fit the cap.
    if (plan.pixels_per_chunk > dw::wgrad_target_pixels_per_chunk) {
      const int64_t target_chunks =
          (c.pixels + dw::wgrad_target_pixels_per_chunk - 1) / dw::wgrad_target_pixels_per_chunk;
      EXPECT_GT(target_chunks * slice_bytes, dw::wgrad_max_workspace_bytes);
    }
  }
}

TEST(DepthwiseWgradPlan, unclamped_chunks_fill_one_wave) {
  int unclamped = 0;
  for (const plan_case& c : cases()) {
    SCOPED_TRACE(label(c));
    const dw::chunk_plan plan = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector);
    if (plan.pixels_per_chunk <= dw::wgrad_min_pixels_per_chunk ||
        plan.pixels_per_chunk >= dw::wgrad_target_pixels_per_chunk)
      continue;
    ++unclamped;
    const int64_t vectors = (c.channels + c.vector - 1) / c.vector;
    // One thread per (chunk, vector): at most one wave plus one chunk's threads, and more than
    // the chunk size below would have given (the plan takes the smallest size that fits a wave).
    EXPECT_LE(plan.chunks * vectors, dw::wgrad_wave_threads + vectors);
    const int64_t smaller_chunks = (c.pixels + plan.pixels_per_chunk - 2) / (plan.pixels_per_chunk - 1);
    EXPECT_GT(smaller_chunks * vectors, dw::wgrad_wave_threads);
  }
  EXPECT_GT(unclamped, 10) << "the cases no longer exercise the wave sizing";
}

// A smaller minimum (the TESSERA_CUDA_DW_WGRAD_MIN_CHUNK experiment) gives a small layer shorter
// chunks, never below that minimum and never past the target; problems of a wave or more keep
// their plan.
TEST(DepthwiseWgradPlan, a_smaller_minimum_shortens_only_small_problems_chunks) {
  // MobileNet-v2's 7x7 depthwise layer at N=32: 1568 pixels, 960 channels, fp16.
  const dw::chunk_plan small = dw::plan_wgrad_chunks(1568, 9, 960, 8, 2);
  EXPECT_EQ(small.pixels_per_chunk, 3);  // one wave's share: ceil(1568 * 120 / 67584)
  EXPECT_EQ(small.chunks, 523);
  EXPECT_EQ(dw::plan_wgrad_chunks(1568, 9, 960, 8).pixels_per_chunk, dw::wgrad_min_pixels_per_chunk);
  for (const plan_case& c : cases()) {
    SCOPED_TRACE(label(c));
    const dw::chunk_plan usual = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector);
    const dw::chunk_plan shorter = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector, 2);
    EXPECT_GE(shorter.pixels_per_chunk, std::min<int64_t>(2, c.pixels));
    EXPECT_LE(shorter.pixels_per_chunk, usual.pixels_per_chunk);
    if (usual.pixels_per_chunk > dw::wgrad_min_pixels_per_chunk) EXPECT_EQ(shorter.chunks, usual.chunks);
  }
}

TEST(DepthwiseWgradPlan, an_empty_problem_has_no_chunks_and_no_workspace) {
  for (const plan_case& c : {plan_case{0, 9, 32, 8}, plan_case{100, 9, 0, 8}, plan_case{100, 0, 32, 8}}) {
    SCOPED_TRACE(label(c));
    const dw::chunk_plan plan = dw::plan_wgrad_chunks(c.pixels, c.taps, c.channels, c.vector);
    EXPECT_EQ(plan.chunks, 0);
    EXPECT_EQ(plan.workspace_bytes(), 0u);
  }
}

}  // namespace
