// The tiled channels-last pooling of the CUDA plugin (cuda_backend/pooling_tiles.cuh) run on the
// host: every tile's phases thread by thread, in the order pool_tiles_kernel runs them between its
// barriers, against the naive reference. This checks the tile arithmetic (tiles, patches, halos of
// covering outputs, the shared-memory layout and the plans the launcher chooses) on every machine,
// with or without a GPU, for every mode, NaN rule and storage type, and for many tile shapes per
// problem, including tiles smaller than a window and chunks that split the channels unevenly.
// What only a GPU can check (the cp.async copies and the barriers) is left to the conformance test.
#include "pooling_tiles.cuh"
#include "reference_pooling.hpp"
#include "tensor_fill.hpp"
#include "tolerance.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace pool = tessera::cuda::pooling;
namespace ref = tessera::reference;

struct pool_shape {
  const char* label;
  int spatial;
  int64_t mb, c;
  int64_t in[3], window[3], stride[3], pad_before[3], pad_after[3];
};

// clang-format off
const pool_shape k_shapes[] = {
  // label                    sp mb c   in            window     stride     pad_b      pad_a
  {"resnet_stem_3x3_s2_p1",   2, 2, 64, {23,21,0},   {3,3,0},   {2,2,0},   {1,1,0},   {1,1,0}},
  {"alexnet_3x3_s2",          2, 2, 16, {13,13,0},   {3,3,0},   {2,2,0},   {0,0,0},   {0,0,0}},
  {"global_7x7",              2, 2, 24, {7,7,0},     {7,7,0},   {1,1,0},   {0,0,0},   {0,0,0}},
  {"primes_asymmetric_pad",   2, 3, 40, {11,13,0},   {3,2,0},   {2,1,0},   {1,0,0},   {2,1,0}},
  {"size_one_dims",           2, 1, 8,  {1,7,0},     {1,3,0},   {1,2,0},   {0,1,0},   {0,1,0}},
  {"overlapping_2x2_s1",      2, 2, 72, {6,6,0},     {2,2,0},   {1,1,0},   {0,0,0},   {1,1,0}},
  {"window_5_s1_p2",          2, 1, 16, {9,10,0},    {5,5,0},   {1,1,0},   {2,2,0},   {2,2,0}},
  {"stride_beyond_window",    2, 2, 8,  {9,8,0},     {1,2,0},   {3,3,0},   {0,1,0},   {0,0,0}},
  {"three_d",                 3, 1, 16, {5,6,7},     {2,3,3},   {2,1,2},   {1,1,0},   {0,1,1}},
};
// clang-format on

struct mode_case {
  const char* label;
  int32_t mode;
  int32_t nan_propagation;
};
const mode_case k_modes[] = {
    {"max", TSRP_POOLING_MAX, TSRP_NOT_PROPAGATE_NAN},
    {"max_propagate_nan", TSRP_POOLING_MAX, TSRP_PROPAGATE_NAN},
    {"avg_include_pad", TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, TSRP_NOT_PROPAGATE_NAN},
    {"avg_exclude_pad", TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, TSRP_NOT_PROPAGATE_NAN},
};

tsrpPoolingProblem make_problem(const pool_shape& s, const mode_case& m, int32_t dt) {
  tsrpPoolingProblem p{};
  p.struct_size = sizeof(p);
  p.mode = m.mode;
  p.nan_propagation = m.nan_propagation;
  p.spatial_dims = s.spatial;
  std::vector<int64_t> xd = {s.mb, s.c}, yd = {s.mb, s.c};
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    const bool used = i < s.spatial;
    p.window[i] = used ? s.window[i] : 1;
    p.stride[i] = used ? s.stride[i] : 1;
    p.pad_before[i] = used ? s.pad_before[i] : 0;
    p.pad_after[i] = used ? s.pad_after[i] : 0;
    if (!used) continue;
    xd.push_back(s.in[i]);
    yd.push_back((s.in[i] + s.pad_before[i] + s.pad_after[i] - s.window[i]) / s.stride[i] + 1);
  }
  p.x = p.dx = ref::host_tensor::packed(dt, xd, true).desc();
  p.y = p.dy = ref::host_tensor::packed(dt, yd, true).desc();
  return p;
}

