// Backward data as a forward convolution (cuda_backend/conv_dgrad_fprop_form.hpp, run by the TF32
// kernel of conv_igemm_dgrad_fprop_form.cuh) checked on the host against the naive reference: the
// flipped, K/C-swapped filter the GPU's copy kernel writes (its offset function, read back through
// a packed C x R x S x K tensor) goes through the reference's own forward convolution of dy with the
// transformed padding, and must give the reference's backward data exactly (integer data, so the
// sums are exact). Needs no GPU: what only a GPU can check (the copy kernel's tiling, CUTLASS
// running the forward) is left to the conformance test.
#include "conv_dgrad_fprop_form.hpp"
#include "dgrad_host_check.hpp"
#include "reference_convolution.hpp"
#include "reference_convolution_backward.hpp"
#include "tensor_fill.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace igemm = tessera::cuda::igemm;
namespace ref = tessera::reference;

struct unit_stride_case {
  const char* label;
  tessera::testing::nhwc_conv_case shape;
};

// ResNet's 3x3 and 1x1, valid and "full" padding, asymmetric padding, even and non-square
// filters, dilation, 1-D as height 1.
const unit_stride_case cases[] = {
    {"3x3 pad 1 (ResNet)", {2, 8, 7, 7, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, {1, 1}}},
    {"1x1 pad 0 (ResNet)", {2, 16, 5, 6, 8, 1, 1, {1, 1}, {0, 0}, {0, 0}, {1, 1}}},
    {"3x3 pad 0 (valid)", {1, 8, 9, 8, 8, 3, 3, {1, 1}, {0, 0}, {0, 0}, {1, 1}}},
    {"3x3 pad 2 (full)", {1, 8, 5, 5, 8, 3, 3, {1, 1}, {2, 2}, {2, 2}, {1, 1}}},
    {"3x3 pad (0, 2) asymmetric", {1, 8, 6, 7, 8, 3, 3, {1, 1}, {0, 1}, {2, 0}, {1, 1}}},
    {"2x4 even, non-square", {2, 8, 6, 9, 8, 2, 4, {1, 1}, {1, 2}, {0, 1}, {1, 1}}},
    {"3x3 dilation 2 pad 2", {1, 8, 9, 9, 8, 3, 3, {1, 1}, {2, 2}, {2, 2}, {2, 2}}},
    {"5x3 dilation (2, 1)", {1, 8, 12, 7, 16, 5, 3, {1, 1}, {3, 1}, {5, 1}, {2, 1}}},
    {"1-D as height 1: 7 pad 3", {2, 8, 1, 19, 8, 1, 7, {1, 1}, {0, 3}, {0, 3}, {1, 1}}},
};

tsrpConvolutionProblem problem_of(const unit_stride_case& t) { return tessera::testing::nhwc_conv_problem(t.shape); }

// The geometry the plugin derives (conv_igemm_geometry.hpp), as the kernel's support() sees it.
igemm::nhwc_geometry geometry_of(const tsrpConvolutionProblem& p) { return igemm::make_geometry(igemm::view_of(p)); }

// dx through the forward form: wt placed by swapped_filter_offset from w's packed KRSC storage
// (read back as the C x R x S x K tensor the forward takes), then the reference forward of dy.
ref::host_tensor by_forward(const tsrpConvolutionProblem& p, const ref::host_tensor& w, const ref::host_tensor& dy,
                            const ref::host_tensor& dx_old, double alpha, double beta, std::string* error) {
  const igemm::nhwc_geometry g = geometry_of(p);
  const igemm::nhwc_geometry f = igemm::dgrad_as_forward(g);
  EXPECT_EQ(f.p, g.h);
  EXPECT_EQ(f.q, g.w);
  tsrpConvolutionProblem fwd = p;
  fwd.x = p.y;  // dy: N x K x P x Q
  fwd.y = p.x;  // dx: N x C x H x W
  fwd.w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {g.c, g.k, g.r, g.s}, true).desc();
  for (int i = 0; i < 2; ++i) {
    fwd.pad_before[i] = f.pad_before[i];
    fwd.pad_after[i] = f.pad_after[i];
    fwd.stride[i] = f.stride[i];
    fwd.dilation[i] = f.dilation[i];
  }
  // The copy kernel's mapping, element by element over w's packed KRSC storage.
  ref::host_tensor wt(fwd.w);
  std::vector<float> wt_storage(static_cast<size_t>(wt.extent()), 0.0f);
  for (int k = 0; k < g.k; ++k)
    for (int r = 0; r < g.r; ++r)
      for (int s = 0; s < g.s; ++s)
        for (int c = 0; c < g.c; ++c) {
          const int64_t from[4] = {k, c, r, s};
          wt_storage[static_cast<size_t>(igemm::swapped_filter_offset(k, r, s, c, g.k, g.r, g.s))] = w.at(from);
        }
  // wt is packed channels-last over (C, K, R, S): its storage order is C, R, S, K, the copy's.
  for (int64_t i = 0; i < wt.extent(); ++i) wt.data()[i] = wt_storage[static_cast<size_t>(i)];
  ref::host_tensor dx = dx_old;
  ref::convolution_forward(fwd, dy.data(), wt.data(), alpha, beta, dx.data(), error);
  return dx;
}

TEST(DgradFprop, the_forward_form_matches_the_backward_data_reference) {
  uint32_t seed = 11;
  for (const unit_stride_case& t : cases) {
    SCOPED_TRACE(t.label);
    const tsrpConvolutionProblem p = problem_of(t);
    ASSERT_EQ(igemm::dgrad_fprop_form_reason(geometry_of(p)), "");
    tessera::testing::expect_dgrad_matches_reference(p, seed, by_forward);
  }
}

TEST(DgradFprop, strides_and_padding_past_the_filter_are_declined_by_name) {
  igemm::nhwc_geometry g{};
  g.n = 1, g.c = 8, g.h = 8, g.w = 8, g.k = 16, g.r = 3, g.s = 3, g.p = 8, g.q = 8;
  for (int i = 0; i < 2; ++i) g.pad_before[i] = g.pad_after[i] = 1, g.stride[i] = 1, g.dilation[i] = 1;
  EXPECT_EQ(igemm::dgrad_fprop_form_reason(g), "");
  g.stride[1] = 2;
  EXPECT_NE(igemm::dgrad_fprop_form_reason(g).find("stride 2 in width"), std::string::npos);
  g.stride[1] = 1;
  g.pad_after[0] = 3;  // beyond (3 - 1) * 1
  EXPECT_NE(igemm::dgrad_fprop_form_reason(g).find("padding beyond (filter - 1) * dilation = 2 in height"),
            std::string::npos);
  g.dilation[0] = 2;  // now (3 - 1) * 2 = 4 covers it
  EXPECT_EQ(igemm::dgrad_fprop_form_reason(g), "");
}

}  // namespace
