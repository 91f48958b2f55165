// Unit tests of tessera_common: fp16/bf16 conversion, shape inference, benchdnn's
// problem-descriptor language, and the host's memory size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tessera_common/half_float.hpp"
#include "tessera_common/host_memory.hpp"
#include "tessera_common/problem_descriptor.hpp"
#include "tessera_common/shape_inference.hpp"

namespace tessera::common {
namespace {

using ::testing::HasSubstr;

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---- fp16 ---------------------------------------------------------------------------------------

TEST(HalfFloat, converts_exact_values_both_ways) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(0.5f), 0x3800);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {  // every finite half survives a round trip
    const uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(h)), h) << std::hex << bits;
  }
}

TEST(HalfFloat, keeps_the_sign_of_zero) {
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
}

TEST(HalfFloat, overflows_to_infinity_from_65520_up) {
  EXPECT_EQ(float_to_half_bits(65519.996f), 0x7bff);  // just below the tie: stays finite
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);     // the tie goes to even: infinity
  EXPECT_EQ(float_to_half_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_half_bits(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(half_bits_to_float(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(HalfFloat, handles_denormals) {
  const float smallest = std::ldexp(1.0f, -24);  // the smallest half denormal
  EXPECT_EQ(float_to_half_bits(smallest), 0x0001);
  EXPECT_EQ(half_bits_to_float(0x0001), smallest);
  EXPECT_EQ(half_bits_to_float(0x03ff), std::ldexp(1023.0f, -24));  // the largest denormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);      // tie between 0 and 1: 0
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);      // above the tie: rounds up
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);      // tie between 1 and 2: 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1023.5f, -24)), 0x0400);   // rounds up into the normals
  EXPECT_EQ(float_to_half_bits(bits_to_float(0x00000001)), 0x0000);  // a float denormal
}

TEST(HalfFloat, rounds_ties_to_even_among_normals) {
  // Between 1 and 1 + 2^-10, the midpoint goes down to the even mantissa...
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // ...between 1 + 2^-10 and 1 + 2^-9 it goes up to the even one.
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(2049.0f), 0x6800);  // 2049 is a tie between 2048 and 2050
  EXPECT_EQ(float_to_half_bits(2051.0f), 0x6802);  // 2051: tie between 2050 and 2052 -> 2052
}

TEST(HalfFloat, keeps_nan_a_nan) {
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
  // A signalling NaN whose payload lives only in the low bits must not become infinity.
  const float low_payload_nan = bits_to_float(0x7f800001);
  EXPECT_EQ(float_to_half_bits(low_payload_nan) & 0x7c00, 0x7c00);
  EXPECT_NE(float_to_half_bits(low_payload_nan) & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0xfc01)));
}

// ---- bf16 ---------------------------------------------------------------------------------------

TEST(BFloat16, converts_exact_values_and_rounds_ties_to_even) {
  EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_bits_to_float(0xc040), -3.0f);
  EXPECT_EQ(float_to_bfloat16_bits(bits_to_float(0x3f808000)), 0x3f80);  // tie, even below
  EXPECT_EQ(float_to_bfloat16_bits(bits_to_float(0x3f818000)), 0x3f82);  // tie, even above
  EXPECT_EQ(float_to_bfloat16_bits(bits_to_float(0x3f808001)), 0x3f81);  // above the tie
  EXPECT_EQ(float_to_bfloat16_bits(257.0f), 0x4380);                    // 257 -> 256
  EXPECT_EQ(float_to_bfloat16_bits(259.0f), 0x4382);                    // 259 -> 260
}

TEST(BFloat16, handles_infinity_overflow_denormals_and_nan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bfloat16_bits(inf), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(-inf), 0xff80);
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds up
  EXPECT_EQ(float_to_bfloat16_bits(bits_to_float(0x00010000)), 0x0001);  // smallest denormal
  EXPECT_EQ(bfloat16_bits_to_float(0x0001), bits_to_float(0x00010000));
  EXPECT_EQ(float_to_bfloat16_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(float_to_bfloat16_bits(bits_to_float(0x7f800001)))));
  EXPECT_TRUE(std::isnan(round_to_bfloat16(std::nanf(""))));
}

