/* Tessera C API: convolution backward data/filter/bias, fused bias+activation, int8 forward.
 * Included by tessera.h; include that.
 *
 * Every call here reuses the tsrConvolutionDescriptor_t of tsrConvolutionForward and its shape
 * inference: dy always has the dims tsrGetConvolutionForwardOutputDim gives for x (or dx) and
 * w (or dw). Tensors may have any strides. Like the forward call, the flipped-filter mode
 * TSR_CONVOLUTION is accepted here but a kernel may decline it (the oneDNN backend does).
 */
#ifndef TESSERA_TESSERA_CONVOLUTION_H
#define TESSERA_TESSERA_CONVOLUTION_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Backward data: dx = alpha * conv_backward_data(w, dy) + beta * dx (cudnnConvolutionBackwardData)
 * ------------------------------------------------------------------------------------------- */

/* Candidates in preference order, the ones that can run first (time_ms is -1). */
TSR_API tsrStatus_t tsrGetConvolutionBackwardDataAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, int requested_count,
    int* returned_count, tsrAlgoPerf_t perf[]);

/* Measures every candidate of every backend serving the handle's device on a scratch dx (the
 * given dx is never written) and returns them fastest first, then those that cannot run with
 * their reasons. Workspace: the one given, else the handle's pool. Errors: as
 * tsrFindConvolutionForwardAlgorithm. */
TSR_API tsrStatus_t tsrFindConvolutionBackwardDataAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, const void* w, tsrTensorDescriptor_t dy_desc,
    const void* dy, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, const void* dx,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size);

/* Workspace the algorithm (TSR_ALGO_AUTO: the one the handle would choose) needs. */
TSR_API tsrStatus_t tsrGetConvolutionBackwardDataWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t w_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dx_desc, tsrAlgo_t algo,
    size_t* bytes);

/* dx = alpha * (gradient of conv(x, w) with respect to x, given dy) + beta * dx; dx is not read
 * when beta is 0. w is K,C/groups,spatial; dy is N,K,spatial (the forward output dims of dx and
 * w); dx is N,C,spatial; all of one floating dtype.
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL,
 * NOT_SUPPORTED_NO_KERNEL with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrConvolutionBackwardData(tsrHandle_t handle, float alpha,
                                               tsrTensorDescriptor_t w_desc, const void* w,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                               void* workspace, size_t workspace_size, float beta,
                                               tsrTensorDescriptor_t dx_desc, void* dx);

/* ---------------------------------------------------------------------------------------------
 * Backward filter: dw = alpha * conv_backward_filter(x, dy) + beta * dw
 * ------------------------------------------------------------------------------------------- */

TSR_API tsrStatus_t tsrGetConvolutionBackwardFilterAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, int requested_count,
    int* returned_count, tsrAlgoPerf_t perf[]);

/* As tsrFindConvolutionBackwardDataAlgorithm, on a scratch dw. */
TSR_API tsrStatus_t tsrFindConvolutionBackwardFilterAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t dy_desc,
    const void* dy, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, const void* dw,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size);

TSR_API tsrStatus_t tsrGetConvolutionBackwardFilterWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dy_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t dw_desc, tsrAlgo_t algo,
    size_t* bytes);

/* dw = alpha * (gradient of conv(x, w) with respect to w, summed over the batch) + beta * dw;
 * dw is not read when beta is 0. Shapes as tsrConvolutionForward with dw in w's place.
 * Errors: as tsrConvolutionBackwardData. */
TSR_API tsrStatus_t tsrConvolutionBackwardFilter(tsrHandle_t handle, float alpha,
                                                 tsrTensorDescriptor_t x_desc, const void* x,
                                                 tsrTensorDescriptor_t dy_desc, const void* dy,
                                                 tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                                 void* workspace, size_t workspace_size,
                                                 float beta, tsrTensorDescriptor_t dw_desc,
                                                 void* dw);

/* ---------------------------------------------------------------------------------------------
 * Backward bias: db[k] = alpha * sum(dy[n, k, ...] over n and space) + beta * db[k]
 * ------------------------------------------------------------------------------------------- */

