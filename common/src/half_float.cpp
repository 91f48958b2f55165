#include "tessera_common/half_float.hpp"

#include <cstring>

namespace tessera::common {
namespace {

uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Shifts `value` right by `shift` (1..31) bits, rounding to nearest, ties to even.
uint32_t shift_right_rne(uint32_t value, int shift) {
  const uint32_t quotient = value >> shift;
  const uint32_t remainder = value & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  const bool round_up = remainder > half || (remainder == half && (quotient & 1u));
  return quotient + (round_up ? 1u : 0u);
}

}  // namespace

uint16_t float_to_half_bits(float value) {
  const uint32_t bits = float_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;

  if (magnitude > 0x7f800000u)  // NaN: force the quiet bit so a payload of zeros stays NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x03ffu));
  if (magnitude >= 0x477ff000u)  // >= 65520 (and infinity): rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal half
    // Rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits. A mantissa
    // carry correctly bumps the exponent; the check above keeps the result below infinity.
    const uint32_t rebased = magnitude - (112u << 23);
    return static_cast<uint16_t>(sign | shift_right_rne(rebased, 13));
  }
  if (magnitude < 0x33000000u)  // < 2^-25, half the smallest denormal: rounds to zero
    return sign;
  // A half denormal counts units of 2^-24. The float is mantissa * 2^(exponent - 150) with the
  // implicit bit restored, so the count is mantissa * 2^(exponent - 126): a right shift by
  // 126 - exponent, which is 14..24 here. Rounding up to 0x400 gives the smallest normal.
  const int exponent = static_cast<int>(magnitude >> 23);
  const uint32_t mantissa = (magnitude & 0x007fffffu) | 0x00800000u;
  return static_cast<uint16_t>(sign | shift_right_rne(mantissa, 126 - exponent));
}

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x03ffu;

  if (exponent == 0x1fu)  // infinity or NaN (payload kept)
    return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)  // normal
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);  // signed zero
  // Denormal: normalise by shifting the leading one into the implicit position.
  int float_exponent = 113;  // the exponent of 2^-14, the denormal scale, in float's bias
  while ((mantissa & 0x0400u) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  mantissa &= 0x03ffu;
  return bits_float(sign | (static_cast<uint32_t>(float_exponent) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat16_bits(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)  // NaN: truncation could clear the payload, so force quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // bfloat16 shares float's exponent, so rounding the low 16 bits away is all there is; a carry
  // out of the mantissa bumps the exponent and, past the largest finite value, gives infinity.
  return static_cast<uint16_t>(shift_right_rne(bits, 16));
}

float bfloat16_bits_to_float(uint16_t bits) {
  return bits_float(static_cast<uint32_t>(bits) << 16);
}

float round_to_half(float value) { return half_bits_to_float(float_to_half_bits(value)); }

float round_to_bfloat16(float value) {
  return bfloat16_bits_to_float(float_to_bfloat16_bits(value));
}

}  // namespace tessera::common