// ---- shape inference ----------------------------------------------------------------------------

TEST(ConvOutputSize, follows_the_formula_with_padding_stride_and_dilation) {
  int64_t out = 0;
  ASSERT_TRUE(infer_conv_output_size(7, 3, 1, 1, 1, 1, &out));
  EXPECT_EQ(out, 7);
  ASSERT_TRUE(infer_conv_output_size(224, 7, 2, 3, 3, 1, &out));
  EXPECT_EQ(out, 112);
  ASSERT_TRUE(infer_conv_output_size(10, 3, 1, 0, 0, 2, &out));  // dilated span 5
  EXPECT_EQ(out, 6);
  ASSERT_TRUE(infer_conv_output_size(8, 3, 2, 1, 0, 1, &out));  // asymmetric: (8 + 1 - 3) / 2 + 1
  EXPECT_EQ(out, 4);
}

TEST(ConvOutputSize, reports_an_empty_output_with_the_values) {
  int64_t out = 0;
  std::string error;
  // (3 + 0 - 5) / 1 + 1 would truncate to 0 + 1 = 1 in C++: it must be an error instead.
  EXPECT_FALSE(infer_conv_output_size(3, 3, 1, 0, 0, 2, &out, &error));
  EXPECT_THAT(error, HasSubstr("output would be empty"));
  EXPECT_THAT(error, HasSubstr("dilated kernel 5"));
  EXPECT_FALSE(infer_conv_output_size(2, 3, 1, 0, 0, 1, &out, &error));
  EXPECT_FALSE(infer_conv_output_size(4, 3, 0, 0, 0, 1, &out, &error));
  EXPECT_THAT(error, HasSubstr("stride 0"));
  EXPECT_FALSE(infer_conv_output_size(4, 3, 1, -1, 0, 1, &out, &error));
  EXPECT_THAT(error, HasSubstr("negative"));
}

TEST(ConvOutputSize, reports_overflow) {
  int64_t out = 0;
  std::string error;
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(infer_conv_output_size(big, 1, 1, 1, 0, 1, &out, &error));
  EXPECT_THAT(error, HasSubstr("overflow"));
  EXPECT_FALSE(infer_conv_output_size(5, big / 2, 1, 0, 0, 4, &out, &error));
  EXPECT_THAT(error, HasSubstr("overflow"));
}

TEST(TensorExtent, is_the_furthest_element_plus_one) {
  const int64_t dims[] = {2, 3, 4};
  const int64_t packed[] = {12, 4, 1};
  const int64_t padded[] = {100, 20, 2};
  int64_t elements = 0;
  ASSERT_TRUE(tensor_extent_elements(3, dims, packed, &elements));
  EXPECT_EQ(elements, 24);
  ASSERT_TRUE(tensor_extent_elements(3, dims, padded, &elements));
  EXPECT_EQ(elements, 100 + 40 + 6 + 1);
  const int64_t broadcast[] = {0, 0, 0};
  ASSERT_TRUE(tensor_extent_elements(3, dims, broadcast, &elements));
  EXPECT_EQ(elements, 1);
}

TEST(TensorExtent, detects_overflow_and_bad_values) {
  int64_t elements = 0;
  const int64_t huge_dims[] = {int64_t{1} << 32, int64_t{1} << 32};
  const int64_t huge_strides[] = {int64_t{1} << 32, 1};
  EXPECT_FALSE(tensor_extent_elements(2, huge_dims, huge_strides, &elements));
  const int64_t dims[] = {2};
  const int64_t negative[] = {-1};
  EXPECT_FALSE(tensor_extent_elements(1, dims, negative, &elements));

  tsrpTensor t{};
  t.data_type = TSRP_DATA_HALF;
  t.ndims = 2;
  t.dims[0] = 3, t.dims[1] = 5;
  t.strides[0] = 5, t.strides[1] = 1;
  size_t bytes = 0;
  ASSERT_TRUE(tensor_extent_bytes(t, &bytes));
  EXPECT_EQ(bytes, 30u);
  t.data_type = 99;
  EXPECT_FALSE(tensor_extent_bytes(t, &bytes));
  t.data_type = TSRP_DATA_FLOAT;
  t.dims[0] = int64_t{1} << 62, t.strides[0] = 1;
  EXPECT_FALSE(tensor_extent_bytes(t, &bytes));  // elements fit in int64, bytes do not
}

