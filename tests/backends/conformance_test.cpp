// The cross-backend test: every kernel of every loaded backend whose device is present, run
// through the C API on a sweep of shapes, data types and layouts, against the naive reference.
// Inputs are small integers (exact in f32), outputs are poisoned with NaN before each run so an
// unwritten element fails, and each kernel must run at least one case (a kernel that declines
// everything is a defect too).
#include "backend_fixture.hpp"
#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tf32_probe.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/shape_inference.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class Conformance : public BackendTest {};

// ---- convolution -------------------------------------------------------------------------

struct conv_shape {
  const char* label;
  int spatial;
  int64_t mb, ic, oc, groups;
  int64_t in[3], k[3], stride[3], pad_before[3], pad_after[3], dilation[3];
};

// clang-format off
const conv_shape k_conv_shapes[] = {
  // label                      sp mb ic  oc  g   in          k          stride     pad_b      pad_a      dilation
  {"resnet_3x3",                 2, 2, 16, 16, 1, {14,14,0}, {3,3,0},   {1,1,0},   {1,1,0},   {1,1,0},   {1,1,0}},
  {"resnet_1x1_stride2",         2, 2, 32, 64, 1, {14,14,0}, {1,1,0},   {2,2,0},   {0,0,0},   {0,0,0},   {1,1,0}},
  {"resnet_stem_7x7_s2",         2, 1, 3,  8,  1, {23,23,0}, {7,7,0},   {2,2,0},   {3,3,0},   {3,3,0},   {1,1,0}},
  {"mobilenet_depthwise",        2, 2, 24, 24, 24,{15,15,0}, {3,3,0},   {2,2,0},   {1,1,0},   {1,1,0},   {1,1,0}},
  {"grouped_4",                  2, 1, 16, 8,  4, {9,9,0},   {3,3,0},   {1,1,0},   {1,1,0},   {1,1,0},   {1,1,0}},
  {"prime_sizes_channels_not_8", 2, 3, 7,  5,  1, {13,11,0}, {3,2,0},   {1,1,0},   {1,0,0},   {1,1,0},   {1,1,0}},
  {"asymmetric_padding",         2, 1, 4,  6,  1, {8,8,0},   {3,3,0},   {1,1,0},   {0,1,0},   {2,0,0},   {1,1,0}},
  {"dilation_with_stride",       2, 2, 6,  4,  1, {17,17,0}, {3,3,0},   {2,2,0},   {2,2,0},   {2,2,0},   {2,2,0}},
  {"size_one_dims",              2, 1, 1,  1,  1, {1,7,0},   {1,3,0},   {1,1,0},   {0,1,0},   {0,1,0},   {1,1,0}},
  {"one_d",                      1, 2, 5,  3,  1, {19,0,0},  {4,0,0},   {3,0,0},   {1,0,0},   {2,0,0},   {1,0,0}},
  {"unet3d",                     3, 1, 4,  4,  1, {6,7,5},   {3,3,3},   {1,1,1},   {1,1,1},   {1,1,1},   {1,1,1}},
  {"long_reduction",             2, 1, 96, 4,  1, {6,6,0},   {3,3,0},   {1,1,0},   {1,1,0},   {1,1,0},   {1,1,0}},
  // Depthwise with 12 channels (not a multiple of 8: the CUDA kernel's element-wise path in fp16,
  // its 4-wide path in fp32), mixed strides and dilations.
  {"depthwise_odd_channels",     2, 2, 12, 12, 12,{11,10,0}, {3,3,0},   {1,2,0},   {2,1,0},   {2,1,0},   {2,1,0}},
  // 3-D with C and K multiples of 8 (the CUDA tensor-core 3-D kernel), unit and mixed strides.
  {"unet3d_8_channels",          3, 2, 8,  16, 1, {6,7,5},   {3,3,3},   {1,1,1},   {1,1,1},   {1,1,1},   {1,1,1}},
  {"conv3d_strided",             3, 1, 16, 8,  1, {9,8,7},   {3,3,1},   {2,1,2},   {1,1,0},   {1,0,0},   {1,1,1}},
  // 3-D with C not a multiple of 8 and K a multiple of 8 (the CUDA zero-channel 3-D kernel): the
  // U-Net's one-channel input layer, and 3 channels (padded to 8) with mixed strides and padding.
  {"unet3d_one_channel",         3, 2, 1,  16, 1, {9,8,6},   {3,3,3},   {1,1,1},   {1,1,1},   {1,1,1},   {1,1,1}},
  {"conv3d_c3_strided",          3, 1, 3,  8,  1, {9,8,7},   {3,3,1},   {2,1,2},   {1,1,0},   {1,0,0},   {1,1,1}},
};
// clang-format on

