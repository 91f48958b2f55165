// The naive cross-channel LRN, forward and backward: the ground truth the LRN kernels are tested
// against. Computed in double.
#ifndef TESSERA_REFERENCE_REFERENCE_LRN_HPP
#define TESSERA_REFERENCE_REFERENCE_LRN_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

#include "tolerance.hpp"

namespace tessera::reference {

// cuDNN's definition: s_c = k + alpha / n * sum(x_j^2) over channels j from c - (n - 1) / 2 to
// c + n / 2 (integer division; for odd n the window is centred), clipped to [0, C);
// y_c = x_c * s_c^-beta. y = blend_alpha * lrn(x) + blend_beta * y (y not read when blend_beta
// is 0). Uses problem.x and problem.y.
bool lrn_forward(const tsrpLrnProblem& problem, const float* x, double blend_alpha,
                 double blend_beta, float* y, std::string* error);

// The exact derivative: dx_m = dy_m * s_m^-beta
//   - 2 * beta * alpha / n * x_m * sum over the c whose window holds m of dy_c * x_c * s_c^(-beta-1).
// dx = blend_alpha * that + blend_beta * dx. Uses problem.x, dy and dx.
bool lrn_backward(const tsrpLrnProblem& problem, const float* x, const float* dy,
                  double blend_alpha, double blend_beta, float* dx, std::string* error);

// One power per element (oneDNN evaluates it in f32, exactly or by its fast path for
// beta = 0.75) after a short f32 sum: f32 1e-5 forward, 4e-5 backward (a difference of two
// such terms); f16 4e-3, bf16 3e-2 (several half-ulps, the inputs being already rounded).
tolerance lrn_tolerance(int32_t data_type, bool backward);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_LRN_HPP
