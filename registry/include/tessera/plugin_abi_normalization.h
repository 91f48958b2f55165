/* Tessera plugin ABI 2: batch, layer and RMS normalization. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_NORMALIZATION_H
#define TESSERA_PLUGIN_ABI_NORMALIZATION_H

#ifdef __cplusplus
extern "C" {
#endif

/* Which elements share one mean and variance (values match tsrBatchNormMode_t). */
typedef enum {
  TSRP_BATCH_NORM_SPATIAL = 0,       /* per channel: statistics over N and every spatial dim */
  TSRP_BATCH_NORM_PER_ACTIVATION = 1 /* per (C, spatial...) element: statistics over N only */
} tsrpBatchNormMode_t;

/* Batch normalization, used by TSRP_OP_BATCH_NORM_FORWARD_TRAINING, TSRP_OP_BATCH_NORM_FORWARD_
 * INFERENCE and TSRP_OP_BATCH_NORM_BACKWARD (args: tsrpBatchNormArgs). cuDNN semantics:
 *   xhat = (x - mean) * inv_std, inv_std = 1 / sqrt(var + epsilon)
 *   forward:  y = alpha * act(scale * xhat + bias) + beta * y
 *   training: mean/var are the batch's (var biased); save_mean = mean, save_inv_variance =
 *             inv_std; running = (1 - f) * running + f * batch, with the unbiased variance
 *             var * M / (M - 1) for the running variance (M elements per statistic; M == 1 uses
 *             the biased one, 0).
 *   inference: mean/var are the estimated (running) ones given.
 *   backward: with g = dy * act'(y) (g = dy without an activation), from the saved statistics:
 *             dx = alpha * d(loss)/dx + beta * dx; dscale = alpha_param * sum(g * xhat) +
 *             beta_param * dscale; dbias = alpha_param * sum(g) + beta_param * dbias.
 * The host has checked that x, y, dy and dx have the same dims (2 to 5 dims, N first, C second),
 * that they are of one floating data type, and that `param` is what
 * tsrDeriveBatchNormTensorDescriptor derives. An output with beta (beta_param) 0 is not read. */
typedef struct {
  size_t struct_size;
  int32_t mode;                      /* tsrpBatchNormMode_t */
  int32_t activation;                /* tsrpActivationMode_t applied after the affine step */
  double activation_coef;            /* the activation's coef */
  double epsilon;                    /* > 0 */
  double exponential_average_factor; /* training: the running-statistics factor f, in [0, 1] */
  int32_t update_running_stats;      /* training: 1 to update running_mean/running_variance */
  int32_t write_saved_stats;         /* training: 1 to write save_mean/save_inv_variance */
  tsrpTensor x;                      /* forward input; backward: the forward input */
  tsrpTensor y;                      /* forward output; backward: the forward output (read only
                                        when activation is not IDENTITY) */
  tsrpTensor dy;                     /* backward: gradient of y */
  tsrpTensor dx;                     /* backward: gradient of x */
  tsrpTensor param;                  /* f32, 1xCx1..1 (spatial) or 1xCxspatial (per activation),
                                        packed: layout of scale, bias, means, variances and their
                                        gradients */
} tsrpBatchNormProblem;

typedef struct {
  size_t struct_size;
  const void* x;
  void* y;                        /* forward output */
  const void* y_in;               /* backward: the forward output (activation != IDENTITY only) */
  const void* dy;                 /* backward */
  void* dx;                       /* backward */
  const float* scale;             /* every op */
  const float* bias;              /* forward */
  float* running_mean;            /* training: updated in place (if update_running_stats) */
  float* running_variance;        /* training: updated in place (if update_running_stats) */
  const float* estimated_mean;    /* inference */
  const float* estimated_variance;/* inference */
  float* save_mean;               /* training: written (if write_saved_stats) */
  float* save_inv_variance;       /* training: written (if write_saved_stats) */
  const float* saved_mean;        /* backward: from training */
  const float* saved_inv_variance;/* backward: from training */
  float* dscale;                  /* backward */
  float* dbias;                   /* backward */
  float alpha;                    /* blend of y (forward) or dx (backward) */
  float beta;
  float alpha_param;              /* backward: blend of dscale and dbias */
  float beta_param;
} tsrpBatchNormArgs;