/* dy is N,K,spatial (3 to 5 dims); db is 1,K,1,... with as many dims as dy and dy's dtype; db is
 * not read when beta is 0. Needs no workspace (the kernel's scratch comes from the handle's
 * pool). Errors: BAD_PARAM_* naming the argument, NOT_SUPPORTED_NO_KERNEL, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrConvolutionBackwardBias(tsrHandle_t handle, float alpha,
                                               tsrTensorDescriptor_t dy_desc, const void* dy,
                                               float beta, tsrTensorDescriptor_t db_desc,
                                               void* db);

/* ---------------------------------------------------------------------------------------------
 * Fused forward: y = act(alpha1 * conv(x, w) + alpha2 * z + bias)
 * (cudnnConvolutionBiasActivationForward)
 * ------------------------------------------------------------------------------------------- */

/* z_desc may be NULL (no residual). */
TSR_API tsrStatus_t tsrGetConvolutionBiasActivationForwardWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t z_desc,
    tsrTensorDescriptor_t bias_desc, tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc,
    tsrAlgo_t algo, size_t* bytes);

TSR_API tsrStatus_t tsrGetConvolutionBiasActivationForwardAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t z_desc,
    tsrTensorDescriptor_t bias_desc, tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[]);

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias), computed in f32 and rounded once to y's
 * type. z is optional: z_desc and z both NULL means no residual. When given, z has y's dims and
 * dtype and may alias y (z == y with equal strides, as in cuDNN); otherwise it must not overlap
 * y. bias is 1,K,1,... with y's dtype. act is any activation mode (identity, relu, ... swish).
 * y is never read except through an aliasing z.
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL,
 * NOT_SUPPORTED_NO_KERNEL with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrConvolutionBiasActivationForward(
    tsrHandle_t handle, float alpha1, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t w_desc, const void* w, tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
    void* workspace, size_t workspace_size, float alpha2, tsrTensorDescriptor_t z_desc,
    const void* z, tsrTensorDescriptor_t bias_desc, const void* bias,
    tsrActivationDescriptor_t act, tsrTensorDescriptor_t y_desc, void* y);

/* ---------------------------------------------------------------------------------------------
 * int8 forward (TSR_OP_CONVOLUTION_FORWARD with x and w TSR_DATA_INT8)
 *
 * acc[n,k,...] = sum over c and the window of x * w, exact in int32 (conv's compute_type must
 * be TSR_DATA_INT32). Then, in f32,
 *     v = alpha * scale[k] * acc + beta * y
 * where scale[k] is scales[0] for scale_count 1 (per tensor) or scales[k] for scale_count K
 * (per output channel), and
 *     y = v                                      for y TSR_DATA_FLOAT,
 *     y = saturate(round_half_to_even(v))        for y TSR_DATA_INT8 or TSR_DATA_INT32.
 * y is not read when beta is 0. tsrConvolutionForward on int8 tensors is this call with
 * scale_count 0 (every scale 1).
 * ------------------------------------------------------------------------------------------- */

TSR_API tsrStatus_t tsrGetConvolutionForwardQuantizedWorkspaceSize(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
    tsrConvolutionDescriptor_t conv, int scale_count, tsrTensorDescriptor_t y_desc,
    tsrAlgo_t algo, size_t* bytes);

/* scales: scale_count finite floats in host memory (read before the call returns); scale_count
 * is 1 or K (y's channels). Errors: BAD_PARAM_* naming the argument (x or w not int8, y not
 * s8/s32/f32, compute_type not s32, a bad scale_count or scale), BAD_PARAM_WORKSPACE_TOO_SMALL,
 * NOT_SUPPORTED_NO_KERNEL, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrConvolutionForwardQuantized(
    tsrHandle_t handle, float alpha, tsrTensorDescriptor_t x_desc, const void* x,
    tsrTensorDescriptor_t w_desc, const void* w, tsrConvolutionDescriptor_t conv,
    int scale_count, const float scales[], tsrAlgo_t algo, void* workspace,
    size_t workspace_size, float beta, tsrTensorDescriptor_t y_desc, void* y);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_CONVOLUTION_H */
