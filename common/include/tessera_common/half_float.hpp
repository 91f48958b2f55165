// Host conversion between float and the two 16-bit floating-point formats Tessera speaks:
// IEEE 754 binary16 ("half", fp16) and bfloat16. Both directions handle zeros, denormals,
// infinities and NaN, and narrowing rounds to nearest, ties to even, as the hardware does, so
// that a value the host packs is bit-identical to what a kernel would produce.
#ifndef TESSERA_COMMON_HALF_FLOAT_HPP
#define TESSERA_COMMON_HALF_FLOAT_HPP

#include <cstdint>

namespace tessera::common {

// float -> fp16 bits. Values at or above 65520 in magnitude become infinity (65520 is the tie
// between 65504 and the next, unrepresentable, step; ties go to the even mantissa, which is
// infinity's). NaN stays NaN (quiet, sign and top payload bits kept).
uint16_t float_to_half_bits(float value);

// fp16 bits -> float; exact (every fp16 value is a float).
float half_bits_to_float(uint16_t bits);

// float -> bfloat16 bits (the top 16 bits of the float, rounded). NaN stays a quiet NaN.
uint16_t float_to_bfloat16_bits(float value);

// bfloat16 bits -> float; exact.
float bfloat16_bits_to_float(uint16_t bits);

// The float nearest to `value` that fp16 / bfloat16 can hold (a round trip through the bits).
float round_to_half(float value);
float round_to_bfloat16(float value);

}  // namespace tessera::common

#endif  // TESSERA_COMMON_HALF_FLOAT_HPP
