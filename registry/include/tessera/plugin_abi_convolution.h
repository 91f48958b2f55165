/* Tessera plugin ABI 2: convolution backward data/filter/bias, fused bias+activation, int8 forward.
 * Included by plugin_abi.h (a plugin includes only that).
 *
 * Which structs each operation uses:
 *   TSRP_OP_CONVOLUTION_FORWARD           tsrpConvolutionProblem, tsrpConvolutionForwardArgs
 *                                         (plugin_abi.h; int8 uses their appended fields)
 *   TSRP_OP_CONVOLUTION_BACKWARD_DATA     tsrpConvolutionProblem, tsrpConvolutionBackwardDataArgs
 *   TSRP_OP_CONVOLUTION_BACKWARD_FILTER   tsrpConvolutionProblem, tsrpConvolutionBackwardFilterArgs
 *   TSRP_OP_CONVOLUTION_BACKWARD_BIAS     tsrpConvolutionBackwardBiasProblem,
 *                                         tsrpConvolutionBackwardBiasArgs
 *   TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD  tsrpConvolutionBiasActivationProblem,
 *                                         tsrpConvolutionBiasActivationArgs
 *
 * Backward data and filter reuse the forward problem unchanged, as oneDNN and cuDNN describe a
 * convolution once for all three directions: problem.x describes dx (backward data) or x
 * (backward filter), problem.w describes w or dw, problem.y describes dy. The host has checked
 * that y is the forward output shape of x and w.
 */
#ifndef TESSERA_PLUGIN_ABI_CONVOLUTION_H
#define TESSERA_PLUGIN_ABI_CONVOLUTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dx = alpha * conv_backward_data(w, dy) + beta * dx: the adjoint of the forward convolution
 * with respect to x. dx is not read when beta is 0 (it may hold NaN). */
typedef struct {
  size_t struct_size;
  const void* w;  /* filter, problem.w */
  const void* dy; /* gradient of the forward output, problem.y */
  void* dx;       /* output: gradient of the forward input, problem.x */
  float alpha;
  float beta;
} tsrpConvolutionBackwardDataArgs;

/* dw = alpha * conv_backward_filter(x, dy) + beta * dw: the adjoint with respect to w, summed
 * over the batch. dw is not read when beta is 0. */
typedef struct {
  size_t struct_size;
  const void* x;  /* forward input, problem.x */
  const void* dy; /* gradient of the forward output, problem.y */
  void* dw;       /* output: gradient of the filter, problem.w */
  float alpha;
  float beta;
} tsrpConvolutionBackwardFilterArgs;

/* db[k] = alpha * sum over n and every spatial position of dy[n, k, ...] + beta * db[k]. */
typedef struct {
  size_t struct_size;
  tsrpTensor dy; /* N, K, spatial...: any strides */
  tsrpTensor db; /* 1, K, 1, ...: as many dims as dy, same data type */
} tsrpConvolutionBackwardBiasProblem;

typedef struct {
  size_t struct_size;
  const void* dy;
  void* db;    /* output; not read when beta is 0 */
  float alpha;
  float beta;
} tsrpConvolutionBackwardBiasArgs;

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias), all in the compute type before one rounding
 * to y's type. The convolution fields mean what they mean in tsrpConvolutionProblem; they are
 * repeated here rather than embedding that struct, because an embedded extensible struct could
 * not grow without moving the fields after it. */
typedef struct {
  size_t struct_size;
  tsrpTensor x;         /* N, C, spatial... */
  tsrpTensor w;         /* K, C/groups, spatial... */
  tsrpTensor y;         /* N, K, spatial...: the forward output shape */
  tsrpTensor z;         /* y's dims and data type, any strides; unused when has_z is 0 */
  tsrpTensor bias;      /* 1, K, 1, ...: as many dims as y, y's data type */
  int32_t spatial_dims;
  int32_t mode;         /* tsrpConvolutionMode_t */
  int32_t compute_type; /* tsrpDataType_t accumulation type */
  int32_t math_mode;    /* tsrpMathMode_t */
  int64_t groups;
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS];
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS];
  int64_t stride[TSRP_MAX_SPATIAL_DIMS];
  int64_t dilation[TSRP_MAX_SPATIAL_DIMS];
  int32_t has_z;        /* 1: a residual z is added (it may alias y); 0: no residual */
  int32_t z_aliases_y;  /* 1: z is y's memory with y's strides (args.z == args.y) */
  int32_t activation_mode; /* tsrpActivationMode_t */
  int32_t reserved;        /* 0 */
  double activation_coef;  /* as in tsrpActivationProblem */
} tsrpConvolutionBiasActivationProblem;

typedef struct {
  size_t struct_size;
  const void* x;
  const void* w;
  const void* z;    /* NULL when problem.has_z is 0; may equal y */
  const void* bias; /* K values at bias's strides */
  void* y;          /* output; read only through z when z aliases it */
  float alpha1;     /* scales the convolution */
  float alpha2;     /* scales z */
} tsrpConvolutionBiasActivationArgs;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_CONVOLUTION_H */
