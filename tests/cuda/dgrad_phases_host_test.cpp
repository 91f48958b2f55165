// The phase decomposition of the CUDA plugin's strided backward data (cuda_backend/
// conv_dgrad_phases.hpp, run by conv_igemm_dgrad_strided.cuh) checked on the host against the
// naive reference: each phase's unit-stride problem is run through the reference's own backward
// data with the sub-filter the GPU gathers, its result written through the phase's dx view, and
// the positions no phase covers get beta * dx, as the scaling kernel does. Integer data, so the
// sums are exact and the comparison is equality. Needs no GPU: what only a GPU can check (CUTLASS
// running each phase, the gather and scaling kernels) is left to the conformance test.
#include "conv_dgrad_phases.hpp"
#include "dgrad_host_check.hpp"
#include "reference_convolution_backward.hpp"
#include "tensor_fill.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace igemm = tessera::cuda::igemm;
namespace ref = tessera::reference;

struct strided_case {
  const char* label;
  tessera::testing::nhwc_conv_case shape;
};

// ResNet-50's strided layers in miniature, odd extents, even filters, asymmetric padding,
// strides of 3 and 4, mixed strides, and shapes whose last rows no output window reaches.
const strided_case cases[] = {
    {"1x1/2 (ResNet projection)", {2, 8, 8, 8, 16, 1, 1, {2, 2}, {0, 0}, {0, 0}, {1, 1}}},
    {"3x3/2 pad 1 (ResNet)", {2, 8, 8, 8, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}}},
    {"3x3/2 pad 1, odd extent", {1, 8, 7, 9, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}, {1, 1}}},
    {"7x7/2 pad 3 (stem)", {1, 8, 12, 12, 8, 7, 7, {2, 2}, {3, 3}, {3, 3}, {1, 1}}},
    {"3x3/2 pad 0, last row unreached", {1, 8, 8, 8, 8, 3, 3, {2, 2}, {0, 0}, {0, 0}, {1, 1}}},
    {"2x2/2 pad 0 (even filter)", {2, 8, 6, 6, 8, 2, 2, {2, 2}, {0, 0}, {0, 0}, {1, 1}}},
    {"5x5/3 pad 2", {1, 8, 10, 11, 8, 5, 5, {3, 3}, {2, 2}, {2, 2}, {1, 1}}},
    {"1x1/3 (eight empty phases)", {1, 8, 9, 9, 8, 1, 1, {3, 3}, {0, 0}, {0, 0}, {1, 1}}},
    {"3x3 stride 2x1 (mixed)", {1, 8, 8, 6, 8, 3, 3, {2, 1}, {1, 1}, {1, 1}, {1, 1}}},
    {"4x4/4 pad 0 (no overlap)", {1, 8, 8, 8, 8, 4, 4, {4, 4}, {0, 0}, {0, 0}, {1, 1}}},
    {"3x3/2 pad (0, 2) asymmetric", {1, 8, 9, 9, 8, 3, 3, {2, 2}, {0, 0}, {2, 2}, {1, 1}}},
    {"1-D as height 1: 3/2 pad 1", {2, 8, 1, 11, 8, 1, 3, {1, 2}, {0, 1}, {0, 1}, {1, 1}}},
};

tsrpConvolutionProblem problem_of(const strided_case& t) { return tessera::testing::nhwc_conv_problem(t.shape); }

// The geometry the plugin derives (conv_igemm_geometry.hpp), as the kernel's support() sees it.
igemm::nhwc_geometry geometry_of(const tsrpConvolutionProblem& p) { return igemm::make_geometry(igemm::view_of(p)); }

