/* Tessera C API: pooling, softmax, LRN. Included by tessera.h; include that.
 *
 * All three follow cuDNN: outputs are blended as y = alpha * op(...) + beta * y (y is not read
 * when beta is 0); tensors may have any strides (NCHW, NHWC, ...); fp32, fp16 and bf16, with all
 * tensors of a call in one data type. These calls take no workspace argument (as in cuDNN): the
 * scratch memory a kernel needs comes from the handle's pool (see tsrSetWorkspaceLimit), and the
 * tsrGet*WorkspaceSize queries say how much that is. */
#ifndef TESSERA_TESSERA_POOLING_H
#define TESSERA_TESSERA_POOLING_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Pooling
 * ------------------------------------------------------------------------------------------- */
/* Values match cudnnPoolingMode_t. */
typedef enum {
  TSR_POOLING_MAX = 0,
  TSR_POOLING_AVERAGE_COUNT_INCLUDE_PADDING = 1, /* divides by the window size */
  TSR_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING = 2, /* divides by the elements inside x */
  TSR_ENUM_RANGE(TSR_POOLING_MODE)
} tsrPoolingMode_t;

/* tsrNanPropagation_t (TSR_NOT_PROPAGATE_NAN, TSR_PROPAGATE_NAN) is defined in tessera.h. */

typedef struct tsrPoolingStruct* tsrPoolingDescriptor_t;

TSR_API tsrStatus_t tsrCreatePoolingDescriptor(tsrPoolingDescriptor_t* desc);
/* NULL is accepted and does nothing. */
TSR_API tsrStatus_t tsrDestroyPoolingDescriptor(tsrPoolingDescriptor_t desc);

/* spatial_dims is 2 or 3 (x is N,C,H,W or N,C,D,H,W); window, pads and strides have one value per
 * spatial dim, pads may differ before and after. Every pad must be smaller than the window in its
 * dim, so that every window holds at least one element of x. nan_propagation applies to max
 * pooling: TSR_PROPAGATE_NAN makes a window holding a NaN give NaN; TSR_NOT_PROPAGATE_NAN makes
 * max ignore NaNs (averages always propagate them, as arithmetic does).
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_OUT_OF_RANGE (mode, nan_propagation, spatial_dims, a
 * window or stride < 1, a negative pad, a pad >= the window). */
TSR_API tsrStatus_t tsrSetPoolingNdDescriptor(tsrPoolingDescriptor_t desc, tsrPoolingMode_t mode,
                                              tsrNanPropagation_t nan_propagation,
                                              int spatial_dims, const int64_t window[],
                                              const int64_t pad_before[],
                                              const int64_t pad_after[], const int64_t stride[]);

/* Reads the descriptor back; the arrays receive spatial_dims values (at most max_spatial_dims).
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_NOT_INITIALIZED. */
TSR_API tsrStatus_t tsrGetPoolingNdDescriptor(tsrPoolingDescriptor_t desc, int max_spatial_dims,
                                              tsrPoolingMode_t* mode,
                                              tsrNanPropagation_t* nan_propagation,
                                              int* spatial_dims, int64_t window[],
                                              int64_t pad_before[], int64_t pad_after[],
                                              int64_t stride[]);

/* Output dims (N, C, spatial...) of pooling x: out = (in + pad_before + pad_after - window) /
 * stride + 1, rounded down. nb_dims must be x's (spatial_dims + 2).
 * Errors: BAD_PARAM_SHAPE_MISMATCH (x's rank, or an input smaller than the window),
 * BAD_PARAM_OUT_OF_RANGE (nb_dims). */
TSR_API tsrStatus_t tsrGetPoolingNdForwardOutputDim(tsrPoolingDescriptor_t pool,
                                                    tsrTensorDescriptor_t x_desc, int nb_dims,
                                                    int64_t out_dims[]);