TEST(PackedStrides, channels_first_and_channels_last) {
  const int64_t dims[] = {2, 3, 4, 5};
  int64_t strides[4];
  ASSERT_TRUE(packed_strides(4, dims, false, strides));
  EXPECT_EQ(std::vector<int64_t>(strides, strides + 4), (std::vector<int64_t>{60, 20, 5, 1}));
  ASSERT_TRUE(packed_strides(4, dims, true, strides));
  EXPECT_EQ(std::vector<int64_t>(strides, strides + 4), (std::vector<int64_t>{60, 1, 15, 3}));

  const int64_t dims3d[] = {2, 3, 4, 5, 6};
  int64_t strides3d[5];
  ASSERT_TRUE(packed_strides(5, dims3d, true, strides3d));
  EXPECT_EQ(std::vector<int64_t>(strides3d, strides3d + 5),
            (std::vector<int64_t>{360, 1, 90, 18, 3}));
  const int64_t dims1[] = {7};
  ASSERT_TRUE(packed_strides(1, dims1, true, strides));
  EXPECT_EQ(strides[0], 1);
  const int64_t dims8[] = {2, 2, 2, 2, 2, 2, 2, 3};
  int64_t strides8[8];
  ASSERT_TRUE(packed_strides(8, dims8, true, strides8));
  EXPECT_EQ(strides8[1], 1);
  EXPECT_EQ(strides8[7], 2);
  EXPECT_EQ(strides8[0], 192);  // 384 elements / N 2
}

TEST(PackedStrides, refuses_bad_ranks_and_overflow) {
  const int64_t dims[] = {int64_t{1} << 40, int64_t{1} << 40};
  int64_t strides[9];
  EXPECT_FALSE(packed_strides(2, dims, false, strides));
  EXPECT_FALSE(packed_strides(0, dims, false, strides));
  EXPECT_FALSE(packed_strides(9, dims, false, strides));
  const int64_t zero[] = {0, 3};
  EXPECT_FALSE(packed_strides(2, zero, false, strides));
}

TEST(DataType, names_sizes_and_parsing) {
  EXPECT_STREQ(data_type_name(TSRP_DATA_FLOAT), "f32");
  EXPECT_STREQ(data_type_name(TSRP_DATA_HALF), "f16");
  EXPECT_STREQ(data_type_name(TSRP_DATA_BFLOAT16), "bf16");
  EXPECT_STREQ(data_type_name(TSRP_DATA_INT8), "s8");
  EXPECT_STREQ(data_type_name(TSRP_DATA_INT32), "s32");
  EXPECT_STREQ(data_type_name(42), "unknown");
  EXPECT_EQ(data_type_size(TSRP_DATA_BFLOAT16), 2u);
  EXPECT_EQ(data_type_size(TSRP_DATA_INT8), 1u);
  EXPECT_EQ(data_type_size(-1), 0u);
  tsrpDataType_t t = TSRP_DATA_FLOAT;
  ASSERT_TRUE(parse_data_type("bf16", &t));
  EXPECT_EQ(t, TSRP_DATA_BFLOAT16);
  EXPECT_FALSE(parse_data_type("f64", &t));
  EXPECT_EQ(t, TSRP_DATA_BFLOAT16);
}

// ---- convolution descriptors -------------------------------------------------------------------

conv_descriptor parse_ok(const std::string& text) {
  conv_descriptor d;
  std::string error;
  EXPECT_TRUE(parse_conv_descriptor(text, &d, &error)) << text << ": " << error;
  return d;
}

