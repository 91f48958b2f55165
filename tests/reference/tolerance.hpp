// How far a kernel's output may be from the reference, per data type, and the comparison that
// applies it. One place, below every backend's tests and tessera-bench, so that all of them
// judge alike.
#ifndef TESSERA_REFERENCE_TOLERANCE_HPP
#define TESSERA_REFERENCE_TOLERANCE_HPP

#include <cstdint>
#include <string>

#include "tensor_fill.hpp"

namespace tessera::reference {

// An element passes when |got - expected| <= abs or <= rel * |expected|. The fills keep values
// at unit scale (integers, multiples of 1/8), so abs = rel: an error of "rel" relative to 1 is
// accepted near zero, where cancellation leaves nothing to be relative to.
struct tolerance {
  double abs = 0.0;
  double rel = 0.0;
};

// Convolution, `reduction_length` multiply-adds per output. With the integer fills every sum is
// exact in f32 arithmetic, so what remains is the output's rounding and, for kernels that do
// not accumulate exactly (Winograd, FFT, split reductions, fp16 accumulation), errors that grow
// like sqrt(length) (a random walk of rounding errors). Hence base * max(1, sqrt(length) / 16):
// flat up to 256 terms, where the final rounding dominates, then sqrt growth.
//   f32:  base 1e-6  (about 8 ulp; exact kernels show 0)
//   f16:  base 1e-3  (2 half-ulps of fp16's 2^-11 relative rounding of the output)
//   bf16: base 8e-3  (2 half-ulps of bf16's 2^-8)
//   s8/s32: 0 (integer arithmetic is exact; s8 outputs saturate identically)
tolerance conv_tolerance(int32_t data_type, int64_t reduction_length);

// Activation. No reduction: kernels evaluate exp/tanh/erf in f32 (possibly by polynomial
// approximations of a few ulp) and round the output once.
//   f32:  4e-6 forward, 8e-6 backward (derivatives compose two approximated functions)
//   f16:  2e-3 (4 half-ulps: the input was already f16, one rounding of the output, margin
//         for f16 arithmetic inside the kernel)
//   bf16: 1.6e-2 (the same in bf16's precision)
tolerance activation_tolerance(int32_t data_type, bool backward);

struct compare_result {
  int64_t checked = 0;
  int64_t mismatches = 0;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  int64_t first_mismatch = -1;  // row-major logical index of the first failing element
  std::string message;          // a sentence for the test log
  bool ok() const { return mismatches == 0; }
};

// Compares every logical element of `result` against `expected` (same dims; strides may
// differ). NaN passes only where the reference is NaN too; infinities must match exactly.
compare_result compare(const host_tensor& result, const host_tensor& expected,
                       const tolerance& tol);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_TOLERANCE_HPP
