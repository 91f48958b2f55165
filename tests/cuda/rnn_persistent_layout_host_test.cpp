// The persistent RNN kernels' plans and index arithmetic (cuda_backend/rnn_persistent_layout.hpp)
// on the host, for the forward and for backward data: the anchor LSTM's plans, the limits every
// plan keeps, every hidden unit of every batch row owned by exactly one block, conflict-free
// ldmatrix rows, and each block's product played lane by lane (staging and warp work as
// rnn_persistent_product.cuh does them, ldmatrix and mma.sync m16n8k16 as PTX defines their
// fragments) against a naive product. Needs no GPU; the kernels themselves run in the RNN
// conformance sweep on the device (which runs every listed kernel, these and the stepwise ones).
// Also which block size a call runs (choose_persistent_plan).
#include "rnn_persistent_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

namespace {

using namespace tessera::cuda::rnn;

constexpr size_t half_bytes = 2;
constexpr persistent_pass forward = persistent_pass::forward;
constexpr persistent_pass backward = persistent_pass::backward_data;
constexpr persistent_pass both_passes[] = {forward, backward};

const char* name_of(persistent_pass pass) { return pass == forward ? "forward" : "backward data"; }

// The two block sizes (16 warps the forward's default, 8 backward data's; rnn_kernels.cu).
constexpr int block_warps[] = {persistent_warps, persistent_max_warps};

// persistent_warp_tile for the plan's block size, as the kernel of that size instantiates it.
bool warp_tile(const persistent_plan& p, int warp, int lt, int32_t& row0, int32_t& col0, int32_t& kgroup) {
  return p.warps == persistent_max_warps ? persistent_warp_tile<persistent_max_warps>(p, warp, lt, row0, col0, kgroup)
                                         : persistent_warp_tile<persistent_warps>(p, warp, lt, row0, col0, kgroup);
}

TEST(RnnPersistentPlan, the_anchor_lstm_runs_on_128_blocks_of_16_units_and_32_rows) {
  // 2 layers, H 1024, N 64, fp16, one direction: 64 unit groups x 2 batch groups.
  const persistent_plan p = persistent_plan_of(forward, 1, 4, 1024, 64, half_bytes);
  ASSERT_TRUE(p.fits) << p.why_not;
  EXPECT_EQ(p.units, 16);
  EXPECT_EQ(p.batch_rows, 32);
  EXPECT_EQ(p.blocks, 128);
  EXPECT_EQ(p.tiles, 8);  // one 16x16 tile per warp
  EXPECT_EQ(p.chunks, 3);  // h in three chunks on a ring of four: all requested up front
  EXPECT_LT(p.chunks, p.ring);
  EXPECT_EQ(p.kgroups, 1);
  EXPECT_LE(p.shared_bytes, size_t{227} * 1024);
}

TEST(RnnPersistentPlan, the_anchor_lstms_backward_data_shares_each_tile_among_four_warps) {
  // dL/dh = dgates (N x 4096) x R: 16 columns of a block's units, k = 4096 split among warps.
  const persistent_plan p = persistent_plan_of(backward, 1, 4, 1024, 64, half_bytes);
  ASSERT_TRUE(p.fits) << p.why_not;
  EXPECT_EQ(p.K, 4096);
  EXPECT_EQ(p.units, 16);
  EXPECT_EQ(p.cols, 16);
  EXPECT_EQ(p.blocks, 128);
  EXPECT_EQ(p.tiles * p.kgroups, int32_t{p.warps});
  EXPECT_LE(p.shared_bytes, size_t{227} * 1024);
}

TEST(RnnPersistentPlan, the_sixteen_warp_anchor_lstm_shares_each_tile_between_two_warps) {
  const persistent_plan p = persistent_plan_of(forward, 1, 4, 1024, 64, half_bytes, persistent_max_warps);
  ASSERT_TRUE(p.fits) << p.why_not;
  EXPECT_EQ(persistent_block_threads(p), 512);
  EXPECT_EQ(p.tiles, 8);
  EXPECT_EQ(p.kgroups, 2);
  EXPECT_EQ(p.blocks, 128);
}

TEST(RnnPersistentPlan, two_directions_of_1024_units_take_h_through_a_smaller_ring) {
  // R's two directions (16 MiB) fill the blocks' shared memory: h streams through fewer slots.
  const persistent_plan p = persistent_plan_of(forward, 2, 4, 1024, 64, half_bytes);
  ASSERT_TRUE(p.fits) << p.why_not;
  EXPECT_LE(p.blocks, 132);
  EXPECT_LT(p.slots, p.chunks);
  EXPECT_LE(p.shared_bytes, size_t{227} * 1024);
}

TEST(RnnPersistentPlan, too_large_a_state_is_declined_with_a_reason) {
  // H 2048: R alone (32 MiB) is more than 132 blocks' shared memory holds.
  for (int32_t h : {2048, 8192}) {
    const persistent_plan p = persistent_plan_of(forward, 1, 4, h, 64, half_bytes);
    EXPECT_FALSE(p.fits);
    ASSERT_NE(p.why_not, nullptr);
  }
  // Sizes the RNN's support check lets through (D * N * H < 2^31) but no grid holds: declined
  // without overflowing (a reviewer's UBSan run found N = 2^30 + 1 dividing by zero).
  for (auto [d, h, n] : {std::tuple<int32_t, int32_t, int32_t>{1, 1, (1 << 30) + 1}, {1, (1 << 30) + 1, 1},
                          {2, 1 << 29, 1}, {1, 1, 2147483647}}) {
    for (persistent_pass pass : both_passes) {
      const persistent_plan p = persistent_plan_of(pass, d, 4, h, n, half_bytes);
      EXPECT_FALSE(p.fits);
      ASSERT_NE(p.why_not, nullptr);
    }
  }
}

struct shape {
  int32_t D, G, H, N;
};

const shape k_shapes[] = {{1, 4, 1024, 64}, {2, 4, 1024, 64}, {1, 4, 1024, 128}, {1, 4, 5, 2},   {2, 4, 4, 1},    {2, 3, 3, 3},    {1, 3, 8, 3},
                          {1, 1, 1, 1},     {2, 1, 7, 2},   {1, 4, 16, 2},   {1, 4, 512, 256}, {2, 3, 256, 100},
                          {1, 1, 2048, 8},  {2, 4, 96, 33}, {1, 3, 1000, 17}};

TEST(RnnPersistentPlan, every_plan_keeps_its_limits_and_owns_every_unit_once) {
  for (int warps : block_warps)
  for (persistent_pass pass : both_passes)
  for (const shape& s : k_shapes) {
    SCOPED_TRACE(testing::Message() << name_of(pass) << " warps=" << warps << " D=" << s.D << " G=" << s.G << " H=" << s.H
                                    << " N=" << s.N);
    const persistent_plan p = persistent_plan_of(pass, s.D, s.G, s.H, s.N, half_bytes, warps);
    if (pass == backward && !p.fits) continue;  // backward data's K = G*H: the largest shapes decline
    ASSERT_TRUE(p.fits) << p.why_not;
    EXPECT_LE(p.blocks, 132);
    EXPECT_LE(p.tiles, p.warps * persistent_tiles_per_warp);
    EXPECT_LE(p.tiles * p.kgroups, std::max(p.tiles, int32_t{p.warps}));
    EXPECT_LE(p.shared_bytes, size_t{227} * 1024);
    EXPECT_EQ(p.kp % 16, 0);
    EXPECT_EQ(p.K, pass == forward ? s.H : s.G * s.H);
    EXPECT_GE(p.kp, p.K);
    EXPECT_GE(p.cols, p.cols_per_unit * p.units);
    EXPECT_EQ(p.weights_offset % 16, 0u);
    EXPECT_EQ(p.state_offset % 16, 0u);
    EXPECT_EQ(p.products_offset % 16, 0u);
    // Every (tile, K group) has exactly one warp.
    std::set<std::tuple<int32_t, int32_t, int32_t>> work;
    for (int warp = 0; warp < p.warps; ++warp)
      for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
        int32_t row0, col0, kgroup;
        if (warp_tile(p, warp, lt, row0, col0, kgroup)) {
          EXPECT_TRUE(work.insert({row0, col0, kgroup}).second);
        }
      }
    EXPECT_EQ(work.size(), size_t(p.tiles) * p.kgroups);
    std::set<std::tuple<int32_t, int32_t, int32_t>> owned;
    for (int32_t b = 0; b < p.blocks; ++b) {
      const persistent_block blk = persistent_block_of(p, b);
      ASSERT_LT(blk.d, s.D);
      const int32_t rows = std::min(p.batch_rows, s.N - blk.n0), units = std::min(p.units, s.H - blk.j0);
      ASSERT_GT(rows, 0);
      ASSERT_GT(units, 0);
      for (int32_t r = 0; r < rows; ++r)
        for (int32_t u = 0; u < units; ++u) EXPECT_TRUE(owned.insert({blk.d, blk.n0 + r, blk.j0 + u}).second);
    }
    EXPECT_EQ(owned.size(), size_t(s.D) * s.N * s.H);
    // The chunks cover every k-step once, in order, each within its slot's width.
    EXPECT_EQ(p.chunk_k % 16, 0);
    EXPECT_GE(p.ring, 2);
    EXPECT_LE(p.ring, persistent_max_ring);
    EXPECT_EQ(p.slots, std::min(p.ring, p.chunks));
    int32_t next = 0;
    for (int32_t c = 0; c < p.chunks; ++c) {
      int32_t k_begin, k_end;
      persistent_chunk_range(p, c, k_begin, k_end);
      EXPECT_EQ(k_begin, next);
      EXPECT_LT(k_begin, k_end);
      EXPECT_LE(k_end - k_begin, p.chunk_k);
      EXPECT_EQ((k_end - k_begin) % 16, 0);
      EXPECT_LT(persistent_chunk_slot(p, c), p.slots);
      next = k_end;
    }
    EXPECT_EQ(next, p.kp);
  }
}

