// The descriptor parsers of the pool, bnorm/lrn, rnn, matmul and binary/reduction drivers:
// benchdnn's spelling in, the canonical form out, and errors that name the entry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera_common/op_descriptors.hpp"

namespace tessera::common {
namespace {

using ::testing::HasSubstr;

TEST(PoolDescriptor, reads_benchdnn_2d_and_round_trips) {
  pool_descriptor d;
  std::string error;
  ASSERT_TRUE(parse_pool_descriptor("mb2ic16ih14oh7kh3sh2ph1", &d, &error)) << error;
  EXPECT_EQ(d.spatial_dims, 2);
  EXPECT_EQ(d.mb, 2);
  EXPECT_EQ(d.ic, 16);
  EXPECT_EQ(d.in[0], 14);
  EXPECT_EQ(d.in[1], 14);  // w copies h
  EXPECT_EQ(d.out[1], 7);
  EXPECT_EQ(d.k[0], 3);
  EXPECT_EQ(d.stride[1], 2);
  EXPECT_EQ(d.pad_before[0], 1);
  // Right paddings 0 and 1 both give 7 outputs; the one equal to the left is kept.
  EXPECT_EQ(d.pad_after[0], 1);
  EXPECT_EQ(format_pool_descriptor(d), "mb2ic16ih14oh7kh3sh2ph1");
  pool_descriptor back;
  ASSERT_TRUE(parse_pool_descriptor(format_pool_descriptor(d), &back, &error)) << error;
  EXPECT_EQ(back, d);
}

TEST(PoolDescriptor, computes_a_missing_output_and_reads_3d_and_rectangles) {
  pool_descriptor d;
  std::string error;
  ASSERT_TRUE(parse_pool_descriptor("mb1ic4id6kd3sd2pd1", &d, &error)) << error;
  EXPECT_EQ(d.spatial_dims, 3);
  EXPECT_EQ(d.out[0], 3);
  EXPECT_EQ(d.out[2], 3);
  EXPECT_EQ(d.pad_after[2], 1);
  EXPECT_EQ(format_pool_descriptor(d), "mb1ic4id6od3kd3sd2pd1");
  ASSERT_TRUE(parse_pool_descriptor("mb1ic5ih9iw7kh3kw2sh2sw1_nrect", &d, &error)) << error;
  EXPECT_EQ(d.name, "rect");
  EXPECT_EQ(d.out[0], 4);
  EXPECT_EQ(d.out[1], 6);
  pool_descriptor back;
  ASSERT_TRUE(parse_pool_descriptor(format_pool_descriptor(d), &back, &error)) << error;
  EXPECT_EQ(back, d);
}

TEST(PoolDescriptor, asymmetric_padding_from_a_given_output) {
  pool_descriptor d;
  ASSERT_TRUE(parse_pool_descriptor("mb2ic5ih10oh6kh3sh2ph1", &d, nullptr));
  EXPECT_EQ(d.pad_before[0], 1);
  // 6 outputs need a right padding of 2 or 3: the one closest to the left padding, 2.
  EXPECT_EQ(d.pad_after[0], 2);
  pool_descriptor back;
  ASSERT_TRUE(parse_pool_descriptor(format_pool_descriptor(d), &back, nullptr));
  EXPECT_EQ(back, d);
}

TEST(PoolDescriptor, errors_name_the_entry) {
  pool_descriptor d;
  std::string error;
  EXPECT_FALSE(parse_pool_descriptor("mb2ic16ih14xy3kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("unknown key 'xy'"));
  EXPECT_FALSE(parse_pool_descriptor("mb2icih14kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("expected a number after 'ic'"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic16ih14", &d, &error));
  EXPECT_THAT(error, HasSubstr("kh must be given"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic16kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("ih must be given"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic16", &d, &error));
  EXPECT_THAT(error, HasSubstr("input size"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic0ih14kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("ic must be positive"));
  EXPECT_FALSE(parse_pool_descriptor("mb2mb3ic1ih14kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("given twice"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic1ih4kh7", &d, &error));
  EXPECT_THAT(error, HasSubstr("output would be empty"));
  EXPECT_FALSE(parse_pool_descriptor("mb2ic1ih14oh2kh3", &d, &error));
  EXPECT_THAT(error, HasSubstr("too small"));
  EXPECT_FALSE(parse_pool_descriptor("", &d, &error));
}

TEST(NormDescriptor, bnorm_and_lrn_round_trip) {
  norm_descriptor d;
  std::string error;
  ASSERT_TRUE(parse_bnorm_descriptor("mb2ic16ih7", &d, &error)) << error;
  EXPECT_EQ(d.spatial_dims, 2);
  EXPECT_EQ(d.in[1], 7);
  EXPECT_EQ(norm_tensor_dims(d), (std::vector<int64_t>{2, 16, 7, 7}));
  EXPECT_EQ(format_bnorm_descriptor(d), "mb2ic16ih7");
  ASSERT_TRUE(parse_bnorm_descriptor("mb3ic7", &d, &error)) << error;
  EXPECT_EQ(norm_tensor_dims(d), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(format_bnorm_descriptor(d), "mb3ic7");
  ASSERT_TRUE(parse_bnorm_descriptor("mb1ic4id6ih5_n3d", &d, &error)) << error;
  EXPECT_EQ(norm_tensor_dims(d), (std::vector<int64_t>{1, 4, 6, 5, 5}));
  norm_descriptor back;
  ASSERT_TRUE(parse_bnorm_descriptor(format_bnorm_descriptor(d), &back, &error)) << error;
  EXPECT_EQ(back, d);
  ASSERT_TRUE(parse_lrn_descriptor("mb2ic16ih7ls3", &d, &error)) << error;
  EXPECT_EQ(d.local_size, 3);
  EXPECT_EQ(format_lrn_descriptor(d), "mb2ic16ih7ls3");
  ASSERT_TRUE(parse_lrn_descriptor("mb2ic16ih7", &d, &error)) << error;
  EXPECT_EQ(d.local_size, 5);  // benchdnn's default
}

TEST(NormDescriptor, errors) {
  norm_descriptor d;
  std::string error;
  EXPECT_FALSE(parse_bnorm_descriptor("mb2ic16ih7ls5", &d, &error));  // ls is LRN's
  EXPECT_THAT(error, HasSubstr("unknown key 'ls'"));
  EXPECT_FALSE(parse_bnorm_descriptor("mb2ih7", &d, &error));
  EXPECT_THAT(error, HasSubstr("ic must be given"));
  EXPECT_FALSE(parse_lrn_descriptor("mb2ic16ih7ls0", &d, &error));
  EXPECT_THAT(error, HasSubstr("ls must be positive"));
}

TEST(RnnDescriptor, sizes_copy_as_benchdnn_and_round_trip) {
  rnn_descriptor d;
  std::string error;
  ASSERT_TRUE(parse_rnn_descriptor("l2t5mb3sic4slc3dhc4dic4", &d, &error)) << error;
  EXPECT_EQ(d.layers, 2);
  EXPECT_EQ(d.steps, 5);
  EXPECT_EQ(d.mb, 3);
  EXPECT_EQ(d.slc, 3);
  EXPECT_EQ(format_rnn_descriptor(d), "l2t5mb3sic4slc3dhc4dic4");
  ASSERT_TRUE(parse_rnn_descriptor("t128mb64sic1024_nlm", &d, &error)) << error;
  EXPECT_EQ(d.layers, 1);
  EXPECT_EQ(d.slc, 1024);
  EXPECT_EQ(d.dhc, 1024);
  EXPECT_EQ(d.dic, 1024);
  EXPECT_EQ(d.name, "lm");
  rnn_descriptor back;
  ASSERT_TRUE(parse_rnn_descriptor(format_rnn_descriptor(d), &back, &error)) << error;
  EXPECT_EQ(back, d);
  ASSERT_TRUE(parse_rnn_descriptor("dhc8", &d, &error)) << error;
  EXPECT_EQ(d.sic, 8);
}

TEST(RnnDescriptor, errors) {
  rnn_descriptor d;
  std::string error;
  EXPECT_FALSE(parse_rnn_descriptor("l2t5mb3", &d, &error));
  EXPECT_THAT(error, HasSubstr("sic"));
  EXPECT_FALSE(parse_rnn_descriptor("l2t5mb3sic4xyz1", &d, &error));
  EXPECT_THAT(error, HasSubstr("unknown key 'xyz'"));
  EXPECT_FALSE(parse_rnn_descriptor("l0sic4", &d, &error));
  EXPECT_THAT(error, HasSubstr("l must be positive"));
}

TEST(DimsPair, reads_two_lists) {
  std::vector<int64_t> a, b;
  std::string error;
  ASSERT_TRUE(parse_dims_pair("2x16x7x7:1x16x1x1", false, true, &a, &b, &error)) << error;
  EXPECT_EQ(a, (std::vector<int64_t>{2, 16, 7, 7}));
  EXPECT_EQ(b, (std::vector<int64_t>{1, 16, 1, 1}));
  EXPECT_EQ(format_dims_pair(a, b), "2x16x7x7:1x16x1x1");
  ASSERT_TRUE(parse_dims_pair("3x5", true, true, &a, &b, &error)) << error;
  EXPECT_EQ(b, a);
  EXPECT_FALSE(parse_dims_pair("3x5", false, true, &a, &b, &error));
  EXPECT_THAT(error, HasSubstr("two dims lists"));
  EXPECT_FALSE(parse_dims_pair("3x5:3x5x1", false, true, &a, &b, &error));
  EXPECT_THAT(error, HasSubstr("different ranks"));
  EXPECT_FALSE(parse_dims_pair("3x5:3xq", false, true, &a, &b, &error));
  EXPECT_THAT(error, HasSubstr("second dims"));
}

TEST(MatmulDescriptor, dims_and_mnk_forms) {
  matmul_descriptor d;
  std::string error;
  ASSERT_TRUE(parse_matmul_descriptor("2x3x5:2x5x8", &d, &error)) << error;
  std::vector<int64_t> c;
  ASSERT_TRUE(matmul_output_dims(d, &c, &error));
  EXPECT_EQ(c, (std::vector<int64_t>{2, 3, 8}));
  EXPECT_EQ(format_matmul_descriptor(d), "2x3x5:2x5x8");
  ASSERT_TRUE(parse_matmul_descriptor("m10n20k30", &d, &error)) << error;
  EXPECT_EQ(d.a, (std::vector<int64_t>{10, 30}));
  EXPECT_EQ(d.b, (std::vector<int64_t>{30, 20}));
  ASSERT_TRUE(parse_matmul_descriptor("mb2m10n20k30_nqkv", &d, &error)) << error;
  EXPECT_EQ(d.a, (std::vector<int64_t>{2, 10, 30}));
  EXPECT_EQ(d.name, "qkv");
  EXPECT_EQ(format_matmul_descriptor(d), "2x10x30:2x30x20_nqkv");
  matmul_descriptor back;
  ASSERT_TRUE(parse_matmul_descriptor(format_matmul_descriptor(d), &back, &error)) << error;
  EXPECT_EQ(back.a, d.a);
  EXPECT_EQ(back.b, d.b);
  EXPECT_EQ(back.name, d.name);
  ASSERT_TRUE(parse_matmul_descriptor("3x1x7x5:1x4x5x3", &d, &error)) << error;
  ASSERT_TRUE(matmul_output_dims(d, &c, &error));
  EXPECT_EQ(c, (std::vector<int64_t>{3, 4, 7, 3}));  // batch broadcast both ways
}

TEST(MatmulDescriptor, errors) {
  matmul_descriptor d;
  std::string error;
  EXPECT_FALSE(parse_matmul_descriptor("2x3x5:2x6x8", &d, &error));
  EXPECT_THAT(error, HasSubstr("K differs"));
  EXPECT_FALSE(parse_matmul_descriptor("2x3x5:3x5x8", &d, &error));
  EXPECT_THAT(error, HasSubstr("batch dim 0"));
  EXPECT_FALSE(parse_matmul_descriptor("m10n20", &d, &error));
  EXPECT_THAT(error, HasSubstr("m, n and k"));
  EXPECT_FALSE(parse_matmul_descriptor("5:5", &d, &error));
  EXPECT_THAT(error, HasSubstr("rank"));
}

}  // namespace
}  // namespace tessera::common