tsrpConvolutionProblem conv_problem(const conv_shape& s, int32_t dt, bool channels_last,
                                    tsrConvolutionMode_t mode) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.spatial_dims = s.spatial;
  p.groups = s.groups;
  p.mode = mode;
  p.compute_type = TSRP_DATA_FLOAT;
  std::vector<int64_t> xd = {s.mb, s.ic}, wd = {s.oc, s.ic / s.groups}, yd = {s.mb, s.oc};
  for (int i = 0; i < s.spatial; ++i) {
    int64_t out = 0;
    tessera::common::infer_conv_output_size(s.in[i], s.k[i], s.stride[i], s.pad_before[i],
                                            s.pad_after[i], s.dilation[i], &out);
    xd.push_back(s.in[i]);
    wd.push_back(s.k[i]);
    yd.push_back(out);
    p.pad_before[i] = s.pad_before[i];
    p.pad_after[i] = s.pad_after[i];
    p.stride[i] = s.stride[i];
    p.dilation[i] = s.dilation[i];
  }
  p.x = ref::host_tensor::packed(dt, xd, channels_last).desc();
  p.w = ref::host_tensor::packed(dt, wd, channels_last).desc();
  p.y = ref::host_tensor::packed(dt, yd, channels_last).desc();
  return p;
}

tsrConvolutionDescriptor_t conv_desc(const tsrpConvolutionProblem& p) {
  tsrConvolutionDescriptor_t c = nullptr;
  tsrCreateConvolutionDescriptor(&c);
  tsrSetConvolutionNdDescriptor(c, p.spatial_dims, p.pad_before, p.pad_after, p.stride, p.dilation,
                                static_cast<tsrConvolutionMode_t>(p.mode), TSR_DATA_FLOAT);
  tsrSetConvolutionGroupCount(c, p.groups);
  return c;
}

// Runs one case on one kernel. Returns false (and records why) when the kernel declines.
bool run_conv_case(tsrHandle_t h, const tsrKernelInfo_t& k, const tsrpConvolutionProblem& p,
                   float alpha, float beta, uint32_t seed, std::string* declined) {
  ref::host_tensor x(p.x), w(p.w), y0(p.y);
  int64_t length = ref::convolution_reduction_length(p);
  ref::conv_fill fill = ref::choose_conv_fill(p.x.data_type, length);
  ref::fill_integers(x, fill.x, seed);
  ref::fill_integers(w, fill.w, seed + 1);
  ref::fill_integers(y0, ref::fill_spec{-3, 3, 1.0}, seed + 2);
  desc_owner xd(p.x), wd(p.w), yd(p.y);
  tsrConvolutionDescriptor_t cd = conv_desc(p);
  size_t ws_bytes = 0;
  tsrStatus_t s = tsrGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, k.algo, &ws_bytes);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    tsrDestroyConvolutionDescriptor(cd);
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  device_buffer dx(h, x.byte_size()), dw(h, w.byte_size()), dy(h, y0.byte_size()),
      dws(h, ws_bytes);
  dx.upload(x);
  dw.upload(w);
  ref::host_tensor y_init = y0;
  if (beta == 0.0f) ref::fill_poison(y_init);  // beta 0: y must not be read
  dy.upload(y_init);
  s = tsrConvolutionForward(h, alpha, xd, dx.p, wd, dw.p, cd, k.algo, dws.p, ws_bytes, beta, yd, dy.p);
  tsrDestroyConvolutionDescriptor(cd);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(p.y);
  dy.download(got);
  ref::host_tensor expected = y0;
  std::string error;
  EXPECT_TRUE(ref::convolution_forward(p, x.data(), w.data(), alpha, beta, expected.data(), &error))
      << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::conv_tolerance(p.y.data_type, length));
  EXPECT_TRUE(r.ok()) << r.message;
  return true;
}