TEST(RnnPersistentPlan, backward_data_plans_exist_for_the_anchor_shapes) {
  for (const shape& s : {shape{1, 4, 1024, 64}, shape{1, 3, 1024, 64}, shape{2, 4, 512, 64}, shape{1, 4, 16, 2}}) {
    SCOPED_TRACE(testing::Message() << "D=" << s.D << " G=" << s.G << " H=" << s.H << " N=" << s.N);
    EXPECT_TRUE(persistent_plan_of(backward, s.D, s.G, s.H, s.N, half_bytes).fits);
  }
}

// ---- which block size a call runs (choose_persistent_plan) ----

const auto any_device = [](const persistent_plan&) { return true; };

TEST(RnnPersistentChoice, the_forward_prefers_sixteen_warps_and_backward_data_eight) {
  EXPECT_EQ(choose_persistent_plan(forward, 1, 4, 1024, 64, half_bytes, 0, any_device).warps, persistent_max_warps);
  EXPECT_EQ(choose_persistent_plan(backward, 1, 4, 1024, 64, half_bytes, 0, any_device).warps, persistent_warps);
}

TEST(RnnPersistentChoice, a_forced_block_size_holds_for_both_passes_even_where_it_does_not_fit) {
  for (persistent_pass pass : both_passes) {
    SCOPED_TRACE(name_of(pass));
    for (int forced : {persistent_warps, persistent_max_warps})
      EXPECT_EQ(choose_persistent_plan(pass, 1, 4, 1024, 64, half_bytes, forced, any_device).warps, forced);
    // Forced, no fallback: the device refusing it leaves the forced plan (the call runs stepwise).
    const persistent_plan refused = choose_persistent_plan(pass, 1, 4, 1024, 64, half_bytes, persistent_max_warps,
                                                           [](const persistent_plan&) { return false; });
    EXPECT_EQ(refused.warps, persistent_max_warps);
  }
  // A value other than 8 or 16 forces nothing.
  EXPECT_EQ(choose_persistent_plan(forward, 1, 4, 1024, 64, half_bytes, 12, any_device).warps, persistent_max_warps);
}