std::string parse_error(const std::string& text) {
  conv_descriptor d;
  std::string error;
  EXPECT_FALSE(parse_conv_descriptor(text, &d, &error)) << text;
  return error;
}

TEST(ConvDescriptor, parses_a_2d_problem_with_defaults) {
  const conv_descriptor d = parse_ok("ic16ih7oc32oh7kh3ph1");
  EXPECT_EQ(d.spatial_dims, 2);
  EXPECT_EQ(d.mb, 2);
  EXPECT_EQ(d.g, 1);
  EXPECT_EQ(d.ic, 16);
  EXPECT_EQ(d.oc, 32);
  for (int i = 0; i < 2; ++i) {  // w copies h
    EXPECT_EQ(d.in[i], 7);
    EXPECT_EQ(d.out[i], 7);
    EXPECT_EQ(d.k[i], 3);
    EXPECT_EQ(d.stride[i], 1);
    EXPECT_EQ(d.pad_before[i], 1);
    EXPECT_EQ(d.pad_after[i], 1);
    EXPECT_EQ(d.dilation[i], 1);
  }
}

TEST(ConvDescriptor, computes_a_missing_output_with_right_padding_equal_to_left) {
  const conv_descriptor d = parse_ok("mb32ic3ih224oc64kh7sh2ph3");
  EXPECT_EQ(d.out[0], 112);
  EXPECT_EQ(d.out[1], 112);
  EXPECT_EQ(d.pad_after[0], 3);
}

TEST(ConvDescriptor, derives_asymmetric_right_padding_from_a_given_output) {
  const conv_descriptor d = parse_ok("mb1ic4ih5oc4oh6kh3ph1");  // 5 + 1 + pad_after - 3 + 1 = 6
  EXPECT_EQ(d.pad_before[0], 1);
  EXPECT_EQ(d.pad_after[0], 2);
  // With stride 2 both right paddings 0 and 1 give 4 outputs: the symmetric one is kept.
  const conv_descriptor s = parse_ok("ic4ih8oc4oh4kh3sh2ph1");
  EXPECT_EQ(s.pad_after[0], 1);
  // Stride 2 over 8 with a 1x1 kernel reaches only 7: no right padding is needed, none negative.
  const conv_descriptor one = parse_ok("ic4ih8oc4oh4kh1sh2");
  EXPECT_EQ(one.pad_after[0], 0);
}

TEST(ConvDescriptor, derives_the_left_padding_as_benchdnn_when_only_the_output_is_given) {
  const conv_descriptor d = parse_ok("ic4ih7oc4oh7kh3");
  EXPECT_EQ(d.pad_before[0], 1);
  EXPECT_EQ(d.pad_after[0], 1);
}

TEST(ConvDescriptor, converts_benchdnn_dilation_to_tessera) {
  const conv_descriptor d = parse_ok("ic4ih10oc4kh3dh1");
  EXPECT_EQ(d.dilation[0], 2);
  EXPECT_EQ(d.out[0], 6);
  EXPECT_EQ(parse_ok("ic4ih10oc4kh3dh0").dilation[0], 1);
}

TEST(ConvDescriptor, parses_1d_and_3d_forms) {
  const conv_descriptor w = parse_ok("ic4iw9oc8kw3sw2");
  EXPECT_EQ(w.spatial_dims, 1);
  EXPECT_EQ(w.in[0], 9);
  EXPECT_EQ(w.out[0], 4);
  const conv_descriptor d = parse_ok("ic4id5ih6oc8kd3kh1");  // iw copies ih 6, kw copies kh 1
  EXPECT_EQ(d.spatial_dims, 3);
  EXPECT_EQ(d.in[0], 5);
  EXPECT_EQ(d.in[1], 6);
  EXPECT_EQ(d.in[2], 6);
  EXPECT_EQ(d.k[2], 1);
  EXPECT_EQ(d.out[0], 3);
  const conv_descriptor cube = parse_ok("ic4id8oc8kd3pd1");  // all from d
  EXPECT_EQ(cube.in[2], 8);
  EXPECT_EQ(cube.out[2], 8);
}

