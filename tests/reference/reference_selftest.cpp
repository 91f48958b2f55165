// The reference checked against cases computed by hand: if these pass, the reference is the
// ground truth the backend tests take it for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "tensor_index.hpp"
#include "tolerance.hpp"

namespace tessera::reference {
namespace {

using ::testing::HasSubstr;

// A small convolution set-up: packed NCHW-like tensors, parameters from a benchdnn descriptor.
struct conv_case {
  tsrpConvolutionProblem problem{};
  host_tensor x, w, y;

  conv_case(const std::string& descriptor, bool channels_last = false) {
    common::conv_descriptor d;
    std::string error;
    EXPECT_TRUE(common::parse_conv_descriptor(descriptor, &d, &error)) << error;
    common::conv_descriptor_to_problem(d, &problem);
    int64_t xd[5], wd[5], yd[5];
    const int n = common::conv_tensor_dims(d, xd, wd, yd);
    x = host_tensor::packed(TSRP_DATA_FLOAT, {xd, xd + n}, channels_last);
    w = host_tensor::packed(TSRP_DATA_FLOAT, {wd, wd + n}, channels_last);
    y = host_tensor::packed(TSRP_DATA_FLOAT, {yd, yd + n}, channels_last);
    problem.x = x.desc();
    problem.w = w.desc();
    problem.y = y.desc();
  }

  std::vector<float> run(double alpha = 1.0, double beta = 0.0) {
    std::string error;
    EXPECT_TRUE(convolution_forward(problem, x.data(), w.data(), alpha, beta, y.data(), &error))
        << error;
    return logical(y);
  }