TEST(RnnPersistentChoice, a_device_refusing_the_preferred_size_gets_the_other) {
  // A device whose shared memory holds the 8-warp forward plan but not the 16-warp one (which keeps
  // more products): the 8-warp plan, not the stepwise kernels.
  const auto only_eight = [](const persistent_plan& p) { return p.warps == persistent_warps; };
  const persistent_plan f = choose_persistent_plan(forward, 1, 4, 1024, 64, half_bytes, 0, only_eight);
  ASSERT_TRUE(f.fits) << f.why_not;
  EXPECT_EQ(f.warps, persistent_warps);
  const auto only_sixteen = [](const persistent_plan& p) { return p.warps == persistent_max_warps; };
  const persistent_plan b = choose_persistent_plan(backward, 1, 4, 1024, 64, half_bytes, 0, only_sixteen);
  ASSERT_TRUE(b.fits) << b.why_not;
  EXPECT_EQ(b.warps, persistent_max_warps);
  // Refusing both: the preferred size's plan, which the caller then runs stepwise.
  const persistent_plan neither =
      choose_persistent_plan(forward, 1, 4, 1024, 64, half_bytes, 0, [](const persistent_plan&) { return false; });
  EXPECT_EQ(neither.warps, persistent_max_warps);
}

TEST(RnnPersistentChoice, a_shape_only_the_other_size_plans_for_takes_it) {
  // Search the shapes below for ones whose preferred size has no plan while the other has (e.g.
  // the forward of a one-gate RNN of H 3264 at N 64; backward data at N 4096, more tiles than 8
  // warps hold): each pass must then take the other size, and at least one such shape must exist
  // for each pass, or this test would check nothing.
  int found[2] = {0, 0};
  for (persistent_pass pass : both_passes) {
    const int preferred = pass == forward ? persistent_max_warps : persistent_warps;
    const int other = preferred == persistent_warps ? persistent_max_warps : persistent_warps;
    for (int32_t D : {1, 2})
      for (int32_t G : {1, 3, 4})
        for (int32_t H = 32; H <= 4096; H += 32)
          for (int32_t N : {16, 24, 64, 256, 1024, 4096}) {
            if (persistent_plan_of(pass, D, G, H, N, half_bytes, preferred).fits) continue;
            if (!persistent_plan_of(pass, D, G, H, N, half_bytes, other).fits) continue;
            SCOPED_TRACE(testing::Message() << name_of(pass) << " D=" << D << " G=" << G << " H=" << H << " N=" << N);
            const persistent_plan p = choose_persistent_plan(pass, D, G, H, N, half_bytes, 0, any_device);
            EXPECT_TRUE(p.fits);
            EXPECT_EQ(p.warps, other);
            ++found[pass == forward ? 0 : 1];
          }
  }
  EXPECT_GT(found[0], 0) << "no forward shape plans on 8 warps only";
  EXPECT_GT(found[1], 0) << "no backward-data shape plans on 16 warps only";
}