// dx of the decomposition: every phase through the reference, then the uncovered positions.
ref::host_tensor by_phases(const tsrpConvolutionProblem& p, const ref::host_tensor& w, const ref::host_tensor& dy,
                           const ref::host_tensor& dx_old, double alpha, double beta, std::string* error) {
  const igemm::nhwc_geometry g = geometry_of(p);
  const igemm::strided_plan plan = igemm::plan_strided_dgrad(g, 2);
  ref::host_tensor dx = dx_old;
  if (!plan.why.empty()) {
    *error = plan.why;
    return dx;
  }
  const int64_t n = g.n, c = g.c, k = g.k;
  for (int i = 0; i < plan.count; ++i) {
    const igemm::strided_plan::phase& f = plan.phases[i];
    if (!f.runs) continue;
    const int ph = i / g.stride[1], pw = i % g.stride[1];
    EXPECT_EQ(f.dx_offset, (int64_t{ph} * g.w + pw) * g.c) << "phase " << i;
    // The sub-filter the gather kernel makes, and the phase's own problem.
    tsrpConvolutionProblem u = p;
    for (int d = 0; d < 2; ++d) {
      u.stride[d] = 1;
      u.pad_before[d] = f.g.pad_before[d];
      u.pad_after[d] = f.g.pad_after[d];
      EXPECT_GE(f.g.pad_after[d], 0) << "phase " << i;
    }
    u.x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {n, c, f.rows, f.cols}, true).desc();
    u.w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {k, c, f.g.r, f.g.s}, true).desc();
    ref::host_tensor sub(u.w), part(u.x);
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t cc = 0; cc < c; ++cc)
        for (int t = 0; t < f.g.r; ++t)
          for (int v = 0; v < f.g.s; ++v) {
            const int64_t to[4] = {kk, cc, t, v};
            const int64_t from[4] = {kk, cc, f.h.first_tap + g.stride[0] * t, f.w.first_tap + g.stride[1] * v};
            sub.at(to) = w.at(from);
          }
    // The phase's view of dx: (n, i, j, c) -> dx(n, c, s_h * i + ph, s_w * j + pw).
    auto for_view = [&](auto&& visit) {
      for (int64_t nn = 0; nn < n; ++nn)
        for (int64_t cc = 0; cc < c; ++cc)
          for (int64_t a = 0; a < f.rows; ++a)
            for (int64_t b = 0; b < f.cols; ++b) {
              const int64_t in_view[4] = {nn, cc, a, b};
              const int64_t in_dx[4] = {nn, cc, g.stride[0] * a + ph, g.stride[1] * b + pw};
              visit(in_view, in_dx);
            }
    };
    for_view([&](const int64_t* v, const int64_t* x) { part.at(v) = dx_old.at(x); });
    if (!ref::convolution_backward_data(u, sub.data(), dy.data(), alpha, beta, part.data(), error)) return dx;
    for_view([&](const int64_t* v, const int64_t* x) { dx.at(x) = part.at(v); });
  }
  const igemm::phase_coverage coverage = igemm::coverage_of(plan, g);
  for (int64_t nn = 0; nn < n; ++nn)
    for (int64_t cc = 0; cc < c; ++cc)
      for (int y = 0; y < g.h; ++y)
        for (int x = 0; x < g.w; ++x) {
          if (coverage.covers(y, x)) continue;
          const int64_t at[4] = {nn, cc, y, x};
          dx.at(at) = beta == 0.0 ? 0.0f : static_cast<float>(beta * dx_old.at(at));
        }
  return dx;
}

TEST(DgradPhases, the_decomposition_matches_the_strided_reference) {
  uint32_t seed = 7;
  for (const strided_case& t : cases) {
    SCOPED_TRACE(t.label);
    tessera::testing::expect_dgrad_matches_reference(problem_of(t), seed, by_phases);
  }
}

TEST(DgradPhases, plans_name_what_they_cannot_do_and_place_the_subfilters) {
  igemm::nhwc_geometry g{};
  g.n = 1, g.c = 8, g.h = 8, g.w = 8, g.k = 16, g.r = 3, g.s = 3, g.p = 4, g.q = 4;
  for (int i = 0; i < 2; ++i) g.pad_before[i] = g.pad_after[i] = 1, g.stride[i] = 2, g.dilation[i] = 1;
  const igemm::strided_plan plan = igemm::plan_strided_dgrad(g, 2);
  ASSERT_TRUE(plan.why.empty()) << plan.why;
  ASSERT_EQ(plan.count, 4);
  // Taps per phase: even rows take r = 1, odd rows r = 0 and 2 (pad 1).
  EXPECT_EQ(plan.phases[0].g.r, 1);
  EXPECT_EQ(plan.phases[3].g.r, 2);
  EXPECT_EQ(plan.phases[3].g.s, 2);
  size_t expected_offset = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.phases[i].filter_offset, expected_offset) << i;
    EXPECT_EQ(plan.phases[i].filter_offset % igemm::strided_workspace_alignment, 0u) << i;
    expected_offset += igemm::align_up(static_cast<size_t>(g.k) * plan.phases[i].g.r * plan.phases[i].g.s * g.c * 2);
  }
  EXPECT_EQ(plan.filters_bytes, expected_offset);
  g.dilation[0] = 2;
  EXPECT_NE(igemm::plan_strided_dgrad(g, 2).why.find("dilated"), std::string::npos);
}

}  // namespace
