/* Tessera plugin ABI 2: matmul. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_MATMUL_H
#define TESSERA_PLUGIN_ABI_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Values match tsrMatmulEpilogueOrder_t. With t = alpha * A @ B (+ bias):
 *   BLEND_AFTER_ACTIVATION:  C = act(t) + beta * C
 *   BLEND_BEFORE_ACTIVATION: C = act(t + beta * C)   (cuBLASLt's order) */
typedef enum {
  TSRP_MATMUL_BLEND_AFTER_ACTIVATION = 0,
  TSRP_MATMUL_BLEND_BEFORE_ACTIVATION = 1
} tsrpMatmulEpilogueOrder_t;

/* TSRP_OP_MATMUL uses tsrpMatmulProblem and tsrpMatmulArgs.
 *
 * The host has checked that the shapes agree: a, b and c have one rank (2 to TSRP_MAX_DIMS);
 * a is [batch..., M, K], b [batch..., K, N], c [batch..., M, N]; each batch dim of a and b is 1
 * or c's; a and b share a data type; when has_bias, bias has c's rank and each dim 1 or c's.
 * Transposes are in the strides. Every value of the epilogue is computed in f32 (the compute
 * type for the products) and c is rounded once. */
typedef struct {
  size_t struct_size;
  tsrpTensor a;             /* [batch..., M, K] */
  tsrpTensor b;             /* [batch..., K, N] */
  tsrpTensor c;             /* [batch..., M, N], read (when beta != 0) and written */
  int32_t has_bias;         /* 1 when bias is given (then args.bias is not NULL), else 0 */
  tsrpTensor bias;          /* broadcast to c; zeroed when has_bias is 0 */
  int32_t compute_type;     /* tsrpDataType_t of the products' accumulation: FLOAT, or INT32 for s8 */
  int32_t math_mode;        /* tsrpMathMode_t of the handle */
  int32_t activation_mode;  /* tsrpActivationMode_t of the epilogue; IDENTITY for none */
  double activation_coef;   /* its parameter, as in tsrpActivationProblem */
  int32_t epilogue_order;   /* tsrpMatmulEpilogueOrder_t */
} tsrpMatmulProblem;

/* C = epilogue(alpha * A @ B, bias, beta * C). When beta is 0, c is not read (it may hold NaN). */
typedef struct {
  size_t struct_size;
  const void* a;
  const void* b;
  const void* bias; /* NULL when the problem has no bias */
  void* c;
  float alpha;
  float beta;
} tsrpMatmulArgs;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_MATMUL_H */