// 16-byte bank groups (8 of them in a 128-byte row of banks) of the 8 row addresses of each
// ldmatrix matrix: all different, so no phase conflicts.
TEST(RnnPersistentPlan, ldmatrix_rows_fall_in_different_bank_groups) {
  for (int warps : block_warps)
  for (persistent_pass pass : both_passes)
  for (const shape& s : k_shapes) {
    SCOPED_TRACE(testing::Message() << name_of(pass) << " warps=" << warps << " H=" << s.H << " N=" << s.N);
    const persistent_plan p = persistent_plan_of(pass, s.D, s.G, s.H, s.N, half_bytes, warps);
    if (!p.fits) continue;
    for (int32_t k0 = 0; k0 < p.kp; k0 += 16) {
      for (int m = 0; m < 4; ++m) {
        std::set<int64_t> a_groups, b_groups;
        const int32_t slot = (k0 / p.chunk_k) % p.ring;
        for (int lane = 8 * m; lane < 8 * m + 8; ++lane) {
          a_groups.insert((int64_t{persistent_a_address(p, slot, 16, k0 % p.chunk_k, lane)} * 2 / 16) % 8);
          b_groups.insert((int64_t{persistent_b_address(p, 0, k0, lane)} * 2 / 16) % 8);
        }
        EXPECT_EQ(a_groups.size(), 8u);
        EXPECT_EQ(b_groups.size(), 8u);
      }
    }
  }
}

// ldmatrix .x4 as PTX defines it: register m of lane L holds elements 2(L%4) and 2(L%4)+1 of
// row L/4 of matrix m, whose row addresses lanes 8m..8m+7 gave.
struct fragment_pair {
  float lo, hi;
};

void ldmatrix_x4(const std::vector<float>& shared, const int32_t (&address)[32], fragment_pair (&regs)[32][4]) {
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m) {
      const int32_t row = address[8 * m + lane / 4] + 2 * (lane % 4);
      regs[lane][m] = {shared.at(size_t(row)), shared.at(size_t(row) + 1)};
    }
}