TEST(ConvDescriptor, reads_groups_underscores_and_names) {
  const conv_descriptor d = parse_ok("g2mb1_ic4ih5iw6_oc8oh5ow6_kh3kw3_ph1pw1_nsome_layer");
  EXPECT_EQ(d.g, 2);
  EXPECT_EQ(d.in[1], 6);
  EXPECT_EQ(d.name, "some_layer");
  EXPECT_EQ(parse_ok("nresnet:conv1_mb1ic3ih8oc4kh3").name, "resnet:conv1");
  EXPECT_EQ(parse_ok("mb1ic3ih8oc4kh3n\"alexnet:conv1\"").name, "alexnet:conv1");
}

TEST(ConvDescriptor, names_the_offending_entry) {
  EXPECT_EQ(parse_error("mb2ixy3"), "unknown key 'ixy' at position 3");
  EXPECT_EQ(parse_error("ic16xy4ih7"), "unknown key 'xy' at position 4");
  EXPECT_EQ(parse_error("icih7"), "unknown key 'icih' at position 0");
  EXPECT_EQ(parse_error("mb2ic"), "expected a number after 'ic' at position 3");
  EXPECT_EQ(parse_error("ic0ih7oc4kh3"), "ic must be positive");
  EXPECT_EQ(parse_error("mb0ic4ih7oc4kh3"), "mb must be positive");
  EXPECT_EQ(parse_error("ih7oc4kh3"), "ic is missing");
  EXPECT_EQ(parse_error("ic4ih7kh3"), "oc is missing");
  EXPECT_EQ(parse_error("ic4ih7oc4"), "kh is missing");
  EXPECT_EQ(parse_error("ic4ih7oc4kh3sh0"), "sh must be positive");
  EXPECT_EQ(parse_error("ic4oc4"), "no spatial size given (expected ih, iw or id)");
  EXPECT_EQ(parse_error("ic4ih7ic5oc4kh3"), "duplicate key 'ic' at position 6");
  EXPECT_EQ(parse_error("g3ic4ih7oc6kh3"), "ic 4 is not divisible by g 3");
  EXPECT_EQ(parse_error("3ic4"), "expected a key at position 0, found '3'");
  EXPECT_EQ(parse_error("ic4+ih7"), "unexpected character '+' at position 3");
  EXPECT_THAT(parse_error("ic4ih2oc4kh3"), HasSubstr("oh: output would be empty"));
  EXPECT_THAT(parse_error("ic4ih7oc4oh3kh3"), HasSubstr("oh 3 is too small"));
  EXPECT_THAT(parse_error("ic99999999999999999ih1"), HasSubstr("too large"));
  EXPECT_THAT(parse_error("n\"abc"), HasSubstr("unterminated name"));
}

TEST(ConvDescriptor, formats_the_canonical_form) {
  EXPECT_EQ(format_conv_descriptor(parse_ok("mb2ic16ih7oc16oh7kh3ph1")),
            "mb2ic16ih7oc16oh7kh3ph1");
  EXPECT_EQ(format_conv_descriptor(parse_ok("ic16ih7oc16kh1")), "mb2ic16ih7oc16oh7kh1");
  EXPECT_EQ(format_conv_descriptor(parse_ok("g2ic4ih5iw6oc8kh3ph1sh2dh1")),
            "g2mb2ic4ih5iw6oc8oh2ow2kh3kw3sh2sw2ph1pw1dh1dw1");
  EXPECT_EQ(format_conv_descriptor(parse_ok("ic4iw9oc8kw3sw2")), "mb2ic4iw9oc8ow4kw3sw2");
  EXPECT_EQ(format_conv_descriptor(parse_ok("ic4id8oc8kd3pd1_nx")), "mb2ic4id8oc8od8kd3pd1_nx");
}

