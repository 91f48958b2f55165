// Pooling forward and backward on every kernel of every loaded backend, through the C API,
// against the naive reference (tests/reference/reference_pooling.hpp): 2-D and 3-D windows from
// real networks plus nasty ones (primes, asymmetric padding, size-1 dims, overlapping windows),
// every mode, fp32/fp16/bf16, NCHW, NHWC and mixed layouts, two alpha/beta pairs. Inputs are
// small integers (so max pooling has many ties: the backward checks the tie rule), outputs are
// poisoned with NaN when beta is 0.
#include "backend_fixture.hpp"
#include "reference_pooling.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class PoolingConformance : public BackendTest {};

struct pool_shape {
  const char* label;
  int spatial;
  int64_t mb, c;
  int64_t in[3], window[3], stride[3], pad_before[3], pad_after[3];
};

// clang-format off
const pool_shape k_pool_shapes[] = {
  // label                    sp mb c   in          window     stride     pad_b      pad_a
  {"alexnet_3x3_s2",           2, 2, 16, {13,13,0}, {3,3,0},   {2,2,0},   {0,0,0},   {0,0,0}},
  {"resnet_3x3_s2_p1",         2, 2, 8,  {15,15,0}, {3,3,0},   {2,2,0},   {1,1,0},   {1,1,0}},
  {"global_7x7",               2, 2, 24, {7,7,0},   {7,7,0},   {1,1,0},   {0,0,0},   {0,0,0}},
  {"primes_asymmetric_pad",    2, 3, 7,  {11,13,0}, {3,2,0},   {2,1,0},   {1,0,0},   {2,1,0}},
  {"size_one_dims",            2, 1, 1,  {1,7,0},   {1,3,0},   {1,2,0},   {0,1,0},   {0,1,0}},
  {"overlapping_2x2_s1",       2, 2, 5,  {6,6,0},   {2,2,0},   {1,1,0},   {0,0,0},   {1,1,0}},
  {"three_d",                  3, 1, 4,  {5,6,7},   {2,3,3},   {2,1,2},   {1,1,0},   {0,1,1}},
};
// clang-format on

enum class layout { nchw, nhwc, mixed };  // mixed: inputs NCHW, outputs NHWC

tsrpPoolingProblem make_problem(const pool_shape& s, tsrPoolingMode_t mode, int32_t dt, layout l) {
  tsrpPoolingProblem p{};
  p.struct_size = sizeof(p);
  p.mode = mode;
  p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
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
  p.x = ref::host_tensor::packed(dt, xd, l == layout::nhwc).desc();
  p.y = ref::host_tensor::packed(dt, yd, l == layout::nhwc).desc();
  p.dy = p.y;
  p.dx = ref::host_tensor::packed(dt, xd, l != layout::nchw).desc();
  if (l == layout::mixed) p.y = ref::host_tensor::packed(dt, yd, true).desc();
  return p;
}

struct pool_desc_owner {
  tsrPoolingDescriptor_t d = nullptr;
  explicit pool_desc_owner(const tsrpPoolingProblem& p) {
    tsrCreatePoolingDescriptor(&d);
    tsrSetPoolingNdDescriptor(d, static_cast<tsrPoolingMode_t>(p.mode),
                              static_cast<tsrNanPropagation_t>(p.nan_propagation), p.spatial_dims,
                              p.window, p.pad_before, p.pad_after, p.stride);
  }
  ~pool_desc_owner() { tsrDestroyPoolingDescriptor(d); }
  operator tsrPoolingDescriptor_t() const { return d; }
};

// NaN in x for the NaN rules of max pooling: every seventh stored element, and the first three
// positions of the first spatial dim of the first image entirely (all channels, every position of
// the other spatial dims), so its first windows see only NaN, which both rules give as NaN.
void sprinkle_nans(ref::host_tensor& x) {
  float* v = x.data();
  for (int64_t i = 0; i < x.extent(); i += 7) v[i] = NAN;
  const tsrpTensor& d = x.desc();
  std::vector<int64_t> index(static_cast<size_t>(d.ndims), 0);  // image 0
  std::vector<int64_t> extent(d.dims, d.dims + d.ndims);
  extent[0] = 1;
  extent[2] = std::min<int64_t>(3, d.dims[2]);
  while (true) {
    x.at(index.data()) = NAN;
    int i = d.ndims - 1;
    for (; i >= 0; --i) {
      if (++index[static_cast<size_t>(i)] < extent[static_cast<size_t>(i)]) break;
      index[static_cast<size_t>(i)] = 0;
    }
    if (i < 0) break;
  }
}

