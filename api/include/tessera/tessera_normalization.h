/* Tessera C API: batch, layer and RMS normalization. Included by tessera.h; include that.
 *
 * Data tensors (x, y, dy, dx) are f32, f16 or bf16, of one type per call, at any strides.
 * Parameters and statistics (scale, bias, means, variances, their gradients) are always f32 and
 * packed. Statistics are computed in f32 whatever the data type. */
#ifndef TESSERA_TESSERA_NORMALIZATION_H
#define TESSERA_TESSERA_NORMALIZATION_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Batch normalization (cuDNN's cudnnBatchNormalization* semantics)
 * ------------------------------------------------------------------------------------------- */
typedef enum {
  TSR_BATCHNORM_SPATIAL = 0,       /* one mean/variance per channel (over N and spatial dims) */
  TSR_BATCHNORM_PER_ACTIVATION = 1, /* one per (C, spatial...) element (over N only) */
  TSR_ENUM_RANGE(TSR_BATCH_NORM_MODE)
} tsrBatchNormMode_t;

/* Sets `derived_desc` to the layout of scale, bias, means and variances for x under `mode`:
 * f32, packed, dims 1xCx1x1(x1) (spatial) or 1xCxHxW(xD) (per activation). x has 2 to 5 dims.
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_NOT_INITIALIZED, BAD_PARAM_OUT_OF_RANGE (mode, x's
 * number of dims). */
TSR_API tsrStatus_t tsrDeriveBatchNormTensorDescriptor(tsrTensorDescriptor_t x_desc,
                                                       tsrBatchNormMode_t mode,
                                                       tsrTensorDescriptor_t derived_desc);

/* Training forward: y = alpha * act(scale * (x - mean) / sqrt(var + epsilon) + bias) + beta * y
 * with the batch's mean and (biased) variance; y is not read when beta is 0.
 *  - act: NULL or IDENTITY for none, RELU fused (cuDNN's ForwardTrainingEx with an activation).
 *  - running_mean/running_variance: both NULL, or both updated in place as
 *    running = (1 - f) * running + f * batch with f = exponential_average_factor in [0, 1], the
 *    running variance taking the unbiased batch variance (as cuDNN).
 *  - save_mean/save_inv_variance: both NULL, or both receive the batch mean and
 *    1 / sqrt(var + epsilon), for tsrBatchNormalizationBackward.
 * param_desc is what tsrDeriveBatchNormTensorDescriptor gives. epsilon > 0. workspace: NULL and
 * 0 to use the handle's pool, else at least tsrGetBatchNormalizationForwardTrainingWorkspaceSize.
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL, NOT_SUPPORTED_NO_KERNEL
 * with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrBatchNormalizationForwardTraining(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t param_desc,
    const void* scale, const void* bias, double exponential_average_factor, double epsilon,
    void* workspace, size_t workspace_size, float beta, tsrTensorDescriptor_t y_desc, void* y,
    void* running_mean, void* running_variance, void* save_mean, void* save_inv_variance);

/* Inference forward: as training, with the given estimated (running) mean and variance.
 * Errors: as tsrBatchNormalizationForwardTraining. */
TSR_API tsrStatus_t tsrBatchNormalizationForwardInference(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t param_desc,
    const void* scale, const void* bias, const void* estimated_mean,
    const void* estimated_variance, double epsilon, void* workspace, size_t workspace_size,
    float beta, tsrTensorDescriptor_t y_desc, void* y);

/* Backward from the statistics saved by training (saved_mean, saved_inv_variance; required):
 *   dx     = alpha_data  * dL/dx + beta_data * dx
 *   dscale = alpha_param * sum(g * xhat) + beta_param * dscale
 *   dbias  = alpha_param * sum(g)        + beta_param * dbias
 * with g = dy, or dy * act'(y) when act is RELU (then y, the forward output, is required; it is
 * ignored and may be NULL otherwise). dx is not read when beta_data is 0, dscale/dbias not when
 * beta_param is 0. epsilon must be the one of the forward call.
 * Errors: as tsrBatchNormalizationForwardTraining. */
TSR_API tsrStatus_t tsrBatchNormalizationBackward(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act, tsrAlgo_t algo,
    float alpha_data, float alpha_param, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t y_desc, const void* y, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t param_desc, const void* scale, const void* saved_mean,
    const void* saved_inv_variance, double epsilon, void* workspace, size_t workspace_size,
    float beta_data, tsrTensorDescriptor_t dx_desc, void* dx, float beta_param, void* dscale,
    void* dbias);

/* Workspace the algorithm (TSR_ALGO_AUTO: the one the handle would choose) needs; the arguments
 * are those of the calls above that shape the problem (act may be NULL). */