TEST(ConvDescriptor, round_trips_through_parse_format_parse) {
  const char* cases[] = {
      "mb2ic16ih7oc16oh7kh3ph1",       "g4mb3ic8ih9iw11oc12kh3kw2sh2sw3ph1pw0dh1dw2",
      "ic3ih224oc64kh7sh2ph3_nconv1",  "mb1ic4id5ih6iw7oc8kd3kh1kw2pd1sd2",
      "ic4iw9oc8ow8kw3pw1",            "ic4ih8oc4oh5kh3sh2ph1",
      "ic4ih7oc4oh9kh3ph1",            "g16mb1ic16ih14oc16kh3ph1",
      "nmylayer_ic4ih7oc4kh3"};
  for (const char* text : cases) {
    const conv_descriptor first = parse_ok(text);
    const std::string formatted = format_conv_descriptor(first);
    const conv_descriptor second = parse_ok(formatted);
    EXPECT_EQ(first, second) << text << " -> " << formatted;
    EXPECT_EQ(format_conv_descriptor(second), formatted);
  }
}

TEST(ConvDescriptor, converts_from_and_to_a_problem) {
  const conv_descriptor d = parse_ok("g2mb3ic4ih5iw6oc8oh5ow7kh3kw2ph1pw1dw1");
  tsrpConvolutionProblem p{};
  conv_descriptor_to_problem(d, &p);
  EXPECT_EQ(p.struct_size, sizeof(tsrpConvolutionProblem));
  EXPECT_EQ(p.groups, 2);
  EXPECT_EQ(p.dilation[1], 2);
  EXPECT_EQ(p.stride[2], 1);  // unused dims get neutral values
  EXPECT_EQ(p.mode, TSRP_CROSS_CORRELATION);
  const int n = conv_tensor_dims(d, p.x.dims, p.w.dims, p.y.dims);
  ASSERT_EQ(n, 4);
  p.x.ndims = p.w.ndims = p.y.ndims = n;
  EXPECT_EQ(p.w.dims[1], 2);
  EXPECT_EQ(p.y.dims[3], 7);

  conv_descriptor back;
  std::string error;
  ASSERT_TRUE(conv_descriptor_from_problem(p, &back, &error)) << error;
  EXPECT_EQ(back, d);

  p.y.ndims = 5;
  EXPECT_FALSE(conv_descriptor_from_problem(p, &back, &error));
  EXPECT_THAT(error, HasSubstr("expected 4"));
}

// ---- eltwise ------------------------------------------------------------------------------------

TEST(Dims, parse_and_format) {
  std::vector<int64_t> dims;
  std::string error;
  ASSERT_TRUE(parse_dims("2x16x7x7", &dims, &error)) << error;
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 16, 7, 7}));
  EXPECT_EQ(format_dims(dims), "2x16x7x7");
  ASSERT_TRUE(parse_dims("5", &dims, &error));
  EXPECT_EQ(format_dims(dims), "5");
  EXPECT_FALSE(parse_dims("2xx3", &dims, &error));
  EXPECT_EQ(error, "expected a dim at position 2, found 'x'");
  EXPECT_FALSE(parse_dims("2x0", &dims, &error));
  EXPECT_EQ(error, "dim 1 must be positive");
  EXPECT_FALSE(parse_dims("2x3,", &dims, &error));
  EXPECT_EQ(error, "expected 'x' at position 3, found ','");
  EXPECT_FALSE(parse_dims("1x1x1x1x1x1x1x1x1", &dims, &error));
  EXPECT_EQ(error, "more than 8 dims");
  EXPECT_FALSE(parse_dims("", &dims, &error));
  EXPECT_EQ(dims, (std::vector<int64_t>{5}));  // untouched on failure
}

