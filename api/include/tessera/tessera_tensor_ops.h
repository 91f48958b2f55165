/* Tessera C API: add/op/scale/set/transform/reduce tensor. Included by tessera.h; include that.
 *
 * cuDNN's tensor operations with Tessera's conventions: alpha/beta are floats by value, and in
 * every blend `dst = ... + beta * dst` dst is not read when beta is 0. Tensors may have any
 * strides; only the elements the strides address are read or written. Calls without a
 * workspace argument take scratch memory from the handle's pool (tsrSetWorkspaceLimit).
 * Common errors: BAD_PARAM_* naming the argument and value (nothing is written then),
 * NOT_SUPPORTED_NO_KERNEL with every kernel's reason, EXECUTION_FAILED_*. */
#ifndef TESSERA_TESSERA_TENSOR_OPS_H
#define TESSERA_TESSERA_TENSOR_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TSR_OP_TENSOR_ADD = 0,
  TSR_OP_TENSOR_MUL = 1,
  TSR_OP_TENSOR_MIN = 2,
  TSR_OP_TENSOR_MAX = 3,
  TSR_OP_TENSOR_SQRT = 4, /* unary: sqrt(alpha1 * a) */
  TSR_OP_TENSOR_NOT = 5, /* unary: 1 - alpha1 * a (logical not of 0/1 values, as cuDNN) */
  TSR_ENUM_RANGE(TSR_OP_TENSOR_OP)
} tsrOpTensorOp_t;

/* Whether MIN/MAX (op tensor and reductions) return NaN when an input is NaN. */
/* tsrNanPropagation_t is defined in tessera.h (shared by several families). */

typedef enum {
  TSR_REDUCE_TENSOR_ADD = 0,
  TSR_REDUCE_TENSOR_MUL = 1,
  TSR_REDUCE_TENSOR_MIN = 2,
  TSR_REDUCE_TENSOR_MAX = 3,
  TSR_REDUCE_TENSOR_AMAX = 4,  /* max |a| */
  TSR_REDUCE_TENSOR_AVG = 5,
  TSR_REDUCE_TENSOR_NORM1 = 6, /* sum |a| */
  TSR_REDUCE_TENSOR_NORM2 = 7, /* sqrt(sum a^2) */
  TSR_ENUM_RANGE(TSR_REDUCE_TENSOR_OP)
} tsrReduceTensorOp_t;

typedef enum {
  TSR_REDUCE_TENSOR_NO_INDICES = 0,
  TSR_REDUCE_TENSOR_FLATTENED_INDICES = 1, /* MIN, MAX and AMAX only */
  TSR_ENUM_RANGE(TSR_REDUCE_TENSOR_INDICES)
} tsrReduceTensorIndices_t;

typedef enum {
  TSR_32BIT_INDICES = 0, /* uint32_t */
  TSR_ENUM_RANGE(TSR_INDICES_TYPE)
} tsrIndicesType_t;

/* ---------------------------------------------------------------------------------------------
 * Add, scale, set, transform
 * ------------------------------------------------------------------------------------------- */

/* c = alpha * a + beta * c, a broadcast to c: a has c's number of dims and each dim of a is 1
 * or c's (the bias add). Types may differ (computed in f32, rounded once to c's type).
 * Errors: BAD_PARAM_SHAPE_MISMATCH naming the dim, BAD_PARAM_OUT_OF_RANGE (alpha, beta not
 * finite). */
TSR_API tsrStatus_t tsrAddTensor(tsrHandle_t handle, float alpha, tsrTensorDescriptor_t a_desc,
                                 const void* a, float beta, tsrTensorDescriptor_t c_desc, void* c);

/* y = alpha * y in place (y is read even when alpha is 0, so NaN stays NaN, as in cuDNN).
 * Errors: BAD_PARAM_OUT_OF_RANGE (alpha not finite). */
TSR_API tsrStatus_t tsrScaleTensor(tsrHandle_t handle, tsrTensorDescriptor_t y_desc, void* y,
                                   float alpha);

/* Every element of y = value, converted to y's type (through f32 for f32/f16/bf16/int8; exactly
 * for int32; integers round to nearest and saturate). y is never read.
 * Errors: BAD_PARAM_OUT_OF_RANGE (a non-finite value for an integer y). */
TSR_API tsrStatus_t tsrSetTensor(tsrHandle_t handle, tsrTensorDescriptor_t y_desc, void* y,
                                 double value);

/* y = alpha * x + beta * y: same dims, any strides and any types on each side: the layout and
 * precision converter (NCHW f32 -> NHWC f16, ...). y must not overlap x.
 * Errors: BAD_PARAM_SHAPE_MISMATCH (dims differ), BAD_PARAM_OUT_OF_RANGE (alpha, beta). */
TSR_API tsrStatus_t tsrTransformTensor(tsrHandle_t handle, float alpha,
                                       tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                       tsrTensorDescriptor_t y_desc, void* y);

