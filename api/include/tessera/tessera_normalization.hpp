// C++ wrapper of tessera_normalization.h (included by tessera.hpp; include that). Each function
// is one C call that throws tessera::error on failure; pointers are device pointers of the
// handle's device, as in the C API.
#ifndef TESSERA_TESSERA_NORMALIZATION_HPP
#define TESSERA_TESSERA_NORMALIZATION_HPP

#include <tessera/tessera.hpp>

namespace tessera {

// The parameter descriptor (scale, bias, means, variances) of batch normalization over x.
inline tensor_desc derive_batch_norm_desc(const tensor_desc& x, tsrBatchNormMode_t mode) {
  tensor_desc d;
  check(tsrDeriveBatchNormTensorDescriptor(x, mode, d));
  return d;
}

// act may be NULL (no fused activation).
inline void batch_norm_forward_training(const handle& h, tsrBatchNormMode_t mode,
                                        tsrActivationDescriptor_t act, tsrAlgo_t algo, float alpha,
                                        const tensor_desc& x_desc, const void* x,
                                        const tensor_desc& param_desc, const void* scale,
                                        const void* bias, double exponential_average_factor,
                                        double epsilon, void* workspace, size_t workspace_size,
                                        float beta, const tensor_desc& y_desc, void* y,
                                        void* running_mean, void* running_variance,
                                        void* save_mean, void* save_inv_variance) {
  check(tsrBatchNormalizationForwardTraining(h, mode, act, algo, alpha, x_desc, x, param_desc, scale,
                                             bias, exponential_average_factor, epsilon, workspace,
                                             workspace_size, beta, y_desc, y, running_mean,
                                             running_variance, save_mean, save_inv_variance));
}

inline void batch_norm_forward_inference(const handle& h, tsrBatchNormMode_t mode,
                                         tsrActivationDescriptor_t act, tsrAlgo_t algo, float alpha,
                                         const tensor_desc& x_desc, const void* x,
                                         const tensor_desc& param_desc, const void* scale,
                                         const void* bias, const void* estimated_mean,
                                         const void* estimated_variance, double epsilon,
                                         void* workspace, size_t workspace_size, float beta,
                                         const tensor_desc& y_desc, void* y) {
  check(tsrBatchNormalizationForwardInference(h, mode, act, algo, alpha, x_desc, x, param_desc, scale,
                                              bias, estimated_mean, estimated_variance, epsilon,
                                              workspace, workspace_size, beta, y_desc, y));
}

// y_desc/y: the forward output, used only with a fused activation (pass x_desc and NULL else).
inline void batch_norm_backward(const handle& h, tsrBatchNormMode_t mode,
                                tsrActivationDescriptor_t act, tsrAlgo_t algo, float alpha_data,
                                float alpha_param, const tensor_desc& x_desc, const void* x,
                                tsrTensorDescriptor_t y_desc, const void* y,
                                const tensor_desc& dy_desc, const void* dy,
                                const tensor_desc& param_desc, const void* scale,
                                const void* saved_mean, const void* saved_inv_variance,
                                double epsilon, void* workspace, size_t workspace_size,
                                float beta_data, const tensor_desc& dx_desc, void* dx,
                                float beta_param, void* dscale, void* dbias) {
  check(tsrBatchNormalizationBackward(h, mode, act, algo, alpha_data, alpha_param, x_desc, x, y_desc,
                                      y, dy_desc, dy, param_desc, scale, saved_mean,
                                      saved_inv_variance, epsilon, workspace, workspace_size,
                                      beta_data, dx_desc, dx, beta_param, dscale, dbias));
}

inline size_t batch_norm_forward_training_workspace_size(const handle& h, tsrBatchNormMode_t mode,
                                                         tsrActivationDescriptor_t act,
                                                         const tensor_desc& x, const tensor_desc& y,
                                                         const tensor_desc& param,
                                                         tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetBatchNormalizationForwardTrainingWorkspaceSize(h, mode, act, x, y, param, algo, &b));
  return b;
}

inline size_t batch_norm_forward_inference_workspace_size(const handle& h, tsrBatchNormMode_t mode,
                                                          tsrActivationDescriptor_t act,
                                                          const tensor_desc& x, const tensor_desc& y,
                                                          const tensor_desc& param,
                                                          tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetBatchNormalizationForwardInferenceWorkspaceSize(h, mode, act, x, y, param, algo, &b));
  return b;
}