// Runs every tile of `program` on the host, 256 threads per phase, with shared memory of exactly
// the plan's size that is poisoned (all bits set: NaN for every storage type, "no tap" for uint8
// taps) before each tile, so that reading what no copy wrote shows up as a wrong result.
template <typename Program>
void run_tiles_on_host(const Program& program) {
  const int64_t units = program.plan.shared_bytes / 16;
  std::vector<uint4> shared(static_cast<size_t>(units));
  for (int64_t index = 0; index < program.plan.count; ++index) {
    const typename Program::tile tile = program.tile_at(index);
    int64_t used;
    if constexpr (Program::phases == 2) {
      used = static_cast<int64_t>(pool::box_pixels(tile.patch)) * program.plan.chunk;
    } else {
      used = tile.layout.end;
    }
    ASSERT_LE(used, units) << "tile " << index << " needs more shared memory than its plan";
    std::memset(shared.data(), 0xff, shared.size() * sizeof(uint4));
    for (int phase = 0; phase < Program::phases; ++phase)
      for (unsigned tid = 0; tid < static_cast<unsigned>(pool::tile_threads); ++tid)
        program.run_phase(phase, tile, shared.data(), tid, pool::tile_threads);
  }
}

template <typename T>
constexpr int lanes_of() {
  return static_cast<int>(16 / sizeof(T));
}

// The plans to try: what the launcher would choose on a large and a one-SM GPU, and tiles of
// fixed shapes (smaller than a window, ragged, one row) with chunks of 1, 2 and all vectors.
std::vector<pool::tile_plan> plans_for(const pool::pool_geometry& g, int lanes, bool backward,
                                       int32_t tap_pack_bytes) {
  std::vector<pool::tile_plan> plans;
  for (int sms : {132, 1}) {
    const pool::tile_plan p = pool::choose_tile_plan(g, lanes, backward, tap_pack_bytes, sms);
    if (p.count > 0) plans.push_back(p);
  }
  const int32_t vectors = g.c / lanes;
  const int32_t extents[][3] = {{1, 1, 1}, {1, 2, 3}, {1, 3, 2}, {1, 5, 7}, {1, 1, 64}};
  for (const auto& e : extents) {
    for (int32_t chunk : {1, 2, vectors}) {
      if (chunk > vectors || chunk > pool::tile_max_chunk) continue;
      const int32_t extent[3] = {e[0], e[1], e[2]};
      const pool::tile_plan p = pool::make_tile_plan(g, lanes, backward, tap_pack_bytes, extent, chunk);
      if (p.count > 0) plans.push_back(p);
    }
  }
  return plans;
}

template <typename T, pool::pool_op Op>
void check_forward(const tsrpPoolingProblem& p, const ref::host_tensor& x, float alpha, float beta,
                   const std::string& label) {
  ref::host_tensor y0(p.y);
  ref::fill_integers(y0, ref::fill_spec{-3, 3, 1.0}, 11);
  ref::host_tensor expected = y0;
  std::string error;
  ASSERT_TRUE(ref::pooling_forward(p, x.data(), alpha, beta, expected.data(), &error)) << error;
  expected.round_to_data_type();
  ref::host_tensor init = y0;
  if (beta == 0.0f) {
    // A value no pooling of these inputs produces: an unwritten output fails the comparison.
    for (int64_t i = 0; i < init.extent(); ++i) init.data()[i] = 1000.0f;
  }
  const std::vector<uint8_t> x_bytes = x.pack();
  const pool::pool_geometry g = pool::make_geometry(p);
  const std::vector<pool::tile_plan> plans = plans_for(g, lanes_of<T>(), false, 0);
  ASSERT_FALSE(plans.empty()) << label << ": no tile plan fits";
  for (const pool::tile_plan& plan : plans) {
    SCOPED_TRACE(label + " tile " + std::to_string(plan.extent[0]) + "x" + std::to_string(plan.extent[1]) + "x" +
                 std::to_string(plan.extent[2]) + " chunk " + std::to_string(plan.chunk));
    std::vector<uint8_t> y_bytes = init.pack();
    pool::forward_tile_program<T, Op> program{reinterpret_cast<const T*>(x_bytes.data()),
                                              pool::strides_of(p.x, p.spatial_dims),
                                              reinterpret_cast<T*>(y_bytes.data()),
                                              pool::strides_of(p.y, p.spatial_dims),
                                              g,
                                              plan,
                                              alpha,
                                              beta};
    run_tiles_on_host(program);
    ref::host_tensor got(p.y);
    got.unpack(y_bytes.data());
    const ref::compare_result r = ref::compare(got, expected, ref::pooling_tolerance(p.y.data_type));
    EXPECT_TRUE(r.ok()) << r.message;
  }
}