TEST_P(Conformance, convolution_forward_matches_the_reference) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_CONVOLUTION_FORWARD);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no convolution kernel";
  const int32_t dtypes[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};
  const std::pair<float, float> scalars[] = {{1.0f, 0.0f}, {0.5f, 2.0f}};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 1;
    for (const conv_shape& s : k_conv_shapes)
      for (int32_t dt : dtypes)
        for (bool nhwc : {false, true})
          for (auto [alpha, beta] : scalars)
            for (tsrConvolutionMode_t mode : {TSR_CROSS_CORRELATION, TSR_CONVOLUTION})
              for (tsrMathMode_t math : {TSR_MATH_DEFAULT, TSR_MATH_ALLOW_TF32}) {
                // True convolution once per shape is enough to prove the flip.
                if (mode == TSR_CONVOLUTION && (dt != TSRP_DATA_FLOAT || nhwc || beta != 0)) continue;
                // TF32 allowed: fp32 NHWC cross-correlation again (the kernels that only run under
                // it); the small integer inputs are exact in TF32, so the fp32 tolerance holds.
                if (math == TSR_MATH_ALLOW_TF32 && (dt != TSRP_DATA_FLOAT || !nhwc || mode != TSR_CROSS_CORRELATION))
                  continue;
                SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label +
                             " dt=" + tessera::common::data_type_name(dt) +
                             (nhwc ? " nhwc" : " nchw") + " alpha=" + std::to_string(alpha) +
                             " beta=" + std::to_string(beta) +
                             (mode == TSR_CONVOLUTION ? " mode=convolution" : "") +
                             (math == TSR_MATH_ALLOW_TF32 ? " math=tf32" : ""));
                tsrpConvolutionProblem p = conv_problem(s, dt, nhwc, mode);
                std::string why;
                ASSERT_OK(tsrSetMathMode(h_, math));
                const bool ran = run_conv_case(h_, k, p, alpha, beta, seed++, &why);
                ASSERT_OK(tsrSetMathMode(h_, TSR_MATH_DEFAULT));
                if (ran) {
                  ++t.ran;
                } else {
                  ++t.declined;
                  if (t.example_reason.empty()) t.example_reason = why;
                }
              }
    EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name
                        << " declined every case, e.g.: " << t.example_reason;
    std::printf("[ conform  ] %s/%s convolution_forward: %d cases ran, %d declined%s%s\n",
                k.backend_name, k.kernel_name, t.ran, t.declined,
                t.declined ? ", e.g. " : "", t.example_reason.substr(0, 160).c_str());
  }
}

