// Inputs that tell TF32 arithmetic from exact fp32, for the TF32 numerics tests of the
// convolutions (conformance_test.cpp, convolution_family_conformance_test.cpp).
//
// One operand holds integers of up to 12 significant bits, where TF32 keeps 11 (odd values from
// 2048 up lose their last bit, truncated or rounded), the other integers in [-1, 1]. Every sum of
// up to 4096 such products is an integer below 2^24, so exact fp32 arithmetic gets it exactly and
// any difference from the reference is TF32's: a kernel named *_tf32 must differ somewhere (or it
// is an exact path in disguise), and every kernel must stay within TF32's bound, each product off
// by less than 2 (the wide operand's lost bit or bits times |b| <= 1).
#pragma once

#include "tensor_fill.hpp"
#include "tolerance.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace tessera::testing {

inline reference::fill_spec tf32_probe_wide() { return {-((1 << 12) - 1), (1 << 12) - 1, 1.0}; }
inline reference::fill_spec tf32_probe_narrow() { return {-1, 1, 1.0}; }

// Reduction lengths up to this keep every sum exact in fp32.
constexpr int64_t tf32_probe_max_length = 4096;

// TF32's bound on |result - exact| for a reduction of `length` products.
inline double tf32_probe_bound(int64_t length) { return 2.0 * static_cast<double>(length); }

// Expects `got` within TF32's bound of the exact `expected`; true when it differs from it anywhere
// (what a TF32 kernel must do on these inputs).
inline bool expect_tf32_result(const reference::host_tensor& got, const reference::host_tensor& expected,
                               int64_t length) {
  const reference::compare_result r =
      reference::compare(got, expected, reference::tolerance{tf32_probe_bound(length), 0.0});
  EXPECT_TRUE(r.ok()) << r.message;
  return !reference::compare(got, expected, reference::tolerance{0.0, 0.0}).ok();
}

}  // namespace tessera::testing
