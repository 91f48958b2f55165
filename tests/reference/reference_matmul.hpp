// The naive batched matmul with its epilogue: the ground truth every matmul kernel is tested
// against. Plain loops in double, nothing clever, so that it is obviously right.
#ifndef TESSERA_REFERENCE_REFERENCE_MATMUL_HPP
#define TESSERA_REFERENCE_REFERENCE_MATMUL_HPP

#include <tessera/plugin_abi.h>

#include <string>

#include "tolerance.hpp"

namespace tessera::reference {

// For every c index [batch..., m, n], in double:
//   t = alpha * sum_k a[batch'..., m, k] * b[batch''..., k, n]   (a batch dim of extent 1 in a
//       or b is broadcast: its index is 0)
//   t += bias[index with every dim of extent 1 at 0]             (when has_bias)
//   BLEND_AFTER_ACTIVATION:  c = act(t) + beta * c
//   BLEND_BEFORE_ACTIVATION: c = act(t + beta * c)
// then c is stored as float (the caller rounds to c's data type). a, b, bias and c are float
// arrays at their tensors' strides; bias may be null when the problem has none; c is not read
// when beta is 0 (it may hold NaN). Returns false with a message when the tensors do not fit.
bool matmul(const tsrpMatmulProblem& problem, const float* a, const float* b, const float* bias,
            double alpha, double beta, float* c, std::string* error);

// Checks ranks, M/N/K, batch broadcast and bias dims; the message names the tensor and dim.
bool check_matmul_problem(const tsrpMatmulProblem& problem, std::string* error);

// K: multiply-adds per element of c.
int64_t matmul_reduction_length(const tsrpMatmulProblem& problem);

// The matmul tolerance: conv_tolerance's for a reduction of K (the same sum of products, so the
// same sqrt growth), widened to activation_tolerance's when the epilogue has an activation that
// oneDNN-like kernels evaluate by approximation. s32 outputs are exact (0), except that an
// epilogue activation is allowed one unit: an approximated act() may land on the other side of
// a rounding boundary.
tolerance matmul_tolerance(const tsrpMatmulProblem& problem);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_MATMUL_HPP
