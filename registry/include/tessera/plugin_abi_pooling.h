/* Tessera plugin ABI 2: pooling, softmax, LRN. Included by plugin_abi.h (a plugin includes only that).
 *
 * Operations and their structs (problem = configuration, args = pointers and per-call scalars):
 *   TSRP_OP_POOLING_FORWARD, TSRP_OP_POOLING_BACKWARD:  tsrpPoolingProblem, tsrpPoolingArgs
 *   TSRP_OP_SOFTMAX_FORWARD, TSRP_OP_SOFTMAX_BACKWARD:  tsrpSoftmaxProblem, tsrpSoftmaxArgs
 *   TSRP_OP_LRN_FORWARD, TSRP_OP_LRN_BACKWARD:          tsrpLrnProblem, tsrpLrnArgs
 * Every output is blended as out = alpha * op(...) + beta * out; when beta is 0 the output is
 * not read (it may hold NaN). The host has checked that the shapes agree and that all tensors of
 * a call have one data type. */
#ifndef TESSERA_PLUGIN_ABI_POOLING_H
#define TESSERA_PLUGIN_ABI_POOLING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Values match tsrPoolingMode_t. */
typedef enum {
  TSRP_POOLING_MAX = 0,
  TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING = 1,
  TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING = 2
} tsrpPoolingMode_t;

/* tsrpNanPropagation_t is defined in plugin_abi.h. */

/* Pooling. x is N,C,spatial...; y is N,C,out... with out = (in + pad_before + pad_after -
 * window) / stride + 1 (rounded down); every pad is smaller than its window. Forward uses x and y;
 * backward uses all four (y, dy of the output's dims; x, dx of the input's). Spatial entries past
 * spatial_dims are 0 (pads) or 1 (window, stride). */
typedef struct {
  size_t struct_size;
  int32_t mode;            /* tsrpPoolingMode_t */
  int32_t nan_propagation; /* tsrpNanPropagation_t, for max pooling */
  int32_t spatial_dims;    /* 2 or 3 */
  int32_t reserved;        /* 0 */
  int64_t window[TSRP_MAX_SPATIAL_DIMS];
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS];
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS];
  int64_t stride[TSRP_MAX_SPATIAL_DIMS];
  tsrpTensor x;
  tsrpTensor y;
  tsrpTensor dy; /* backward only */
  tsrpTensor dx; /* backward only */
} tsrpPoolingProblem;

/* forward:  y  = alpha * pool(x) + beta * y
 * backward: dx = alpha * dpool(x, dy) + beta * dx (y_in is the forward output, for kernels that
 *           route the gradient through it; others recompute the maxima from x). */
typedef struct {
  size_t struct_size;
  const void* x;    /* forward input; backward: the forward input */
  const void* y_in; /* backward: the forward output */
  void* y;          /* forward: output */
  const void* dy;   /* backward: gradient of y */
  void* dx;         /* backward: output */
  float alpha;
  float beta;
} tsrpPoolingArgs;

/* Values match tsrSoftmaxAlgorithm_t (FAST may be computed as ACCURATE). */
typedef enum { TSRP_SOFTMAX_FAST = 0, TSRP_SOFTMAX_ACCURATE = 1, TSRP_SOFTMAX_LOG = 2 } tsrpSoftmaxAlgorithm_t;

/* Values match tsrSoftmaxMode_t. */
typedef enum {
  TSRP_SOFTMAX_MODE_INSTANCE = 0, /* per n over C x spatial */
  TSRP_SOFTMAX_MODE_CHANNEL = 1   /* per (n, spatial) over C */
} tsrpSoftmaxMode_t;

/* Softmax: every tensor has the same dims (2 to TSRP_MAX_DIMS: N, C, spatial...). Forward uses x
 * and y; backward uses y (the forward output), dy and dx. */
typedef struct {
  size_t struct_size;
  int32_t algorithm; /* tsrpSoftmaxAlgorithm_t */
  int32_t mode;      /* tsrpSoftmaxMode_t */
  tsrpTensor x;      /* forward only */
  tsrpTensor y;      /* forward output; backward input */
  tsrpTensor dy;     /* backward only */
  tsrpTensor dx;     /* backward only */
} tsrpSoftmaxProblem;

/* forward:  y  = alpha * softmax(x) + beta * y
 * backward: dx = alpha * dsoftmax(y_in, dy) + beta * dx */
typedef struct {
  size_t struct_size;
  const void* x;    /* forward input */
  const void* y_in; /* backward: the forward output */
  void* y;          /* forward: output */
  const void* dy;   /* backward */
  void* dx;         /* backward: output */
  float alpha;
  float beta;
} tsrpSoftmaxArgs;

/* LRN across channels: y = x / (k + alpha / n * sum(x_j^2))^beta, the sum over channels j from
 * c - (n - 1) / 2 to c + n / 2 (integer division), clipped to [0, C). cuDNN's convention: alpha
 * is divided by n (oneDNN's lrn_across_channels divides by local_size likewise). Every tensor has
 * the same dims (N, C, spatial: 3 to 5 dims). Forward uses x and y; backward all four. */
typedef struct {
  size_t struct_size;
  int64_t n;     /* window width in channels, 1 to 16 */
  double alpha;  /* scale of the sum of squares (divided by n) */
  double beta;   /* exponent */
  double k;      /* bias */
  tsrpTensor x;
  tsrpTensor y;
  tsrpTensor dy; /* backward only */
  tsrpTensor dx; /* backward only */
} tsrpLrnProblem;

/* forward:  y  = alpha * lrn(x) + beta * y (the blend, not the problem's alpha/beta)
 * backward: dx = alpha * dlrn(x, dy) + beta * dx (y_in is the forward output, for kernels that
 *           use it; others recompute from x). */
typedef struct {
  size_t struct_size;
  const void* x;
  const void* y_in;
  void* y;
  const void* dy;
  void* dx;
  float alpha;
  float beta;
} tsrpLrnArgs;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_POOLING_H */
