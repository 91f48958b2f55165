/* Tessera C API: matmul. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_MATMUL_H
#define TESSERA_TESSERA_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Matmul: batched C = epilogue(alpha * A @ B, bias, beta * C), cuBLASLt's matmul as a cuDNN-style
 * call.
 *
 * Shapes. A is [batch..., M, K], B is [batch..., K, N], C is [batch..., M, N]: three tensor
 * descriptors of one rank, 2 to TSR_MAX_DIMS dims. Each batch dim of A and of B is 1 (broadcast)
 * or C's. A transpose is only a matter of strides: a column-major (transposed) A is A with its
 * last two strides swapped. The bias (optional) has C's rank and each dim 1 or C's: [1..., 1, N]
 * is a per-column (per output feature) bias, [1..., M, N] a full matrix, [1..., M, 1] per row.
 *
 * Types (A and B always share one):
 *   A, B     C           compute_type     bias
 *   f32      f32         FLOAT            C's type
 *   f16      f16 or f32  FLOAT            C's type or f32
 *   bf16     bf16 or f32 FLOAT            C's type or f32
 *   s8       s32 or f32  INT32            C's type or f32
 * Products are accumulated in the compute type; the epilogue is evaluated in f32 and C rounded
 * once (s32 C: to nearest even, saturated). An s8 x s8 -> f32 matmul takes alpha as the
 * dequantization scale.
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrMatmulStruct* tsrMatmulDescriptor_t;

/* Where beta * C enters the epilogue (cuBLASLt's D = act(alpha * A @ B + beta * C + bias) is
 * TSR_MATMUL_BLEND_BEFORE_ACTIVATION). Both evaluate, per element, in f32:
 *   t = alpha * sum_k A[.., m, k] * B[.., k, n]
 *   t = t + bias[..]                              (when a bias is given)
 *   BLEND_AFTER_ACTIVATION:  C = act(t) + beta * C   (a residual added after the activation)
 *   BLEND_BEFORE_ACTIVATION: C = act(t + beta * C)   (cuBLASLt's order)
 * With no activation (identity) the two are the same. C is not read when beta is 0. */
typedef enum {
  TSR_MATMUL_BLEND_AFTER_ACTIVATION = 0, /* the default */
  TSR_MATMUL_BLEND_BEFORE_ACTIVATION = 1,
  TSR_ENUM_RANGE(TSR_MATMUL_EPILOGUE_ORDER)
} tsrMatmulEpilogueOrder_t;

/* A new descriptor is not set: tsrSetMatmulDescriptor must be called before use. */
TSR_API tsrStatus_t tsrCreateMatmulDescriptor(tsrMatmulDescriptor_t* desc);
/* NULL is accepted and does nothing. */
TSR_API tsrStatus_t tsrDestroyMatmulDescriptor(tsrMatmulDescriptor_t desc);

/* compute_type: TSR_DATA_FLOAT (f32/f16/bf16 inputs) or TSR_DATA_INT32 (s8 inputs).
 * act: the epilogue's activation, copied (later changes to act do not affect desc); NULL means
 * none (identity). order: where beta * C enters, see tsrMatmulEpilogueOrder_t.
 * Errors: BAD_PARAM_NULL_POINTER (desc), BAD_PARAM_OUT_OF_RANGE (compute_type, order),
 * BAD_PARAM_NOT_INITIALIZED (act created but never set). */
TSR_API tsrStatus_t tsrSetMatmulDescriptor(tsrMatmulDescriptor_t desc, tsrDataType_t compute_type,
                                           tsrActivationDescriptor_t act,
                                           tsrMatmulEpilogueOrder_t order);

/* Reads a descriptor back; act_mode is TSR_ACTIVATION_IDENTITY (coef 0) when it has none.
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_NOT_INITIALIZED. */
TSR_API tsrStatus_t tsrGetMatmulDescriptor(tsrMatmulDescriptor_t desc, tsrDataType_t* compute_type,
                                           tsrActivationMode_t* act_mode, double* act_coef,
                                           tsrMatmulEpilogueOrder_t* order);

/* Candidates in preference order, the ones that can run first, each with its status, workspace
 * and determinism (time_ms is -1). bias_desc may be NULL (no bias). returned_count receives how
 * many were written. Errors: as tsrMatmul for the descriptors, BAD_PARAM_OUT_OF_RANGE
 * (requested_count < 1, perf[i].struct_size), BAD_PARAM_NULL_POINTER. */
TSR_API tsrStatus_t tsrGetMatmulAlgorithm(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc,
                                          tsrTensorDescriptor_t a_desc,
                                          tsrTensorDescriptor_t b_desc,
                                          tsrTensorDescriptor_t bias_desc,
                                          tsrTensorDescriptor_t c_desc, int requested_count,
                                          int* returned_count, tsrAlgoPerf_t perf[]);

/* Workspace the algorithm (TSR_ALGO_AUTO: the one the handle would choose) needs for this
 * problem, for any alpha and beta. bias_desc may be NULL.
 * Errors: as tsrMatmul for the descriptors, NOT_SUPPORTED_NO_KERNEL with every kernel's reason. */
TSR_API tsrStatus_t tsrGetMatmulWorkspaceSize(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc,
                                              tsrTensorDescriptor_t a_desc,
                                              tsrTensorDescriptor_t b_desc,
                                              tsrTensorDescriptor_t bias_desc,
                                              tsrTensorDescriptor_t c_desc, tsrAlgo_t algo,
                                              size_t* bytes);

/* C = epilogue(alpha * A @ B, bias, beta * C) as matmul_desc orders it (see
 * tsrMatmulEpilogueOrder_t); C is not read when beta is 0. bias_desc and bias are both NULL for
 * no bias. workspace: at least tsrGetMatmulWorkspaceSize bytes, or NULL and 0 to use the
 * handle's pool. C must not overlap A, B or bias.
 * Errors: BAD_PARAM_NULL_POINTER (a pointer, a descriptor), BAD_PARAM_NOT_INITIALIZED,
 * BAD_PARAM_SHAPE_MISMATCH (ranks, M/N/K, batch dims, bias dims, data types or compute type that
 * do not agree; the message gives the dims), BAD_PARAM_OUT_OF_RANGE (a non-finite alpha or beta,
 * a rank outside 2..8, C with a zero stride, an algo of another operation),
 * BAD_PARAM_WORKSPACE_TOO_SMALL, NOT_SUPPORTED_NO_KERNEL with every kernel's reason,
 * EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrMatmul(tsrHandle_t handle, tsrMatmulDescriptor_t matmul_desc, tsrAlgo_t algo,
                              float alpha, tsrTensorDescriptor_t a_desc, const void* a,
                              tsrTensorDescriptor_t b_desc, const void* b,
                              tsrTensorDescriptor_t bias_desc, const void* bias, float beta,
                              tsrTensorDescriptor_t c_desc, void* c, void* workspace,
                              size_t workspace_size);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_MATMUL_H */
