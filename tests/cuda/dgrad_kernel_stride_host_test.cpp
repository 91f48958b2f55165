// Backward data for filters that tile dx exactly (cuda_backend/conv_dgrad_kernel_stride.hpp: filter
// extent = stride, no padding before, no dilation) checked on the host against the naive
// reference: Z = dy x w computed here as the GPU's GEMM computes it (dy as M x K rows, packed KRSC
// w as a K x (T*C) matrix), then Z's rows put into dx through dx_pixel and the unreached elements
// through unreached_of's boxes (box_element), the kernels' own index functions, each element
// blended exactly once (z_source, the inverse, cross-checks both);
// integer data, so the sums are exact and the result must equal the reference's bit for bit. 1-D, 2-D and 3-D, odd extents whose last row no window
// reaches, padding after, non-square strides. Also which problems it declines, and why. Needs no
// GPU: the GEMM engine and the gather's launch are the conformance test's.
#include "conv_dgrad_kernel_stride.hpp"
#include "reference_convolution_backward.hpp"
#include "tensor_fill.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace ks = tessera::cuda::kernel_stride;
namespace ref = tessera::reference;

struct up_case {
  const char* label;
  int64_t n, c, k;
  std::vector<int64_t> dx;      // spatial extents of dx (the forward's x)
  std::vector<int64_t> stride;  // = the filter's extents
  std::vector<int64_t> pad_after;
};

tsrpConvolutionProblem problem_of(const up_case& u) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.spatial_dims = static_cast<int32_t>(u.dx.size());
  p.groups = 1;
  p.mode = TSRP_CROSS_CORRELATION;
  p.compute_type = TSRP_DATA_FLOAT;
  std::vector<int64_t> x_dims{u.n, u.c}, w_dims{u.k, u.c}, y_dims{u.n, u.k};
  for (size_t i = 0; i < u.dx.size(); ++i) {
    p.stride[i] = u.stride[i];
    p.dilation[i] = 1;
    p.pad_after[i] = u.pad_after[i];
    x_dims.push_back(u.dx[i]);
    w_dims.push_back(u.stride[i]);
    y_dims.push_back((u.dx[i] + u.pad_after[i] - u.stride[i]) / u.stride[i] + 1);
  }
  p.x = ref::host_tensor::packed(TSRP_DATA_FLOAT, x_dims, true).desc();
  p.w = ref::host_tensor::packed(TSRP_DATA_FLOAT, w_dims, true).desc();
  p.y = ref::host_tensor::packed(TSRP_DATA_FLOAT, y_dims, true).desc();
  return p;
}

const up_case cases[] = {
    {"2-D 2x2/2 (U-Net up-convolution)", 2, 8, 16, {8, 6}, {2, 2}, {0, 0}},
    {"2-D odd extents: the last row and column unreached", 1, 3, 5, {9, 7}, {2, 2}, {0, 0}},
    {"2-D padding after: the last window half outside dx", 1, 4, 3, {9, 7}, {2, 2}, {1, 1}},
    {"2-D strides (3, 2)", 2, 5, 4, {7, 8}, {3, 2}, {0, 0}},
    {"3-D 2x2x2/2 (3-D U-Net)", 1, 8, 8, {4, 6, 4}, {2, 2, 2}, {0, 0, 0}},
    {"3-D odd depth", 2, 3, 4, {5, 4, 3}, {2, 2, 1}, {0, 0, 0}},
    {"1-D 3/3", 3, 6, 2, {10}, {3}, {0}},
    {"1x1 stride 1 (a plain GEMM)", 2, 7, 9, {3, 5}, {1, 1}, {0, 0}},
    {"padding after beyond the stride: whole windows past dx", 1, 2, 3, {7, 5}, {2, 2}, {3, 2}},
    {"3-D unreached in every dim (three boxes)", 2, 2, 3, {5, 7, 3}, {2, 3, 2}, {0, 0, 0}},
};