template <typename T, typename Tap, pool::pool_op Op>
void check_backward(const tsrpPoolingProblem& p, const ref::host_tensor& x, float alpha, float beta,
                    const std::string& label) {
  ref::host_tensor dy(p.dy), dx0(p.dx);
  ref::fill_integers(dy, ref::fill_spec{-4, 4, 1.0}, 21);
  ref::fill_integers(dx0, ref::fill_spec{-3, 3, 1.0}, 22);
  ref::host_tensor expected = dx0;
  std::string error;
  ASSERT_TRUE(ref::pooling_backward(p, x.data(), dy.data(), alpha, beta, expected.data(), &error)) << error;
  expected.round_to_data_type();
  ref::host_tensor init = dx0;
  if (beta == 0.0f) ref::fill_poison(init);
  const std::vector<uint8_t> x_bytes = x.pack(), dy_bytes = dy.pack();
  const pool::pool_geometry g = pool::make_geometry(p);
  constexpr bool max = Op == pool::pool_op::argmax;
  const int32_t tap_pack_bytes = max ? lanes_of<T>() * static_cast<int32_t>(sizeof(Tap)) : 0;
  const std::vector<pool::tile_plan> plans = plans_for(g, lanes_of<T>(), true, tap_pack_bytes);
  ASSERT_FALSE(plans.empty()) << label << ": no tile plan fits";
  for (const pool::tile_plan& plan : plans) {
    SCOPED_TRACE(label + " tile " + std::to_string(plan.extent[0]) + "x" + std::to_string(plan.extent[1]) + "x" +
                 std::to_string(plan.extent[2]) + " chunk " + std::to_string(plan.chunk));
    std::vector<uint8_t> dx_bytes = init.pack();
    pool::backward_tile_program<T, Tap, Op> program{reinterpret_cast<const T*>(x_bytes.data()),
                                                    pool::strides_of(p.x, p.spatial_dims),
                                                    reinterpret_cast<const T*>(dy_bytes.data()),
                                                    pool::strides_of(p.dy, p.spatial_dims),
                                                    reinterpret_cast<T*>(dx_bytes.data()),
                                                    pool::strides_of(p.dx, p.spatial_dims),
                                                    g,
                                                    plan,
                                                    alpha,
                                                    beta};
    run_tiles_on_host(program);
    ref::host_tensor got(p.dx);
    got.unpack(dx_bytes.data());
    const ref::compare_result r = ref::compare(got, expected, ref::pooling_tolerance(p.dx.data_type));
    EXPECT_TRUE(r.ok()) << r.message;
  }
}

// Small integers (many ties, so the first-tap rule is exercised), and for max pooling NaN and
// -inf at about one position in six each and +inf at one in sixteen, so that some windows are
// all NaN and some start with -inf (which must win over later NaN and -inf taps).
ref::host_tensor make_input(const tsrpPoolingProblem& p, bool with_nan, uint32_t seed) {
  ref::host_tensor x(p.x);
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, seed);
  if (with_nan) {
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < x.extent(); ++i) {
      const uint32_t r = rng() % 48;
      if (r < 8) x.data()[i] = std::nanf("");
      else if (r < 16) x.data()[i] = -INFINITY;
      else if (r < 19) x.data()[i] = INFINITY;
    }
  }
  return x;
}

