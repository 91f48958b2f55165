// The naive rest of the convolution family: backward data, backward filter, backward bias, the
// fused bias + residual + activation forward, and the int8 forward. Plain loops in double over
// float arrays at the tensors' strides, like reference_convolution.hpp, whose problem checks
// they share.
#ifndef TESSERA_REFERENCE_REFERENCE_CONVOLUTION_BACKWARD_HPP
#define TESSERA_REFERENCE_REFERENCE_CONVOLUTION_BACKWARD_HPP

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::reference {

// dx = alpha * dL/dx + beta * dx for the forward problem `p` (p.x describes dx, p.y dy):
// dx[n, c, i] = sum over k and window positions with i = o * stride - pad + r * dilation of
// w[k, c, r] * dy[n, k, o]. dx is not read when beta is 0.
bool convolution_backward_data(const tsrpConvolutionProblem& p, const float* w, const float* dy,
                               double alpha, double beta, float* dx, std::string* error);

// dw = alpha * dL/dw + beta * dw (p.w describes dw): dw[k, c, r] = sum over n and o of
// x[n, c, o * stride - pad + r * dilation] * dy[n, k, o]. dw is not read when beta is 0.
bool convolution_backward_filter(const tsrpConvolutionProblem& p, const float* x, const float* dy,
                                 double alpha, double beta, float* dw, std::string* error);

// db[k] = alpha * sum over n and space of dy[n, k, ...] + beta * db[k].
bool convolution_backward_bias(const tsrpConvolutionBackwardBiasProblem& p, const float* dy,
                               double alpha, double beta, float* db, std::string* error);

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias); z may be null (no residual) and may alias
// y. The pre-activation sum is formed in double; act is reference_activation's.
bool convolution_bias_activation_forward(const tsrpConvolutionBiasActivationProblem& p,
                                         const float* x, const float* w, const float* z,
                                         const float* bias, double alpha1, double alpha2,
                                         float* y, std::string* error);

// int8: acc = the exact sum of x * w; v = alpha * scale[k] * acc + beta * y (scales has
// p.output_scale_count values, 0 meaning every scale 1); y = v for f32 y, else
// saturate(round_half_to_even(v)) to y's type. x, w, y hold integer values as floats.
bool convolution_forward_int8(const tsrpConvolutionProblem& p, const float* x, const float* w,
                              const float* scales, double alpha, double beta, float* y,
                              std::string* error);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_CONVOLUTION_BACKWARD_HPP