// TF32 numerics (TSR_MATH_ALLOW_TF32): inputs whose sums are exact in fp32 but not in TF32
// (tf32_probe.hpp). Each result must stay within TF32's bound of the exact sum, and a kernel named
// *_tf32 must differ from it somewhere: proof that it is not an exact path in disguise. Other
// kernels may stay exact under TF32.
TEST_P(Conformance, tf32_convolution_forward_stays_within_tf32_rounding) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_CONVOLUTION_FORWARD);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no convolution kernel";
  for (const tsrKernelInfo_t& k : ks) {
    int ran = 0;
    bool differs = false;
    uint32_t seed = 101;
    for (const char* label : {"resnet_3x3", "resnet_1x1_stride2"}) {
      const conv_shape* shape = nullptr;
      for (const conv_shape& s : k_conv_shapes)
        if (std::string(label) == s.label) shape = &s;
      ASSERT_NE(shape, nullptr) << label;
      SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + label + " fp32 nhwc math=tf32");
      const tsrpConvolutionProblem p = conv_problem(*shape, TSRP_DATA_FLOAT, true, TSR_CROSS_CORRELATION);
      const int64_t length = ref::convolution_reduction_length(p);
      ref::host_tensor x(p.x), w(p.w), y(p.y);
      ASSERT_LE(length, tf32_probe_max_length);
      ref::fill_integers(x, tf32_probe_wide(), seed++);
      ref::fill_integers(w, tf32_probe_narrow(), seed++);
      desc_owner xd(p.x), wd(p.w), yd(p.y);
      tsrConvolutionDescriptor_t cd = conv_desc(p);
      ASSERT_OK(tsrSetMathMode(h_, TSR_MATH_ALLOW_TF32));
      size_t ws_bytes = 0;
      tsrStatus_t st = tsrGetConvolutionForwardWorkspaceSize(h_, xd, wd, cd, yd, k.algo, &ws_bytes);
      if (TSR_STATUS_CATEGORY(st) != TSR_STATUS_NOT_SUPPORTED) {
        EXPECT_EQ(st, TSR_STATUS_SUCCESS) << last_error();
        device_buffer dx(h_, x.byte_size()), dw(h_, w.byte_size()), dy(h_, y.byte_size()), dws(h_, ws_bytes);
        dx.upload(x);
        dw.upload(w);
        ref::host_tensor poisoned = y;
        ref::fill_poison(poisoned);
        dy.upload(poisoned);
        st = tsrConvolutionForward(h_, 1.0f, xd, dx.p, wd, dw.p, cd, k.algo, dws.p, ws_bytes, 0.0f, yd, dy.p);
        EXPECT_EQ(st, TSR_STATUS_SUCCESS) << last_error();
        ref::host_tensor got(p.y), expected(p.y);
        dy.download(got);
        std::string error;
        EXPECT_TRUE(ref::convolution_forward(p, x.data(), w.data(), 1.0f, 0.0f, expected.data(), &error)) << error;
        differs = expect_tf32_result(got, expected, length) || differs;
        ++ran;
      }
      ASSERT_OK(tsrSetMathMode(h_, TSR_MATH_DEFAULT));
      tsrDestroyConvolutionDescriptor(cd);
    }
    if (std::string(k.kernel_name).find("_tf32") != std::string::npos) {
      EXPECT_GT(ran, 0) << k.kernel_name << " declined fp32 NHWC under TSR_MATH_ALLOW_TF32";
      EXPECT_TRUE(differs) << k.kernel_name << " gave exact fp32 results: not the TF32 tensor cores";
    }
    std::printf("[ conform  ] %s/%s convolution_forward tf32: %d cases ran%s\n", k.backend_name, k.kernel_name,
                ran, differs ? ", rounded like TF32" : "");
  }
}

// ---- activation --------------------------------------------------------------------------

struct act_mode {
  tsrActivationMode_t mode;
  double coef;
};
const act_mode k_act_modes[] = {
    {TSR_ACTIVATION_IDENTITY, 0},     {TSR_ACTIVATION_RELU, 0},      {TSR_ACTIVATION_SIGMOID, 0},
    {TSR_ACTIVATION_TANH, 0},         {TSR_ACTIVATION_LEAKY_RELU, 0.125},
    {TSR_ACTIVATION_CLIPPED_RELU, 3}, {TSR_ACTIVATION_ELU, 0.5},    {TSR_ACTIVATION_GELU_ERF, 0},
    {TSR_ACTIVATION_GELU_TANH, 0},    {TSR_ACTIVATION_SWISH, 1}};