// mma.sync m16n8k16 row.col: d += a * b with PTX's fragments (g = lane / 4, t = lane % 4).
void mma_16816(float (&d)[32][4], const fragment_pair (&a)[32][4], const fragment_pair (&b)[32][4], int b_first) {
  float A[16][16], B[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int reg = 0; reg < 4; ++reg) {
      const int row = g + (reg & 1) * 8, k = 2 * t + (reg >> 1) * 8;
      A[row][k] = a[lane][reg].lo;
      A[row][k + 1] = a[lane][reg].hi;
    }
    for (int reg = 0; reg < 2; ++reg) {
      const int k = 2 * t + reg * 8;
      B[k][g] = b[lane][b_first + reg].lo;
      B[k + 1][g] = b[lane][b_first + reg].hi;
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int reg = 0; reg < 4; ++reg) {
      const int row = g + (reg / 2) * 8, col = 2 * t + reg % 2;
      float sum = 0.0f;
      for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
      d[lane][reg] += sum;
    }
  }
}

// One block's products as the kernels compute them, from A (N x K, row-major) and R (D x G*H x H).
std::vector<float> block_products(const persistent_plan& p, int32_t block, const std::vector<float>& A,
                                  const std::vector<float>& R) {
  const persistent_block blk = persistent_block_of(p, block);
  const int32_t K = p.K, rows = std::min(p.batch_rows, p.N - blk.n0);
  const size_t direction = size_t(blk.d) * p.G * p.H * p.H;
  // Staging, as persistent_stage_weights and persistent_block_product do it: weights with zeros
  // outside, the ring zeroed once (so rows past the block's stay zero) and each chunk written into
  // its slot when the kernel requests it. NaN marks the pitches' padding, which must never be read.
  std::vector<float> weights(size_t(p.cols) * p.pitch, NAN);
  std::vector<float> state(size_t(p.slots) * p.rows16 * p.chunk_pitch, NAN);
  for (int32_t c = 0; c < p.cols; ++c)
    for (int32_t k = 0; k < p.kp; ++k) {
      const int64_t offset = persistent_weight_offset(p, blk, c, k);
      weights[size_t(c) * p.pitch + k] = offset >= 0 ? R.at(direction + size_t(offset)) : 0.0f;
    }
  for (int32_t slot = 0; slot < p.slots; ++slot)
    for (int32_t r = 0; r < p.rows16; ++r)
      for (int32_t k = 0; k < p.chunk_k; ++k) state[size_t(persistent_state_index(p, slot, r, k))] = 0.0f;
  auto request = [&](int32_t c) {
    if (c >= p.chunks) return;
    int32_t k_begin, k_end;
    persistent_chunk_range(p, c, k_begin, k_end);
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t k = k_begin; k < k_end; ++k)
        state[size_t(persistent_state_index(p, persistent_chunk_slot(p, c), r, k - k_begin))] =
            k < K ? A[(size_t(blk.n0) + r) * K + k] : 0.0f;
  };
  std::vector<float> products(size_t(p.kgroups) * p.rows16 * p.products_pitch, NAN);
  for (int warp = 0; warp < p.warps; ++warp) {
    for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
      int32_t row0, col0, kgroup;
      if (!warp_tile(p, warp, lt, row0, col0, kgroup)) break;
      float acc[2][2][32][4] = {};  // [8 columns][alternate k-steps][lane][reg]
      // The kernel's order: chunks 0 .. ring-2 requested, then before chunk c's products chunk
      // c + ring - 1 (into the slot chunk c - 1 used).
      for (int32_t c = 0; c + 1 < p.ring; ++c) request(c);
      for (int32_t c = 0; c < p.chunks; ++c) {
        request(c + p.ring - 1);
        int32_t k_begin, k_end;
        persistent_chunk_range(p, c, k_begin, k_end);
        int chain = 0;
        for (int32_t ks = persistent_first_step(p, k_begin / 16, kgroup); ks < k_end / 16; ks += p.kgroups) {
          int32_t a_address[32], b_address[32];
          for (int lane = 0; lane < 32; ++lane) {
            a_address[lane] = persistent_a_address(p, persistent_chunk_slot(p, c), row0, ks * 16 - k_begin, lane);
            b_address[lane] = persistent_b_address(p, col0, ks * 16, lane);
          }
          fragment_pair a[32][4], b[32][4];
          ldmatrix_x4(state, a_address, a);
          ldmatrix_x4(weights, b_address, b);
          mma_16816(acc[0][chain], a, b, 0);
          mma_16816(acc[1][chain], a, b, 2);
          chain ^= 1;
        }
      }
      for (int half = 0; half < 2; ++half)
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < 4; ++reg)
            products[size_t(persistent_product_index(p, kgroup, row0, col0 + 8 * half, lane, reg))] =
                acc[half][0][lane][reg] + acc[half][1][lane][reg];
    }
  }
  return products;
}

