// What the host tests of the CUDA backward data's decompositions share (dgrad_phases_host_test.cpp,
// dgrad_fprop_form_host_test.cpp): a 2-D convolution (fp32, one group, cross-correlation, packed
// channels-last x, w and y, y's extent derived from the others), and the check that a
// decomposition run through the reference gives the reference's own backward data exactly.
#pragma once

#include "reference_convolution_backward.hpp"
#include "tensor_fill.hpp"

#include <gtest/gtest.h>
#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::testing {

struct nhwc_conv_case {
  int64_t n, c, h, w, k, r, s;
  int stride[2], pad_before[2], pad_after[2], dilation[2];
};

inline tsrpConvolutionProblem nhwc_conv_problem(const nhwc_conv_case& t) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.spatial_dims = 2;
  p.groups = 1;
  p.mode = TSRP_CROSS_CORRELATION;
  p.compute_type = TSRP_DATA_FLOAT;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) p.stride[i] = p.dilation[i] = 1;
  const int64_t in[2] = {t.h, t.w}, filter[2] = {t.r, t.s};
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = t.stride[i];
    p.pad_before[i] = t.pad_before[i];
    p.pad_after[i] = t.pad_after[i];
    p.dilation[i] = t.dilation[i];
    out[i] = (in[i] + t.pad_before[i] + t.pad_after[i] - (filter[i] - 1) * t.dilation[i] - 1) / t.stride[i] + 1;
  }
  p.x = reference::host_tensor::packed(TSRP_DATA_FLOAT, {t.n, t.c, t.h, t.w}, true).desc();
  p.w = reference::host_tensor::packed(TSRP_DATA_FLOAT, {t.k, t.c, t.r, t.s}, true).desc();
  p.y = reference::host_tensor::packed(TSRP_DATA_FLOAT, {t.n, t.k, out[0], out[1]}, true).desc();
  return p;
}

// `decomposed(p, w, dy, dx_old, alpha, beta, &error)` returns dx as the decomposition computes it;
// it must equal the reference's backward data for alpha 2 and beta 0 (over a poisoned dx, which it
// must not read) and 0.5, on integer data (exact sums).
template <typename Decomposed>
void expect_dgrad_matches_reference(const tsrpConvolutionProblem& p, uint32_t& seed, Decomposed&& decomposed) {
  namespace ref = tessera::reference;
  for (const double beta : {0.0, 0.5}) {
    SCOPED_TRACE(beta == 0.0 ? "beta 0" : "beta 0.5");
    ref::host_tensor w(p.w), dy(p.y), dx_old(p.x);
    ref::fill_integers(w, {-2, 2, 1.0}, seed++);
    ref::fill_integers(dy, {-3, 3, 1.0}, seed++);
    ref::fill_integers(dx_old, {-4, 4, 1.0}, seed++);
    if (beta == 0.0) ref::fill_poison(dx_old);
    ref::host_tensor expected = dx_old;
    std::string error;
    ASSERT_TRUE(ref::convolution_backward_data(p, w.data(), dy.data(), 2.0, beta, expected.data(), &error)) << error;
    const ref::host_tensor got = decomposed(p, w, dy, dx_old, 2.0, beta, &error);
    ASSERT_TRUE(error.empty()) << error;
    for (int64_t i = 0; i < expected.extent(); ++i)
      ASSERT_EQ(got.data()[i], expected.data()[i]) << "element " << i << " of " << expected.extent();
  }
}

}  // namespace tessera::testing