inline size_t batch_norm_backward_workspace_size(const handle& h, tsrBatchNormMode_t mode,
                                                 tsrActivationDescriptor_t act, const tensor_desc& x,
                                                 tsrTensorDescriptor_t y, const tensor_desc& dy,
                                                 const tensor_desc& dx, const tensor_desc& param,
                                                 tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetBatchNormalizationBackwardWorkspaceSize(h, mode, act, x, y, dy, dx, param, algo, &b));
  return b;
}

// Optional descriptors and pointers are raw (NULL when absent), as in the C API.
inline void layer_norm_forward(const handle& h, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
                               const tensor_desc& x_desc, const void* x,
                               tsrTensorDescriptor_t scale_desc, const void* scale, const void* bias,
                               tsrTensorDescriptor_t stats_desc, void* workspace,
                               size_t workspace_size, const tensor_desc& y_desc, void* y,
                               void* mean, void* inv_std) {
  check(tsrLayerNormalizationForward(h, algo, begin_norm_axis, epsilon, x_desc, x, scale_desc, scale,
                                     bias, stats_desc, workspace, workspace_size, y_desc, y, mean,
                                     inv_std));
}

inline void layer_norm_backward(const handle& h, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
                                const tensor_desc& x_desc, const void* x, const tensor_desc& dy_desc,
                                const void* dy, tsrTensorDescriptor_t scale_desc, const void* scale,
                                const tensor_desc& stats_desc, const void* saved_mean,
                                const void* saved_inv_std, void* workspace, size_t workspace_size,
                                const tensor_desc& dx_desc, void* dx, void* dscale, void* dbias) {
  check(tsrLayerNormalizationBackward(h, algo, begin_norm_axis, epsilon, x_desc, x, dy_desc, dy,
                                      scale_desc, scale, stats_desc, saved_mean, saved_inv_std,
                                      workspace, workspace_size, dx_desc, dx, dscale, dbias));
}

inline size_t layer_norm_forward_workspace_size(const handle& h, int begin_norm_axis,
                                                const tensor_desc& x, tsrTensorDescriptor_t scale,
                                                tsrTensorDescriptor_t stats, const tensor_desc& y,
                                                tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetLayerNormalizationForwardWorkspaceSize(h, begin_norm_axis, x, scale, stats, y, algo, &b));
  return b;
}

inline size_t layer_norm_backward_workspace_size(const handle& h, int begin_norm_axis,
                                                 const tensor_desc& x, const tensor_desc& dy,
                                                 tsrTensorDescriptor_t scale,
                                                 const tensor_desc& stats, const tensor_desc& dx,
                                                 tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetLayerNormalizationBackwardWorkspaceSize(h, begin_norm_axis, x, dy, scale, stats, dx,
                                                      algo, &b));
  return b;
}

inline void rms_norm_forward(const handle& h, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
                             const tensor_desc& x_desc, const void* x, const tensor_desc& scale_desc,
                             const void* scale, tsrTensorDescriptor_t stats_desc, void* workspace,
                             size_t workspace_size, const tensor_desc& y_desc, void* y,
                             void* inv_rms) {
  check(tsrRmsNormalizationForward(h, algo, begin_norm_axis, epsilon, x_desc, x, scale_desc, scale,
                                   stats_desc, workspace, workspace_size, y_desc, y, inv_rms));
}

inline void rms_norm_backward(const handle& h, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
                              const tensor_desc& x_desc, const void* x, const tensor_desc& dy_desc,
                              const void* dy, const tensor_desc& scale_desc, const void* scale,
                              tsrTensorDescriptor_t stats_desc, const void* saved_inv_rms,
                              void* workspace, size_t workspace_size, const tensor_desc& dx_desc,
                              void* dx, void* dscale) {
  check(tsrRmsNormalizationBackward(h, algo, begin_norm_axis, epsilon, x_desc, x, dy_desc, dy,
                                    scale_desc, scale, stats_desc, saved_inv_rms, workspace,
                                    workspace_size, dx_desc, dx, dscale));
}

inline size_t rms_norm_forward_workspace_size(const handle& h, int begin_norm_axis,
                                              const tensor_desc& x, const tensor_desc& scale,
                                              const tensor_desc& y, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetRmsNormalizationForwardWorkspaceSize(h, begin_norm_axis, x, scale, y, algo, &b));
  return b;
}

inline size_t rms_norm_backward_workspace_size(const handle& h, int begin_norm_axis,
                                               const tensor_desc& x, const tensor_desc& dy,
                                               const tensor_desc& scale, const tensor_desc& dx,
                                               tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetRmsNormalizationBackwardWorkspaceSize(h, begin_norm_axis, x, dy, scale, dx, algo, &b));
  return b;
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_NORMALIZATION_HPP
