// Which problems the CUDA plugin's zero-channel backward convolutions take
// (cuda_backend/conv_igemm_padded_channels.hpp), on the host: C not a multiple of 8 in packed
// channels-last tensors, everything else as the tensor-core kernels need it, and the reasons
// naming the argument otherwise. Needs no GPU; the kernels' results are the conformance test's
// (its resnet_stem_7x7_s2 and stem_c3_many_pixels shapes).
#include "conv_igemm_padded_channels.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace igemm = tessera::cuda::igemm;

tsrpTensor nhwc(int32_t type, int64_t n, int64_t c, int64_t h, int64_t w) {
  tsrpTensor t{};
  t.data_type = type;
  t.ndims = 4;
  const int64_t dims[4] = {n, c, h, w};
  const int64_t strides[4] = {h * w * c, 1, w * c, c};
  for (int d = 0; d < 4; ++d) {
    t.dims[d] = dims[d];
    t.strides[d] = strides[d];
  }
  return t;
}

struct stem {
  tsrpTensor x = nhwc(TSRP_DATA_HALF, 2, 3, 224, 224);
  tsrpTensor w = nhwc(TSRP_DATA_HALF, 64, 3, 7, 7);
  tsrpTensor y = nhwc(TSRP_DATA_HALF, 2, 64, 112, 112);
  int64_t pad[2] = {3, 3}, stride[2] = {2, 2}, dilation[2] = {1, 1};
  int32_t mode = TSRP_CROSS_CORRELATION;
  igemm::conv_view view() const {
    return {&x, &w, &y, 2, mode, TSRP_DATA_FLOAT, 0, 1, pad, pad, stride, dilation};
  }
};

TEST(PaddedChannels, takes_the_three_channel_stem_as_eight_channels) {
  stem s;
  EXPECT_EQ(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF), "");
  const igemm::nhwc_geometry g = igemm::padded_geometry(s.view());
  EXPECT_EQ(g.c, 8);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.h, 224);
  EXPECT_EQ(g.p, 112);
  EXPECT_EQ(g.stride[0], 2);
  // The caller's descriptors are not changed.
  EXPECT_EQ(s.x.dims[1], 3);
  EXPECT_EQ(s.w.strides[0], 7 * 7 * 3);
  for (int c : {1, 3, 7, 9, 12}) EXPECT_EQ(igemm::padded_channel_count(c) % 8, 0) << c;
  EXPECT_EQ(igemm::padded_channel_count(9), 16);
}

TEST(PaddedChannels, declines_with_the_reason) {
  {
    stem s;
    s.x = nhwc(TSRP_DATA_HALF, 2, 8, 224, 224);
    s.w = nhwc(TSRP_DATA_HALF, 64, 8, 7, 7);
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("multiple of 8"), std::string::npos);
  }
  {
    stem s;
    s.mode = TSRP_CONVOLUTION;
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("flipped"), std::string::npos);
  }
  {
    stem s;  // x as NCHW
    s.x.strides[0] = 3 * 224 * 224;
    s.x.strides[1] = 224 * 224;
    s.x.strides[2] = 224;
    s.x.strides[3] = 1;
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("x is not packed"), std::string::npos);
  }
  {
    stem s;  // 60 filters: K must still be a multiple of 8
    s.w = nhwc(TSRP_DATA_HALF, 60, 3, 7, 7);
    s.y = nhwc(TSRP_DATA_HALF, 2, 60, 112, 112);
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("filters (K)"), std::string::npos);
  }
  {
    stem s;  // w's C = 3 against x's 5: both round up to 8, yet the staging would read past w
    s.x = nhwc(TSRP_DATA_HALF, 2, 5, 224, 224);
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("w's channels"), std::string::npos);
  }
  {
    stem s;  // fp32 stems are taken for the TF32 kernels' zero-channel forms
    s.x.data_type = s.w.data_type = s.y.data_type = TSRP_DATA_FLOAT;
    EXPECT_EQ(igemm::padded_channels_support(s.view(), TSRP_DATA_FLOAT), "");
  }
  {
    stem s;  // fp32 is not the tensor cores' fp16 kernel
    s.x.data_type = s.w.data_type = s.y.data_type = TSRP_DATA_FLOAT;
    EXPECT_NE(igemm::padded_channels_support(s.view(), TSRP_DATA_HALF).find("data type"), std::string::npos);
  }
}

}  // namespace