TEST(RnnPersistentPlan, each_blocks_product_is_its_rows_of_a_times_its_columns_of_r) {
  const shape cases[] = {{1, 4, 5, 2},  {2, 4, 4, 1},   {2, 3, 3, 3},   {1, 3, 8, 3},  {2, 1, 7, 2},
                         {1, 4, 16, 2}, {2, 4, 96, 33}, {1, 3, 40, 17}, {1, 4, 72, 40},
                         // forward: 16 tiles, each warp's second tile; blocks of 32 rows and 32 units
                         {1, 4, 512, 256},
                         // forward: h through a ring of fewer slots than chunks; backward data:
                         // one tile per four warps, k = 4096
                         {2, 4, 1024, 64}, {1, 4, 1024, 64}};
  for (int warps : block_warps)
  for (persistent_pass pass : both_passes)
  for (const shape& s : cases) {
    SCOPED_TRACE(testing::Message() << name_of(pass) << " warps=" << warps << " D=" << s.D << " G=" << s.G << " H=" << s.H
                                    << " N=" << s.N);
    const persistent_plan p = persistent_plan_of(pass, s.D, s.G, s.H, s.N, half_bytes, warps);
    if (pass == backward && !p.fits) continue;
    ASSERT_TRUE(p.fits) << p.why_not;
    // Small integers: every product and sum exact in fp32, so the comparison is exact.
    std::vector<float> A(size_t(s.N) * p.K), R(size_t(s.D) * s.G * s.H * s.H);
    for (size_t i = 0; i < A.size(); ++i) A[i] = float(int(i * 7 % 11) - 5);
    for (size_t i = 0; i < R.size(); ++i) R[i] = float(int(i * 5 % 9) - 4);
    // Every block of the small plans; the first, a middle and the last of the large ones.
    std::vector<int32_t> blocks;
    if (p.blocks <= 16) {
      for (int32_t b = 0; b < p.blocks; ++b) blocks.push_back(b);
    } else {
      blocks = {0, p.blocks / 2 + 1, p.blocks - 1};
    }
    if (pass == forward && s.N == 256 && warps == persistent_warps) {
      EXPECT_GT(p.tiles, int32_t{p.warps});
    }
    for (int32_t b : blocks) {
      const std::vector<float> products = block_products(p, b, A, R);
      const persistent_block blk = persistent_block_of(p, b);
      const int32_t rows = std::min(p.batch_rows, s.N - blk.n0), units = std::min(p.units, s.H - blk.j0);
      const size_t direction = size_t(blk.d) * s.G * s.H * s.H;
      for (int32_t r = 0; r < rows; ++r)
        for (int32_t g = 0; g < p.cols_per_unit; ++g)
          for (int32_t u = 0; u < units; ++u) {
            double expected = 0.0;
            for (int32_t k = 0; k < p.K; ++k) {
              // forward: R's row g*H + j (gate g of unit j); backward data: R's column j.
              const size_t r_index =
                  pass == forward ? (size_t(g) * s.H + blk.j0 + u) * s.H + k : size_t(k) * s.H + blk.j0 + u;
              expected += double(A[(size_t(blk.n0) + r) * p.K + k]) * R[direction + r_index];
            }
            const int32_t column = pass == forward ? persistent_gate_column(p, g, u) : u;
            ASSERT_EQ(persistent_product(p, products.data(), r, column), float(expected))
                << "block " << b << " row " << r << " gate " << g << " unit " << u;
          }
    }
  }
}

}  // namespace