/* Layer normalization over the trailing dims [begin_norm_axis, x.ndims) of x, used by
 * TSRP_OP_LAYER_NORM_FORWARD and TSRP_OP_LAYER_NORM_BACKWARD (args: tsrpLayerNormArgs):
 *   forward:  y = scale * (x - mean) * inv_std + bias, inv_std = 1 / sqrt(var + epsilon), var
 *             biased; scale and bias optional (1 and 0 when absent); mean and inv_std are written
 *             when write_saved_stats.
 *   backward: dx, and (when asked) dscale = sum(dy * xhat), dbias = sum(dy), from the saved
 *             mean and inv_std (always given). Outputs are overwritten (no alpha/beta, as in
 *             cuDNN's layernorm graph node).
 * The host has checked the shapes: x/y/dy/dx alike (one floating type); `scale` (f32, packed)
 * has the normalized dims; `stats` (f32, packed) has x's leading dims [0, begin_norm_axis). */
typedef struct {
  size_t struct_size;
  int32_t begin_norm_axis;   /* first normalized dim, 1 .. x.ndims - 1 */
  int32_t has_scale;         /* scale given (forward and backward) */
  int32_t has_bias;          /* forward: bias given; backward: dbias asked for */
  int32_t has_dscale;        /* backward: dscale asked for (needs has_scale) */
  int32_t write_saved_stats; /* forward: mean and inv_std asked for */
  double epsilon;            /* > 0 */
  tsrpTensor x;
  tsrpTensor y;              /* forward */
  tsrpTensor dy;             /* backward */
  tsrpTensor dx;             /* backward */
  tsrpTensor scale;          /* layout of scale, bias, dscale, dbias */
  tsrpTensor stats;          /* layout of mean and inv_std */
} tsrpLayerNormProblem;

typedef struct {
  size_t struct_size;
  const void* x;
  void* y;                    /* forward */
  const void* dy;             /* backward */
  void* dx;                   /* backward */
  const float* scale;         /* may be NULL when !has_scale */
  const float* bias;          /* forward; may be NULL when !has_bias */
  float* mean;                /* forward output (write_saved_stats) */
  float* inv_std;             /* forward output (write_saved_stats) */
  const float* saved_mean;    /* backward input */
  const float* saved_inv_std; /* backward input */
  float* dscale;              /* backward (has_dscale) */
  float* dbias;               /* backward (has_bias) */
} tsrpLayerNormArgs;

/* RMS normalization over the trailing dims [begin_norm_axis, x.ndims), used by
 * TSRP_OP_RMS_NORM_FORWARD and TSRP_OP_RMS_NORM_BACKWARD (args: tsrpRmsNormArgs):
 *   forward:  y = scale * x * inv_rms, inv_rms = 1 / sqrt(mean(x^2) + epsilon); inv_rms written
 *             when write_saved_stats.
 *   backward: with g = dy * scale, dx = inv_rms * (g - x * inv_rms^2 * mean(g * x)), and (when
 *             asked) dscale = sum(dy * x * inv_rms); inv_rms from the forward when
 *             has_saved_stats, else recomputed from x. Outputs are overwritten.
 * Shapes as for layer normalization; scale is required. */
typedef struct {
  size_t struct_size;
  int32_t begin_norm_axis; /* first normalized dim, 1 .. x.ndims - 1 */
  int32_t has_saved_stats; /* forward: write inv_rms; backward: read saved_inv_rms */
  int32_t has_dscale;      /* backward: dscale asked for */
  double epsilon;          /* > 0 */
  tsrpTensor x;
  tsrpTensor y;            /* forward */
  tsrpTensor dy;           /* backward */
  tsrpTensor dx;           /* backward */
  tsrpTensor scale;        /* layout of scale and dscale */
  tsrpTensor stats;        /* layout of inv_rms */
} tsrpRmsNormProblem;

typedef struct {
  size_t struct_size;
  const void* x;
  void* y;                    /* forward */
  const void* dy;             /* backward */
  void* dx;                   /* backward */
  const float* scale;
  float* inv_rms;             /* forward output (has_saved_stats) */
  const float* saved_inv_rms; /* backward input (has_saved_stats) */
  float* dscale;              /* backward (has_dscale) */
} tsrpRmsNormArgs;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_NORMALIZATION_H */