bool run_forward(tsrHandle_t h, const tsrKernelInfo_t& k, const tsrpPoolingProblem& p, float alpha,
                 float beta, uint32_t seed, std::string* declined, bool nan_inputs = false) {
  ref::host_tensor x(p.x), y0(p.y);
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, seed);
  if (nan_inputs) sprinkle_nans(x);
  ref::fill_integers(y0, ref::fill_spec{-3, 3, 1.0}, seed + 1);
  desc_owner xd(p.x), yd(p.y);
  pool_desc_owner pd(p);
  size_t ws = 0;
  tsrStatus_t s = tsrGetPoolingForwardWorkspaceSize(h, pd, xd, yd, k.algo, &ws);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  device_buffer bx(h, x.byte_size()), by(h, y0.byte_size());
  bx.upload(x);
  ref::host_tensor init = y0;
  if (beta == 0.0f) ref::fill_poison(init);
  by.upload(init);
  s = tsrPoolingForward(h, pd, k.algo, alpha, xd, bx.p, beta, yd, by.p);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(p.y);
  by.download(got);
  ref::host_tensor expected = y0;
  std::string error;
  EXPECT_TRUE(ref::pooling_forward(p, x.data(), alpha, beta, expected.data(), &error)) << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::pooling_tolerance(p.y.data_type));
  EXPECT_TRUE(r.ok()) << r.message;
  return true;
}

bool run_backward(tsrHandle_t h, const tsrKernelInfo_t& k, const tsrpPoolingProblem& p,
                  float alpha, float beta, uint32_t seed, std::string* declined, bool nan_inputs = false) {
  ref::host_tensor x(p.x), y(p.y), dy(p.dy), dx0(p.dx);
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, seed);
  if (nan_inputs) sprinkle_nans(x);
  ref::fill_integers(dy, ref::fill_spec{-4, 4, 1.0}, seed + 1);
  ref::fill_integers(dx0, ref::fill_spec{-3, 3, 1.0}, seed + 2);
  std::string error;
  EXPECT_TRUE(ref::pooling_forward(p, x.data(), 1.0, 0.0, y.data(), &error)) << error;
  y.round_to_data_type();  // the forward output, as a caller would pass it
  desc_owner xd(p.x), yd(p.y), dyd(p.dy), dxd(p.dx);
  pool_desc_owner pd(p);
  size_t ws = 0;
  tsrStatus_t s = tsrGetPoolingBackwardWorkspaceSize(h, pd, yd, dyd, xd, dxd, k.algo, &ws);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  device_buffer bx(h, x.byte_size()), by(h, y.byte_size()), bdy(h, dy.byte_size()),
      bdx(h, dx0.byte_size());
  bx.upload(x);
  by.upload(y);
  bdy.upload(dy);
  ref::host_tensor init = dx0;
  if (beta == 0.0f) ref::fill_poison(init);
  bdx.upload(init);
  s = tsrPoolingBackward(h, pd, k.algo, alpha, yd, by.p, dyd, bdy.p, xd, bx.p, beta, dxd, bdx.p);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(p.dx);
  bdx.download(got);
  ref::host_tensor expected = dx0;
  EXPECT_TRUE(ref::pooling_backward(p, x.data(), dy.data(), alpha, beta, expected.data(), &error))
      << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::pooling_tolerance(p.dx.data_type));
  EXPECT_TRUE(r.ok()) << r.message;
  return true;
}

void pooling_sweep(tsrHandle_t h, const std::string& backend, bool backward) {
  const tsrOperation_t op = backward ? TSR_OP_POOLING_BACKWARD : TSR_OP_POOLING_FORWARD;
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  const int32_t dtypes[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};
  const tsrPoolingMode_t modes[] = {TSR_POOLING_MAX, TSR_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                    TSR_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
  const char* layout_names[] = {"nchw", "nhwc", "mixed"};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 500;
    for (const pool_shape& s : k_pool_shapes)
      for (tsrPoolingMode_t mode : modes)
        for (int32_t dt : dtypes)
          for (layout l : {layout::nchw, layout::nhwc, layout::mixed})
            for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 2.0f}}) {
              SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label +
                           " mode=" + std::to_string(mode) +
                           " dt=" + tessera::common::data_type_name(dt) + " " +
                           layout_names[static_cast<int>(l)] + " alpha=" + std::to_string(alpha) +
                           " beta=" + std::to_string(beta));
              tsrpPoolingProblem p = make_problem(s, mode, dt, l);
              std::string why;
              bool ran = backward ? run_backward(h, k, p, alpha, beta, seed++, &why)
                                  : run_forward(h, k, p, alpha, beta, seed++, &why);
              if (ran) {
                ++t.ran;
              } else {
                ++t.declined;
                if (t.example_reason.empty()) t.example_reason = why;
              }
            }
    EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name
                        << " declined every case, e.g.: " << t.example_reason;
    std::printf("[ conform  ] %s/%s %s: %d cases ran, %d declined%s%s\n", k.backend_name,
                k.kernel_name, tsrGetOperationName(op), t.ran, t.declined,
                t.declined ? ", e.g. " : "", t.example_reason.substr(0, 160).c_str());
  }
}

