// The naive activation, forward and backward, for every tsrpActivationMode_t: the ground truth
// activation kernels are tested against. Values are computed in double.
#ifndef TESSERA_REFERENCE_REFERENCE_ACTIVATION_HPP
#define TESSERA_REFERENCE_REFERENCE_ACTIVATION_HPP

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::reference {

// act(x). coef is the mode's parameter (leaky slope, clip, elu alpha, swish beta); others
// ignore it. An unknown mode gives NaN, so a test that reaches it cannot pass.
double activation_value(tsrpActivationMode_t mode, double coef, double x);

// act'(x), in terms of x. Where the function has a kink the value is a convention; Tessera's
// (which matches oneDNN's relu, leaky relu and elu) is:
//   relu'(0) = 0 (the slope-1 branch is x > 0 only);
//   leaky_relu'(0) = coef (the slope branch covers x <= 0);
//   clipped_relu'(x) = 1 on the open interval (0, coef), 0 elsewhere, at 0 and at coef too;
//   elu'(0) = coef * exp(0) = coef (the x <= 0 branch), not 1.
// Backends may choose differently at the kinks, so the backward fill (fill_activation_input
// with avoid_kinks) never puts x exactly on one.
double activation_derivative(tsrpActivationMode_t mode, double coef, double x);

// y = alpha * act(x) + beta * y over the problem's x and y (float arrays at their strides; y
// is not read when beta is 0). False with a message when x and y do not have the same dims.
bool activation_forward(const tsrpActivationProblem& problem, const float* x, double alpha,
                        double beta, float* y, std::string* error);

// dx = alpha * act'(x) * dy + beta * dx over x, dy and dx (dx not read when beta is 0).
bool activation_backward(const tsrpActivationProblem& problem, const float* x, const float* dy,
                         double alpha, double beta, float* dx, std::string* error);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_ACTIVATION_HPP
