// tsrSetConstantWeights: with the promise, a backend may keep the filter in its own layout
// between forward convolutions (oneDNN reorders OHWI filters once); results must stay the
// reference's, and a renewed promise must pick up new filter contents. On every loaded backend.
#include "backend_fixture.hpp"
#include "reference_convolution.hpp"
#include "tolerance.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace tessera::testing;

namespace {

class ConstantWeights : public BackendTest {};

TEST_P(ConstantWeights, kept_filters_give_the_reference_result_and_a_renewed_promise_sees_new_ones) {
  ASSERT_OK(tsrSetBackendPreference(h_, GetParam().name.c_str()));
  ASSERT_OK(tsrSetConstantWeights(h_, 1));
  // NHWC x, OHWI w: a layout oneDNN reorders before its fast kernels.
  ref::host_tensor x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 16, 9, 9}, true);
  ref::host_tensor w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {32, 16, 3, 3}, true);
  ref::host_tensor y = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 32, 9, 9}, true);
  ref::fill_integers(x, {-3, 3, 1.0}, 31);
  ref::fill_integers(w, {-2, 2, 1.0}, 32);
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.x = x.desc();
  p.w = w.desc();
  p.y = y.desc();
  p.spatial_dims = 2;
  p.groups = 1;
  for (int i = 0; i < 2; ++i) {
    p.pad_before[i] = p.pad_after[i] = 1;
    p.stride[i] = p.dilation[i] = 1;
  }
  desc_owner xd(p.x), wd(p.w), yd(p.y);
  tsrConvolutionDescriptor_t cd = nullptr;
  tsrCreateConvolutionDescriptor(&cd);
  tsrSetConvolutionNdDescriptor(cd, 2, p.pad_before, p.pad_after, p.stride, p.dilation, TSR_CROSS_CORRELATION,
                                TSR_DATA_FLOAT);
  device_buffer bx(h_, x.byte_size()), bw(h_, w.byte_size()), by(h_, y.byte_size());
  ASSERT_TRUE(bx.p && bw.p && by.p);
  bx.upload(x);
  bw.upload(w);
  auto run_and_check = [&](const char* when) {
    ref::fill_poison(y);
    by.upload(y);
    ASSERT_OK(tsrConvolutionForward(h_, 1.0f, xd.d, bx.p, wd.d, bw.p, cd, TSR_ALGO_AUTO, nullptr, 0, 0.0f, yd.d, by.p));
    ref::host_tensor got(p.y), expected(p.y);
    by.download(got);
    std::string error;
    ASSERT_TRUE(ref::convolution_forward(p, x.data(), w.data(), 1.0, 0.0, expected.data(), &error)) << error;
    const ref::compare_result r = ref::compare(got, expected, ref::conv_tolerance(TSRP_DATA_FLOAT, 144));
    EXPECT_TRUE(r.ok()) << when << ": " << r.message;
  };
  run_and_check("first call");
  run_and_check("second call (kept filter)");
  ref::fill_integers(w, {-4, 4, 1.0}, 33);
  bw.upload(w);
  ASSERT_OK(tsrSetConstantWeights(h_, 1));  // a new promise for the new contents
  run_and_check("after new filter contents and a renewed promise");
  ASSERT_OK(tsrSetConstantWeights(h_, 0));
  run_and_check("promise withdrawn");
  tsrDestroyConvolutionDescriptor(cd);
  EXPECT_FAILS_WITH(tsrSetConstantWeights(h_, 2), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, "constant is 2");
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, ConstantWeights, ::testing::ValuesIn(loaded_backends()),
                         backend_param_name);

}  // namespace
