// The naive batch normalization (cuDNN semantics, see plugin_abi_normalization.h), forward
// training, forward inference and backward, and the tolerances of the whole normalization family
// (batch, layer and RMS norm). Values are computed in double over float arrays at the tensors'
// strides; parameters and statistics are float arrays at the param tensor's (packed) strides.
#ifndef TESSERA_REFERENCE_REFERENCE_BATCH_NORM_HPP
#define TESSERA_REFERENCE_REFERENCE_BATCH_NORM_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

#include "tolerance.hpp"

namespace tessera::reference {

// Elements per statistic: N * spatial (spatial mode) or N (per activation).
int64_t batch_norm_reduction_length(const tsrpBatchNormProblem& problem);

// Training: y = alpha * act(scale * xhat + bias) + beta * y (y not read when beta is 0) with the
// batch statistics; writes save_mean/save_inv_variance when not null and updates
// running_mean/running_variance (unbiased variance) when not null.
bool batch_norm_forward_training(const tsrpBatchNormProblem& problem, const float* x,
                                 const float* scale, const float* bias, double alpha, double beta,
                                 float* y, float* running_mean, float* running_variance,
                                 float* save_mean, float* save_inv_variance, std::string* error);

// Inference from the estimated mean and variance.
bool batch_norm_forward_inference(const tsrpBatchNormProblem& problem, const float* x,
                                  const float* scale, const float* bias, const float* mean,
                                  const float* variance, double alpha, double beta, float* y,
                                  std::string* error);

// Backward from the saved mean and inverse std; y (the forward output) is read only with a relu.
// dx blended with alpha/beta, dscale and dbias with alpha_param/beta_param (not read at 0).
bool batch_norm_backward(const tsrpBatchNormProblem& problem, const float* x, const float* y,
                         const float* dy, const float* scale, const float* saved_mean,
                         const float* saved_inv_variance, double alpha, double beta,
                         double alpha_param, double beta_param, float* dx, float* dscale,
                         float* dbias, std::string* error);

// Tolerances of the normalization family, for `length` elements per statistic. The fills are
// small integers, so sums are exact in f32 but the mean (a division) and 1/sqrt are not: f32
// results carry rounding that grows like sqrt(length) (a random walk over the reduction), and up
// to linearly for the variance's sum of same-signed squares. Hence, with
// growth = max(1, sqrt(length) / 16) and f32 = max(1e-5 * growth, 1e-7 * length):
//   data outputs (y, dx):  f32: f32; f16: max(f32, 2e-3 * growth) and bf16: max(f32, 1.6e-2 *
//                          growth) (4 half-ulps of the output's rounding), abs = rel (unit-scale
//                          values);
//   statistics (mean, inv_std, running mean/var): f32, abs = rel;
//   parameter gradients (dscale, dbias: sums of `length` terms up to ~16): rel 1e-5 * growth,
//                          abs 2e-6 * max(16, length), since cancellation leaves sums near 0
//                          whose terms were large.
tolerance norm_data_tolerance(int32_t data_type, int64_t length);
tolerance norm_stat_tolerance(int64_t length);
tolerance norm_param_grad_tolerance(int64_t length);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_BATCH_NORM_HPP