bool run_activation_case(tsrHandle_t h, const tsrKernelInfo_t& k, bool backward, const act_mode& m,
                         const tsrpTensor& xt, const tsrpTensor& yt, float alpha, float beta,
                         uint32_t seed, std::string* declined) {
  ref::host_tensor x(xt), dy(xt), out0(yt);
  ref::fill_activation_input(x, seed, backward);
  ref::fill_activation_input(dy, seed + 1, false);
  ref::fill_integers(out0, ref::fill_spec{-2, 2, 1.0}, seed + 2);
  desc_owner xd(xt), yd(yt);
  tsrActivationDescriptor_t ad = nullptr;
  tsrCreateActivationDescriptor(&ad);
  tsrSetActivationDescriptor(ad, m.mode, m.coef);
  device_buffer bx(h, x.byte_size()), bdy(h, dy.byte_size()), bout(h, out0.byte_size()),
      by(h, x.byte_size());
  bx.upload(x);
  bdy.upload(dy);
  by.upload(x);  // backward's y: unused by x-based derivatives, but must be a valid tensor
  ref::host_tensor init = out0;
  if (beta == 0.0f) ref::fill_poison(init);
  bout.upload(init);
  tsrStatus_t s =
      backward ? tsrActivationBackward(h, ad, k.algo, alpha, xd, by.p, xd, bdy.p, xd, bx.p, beta, yd, bout.p)
               : tsrActivationForward(h, ad, k.algo, alpha, xd, bx.p, beta, yd, bout.p);
  tsrDestroyActivationDescriptor(ad);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(yt);
  bout.download(got);
  ref::host_tensor expected = out0;
  tsrpActivationProblem p{};
  p.struct_size = sizeof(p);
  p.mode = m.mode;
  p.coef = m.coef;
  p.x = xt;
  p.y = yt;
  p.dy = xt;
  p.dx = yt;
  std::string error;
  bool ok = backward ? ref::activation_backward(p, x.data(), dy.data(), alpha, beta, expected.data(), &error)
                     : ref::activation_forward(p, x.data(), alpha, beta, expected.data(), &error);
  EXPECT_TRUE(ok) << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::activation_tolerance(yt.data_type, backward));
  EXPECT_TRUE(r.ok()) << r.message;
  return true;
}

void activation_sweep(tsrHandle_t h, const std::string& backend, bool backward) {
  tsrOperation_t op = backward ? TSR_OP_ACTIVATION_BACKWARD : TSR_OP_ACTIVATION_FORWARD;
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  const int32_t dtypes[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};
  // Shapes: a packed 4-D tensor, a 5-D one with odd sizes, and x NCHW with y NHWC.
  const std::vector<int64_t> shapes[] = {{2, 16, 7, 9}, {1, 3, 5, 1, 7}, {3, 5, 4, 6}};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 100;
    for (const act_mode& m : k_act_modes)
      for (int32_t dt : dtypes)
        for (size_t si = 0; si < 3; ++si)
          for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {2.0f, 0.5f}}) {
            tsrpTensor xt = ref::host_tensor::packed(dt, shapes[si], false).desc();
            tsrpTensor yt = ref::host_tensor::packed(dt, shapes[si], si == 2).desc();
            SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " mode=" +
                         std::to_string(m.mode) + " dt=" + tessera::common::data_type_name(dt) +
                         " shape#" + std::to_string(si) + " beta=" + std::to_string(beta));
            std::string why;
            if (run_activation_case(h, k, backward, m, xt, yt, alpha, beta, seed++, &why)) {
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

TEST_P(Conformance, activation_forward_matches_the_reference) {
  activation_sweep(h_, GetParam().name, false);
}

TEST_P(Conformance, activation_backward_matches_the_reference) {
  activation_sweep(h_, GetParam().name, true);
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, Conformance, ::testing::ValuesIn(loaded_backends()),
                         backend_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Conformance);

}  // namespace