/* y = alpha * pool(x) + beta * y. y has the dims tsrGetPoolingNdForwardOutputDim gives, x's dtype.
 * Errors: BAD_PARAM_* naming the argument, NOT_SUPPORTED_NO_KERNEL with every kernel's reason,
 * BAD_PARAM_WORKSPACE_TOO_SMALL (the handle's pool limit), EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrPoolingForward(tsrHandle_t handle, tsrPoolingDescriptor_t pool,
                                      tsrAlgo_t algo, float alpha, tsrTensorDescriptor_t x_desc,
                                      const void* x, float beta, tsrTensorDescriptor_t y_desc,
                                      void* y);

/* dx = alpha * dpool(x, dy) + beta * dx. y and dy have the forward output's dims, x and dx the
 * input's. Max pooling sends each dy element to the first maximum of its window in window order
 * (the last spatial dim fastest); kernels may recompute the maxima from x rather than read y,
 * so y must be the forward output of x (as in cuDNN). Errors as tsrPoolingForward. */
TSR_API tsrStatus_t tsrPoolingBackward(tsrHandle_t handle, tsrPoolingDescriptor_t pool,
                                       tsrAlgo_t algo, float alpha, tsrTensorDescriptor_t y_desc,
                                       const void* y, tsrTensorDescriptor_t dy_desc,
                                       const void* dy, tsrTensorDescriptor_t x_desc, const void* x,
                                       float beta, tsrTensorDescriptor_t dx_desc, void* dx);

/* Scratch bytes that the algorithm (TSR_ALGO_AUTO: the one the handle would choose) takes from
 * the handle's pool for this problem. Errors: as the operation's validation, NOT_SUPPORTED_NO_KERNEL. */
TSR_API tsrStatus_t tsrGetPoolingForwardWorkspaceSize(tsrHandle_t handle,
                                                      tsrPoolingDescriptor_t pool,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
                                                      size_t* bytes);
