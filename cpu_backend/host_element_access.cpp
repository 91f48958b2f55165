#include "host_element_access.hpp"

#include <cmath>
#include <cstring>

namespace tessera::onednn {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0)
    v = std::ldexp(static_cast<double>(mantissa), -24);
  else if (exponent == 31)
    v = mantissa ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t float_to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Round to nearest, ties to even, on the top 16 bits; a NaN keeps its sign and becomes quiet
// (rounding its payload could carry it into infinity).
uint16_t float_to_bfloat16(float f) {
  const uint32_t bits = float_to_bits(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x0040);
  const uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(rounded >> 16);
}

// Round to nearest, ties to even, written out (not _Float16: the fuzzing build's clang has no
// such type on this target). Values from 65520 up become infinity (the tie between 65504 and the
// next, unrepresentable, step goes to the even mantissa, infinity's); a NaN stays a quiet NaN.
uint16_t float_to_half(float f) {
  const uint32_t bits = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 and up
  if (magnitude >= 0x38800000u) {  // normal in fp16: rebias the exponent, round away 13 bits
    const uint32_t rebiased = magnitude - 0x38000000u;
    return static_cast<uint16_t>(sign | ((rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13));
  }
  // Subnormal (or zero) in fp16: the value in units of 2^-24, which scaling by 2^24 gives exactly,
  // rounded to nearest even by nearbyint; 1024 units is the smallest normal, whose bits it also is.
  const float units = std::nearbyint(std::fabs(f) * 16777216.0f);
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(units));
}

void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }

}  // namespace

double load_element(const void* base, int32_t data_type, int64_t offset) noexcept {
  const uint8_t* p = static_cast<const uint8_t*>(base);
  switch (data_type) {
    case TSRP_DATA_FLOAT: return bits_to_float(load_u32(p + offset * 4));
    case TSRP_DATA_HALF: return half_to_double(load_u16(p + offset * 2));
    case TSRP_DATA_BFLOAT16: return bits_to_float(static_cast<uint32_t>(load_u16(p + offset * 2)) << 16);
    case TSRP_DATA_INT8: return static_cast<int8_t>(p[offset]);
    case TSRP_DATA_INT32: {
      int32_t i;
      std::memcpy(&i, p + offset * 4, sizeof i);
      return i;
    }
  }
  return NAN;
}

void store_element(void* base, int32_t data_type, int64_t offset, float value) noexcept {
  uint8_t* p = static_cast<uint8_t*>(base);
  switch (data_type) {
    case TSRP_DATA_FLOAT: std::memcpy(p + offset * 4, &value, sizeof value); return;
    case TSRP_DATA_HALF: store_u16(p + offset * 2, float_to_half(value)); return;
    case TSRP_DATA_BFLOAT16: store_u16(p + offset * 2, float_to_bfloat16(value)); return;
  }
}

bool element_is_nan(const void* base, int32_t data_type, int64_t offset) noexcept {
  const uint8_t* p = static_cast<const uint8_t*>(base);
  switch (data_type) {
    case TSRP_DATA_FLOAT: return (load_u32(p + offset * 4) & 0x7fffffffu) > 0x7f800000u;
    case TSRP_DATA_HALF: return (load_u16(p + offset * 2) & 0x7fffu) > 0x7c00u;
    case TSRP_DATA_BFLOAT16: return (load_u16(p + offset * 2) & 0x7fffu) > 0x7f80u;
  }
  return false;
}

}  // namespace tessera::onednn