TSR_API tsrStatus_t tsrGetBatchNormalizationForwardTrainingWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t param_desc,
    tsrAlgo_t algo, size_t* bytes);
TSR_API tsrStatus_t tsrGetBatchNormalizationForwardInferenceWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t param_desc,
    tsrAlgo_t algo, size_t* bytes);
TSR_API tsrStatus_t tsrGetBatchNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, tsrBatchNormMode_t mode, tsrActivationDescriptor_t act,
    tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
    tsrTensorDescriptor_t dx_desc, tsrTensorDescriptor_t param_desc, tsrAlgo_t algo,
    size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * Layer normalization over the trailing dims [begin_norm_axis, nb_dims) of x
 * ------------------------------------------------------------------------------------------- */
/* y = scale * (x - mean) / sqrt(var + epsilon) + bias, var biased, per leading index.
 *  - begin_norm_axis in [1, nb_dims - 1]; epsilon > 0.
 *  - scale_desc: f32, packed, dims = x's dims from begin_norm_axis (leading 1s allowed up to
 *    x's nb_dims); needed when scale or bias is given. scale and bias may each be NULL (1, 0).
 *  - stats_desc: f32, packed, dims = x's dims before begin_norm_axis (trailing 1s allowed);
 *    needed when mean/inv_std are given. mean and inv_std: both NULL or both written
 *    (inv_std = 1 / sqrt(var + epsilon)), for the backward.
 * y is overwritten (layer norm has no alpha/beta, as cuDNN's layernorm graph node).
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL, NOT_SUPPORTED_NO_KERNEL
 * with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrLayerNormalizationForward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t scale_desc,
    const void* scale, const void* bias, tsrTensorDescriptor_t stats_desc, void* workspace,
    size_t workspace_size, tsrTensorDescriptor_t y_desc, void* y, void* mean, void* inv_std);

/* dx (overwritten) from the saved mean and inv_std (required); dscale = sum(dy * xhat) and
 * dbias = sum(dy) over the leading dims, each written when not NULL (dscale needs scale).
 * scale may be NULL when the forward had none. epsilon must be the forward's.
 * Errors: as tsrLayerNormalizationForward. */
TSR_API tsrStatus_t tsrLayerNormalizationBackward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t scale_desc, const void* scale, tsrTensorDescriptor_t stats_desc,
    const void* saved_mean, const void* saved_inv_std, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t dx_desc, void* dx, void* dscale, void* dbias);

/* Workspace of the calls above (scale_desc and stats_desc may be NULL when unused). */
TSR_API tsrStatus_t tsrGetLayerNormalizationForwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t scale_desc, tsrTensorDescriptor_t stats_desc,
    tsrTensorDescriptor_t y_desc, tsrAlgo_t algo, size_t* bytes);
TSR_API tsrStatus_t tsrGetLayerNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t scale_desc,
    tsrTensorDescriptor_t stats_desc, tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo,
    size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * RMS normalization over the trailing dims [begin_norm_axis, nb_dims) of x
 * ------------------------------------------------------------------------------------------- */
/* y = scale * x / sqrt(mean(x^2) + epsilon). scale (required) and stats_desc as for layer
 * normalization; inv_rms = 1 / sqrt(mean(x^2) + epsilon) is written when not NULL.
 * y is overwritten. Errors: as tsrLayerNormalizationForward. */
TSR_API tsrStatus_t tsrRmsNormalizationForward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t scale_desc,
    const void* scale, tsrTensorDescriptor_t stats_desc, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t y_desc, void* y, void* inv_rms);

/* dx = inv_rms * (g - x * inv_rms^2 * mean(g * x)) with g = dy * scale (overwritten), and
 * dscale = sum(dy * x * inv_rms) over the leading dims when dscale is not NULL. saved_inv_rms
 * (with stats_desc) may be NULL: it is then recomputed from x.
 * Errors: as tsrLayerNormalizationForward. */
TSR_API tsrStatus_t tsrRmsNormalizationBackward(
    tsrHandle_t handle, tsrAlgo_t algo, int begin_norm_axis, double epsilon,
    tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc, const void* dy,
    tsrTensorDescriptor_t scale_desc, const void* scale, tsrTensorDescriptor_t stats_desc,
    const void* saved_inv_rms, void* workspace, size_t workspace_size,
    tsrTensorDescriptor_t dx_desc, void* dx, void* dscale);

TSR_API tsrStatus_t tsrGetRmsNormalizationForwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t scale_desc, tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
    size_t* bytes);
TSR_API tsrStatus_t tsrGetRmsNormalizationBackwardWorkspaceSize(
    tsrHandle_t handle, int begin_norm_axis, tsrTensorDescriptor_t x_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t scale_desc,
    tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo, size_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_NORMALIZATION_H */