TEST_P(PoolingConformance, pooling_forward_matches_the_reference) {
  pooling_sweep(h_, GetParam().name, false);
}

TEST_P(PoolingConformance, pooling_backward_matches_the_reference) {
  pooling_sweep(h_, GetParam().name, true);
}

// Max pooling over inputs with NaN, under both NaN rules (the sweep above has no NaN inputs and
// only the default rule): every shape (2-D and 3-D), every storage type, channels-last and NCHW,
// both blends, forward and backward, on our backends (the cudnn plugin's NaN behaviour is
// NVIDIA's). oneDNN leaves NaN inputs undefined (measured: all-NaN windows gave the lowest float
// and PROPAGATE skipped NaN), so the oneDNN kernels detect them and pool in their own loop
// (cpu_backend/onednn_pooling_nan.hpp); these tests hold both backends to the reference's rule.
void nan_rule_sweep(tsrHandle_t h, const std::string& backend, bool backward) {
  if (backend == "cudnn") GTEST_SKIP() << "the cudnn plugin passes NaN inputs to NVIDIA's kernels, whose rule is theirs";
  const tsrOperation_t op = backward ? TSR_OP_POOLING_BACKWARD : TSR_OP_POOLING_FORWARD;
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  for (const tsrKernelInfo_t& k : ks) {
    int ran = 0;
    uint32_t seed = backward ? 1900 : 900;
    for (const pool_shape& s : k_pool_shapes) {
      for (int32_t rule : {TSRP_NOT_PROPAGATE_NAN, TSRP_PROPAGATE_NAN})
        for (int32_t dt : {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16})
          for (layout l : {layout::nchw, layout::nhwc})
            for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {0.5f, 2.0f}}) {
              SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label +
                           " nan_rule=" + std::to_string(rule) + " dt=" + tessera::common::data_type_name(dt) +
                           (l == layout::nhwc ? " nhwc" : " nchw") + " alpha=" + std::to_string(alpha) +
                           " beta=" + std::to_string(beta));
              tsrpPoolingProblem p = make_problem(s, TSR_POOLING_MAX, dt, l);
              p.nan_propagation = rule;
              std::string why;
              const bool did = backward ? run_backward(h, k, p, alpha, beta, seed++, &why, true)
                                        : run_forward(h, k, p, alpha, beta, seed++, &why, true);
              if (did) ++ran;
            }
    }
    EXPECT_GT(ran, 0) << k.backend_name << "/" << k.kernel_name << " declined every NaN case";
  }
}

TEST_P(PoolingConformance, max_pooling_nan_rules_match_the_reference) {
  nan_rule_sweep(h_, GetParam().name, false);
}

TEST_P(PoolingConformance, max_pooling_backward_never_lets_nan_win) {
  nan_rule_sweep(h_, GetParam().name, true);
}

// The reference itself: max backward sends a tied window's gradient to its first element.
TEST(PoolingReference, max_backward_gives_ties_to_the_first_element_in_window_order) {
  tsrpPoolingProblem p{};
  p.struct_size = sizeof(p);
  p.mode = TSRP_POOLING_MAX;
  p.spatial_dims = 2;
  p.window[0] = p.window[1] = 2;
  p.stride[0] = p.stride[1] = 2;
  p.window[2] = p.stride[2] = 1;
  p.x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {1, 1, 2, 2}, false).desc();
  p.y = p.dy = ref::host_tensor::packed(TSRP_DATA_FLOAT, {1, 1, 1, 1}, false).desc();
  p.dx = p.x;
  const float x[4] = {1, 3, 3, 2}, dy[1] = {5};
  float dx[4] = {9, 9, 9, 9};
  std::string error;
  ASSERT_TRUE(ref::pooling_backward(p, x, dy, 1.0, 0.0, dx, &error)) << error;
  EXPECT_EQ(dx[0], 0.0f);
  EXPECT_EQ(dx[1], 5.0f);
  EXPECT_EQ(dx[2], 0.0f);
  EXPECT_EQ(dx[3], 0.0f);
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, PoolingConformance,
                         ::testing::ValuesIn(loaded_backends()), backend_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PoolingConformance);

}  // namespace