/* ---------------------------------------------------------------------------------------------
 * Op tensor: c = op(alpha1 * a, alpha2 * b) + beta * c
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrOpTensorStruct* tsrOpTensorDescriptor_t;

TSR_API tsrStatus_t tsrCreateOpTensorDescriptor(tsrOpTensorDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyOpTensorDescriptor(tsrOpTensorDescriptor_t desc);
/* compute_type is the arithmetic's type: TSR_DATA_FLOAT (the only one for now: half and bf16
 * data are computed in f32, as cuDNN does). Errors: BAD_PARAM_OUT_OF_RANGE (op, compute_type,
 * nan_propagation). */
TSR_API tsrStatus_t tsrSetOpTensorDescriptor(tsrOpTensorDescriptor_t desc, tsrOpTensorOp_t op,
                                             tsrDataType_t compute_type,
                                             tsrNanPropagation_t nan_propagation);
TSR_API tsrStatus_t tsrGetOpTensorDescriptor(tsrOpTensorDescriptor_t desc, tsrOpTensorOp_t* op,
                                             tsrDataType_t* compute_type,
                                             tsrNanPropagation_t* nan_propagation);

/* c = op(alpha1 * a, alpha2 * b) + beta * c for ADD, MUL, MIN, MAX; c = op(alpha1 * a) + beta * c
 * for SQRT and NOT (b_desc and b are then ignored and may be NULL). a has c's dims; b has c's
 * number of dims, each 1 or c's (broadcast). Types of a, b and c may differ. c may alias a when
 * a_desc and c_desc describe the same tensor.
 * Errors: BAD_PARAM_SHAPE_MISMATCH naming the tensor and dim, BAD_PARAM_OUT_OF_RANGE (a scalar
 * not finite), BAD_PARAM_NOT_INITIALIZED (op_desc never set). */
TSR_API tsrStatus_t tsrOpTensor(tsrHandle_t handle, tsrOpTensorDescriptor_t op_desc, float alpha1,
                                tsrTensorDescriptor_t a_desc, const void* a, float alpha2,
                                tsrTensorDescriptor_t b_desc, const void* b, float beta,
                                tsrTensorDescriptor_t c_desc, void* c);

/* ---------------------------------------------------------------------------------------------
 * Reduce tensor: c = alpha * reduce(a) + beta * c over the dims where c is 1 and a is not
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrReduceTensorStruct* tsrReduceTensorDescriptor_t;

TSR_API tsrStatus_t tsrCreateReduceTensorDescriptor(tsrReduceTensorDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc);
/* compute_type: TSR_DATA_FLOAT (accumulation in f32). indices: FLATTENED only with MIN, MAX or
 * AMAX. Errors: BAD_PARAM_OUT_OF_RANGE naming the argument. */
TSR_API tsrStatus_t tsrSetReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc,
                                                 tsrReduceTensorOp_t op, tsrDataType_t compute_type,
                                                 tsrNanPropagation_t nan_propagation,
                                                 tsrReduceTensorIndices_t indices,
                                                 tsrIndicesType_t indices_type);
TSR_API tsrStatus_t tsrGetReduceTensorDescriptor(tsrReduceTensorDescriptor_t desc,
                                                 tsrReduceTensorOp_t* op,
                                                 tsrDataType_t* compute_type,
                                                 tsrNanPropagation_t* nan_propagation,
                                                 tsrReduceTensorIndices_t* indices,
                                                 tsrIndicesType_t* indices_type);

/* Bytes of indices tsrReduceTensor writes: 4 per element of c with FLATTENED_INDICES, else 0. */
TSR_API tsrStatus_t tsrGetReductionIndicesSize(tsrHandle_t handle,
                                               tsrReduceTensorDescriptor_t reduce_desc,
                                               tsrTensorDescriptor_t a_desc,
                                               tsrTensorDescriptor_t c_desc, size_t* bytes);

/* Workspace the algorithm (TSR_ALGO_AUTO: the one the handle would choose) needs. */
TSR_API tsrStatus_t tsrGetReductionWorkspaceSize(tsrHandle_t handle,
                                                 tsrReduceTensorDescriptor_t reduce_desc,
                                                 tsrTensorDescriptor_t a_desc,
                                                 tsrTensorDescriptor_t c_desc, tsrAlgo_t algo,
                                                 size_t* bytes);

/* c = alpha * reduce(a) + beta * c. c has a's number of dims, each 1 (reduced) or a's. With
 * FLATTENED_INDICES, indices receives one uint32 per element of c (row-major over c's dims): the
 * position of the chosen element within its reduced slice of a (row-major over the reduced
 * dims), the first one on ties; indices_size must be at least tsrGetReductionIndicesSize. A
 * workspace of NULL/0 uses the handle's pool.
 * Errors: BAD_PARAM_SHAPE_MISMATCH, BAD_PARAM_NULL_POINTER (indices missing when asked for),
 * BAD_PARAM_WORKSPACE_TOO_SMALL, BAD_PARAM_OUT_OF_RANGE (indices_size too small, a scalar). */
TSR_API tsrStatus_t tsrReduceTensor(tsrHandle_t handle, tsrReduceTensorDescriptor_t reduce_desc,
                                    tsrAlgo_t algo, void* indices, size_t indices_size,
                                    void* workspace, size_t workspace_size, float alpha,
                                    tsrTensorDescriptor_t a_desc, const void* a, float beta,
                                    tsrTensorDescriptor_t c_desc, void* c);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_TENSOR_OPS_H */