  static std::vector<float> logical(const host_tensor& t) {
    std::vector<float> values;
    for_each_index(t.desc().ndims, t.desc().dims,
                   [&](const int64_t index[]) { values.push_back(t.at(index)); });
    return values;
  }
};

void set_values(host_tensor& t, const std::vector<float>& values) {
  size_t i = 0;
  for_each_index(t.desc().ndims, t.desc().dims,
                 [&](const int64_t index[]) { t.at(index) = values.at(i++); });
}

const std::vector<float> x3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<float> w2x2 = {1, 2, 3, 4};

// ---- convolution ------------------------------------------------------------------------------

TEST(ReferenceConvolution, cross_correlates_a_3x3_input_with_a_2x2_filter) {
  conv_case c("mb1ic1ih3oc1kh2");
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  // y[0][0] = 1*1 + 2*2 + 4*3 + 5*4, and so on, shifted by one.
  EXPECT_EQ(c.run(), (std::vector<float>{37, 47, 67, 77}));
}

TEST(ReferenceConvolution, flips_the_filter_in_convolution_mode) {
  conv_case c("mb1ic1ih3oc1kh2");
  c.problem.mode = TSRP_CONVOLUTION;
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  // The filter acts as {4, 3, 2, 1}: y[0][0] = 1*4 + 2*3 + 4*2 + 5*1.
  EXPECT_EQ(c.run(), (std::vector<float>{23, 33, 53, 63}));
}

TEST(ReferenceConvolution, pads_with_zeros) {
  conv_case c("mb1ic1ih3oc1kh2ph1");  // 4x4 output
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  const std::vector<float> y = c.run();
  ASSERT_EQ(y.size(), 16u);
  EXPECT_EQ(y[0], 4);    // only x[0][0] under the filter's bottom-right tap
  EXPECT_EQ(y[3], 9);    // x[0][2] under the bottom-left tap (3)
  EXPECT_EQ(y[15], 9);   // x[2][2] under the top-left tap (1)
  EXPECT_EQ(y[5], 37);   // the interior equals the unpadded result
}

TEST(ReferenceConvolution, pads_asymmetrically) {
  conv_case c("mb1ic1ih3oc1oh3kh2");  // the output 3 puts one row and column of padding after
  EXPECT_EQ(c.problem.pad_before[0], 0);
  EXPECT_EQ(c.problem.pad_after[0], 1);
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  const std::vector<float> y = c.run();
  EXPECT_EQ(y[0], 37);
  EXPECT_EQ(y[2], 3 * 1 + 6 * 3);  // the right column sees only the filter's left taps
  EXPECT_EQ(y[8], 9);
}

TEST(ReferenceConvolution, strides) {
  conv_case c("mb1ic1ih3oc1kh1sh2");
  set_values(c.x, x3x3);
  set_values(c.w, {2});
  EXPECT_EQ(c.run(), (std::vector<float>{2, 6, 14, 18}));
}

TEST(ReferenceConvolution, dilates) {
  conv_case c("mb1ic1ih3oc1kh2dh1");  // benchdnn dilation 1 = Tessera 2: taps at the corners
  EXPECT_EQ(c.problem.dilation[0], 2);
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  EXPECT_EQ(c.run(), (std::vector<float>{1 * 1 + 3 * 2 + 7 * 3 + 9 * 4}));
}

TEST(ReferenceConvolution, keeps_groups_apart) {
  conv_case c("g2mb1ic2ih1oc4kh1");  // outputs 0, 1 read channel 0; outputs 2, 3 channel 1
  set_values(c.x, {3, 5});
  set_values(c.w, {1, 2, 10, 100});
  EXPECT_EQ(c.run(), (std::vector<float>{3, 6, 50, 500}));
}

TEST(ReferenceConvolution, sums_over_input_channels) {
  conv_case c("mb1ic2ih1oc1kh1");
  set_values(c.x, {3, 5});
  set_values(c.w, {2, 7});
  EXPECT_EQ(c.run(), (std::vector<float>{41}));
}

TEST(ReferenceConvolution, handles_1d_and_3d) {
  conv_case one("mb1ic1iw4oc1kw2");
  set_values(one.x, {1, 2, 4, 8});
  set_values(one.w, {1, -1});
  EXPECT_EQ(one.run(), (std::vector<float>{-1, -2, -4}));

  conv_case three("mb1ic1id2oc1kd2");
  set_values(three.x, {1, 2, 3, 4, 5, 6, 7, 8});
  set_values(three.w, {1, 1, 1, 1, 1, 1, 1, 10});
  EXPECT_EQ(three.run(), (std::vector<float>{1 + 2 + 3 + 4 + 5 + 6 + 7 + 80}));
}

TEST(ReferenceConvolution, scales_by_alpha_and_adds_beta_times_y) {
  conv_case c("mb1ic1ih3oc1kh2");
  set_values(c.x, x3x3);
  set_values(c.w, w2x2);
  set_values(c.y, {10, 10, 10, 10});
  EXPECT_EQ(c.run(2.0, 0.5), (std::vector<float>{79, 99, 139, 159}));
  // beta 0 never reads y: NaN poison does not leak into the result.
  fill_poison(c.y);
  EXPECT_EQ(c.run(1.0, 0.0), (std::vector<float>{37, 47, 67, 77}));
}

TEST(ReferenceConvolution, gives_the_same_values_in_nchw_and_nhwc) {
  const char* descriptor = "g2mb2ic4ih5iw6oc6kh3kw2sh2ph1pw0dw1";
  conv_case nchw(descriptor, false), nhwc(descriptor, true);
  for (conv_case* c : {&nchw, &nhwc}) {
    fill_integers(c->x, {-4, 4, 1.0}, 1);
    fill_integers(c->w, {-2, 2, 1.0}, 2);
  }
  EXPECT_EQ(nchw.run(), nhwc.run());
}

TEST(ReferenceConvolution, refuses_tensors_that_do_not_fit) {
  conv_case c("mb1ic1ih3oc1kh2");
  c.problem.y.dims[2] = 3;
  std::string error;
  EXPECT_FALSE(convolution_forward(c.problem, c.x.data(), c.w.data(), 1, 0, c.y.data(), &error));
  EXPECT_THAT(error, HasSubstr("expected 2 in spatial dim 0"));
  c.problem.y.dims[2] = 2;
  c.problem.groups = 2;
  EXPECT_FALSE(check_convolution_problem(c.problem, &error));
  EXPECT_THAT(error, HasSubstr("channels"));
}

// ---- activation -------------------------------------------------------------------------------

TEST(ReferenceActivation, has_known_values) {
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_IDENTITY, 0, -3.5), -3.5);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_RELU, 0, -1), 0);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_RELU, 0, 2), 2);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_SIGMOID, 0, 0), 0.5);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_TANH, 0, 0), 0);
  EXPECT_DOUBLE_EQ(activation_value(TSRP_ACTIVATION_LEAKY_RELU, 0.1, -2), -0.2);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_CLIPPED_RELU, 6, 7), 6);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_CLIPPED_RELU, 6, 3), 3);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_CLIPPED_RELU, 6, -1), 0);
  EXPECT_NEAR(activation_value(TSRP_ACTIVATION_ELU, 1, -1), -0.6321205588285577, 1e-15);
  EXPECT_EQ(activation_value(TSRP_ACTIVATION_ELU, 1, 2), 2);
  EXPECT_NEAR(activation_value(TSRP_ACTIVATION_GELU_ERF, 0, 1), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(activation_value(TSRP_ACTIVATION_GELU_TANH, 0, 1), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(activation_value(TSRP_ACTIVATION_SWISH, 1, 1), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(activation_value(TSRP_ACTIVATION_SWISH, 2, 1), 0.8807970779778823, 1e-15);
  EXPECT_TRUE(std::isnan(activation_value(static_cast<tsrpActivationMode_t>(99), 0, 1)));
}

TEST(ReferenceActivation, follows_the_stated_conventions_at_kinks) {
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_RELU, 0, 0), 0);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_LEAKY_RELU, 0.1, 0), 0.1);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_CLIPPED_RELU, 6, 0), 0);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_CLIPPED_RELU, 6, 6), 0);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_CLIPPED_RELU, 6, 3), 1);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_ELU, 0.5, 0), 0.5);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_SIGMOID, 0, 0), 0.25);
  EXPECT_EQ(activation_derivative(TSRP_ACTIVATION_TANH, 0, 0), 1);
  EXPECT_DOUBLE_EQ(activation_derivative(TSRP_ACTIVATION_GELU_ERF, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(activation_derivative(TSRP_ACTIVATION_GELU_TANH, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(activation_derivative(TSRP_ACTIVATION_SWISH, 1, 0), 0.5);
}

TEST(ReferenceActivation, derivatives_match_central_differences_away_from_kinks) {
  const double coef_of[] = {0, 0, 0, 0, 0.1, 6, 0.7, 0, 0, 1.3};
  for (int m = TSRP_ACTIVATION_IDENTITY; m <= TSRP_ACTIVATION_SWISH; ++m) {
    const auto mode = static_cast<tsrpActivationMode_t>(m);
    for (double x = -4.9375; x < 7.5; x += 0.625) {  // never 0 nor 6
      const double h = 1e-6;
      const double numeric = (activation_value(mode, coef_of[m], x + h) -
                              activation_value(mode, coef_of[m], x - h)) /
                             (2 * h);
      EXPECT_NEAR(activation_derivative(mode, coef_of[m], x), numeric, 1e-7)
          << common::activation_mode_name(m) << " at " << x;
    }
  }
}

TEST(ReferenceActivation, applies_alpha_beta_forward_and_backward_at_strides) {
  host_tensor x = host_tensor::packed(TSRP_DATA_FLOAT, {1, 2, 1, 2}, false);
  host_tensor y = host_tensor::packed(TSRP_DATA_FLOAT, {1, 2, 1, 2}, true);  // other strides
  host_tensor dy = host_tensor::packed(TSRP_DATA_FLOAT, {1, 2, 1, 2}, false);
  host_tensor dx = host_tensor::packed(TSRP_DATA_FLOAT, {1, 2, 1, 2}, true);
  set_values(x, {-2, -1, 1, 2});
  set_values(y, {1, 1, 1, 1});
  set_values(dy, {10, 20, 30, 40});
  set_values(dx, {1, 1, 1, 1});
  tsrpActivationProblem p{};
  p.mode = TSRP_ACTIVATION_LEAKY_RELU;
  p.coef = 0.5;
  p.x = x.desc(), p.y = y.desc(), p.dy = dy.desc(), p.dx = dx.desc();
  std::string error;
  ASSERT_TRUE(activation_forward(p, x.data(), 2.0, 3.0, y.data(), &error)) << error;
  EXPECT_EQ(conv_case::logical(y), (std::vector<float>{1, 2, 5, 7}));  // 2*act(x) + 3*1
  ASSERT_TRUE(activation_backward(p, x.data(), dy.data(), 1.0, 1.0, dx.data(), &error));
  EXPECT_EQ(conv_case::logical(dx), (std::vector<float>{6, 11, 31, 41}));  // slope*dy + 1

  p.dx.dims[3] = 3;
  EXPECT_FALSE(activation_backward(p, x.data(), dy.data(), 1, 0, dx.data(), &error));
  EXPECT_THAT(error, HasSubstr("dx has dims 1x2x1x3, expected x's 1x2x1x2"));
}

// ---- fills and host tensors -------------------------------------------------------------------

TEST(HostTensor, fills_the_same_logical_values_whatever_the_layout) {
  host_tensor a = host_tensor::packed(TSRP_DATA_FLOAT, {2, 3, 4, 5}, false);
  host_tensor b = host_tensor::packed(TSRP_DATA_FLOAT, {2, 3, 4, 5}, true);
  fill_integers(a, {-4, 4, 0.5}, 7);
  fill_integers(b, {-4, 4, 0.5}, 7);
  EXPECT_EQ(conv_case::logical(a), conv_case::logical(b));
  int zeros = 0;
  for (float v : conv_case::logical(a)) {
    EXPECT_EQ(v, std::round(v));
    EXPECT_GE(v, -4);
    EXPECT_LE(v, 4);
    zeros += v == 0;
  }
  EXPECT_GT(zeros, 30);  // about half of 120, plus the draws of 0 itself
}

// Tensors of 4M elements and more are filled by chunks on every core (tensor_fill.cpp): the same
// logical values whatever the layout and from run to run, within the spec, and with the density
// asked for; a different seed gives different values.
TEST(HostTensor, large_fills_by_chunks_are_deterministic_and_follow_the_spec) {
  const std::vector<int64_t> dims = {3, 5, 600, 500};  // 4.5M elements: past the parallel threshold
  host_tensor a = host_tensor::packed(TSRP_DATA_HALF, dims, false);
  host_tensor b = host_tensor::packed(TSRP_DATA_HALF, dims, true);
  host_tensor c = host_tensor::packed(TSRP_DATA_HALF, dims, false);
  fill_integers(a, {-3, 3, 0.25}, 11);
  fill_integers(b, {-3, 3, 0.25}, 11);
  fill_integers(c, {-3, 3, 0.25}, 12);
  const std::vector<float> la = conv_case::logical(a);
  EXPECT_TRUE(la == conv_case::logical(b)) << "the layout changed the logical values";
  EXPECT_FALSE(la == conv_case::logical(c)) << "another seed gave the same values";
  int64_t nonzero = 0;
  for (float v : la) {
    ASSERT_EQ(v, std::round(v));
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    nonzero += v != 0;
  }
  // density 0.25 of draws, of which 6 in 7 are not 0 itself: 0.214 of all elements.
  const double share = static_cast<double>(nonzero) / static_cast<double>(la.size());
  EXPECT_NEAR(share, 0.25 * 6.0 / 7.0, 0.01);
  host_tensor x = host_tensor::packed(TSRP_DATA_FLOAT, dims, false);
  host_tensor y = host_tensor::packed(TSRP_DATA_FLOAT, dims, false);
  fill_activation_input(x, 5, true);
  fill_activation_input(y, 5, true);
  EXPECT_TRUE(conv_case::logical(x) == conv_case::logical(y));
  for (float v : conv_case::logical(x)) ASSERT_EQ(std::fmod(v * 16.0f, 2.0f), v < 0 ? -1.0f : 1.0f) << v;
}

TEST(HostTensor, packs_and_unpacks_each_data_type) {
  for (int32_t dt : {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16, TSRP_DATA_INT8,
                     TSRP_DATA_INT32}) {
    host_tensor t = host_tensor::packed(dt, {3, 4}, false);
    fill_integers(t, {-100, 100, 1.0}, 3);
    const std::vector<uint8_t> bytes = t.pack();
    EXPECT_EQ(bytes.size(), 12 * common::data_type_size(dt));
    host_tensor back = host_tensor::packed(dt, {3, 4}, false);
    back.unpack(bytes.data());
    EXPECT_EQ(conv_case::logical(back), conv_case::logical(t)) << common::data_type_name(dt);
  }
  host_tensor h = host_tensor::packed(TSRP_DATA_HALF, {1}, false);
  h.data()[0] = 1.0f;
  const std::vector<uint8_t> one = h.pack();
  EXPECT_EQ(one[0] | (one[1] << 8), 0x3c00);
}

TEST(HostTensor, rounds_to_what_the_data_type_holds) {
  host_tensor t = host_tensor::packed(TSRP_DATA_INT8, {3}, false);
  set_values(t, {300, -2.5f, std::nanf("")});
  t.round_to_data_type();
  EXPECT_EQ(conv_case::logical(t), (std::vector<float>{127, -2, 0}));
  host_tensor b = host_tensor::packed(TSRP_DATA_BFLOAT16, {1}, false);
  set_values(b, {257});
  b.round_to_data_type();
  EXPECT_EQ(b.data()[0], 256);
}

TEST(HostTensor, poisons_floats_with_nan) {
  host_tensor t = host_tensor::packed(TSRP_DATA_HALF, {4}, false);
  fill_poison(t);
  for (float v : conv_case::logical(t)) EXPECT_TRUE(std::isnan(v));
  host_tensor h = host_tensor::packed(TSRP_DATA_HALF, {4}, false);
  h.unpack(t.pack().data());  // NaN survives the fp16 round trip
  EXPECT_TRUE(std::isnan(h.data()[0]));
}

TEST(ConvFill, keeps_worst_case_sums_exact_when_it_can) {
  EXPECT_EQ(choose_conv_fill(TSRP_DATA_FLOAT, 4608).x.max, 4);
  EXPECT_EQ(choose_conv_fill(TSRP_DATA_HALF, 27).x.max, 4);    // 8 * 27 <= 2048
  EXPECT_EQ(choose_conv_fill(TSRP_DATA_HALF, 576).x.max, 2);   // 2 * 576 <= 2048
  const conv_fill sparse = choose_conv_fill(TSRP_DATA_HALF, 4608);
  EXPECT_EQ(sparse.x.max, 1);
  EXPECT_NEAR(sparse.x.density, 2048.0 / 4608.0, 1e-12);
  EXPECT_LT(choose_conv_fill(TSRP_DATA_BFLOAT16, 576).x.density, 1.0);
}

TEST(ActivationFill, avoids_kinks_when_asked) {
  host_tensor t = host_tensor::packed(TSRP_DATA_HALF, {1000}, false);
  fill_activation_input(t, 5, true);
  for (float v : conv_case::logical(t)) {
    EXPECT_NE(v, 0.0f);
    EXPECT_NE(std::fmod(v * 8, 1.0f), 0.0f);  // never a multiple of 1/8
    EXPECT_LE(std::fabs(v), 5.0f);
  }
}

// ---- tolerance and comparison -----------------------------------------------------------------

TEST(Compare, accepts_within_tolerance_and_reports_the_first_mismatch) {
  host_tensor want = host_tensor::packed(TSRP_DATA_FLOAT, {2, 2}, false);
  host_tensor got = host_tensor::packed(TSRP_DATA_FLOAT, {2, 2}, true);
  set_values(want, {1, 100, 0, -4});
  set_values(got, {1, 100.05f, 0.0005f, -4});
  const compare_result pass = compare(got, want, {1e-3, 1e-3});
  EXPECT_TRUE(pass.ok()) << pass.message;
  EXPECT_THAT(pass.message, HasSubstr("4 values match"));

  set_values(got, {1, 101, 0, -5});
  const compare_result fail = compare(got, want, {1e-3, 1e-3});
  EXPECT_EQ(fail.mismatches, 2);
  EXPECT_EQ(fail.first_mismatch, 1);
  EXPECT_THAT(fail.message, HasSubstr("2 of 4 values differ; first at [0,1] (element 1): got 101, "
                                      "expected 100"));
  EXPECT_DOUBLE_EQ(fail.max_abs_error, 1.0);
}

TEST(Compare, never_passes_nan_unless_the_reference_is_nan_there) {
  host_tensor want = host_tensor::packed(TSRP_DATA_FLOAT, {3}, false);
  host_tensor got = host_tensor::packed(TSRP_DATA_FLOAT, {3}, false);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  set_values(want, {nan, 1, inf});
  set_values(got, {nan, nan, inf});
  const compare_result r = compare(got, want, {1e9, 1e9});
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_mismatch, 1);
  set_values(got, {nan, 1, -inf});
  EXPECT_EQ(compare(got, want, {1e9, 1e9}).mismatches, 1);
}

TEST(Tolerance, grows_with_the_reduction_and_loosens_with_precision) {
  EXPECT_EQ(conv_tolerance(TSRP_DATA_FLOAT, 9).rel, 1e-6);
  EXPECT_EQ(conv_tolerance(TSRP_DATA_FLOAT, 256).rel, 1e-6);
  EXPECT_DOUBLE_EQ(conv_tolerance(TSRP_DATA_FLOAT, 1024).rel, 2e-6);
  EXPECT_LT(conv_tolerance(TSRP_DATA_HALF, 9).rel, conv_tolerance(TSRP_DATA_BFLOAT16, 9).rel);
  EXPECT_EQ(conv_tolerance(TSRP_DATA_INT32, 9).rel, 0);
  EXPECT_GT(activation_tolerance(TSRP_DATA_FLOAT, true).rel,
            activation_tolerance(TSRP_DATA_FLOAT, false).rel);
}

}  // namespace
}  // namespace tessera::reference