TEST(Activation, maps_benchdnn_algorithms_and_aliases) {
  struct row {
    const char* alg;
    double alpha, beta;
    tsrpActivationMode_t mode;
    double coef;
  };
  const row rows[] = {
      {"relu", 0, 0, TSRP_ACTIVATION_RELU, 0},
      {"relu", 0.1, 0, TSRP_ACTIVATION_LEAKY_RELU, 0.1},
      {"leaky_relu", 0.2, 0, TSRP_ACTIVATION_LEAKY_RELU, 0.2},
      {"logistic", 0, 0, TSRP_ACTIVATION_SIGMOID, 0},
      {"sigmoid", 0, 0, TSRP_ACTIVATION_SIGMOID, 0},
      {"tanh", 0, 0, TSRP_ACTIVATION_TANH, 0},
      {"linear", 1, 0, TSRP_ACTIVATION_IDENTITY, 0},
      {"identity", 0, 0, TSRP_ACTIVATION_IDENTITY, 0},
      {"elu", 1.5, 0, TSRP_ACTIVATION_ELU, 1.5},
      {"gelu_erf", 0, 0, TSRP_ACTIVATION_GELU_ERF, 0},
      {"gelu_tanh", 0, 0, TSRP_ACTIVATION_GELU_TANH, 0},
      {"swish", 1, 0, TSRP_ACTIVATION_SWISH, 1},
      {"clip", 0, 6, TSRP_ACTIVATION_CLIPPED_RELU, 6},
      {"clipped_relu", 6, 0, TSRP_ACTIVATION_CLIPPED_RELU, 6},
  };
  for (const row& r : rows) {
    tsrpActivationMode_t mode{};
    double coef = -1;
    std::string error;
    ASSERT_TRUE(parse_activation(r.alg, r.alpha, r.beta, &mode, &coef, &error)) << r.alg << error;
    EXPECT_EQ(mode, r.mode) << r.alg;
    EXPECT_EQ(coef, r.coef) << r.alg;
    // ...and back through benchdnn's spelling to the same mode and coef.
    std::string alg;
    double alpha, beta;
    activation_to_benchdnn(mode, coef, &alg, &alpha, &beta);
    tsrpActivationMode_t again{};
    double again_coef = -1;
    ASSERT_TRUE(parse_activation(alg, alpha, beta, &again, &again_coef, &error)) << alg;
    EXPECT_EQ(again, mode);
    EXPECT_EQ(again_coef, coef);
  }
}

TEST(Activation, refuses_what_tessera_cannot_express) {
  tsrpActivationMode_t mode;
  double coef;
  std::string error;
  EXPECT_FALSE(parse_activation("linear", 2, 0, &mode, &coef, &error));
  EXPECT_THAT(error, HasSubstr("linear is supported only with alpha 1 and beta 0"));
  EXPECT_FALSE(parse_activation("clip", -1, 6, &mode, &coef, &error));
  EXPECT_THAT(error, HasSubstr("alpha 0"));
  EXPECT_FALSE(parse_activation("soft_relu", 0, 0, &mode, &coef, &error));
  EXPECT_THAT(error, HasSubstr("unknown activation algorithm 'soft_relu'"));
  EXPECT_STREQ(activation_mode_name(TSRP_ACTIVATION_CLIPPED_RELU), "clipped_relu");
  EXPECT_STREQ(activation_mode_name(77), "unknown");
}

// ---- replay command lines ----------------------------------------------------------------------

tsrpTensor packed_tensor(std::vector<int64_t> dims, bool channels_last, int32_t dtype) {
  tsrpTensor t{};
  t.data_type = dtype;
  t.ndims = static_cast<int32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), t.dims);
  EXPECT_TRUE(packed_strides(t.ndims, t.dims, channels_last, t.strides));
  return t;
}

TEST(LayoutTag, detects_packed_layouts_and_strided_ones) {
  EXPECT_EQ(layout_tag(packed_tensor({2, 16, 7, 7}, false, 0)), "nchw");
  EXPECT_EQ(layout_tag(packed_tensor({2, 16, 7, 7}, true, 0)), "nhwc");
  EXPECT_EQ(layout_tag(packed_tensor({2, 16, 5, 7, 7}, true, 0)), "nhwc");
  tsrpTensor t = packed_tensor({2, 16, 7, 7}, false, 0);
  t.strides[0] *= 2;  // padded batch stride
  EXPECT_EQ(layout_tag(t), "strided");
  // A dim of extent 1 may carry any stride without changing the layout.
  tsrpTensor one = packed_tensor({1, 16, 7, 7}, false, 0);
  one.strides[0] = 12345;
  EXPECT_EQ(layout_tag(one), "nchw");
}

