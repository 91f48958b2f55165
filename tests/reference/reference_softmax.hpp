// The naive softmax and log-softmax, forward and backward, over channels or over a whole
// instance: the ground truth the softmax kernels are tested against. Computed in double.
#ifndef TESSERA_REFERENCE_REFERENCE_SOFTMAX_HPP
#define TESSERA_REFERENCE_REFERENCE_SOFTMAX_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

#include "tolerance.hpp"

namespace tessera::reference {

// A softmax row is, in TSRP_SOFTMAX_MODE_CHANNEL, the C elements of one (n, spatial) position;
// in TSRP_SOFTMAX_MODE_INSTANCE, the C x spatial elements of one n.
//   accurate and fast: exp(x - max) / sum(exp(x - max));  log: x - max - log(sum(exp(x - max))).
// y = alpha * softmax(x) + beta * y (y not read when beta is 0); uses problem.x and problem.y.
bool softmax_forward(const tsrpSoftmaxProblem& problem, const float* x, double alpha, double beta,
                     float* y, std::string* error);

// From the forward output y, per row: accurate dx = y * (dy - sum(dy * y));
// log dx = dy - exp(y) * sum(dy). dx = alpha * that + beta * dx (dx not read when beta is 0).
// Uses problem.y, problem.dy and problem.dx.
bool softmax_backward(const tsrpSoftmaxProblem& problem, const float* y, const float* dy,
                      double alpha, double beta, float* dx, std::string* error);

// exp/log are oneDNN's f32 approximations (a few ulp) and each row sums up to `row_length`
// terms in f32: f32 1e-5 * max(1, sqrt(row_length) / 8), f16 2e-3, bf16 1.6e-2 (a few half-ulps
// of the one rounding of the output); backward twice that (it composes a product and a sum).
tolerance softmax_tolerance(int32_t data_type, int64_t row_length, bool backward);

// Elements per row of the problem's x (forward) or y (backward) for `mode`.
int64_t softmax_row_length(const tsrpTensor& t, int32_t mode);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_SOFTMAX_HPP