TEST(DgradKernelStride, scatter_of_the_gemm_equals_the_reference) {
  uint32_t seed = 7;
  for (const up_case& u : cases) {
    SCOPED_TRACE(u.label);
    const tsrpConvolutionProblem p = problem_of(u);
    ASSERT_EQ(ks::support(p), "");
    const ks::plan q = ks::plan_of(p);
    ASSERT_EQ(q.dx_elements(), ref::host_tensor(p.x).element_count());
    for (const double beta : {0.0, 0.5}) {
      SCOPED_TRACE(beta == 0.0 ? "beta 0" : "beta 0.5");
      ref::host_tensor w(p.w), dy(p.y), dx_old(p.x);
      ref::fill_integers(w, {-3, 3, 1.0}, seed++);
      ref::fill_integers(dy, {-3, 3, 1.0}, seed++);
      ref::fill_integers(dx_old, {-4, 4, 1.0}, seed++);
      ref::host_tensor expected = dx_old;
      std::string error;
      ASSERT_TRUE(ref::convolution_backward_data(p, w.data(), dy.data(), 2.0, beta, expected.data(), &error))
          << error;
      // The GEMM: Z[m][j] = sum_k dy[m][k] * w[k][j].
      std::vector<double> z(static_cast<size_t>(q.m * q.z_columns()), 0.0);
      for (int64_t m = 0; m < q.m; ++m)
        for (int64_t k = 0; k < q.k; ++k)
          for (int64_t j = 0; j < q.z_columns(); ++j)
            z[m * q.z_columns() + j] += double(dy.data()[m * q.k + k]) * w.data()[k * q.z_columns() + j];
      // As the kernel writes dx: Z's rows scattered through dx_pixel, then the elements no window
      // reaches (z_source -1) in their own pass; every element written exactly once.
      std::vector<float> got(dx_old.data(), dx_old.data() + q.dx_elements());
      std::vector<int> writes(got.size(), 0);
      for (int64_t row = 0; row < q.m * q.t; ++row) {
        const int64_t pixel = ks::dx_pixel(q, row);
        if (pixel < 0) continue;
        for (int64_t c = 0; c < q.c; ++c) {
          const int64_t i = pixel * q.c + c;
          ASSERT_LT(i, q.dx_elements()) << "row " << row;
          ASSERT_EQ(ks::z_source(q, i), row * q.c + c) << "row " << row << " channel " << c;
          got[i] = static_cast<float>(2.0 * z[row * q.c + c] + beta * got[i]);
          ++writes[i];
        }
      }
      const ks::unreached_boxes unreached = ks::unreached_of(q);
      EXPECT_EQ(unreached.count > 0, ks::has_unreached(q));
      for (int b = 0; b < unreached.count; ++b) {
        const ks::box& box = unreached.boxes[b];
        for (int64_t e = 0; e < q.n * box.pixels() * q.c; ++e) {
          const int64_t i = ks::box_element(q, box, e);
          ASSERT_GE(i, 0);
          ASSERT_LT(i, q.dx_elements()) << "box " << b << " element " << e;
          ASSERT_LT(ks::z_source(q, i), 0) << "box " << b << " holds reached element " << i;
          got[i] = static_cast<float>(beta * got[i]);
          ++writes[i];
        }
      }
      for (int64_t i = 0; i < q.dx_elements(); ++i) {
        ASSERT_EQ(writes[i], 1) << "element " << i;
        ASSERT_EQ(got[i], expected.data()[i]) << "element " << i;
      }
    }
  }
}

TEST(DgradKernelStride, declines_with_the_reason) {
  const up_case base = cases[0];
  const auto reason = [](const tsrpConvolutionProblem& p) { return ks::support(p); };
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.pad_before[0] = 1;
    EXPECT_NE(reason(p).find("padding before"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.dilation[1] = 2;
    EXPECT_NE(reason(p).find("dilation"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.stride[1] = 1;
    EXPECT_NE(reason(p).find("filter extent 2 differs from stride 1"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.stride[0] = 0;
    p.w.dims[2] = 0;
    EXPECT_NE(reason(p).find("stride 0"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.spatial_dims = 4;
    EXPECT_NE(reason(p).find("spatial_dims 4"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.pad_after[0] = -1;
    EXPECT_NE(reason(p).find("negative padding after"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.y = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 16, 4, 3}, false).desc();  // NCHW dy
    EXPECT_NE(reason(p).find("dy is not packed channels-last"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.mode = TSRP_CONVOLUTION;
    EXPECT_NE(reason(p).find("cross-correlation"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.groups = 2;
    EXPECT_NE(reason(p).find("groups"), std::string::npos);
  }
  {
    tsrpConvolutionProblem p = problem_of(base);
    p.x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 8, 8, 6}, false).desc();  // NCHW dx
    EXPECT_NE(reason(p).find("dx is not packed channels-last"), std::string::npos);
  }
}

}  // namespace