TEST(NumberText, is_the_shortest_exact_form) {
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(6), "6");
  EXPECT_EQ(format_number(-2.5), "-2.5");
  EXPECT_EQ(format_number(1.0 / 3.0), "0.3333333333333333");
}

TEST(BenchCommand, formats_conv_and_eltwise_replays) {
  EXPECT_EQ(format_conv_bench_command(parse_ok("mb2ic16ih7oc16oh7kh3ph1"), TSRP_DATA_HALF, "nhwc",
                                      "cuda"),
            "tessera-bench --conv --dt=f16 --tag=nhwc --backend=cuda mb2ic16ih7oc16oh7kh3ph1");
  eltwise_descriptor e;
  e.dims = {2, 16, 7, 7};
  e.mode = TSRP_ACTIVATION_RELU;
  EXPECT_EQ(format_eltwise_bench_command(e, true, TSRP_DATA_FLOAT, "nchw", ""),
            "tessera-bench --eltwise --dir=bwd --alg=relu --dt=f32 --tag=nchw 2x16x7x7");
  e.mode = TSRP_ACTIVATION_CLIPPED_RELU;
  e.coef = 6;
  EXPECT_EQ(format_eltwise_bench_command(e, false, TSRP_DATA_BFLOAT16, "strided", "onednn"),
            "tessera-bench --eltwise --dir=fwd --alg=clip --beta=6 --dt=bf16 --backend=onednn "
            "2x16x7x7");
}

TEST(BenchCommand, reads_a_problem_as_the_host_passes_it) {
  tsrpConvolutionProblem p{};
  conv_descriptor_to_problem(parse_ok("mb1ic4ih5oc8kh3ph1"), &p);
  p.x = packed_tensor({1, 4, 5, 5}, true, TSRP_DATA_FLOAT);
  p.w = packed_tensor({8, 4, 3, 3}, true, TSRP_DATA_FLOAT);
  p.y = packed_tensor({1, 8, 5, 5}, true, TSRP_DATA_FLOAT);
  p.mode = TSRP_CONVOLUTION;
  EXPECT_EQ(format_bench_command(p, "onednn"),
            "tessera-bench --conv --conv-mode=convolution --dt=f32 --tag=nhwc --backend=onednn "
            "mb1ic4ih5oc8oh5kh3ph1");

  tsrpActivationProblem a{};
  a.mode = TSRP_ACTIVATION_LEAKY_RELU;
  a.coef = 0.25;
  a.x = packed_tensor({4, 3}, false, TSRP_DATA_HALF);
  EXPECT_EQ(format_bench_command(a, false, ""),
            "tessera-bench --eltwise --dir=fwd --alg=relu --alpha=0.25 --dt=f16 --tag=nchw 4x3");
}

// ---- host memory ---------------------------------------------------------------------------------

// What both CPU device interfaces answer (memory_info) and bound their allocations by.
TEST(HostMemory, memory_info_is_physical_memory_and_what_of_it_is_available) {
  const size_t physical = host_physical_memory_bytes();
  ASSERT_GT(physical, size_t(0)) << "Linux always tells its physical memory";
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(host_memory_info(nullptr, &free_bytes, &total_bytes), TSRP_STATUS_SUCCESS);
  EXPECT_EQ(total_bytes, physical);
  EXPECT_GT(free_bytes, size_t(0));
  EXPECT_LE(free_bytes, total_bytes);
  EXPECT_EQ(host_memory_info(nullptr, nullptr, &total_bytes), TSRP_STATUS_BAD_PARAM);
}

TEST(HostMemory, only_requests_beyond_physical_memory_exceed_it) {
  const size_t physical = host_physical_memory_bytes();
  EXPECT_FALSE(exceeds_host_memory(1));
  EXPECT_FALSE(exceeds_host_memory(physical));
  EXPECT_TRUE(exceeds_host_memory(physical + 1));
  EXPECT_TRUE(exceeds_host_memory(std::numeric_limits<size_t>::max()));
}

}  // namespace
}  // namespace tessera::common