template <typename T>
void sweep(int32_t dt) {
  uint32_t seed = 700;
  for (const pool_shape& s : k_shapes) {
    for (const mode_case& m : k_modes) {
      const tsrpPoolingProblem p = make_problem(s, m, dt);
      if (s.c % lanes_of<T>() != 0) continue;
      const bool max = m.mode == TSRP_POOLING_MAX;
      for (bool with_nan : {false, true}) {
        if (with_nan && !max) continue;
        const ref::host_tensor x = make_input(p, with_nan, seed++);
        for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 2.0f}}) {
          const std::string label = std::string(s.label) + " " + m.label + (with_nan ? " nan" : "") +
                                    " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta);
          if (m.mode == TSRP_POOLING_MAX) {
            if (m.nan_propagation == TSRP_PROPAGATE_NAN) {
              check_forward<T, pool::pool_op::max_propagate_nan>(p, x, alpha, beta, label);
            } else {
              check_forward<T, pool::pool_op::max_skip_nan>(p, x, alpha, beta, label);
              check_backward<T, uint8_t, pool::pool_op::argmax>(p, x, alpha, beta, label + " uint8 taps");
              check_backward<T, int32_t, pool::pool_op::argmax>(p, x, alpha, beta, label + " int32 taps");
            }
          } else if (m.mode == TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING) {
            check_forward<T, pool::pool_op::avg_include_pad>(p, x, alpha, beta, label);
            check_backward<T, uint8_t, pool::pool_op::avg_include_pad>(p, x, alpha, beta, label);
          } else {
            check_forward<T, pool::pool_op::avg_exclude_pad>(p, x, alpha, beta, label);
            check_backward<T, uint8_t, pool::pool_op::avg_exclude_pad>(p, x, alpha, beta, label);
          }
        }
      }
    }
  }
}

TEST(PoolingTilesOnHost, float_tiles_match_the_reference) { sweep<float>(TSRP_DATA_FLOAT); }
TEST(PoolingTilesOnHost, half_tiles_match_the_reference) { sweep<__half>(TSRP_DATA_HALF); }
TEST(PoolingTilesOnHost, bfloat16_tiles_match_the_reference) { sweep<__nv_bfloat16>(TSRP_DATA_BFLOAT16); }

// The H200 anchor shapes get tiles that fit three blocks per SM and re-read little.
TEST(PoolingTilesOnHost, anchor_max_pool_plans_fit_three_blocks_per_sm) {
  // fp16 256x64x112x112, 3x3 stride 2 pad 1 (the geometry alone: the tensors would take 1 GB).
  pool::pool_geometry g{};
  g.n = 256;
  g.c = 64;
  for (int d = 0; d < 3; ++d) {
    const bool spatial = d > 0;
    g.in[d] = spatial ? 112 : 1;
    g.out[d] = spatial ? 56 : 1;
    g.window[d] = spatial ? 3 : 1;
    g.stride[d] = spatial ? 2 : 1;
    g.pad[d] = spatial ? 1 : 0;
  }
  g.window_size = 9;
  const pool::tile_plan forward = pool::choose_tile_plan(g, 8, false, 0, 132);
  const pool::tile_plan backward = pool::choose_tile_plan(g, 8, true, 8, 132);
  for (const pool::tile_plan& plan : {forward, backward}) {
    ASSERT_GT(plan.count, 0);
    EXPECT_EQ(plan.chunk, 8);
    EXPECT_LE(pool::tile_blocks_per_sm * (plan.shared_bytes + 1024), 227 * 1024);
  }
  std::printf("[ tiles    ] forward %dx%d outputs, %d bytes; backward %dx%d dx, %d bytes\n", forward.extent[1],
              forward.extent[2], forward.shared_bytes, backward.extent[1], backward.extent[2], backward.shared_bytes);
}

TEST(PoolingTilesOnHost, forward_declines_strides_beyond_the_window) {
  const tsrpPoolingProblem p = make_problem(k_shapes[7], k_modes[0], TSRP_DATA_FLOAT);
  EXPECT_EQ(pool::choose_tile_plan(pool::make_geometry(p), 4, false, 0, 132).count, 0);
  EXPECT_GT(pool::choose_tile_plan(pool::make_geometry(p), 4, true, 4, 132).count, 0);
}

}  // namespace