TSR_API tsrStatus_t tsrGetPoolingBackwardWorkspaceSize(tsrHandle_t handle,
                                                       tsrPoolingDescriptor_t pool,
                                                       tsrTensorDescriptor_t y_desc,
                                                       tsrTensorDescriptor_t dy_desc,
                                                       tsrTensorDescriptor_t x_desc,
                                                       tsrTensorDescriptor_t dx_desc,
                                                       tsrAlgo_t algo, size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * Softmax
 * ------------------------------------------------------------------------------------------- */
/* Values match cudnnSoftmaxAlgorithm_t. FAST is computed as ACCURATE (the max is always
 * subtracted: the same function, without the overflow). */
typedef enum {
  TSR_SOFTMAX_FAST = 0,
  TSR_SOFTMAX_ACCURATE = 1, /* exp(x - max) / sum(exp(x - max)) */
  TSR_SOFTMAX_LOG = 2, /* x - max - log(sum(exp(x - max))) */
  TSR_ENUM_RANGE(TSR_SOFTMAX_ALGORITHM)
} tsrSoftmaxAlgorithm_t;

/* Values match cudnnSoftmaxMode_t. */
typedef enum {
  TSR_SOFTMAX_MODE_INSTANCE = 0, /* per n, over all of C x spatial */
  TSR_SOFTMAX_MODE_CHANNEL = 1, /* per n and spatial position, over C */
  TSR_ENUM_RANGE(TSR_SOFTMAX_MODE)
} tsrSoftmaxMode_t;

/* y = alpha * softmax(x) + beta * y. x and y have the same dims (2 to TSR_MAX_DIMS: N, C,
 * spatial...) and dtype, any strides.
 * Errors: BAD_PARAM_* naming the argument, NOT_SUPPORTED_NO_KERNEL, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrSoftmaxForward(tsrHandle_t handle, tsrSoftmaxAlgorithm_t algorithm,
                                      tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                                      tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                      tsrTensorDescriptor_t y_desc, void* y);

/* dx = alpha * dsoftmax(y, dy) + beta * dx, from the forward output y (as cuDNN):
 * accurate: y * (dy - sum(dy * y)); log: dy - exp(y) * sum(dy). All four tensors have x's dims. */
TSR_API tsrStatus_t tsrSoftmaxBackward(tsrHandle_t handle, tsrSoftmaxAlgorithm_t algorithm,
                                       tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                                       tsrTensorDescriptor_t y_desc, const void* y,
                                       tsrTensorDescriptor_t dy_desc, const void* dy, float beta,
                                       tsrTensorDescriptor_t dx_desc, void* dx);

/* Scratch bytes taken from the handle's pool (see tsrGetPoolingForwardWorkspaceSize). */
TSR_API tsrStatus_t tsrGetSoftmaxForwardWorkspaceSize(tsrHandle_t handle,
                                                      tsrSoftmaxAlgorithm_t algorithm,
                                                      tsrSoftmaxMode_t mode,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t y_desc, tsrAlgo_t algo,
                                                      size_t* bytes);
TSR_API tsrStatus_t tsrGetSoftmaxBackwardWorkspaceSize(tsrHandle_t handle,
                                                       tsrSoftmaxAlgorithm_t algorithm,
                                                       tsrSoftmaxMode_t mode,
                                                       tsrTensorDescriptor_t y_desc,
                                                       tsrTensorDescriptor_t dy_desc,
                                                       tsrTensorDescriptor_t dx_desc,
                                                       tsrAlgo_t algo, size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * Local response normalization across channels
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrLrnStruct* tsrLrnDescriptor_t;

/* Limits as cuDNN's CUDNN_LRN_MIN_N .. CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA. */
#define TSR_LRN_MIN_N 1
#define TSR_LRN_MAX_N 16
#define TSR_LRN_MIN_K 1e-5
#define TSR_LRN_MIN_BETA 0.01

/* A created descriptor holds cuDNN's defaults: n 5, alpha 1e-4, beta 0.75, k 2. */
TSR_API tsrStatus_t tsrCreateLrnDescriptor(tsrLrnDescriptor_t* desc);
/* NULL is accepted and does nothing. */
TSR_API tsrStatus_t tsrDestroyLrnDescriptor(tsrLrnDescriptor_t desc);

/* y = x / (k + alpha / n * sum(x_j^2))^beta, the sum over the n channels j from
 * c - (n - 1) / 2 (rounded down) to c + n / 2 (rounded down), clipped to [0, C).
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_OUT_OF_RANGE (n outside [TSR_LRN_MIN_N, TSR_LRN_MAX_N],
 * k < TSR_LRN_MIN_K, beta < TSR_LRN_MIN_BETA, a value that is not finite). */
TSR_API tsrStatus_t tsrSetLrnDescriptor(tsrLrnDescriptor_t desc, unsigned n, double alpha,
                                        double beta, double k);
TSR_API tsrStatus_t tsrGetLrnDescriptor(tsrLrnDescriptor_t desc, unsigned* n, double* alpha,
                                        double* beta, double* k);

/* y = alpha * lrn(x) + beta * y (alpha/beta here are the blend, not the descriptor's). x and y
 * have the same dims (N, C, spatial: 3 to 5 dims) and dtype, any strides.
 * Errors: BAD_PARAM_* naming the argument, NOT_SUPPORTED_NO_KERNEL, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrLrnCrossChannelForward(tsrHandle_t handle, tsrLrnDescriptor_t lrn,
                                              tsrAlgo_t algo, float alpha,
                                              tsrTensorDescriptor_t x_desc, const void* x,
                                              float beta, tsrTensorDescriptor_t y_desc, void* y);

/* dx = alpha * dlrn(x, dy) + beta * dx. All four tensors have the same dims; y must be the
 * forward output of x (kernels may recompute what they need from x). */
TSR_API tsrStatus_t tsrLrnCrossChannelBackward(tsrHandle_t handle, tsrLrnDescriptor_t lrn,
                                               tsrAlgo_t algo, float alpha,
                                               tsrTensorDescriptor_t y_desc, const void* y,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               tsrTensorDescriptor_t x_desc, const void* x,
                                               float beta, tsrTensorDescriptor_t dx_desc,
                                               void* dx);

/* Scratch bytes taken from the handle's pool (see tsrGetPoolingForwardWorkspaceSize). */
TSR_API tsrStatus_t tsrGetLrnCrossChannelForwardWorkspaceSize(tsrHandle_t handle,
                                                              tsrLrnDescriptor_t lrn,
                                                              tsrTensorDescriptor_t x_desc,
                                                              tsrTensorDescriptor_t y_desc,
                                                              tsrAlgo_t algo, size_t* bytes);
TSR_API tsrStatus_t tsrGetLrnCrossChannelBackwardWorkspaceSize(
    tsrHandle_t handle, tsrLrnDescriptor_t lrn, tsrTensorDescriptor_t y_desc,
    tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dx_desc,
    tsrAlgo_t algo, size_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_POOLING_H */
