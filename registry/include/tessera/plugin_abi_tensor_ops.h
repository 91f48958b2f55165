/* Tessera plugin ABI 2: add/op/scale/set/transform/reduce tensor. Included by plugin_abi.h (a plugin includes only that).
 *
 * Which structs each operation uses (`problem` / `args` of tsrpKernel):
 *   TSRP_OP_ADD_TENSOR        tsrpAddTensorProblem,       tsrpAddTensorArgs
 *   TSRP_OP_OP_TENSOR         tsrpOpTensorProblem,        tsrpOpTensorArgs
 *   TSRP_OP_SCALE_TENSOR      tsrpScaleTensorProblem,     tsrpScaleTensorArgs
 *   TSRP_OP_SET_TENSOR        tsrpSetTensorProblem,       tsrpSetTensorArgs
 *   TSRP_OP_TRANSFORM_TENSOR  tsrpTransformTensorProblem, tsrpTransformTensorArgs
 *   TSRP_OP_REDUCE_TENSOR     tsrpReduceTensorProblem,    tsrpReduceTensorArgs
 *
 * As everywhere in this ABI, a problem holds what a kernel may build once and cache (shapes,
 * types, modes); the arguments hold what changes per call (pointers and scalars). Tensors may
 * have any strides (including gaps); only the elements the strides address are read or written.
 * In every blend `dst = ... + beta * dst`, dst is not read when beta is 0 (it may hold NaN).
 */
#ifndef TESSERA_PLUGIN_ABI_TENSOR_OPS_H
#define TESSERA_PLUGIN_ABI_TENSOR_OPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values match tsrOpTensorOp_t. */
typedef enum {
  TSRP_OP_TENSOR_ADD = 0,
  TSRP_OP_TENSOR_MUL = 1,
  TSRP_OP_TENSOR_MIN = 2,
  TSRP_OP_TENSOR_MAX = 3,
  TSRP_OP_TENSOR_SQRT = 4, /* unary on a */
  TSRP_OP_TENSOR_NOT = 5   /* unary on a: 1 - x (logical not of 0/1 values, as cuDNN) */
} tsrpOpTensorOp_t;

/* tsrpNanPropagation_t is defined in plugin_abi.h (shared by several families). */

/* Values match tsrReduceTensorOp_t. */
typedef enum {
  TSRP_REDUCE_TENSOR_ADD = 0,
  TSRP_REDUCE_TENSOR_MUL = 1,
  TSRP_REDUCE_TENSOR_MIN = 2,
  TSRP_REDUCE_TENSOR_MAX = 3,
  TSRP_REDUCE_TENSOR_AMAX = 4,  /* max |x| */
  TSRP_REDUCE_TENSOR_AVG = 5,
  TSRP_REDUCE_TENSOR_NORM1 = 6, /* sum |x| */
  TSRP_REDUCE_TENSOR_NORM2 = 7  /* sqrt(sum x^2) */
} tsrpReduceTensorOp_t;

/* Values match tsrReduceTensorIndices_t. */
typedef enum {
  TSRP_REDUCE_TENSOR_NO_INDICES = 0,
  TSRP_REDUCE_TENSOR_FLATTENED_INDICES = 1
} tsrpReduceTensorIndices_t;

/* Values match tsrIndicesType_t. */
typedef enum { TSRP_32BIT_INDICES = 0 } tsrpIndicesType_t;

/* c = alpha * a + beta * c, a broadcast to c: a has c's number of dims and each of its dims is
 * 1 or c's (the host has checked). */
typedef struct {
  size_t struct_size;
  tsrpTensor a; /* input, broadcast along its size-1 dims */
  tsrpTensor c; /* input/output */
} tsrpAddTensorProblem;

typedef struct {
  size_t struct_size;
  const void* a;
  void* c;
  float alpha;
  float beta;
} tsrpAddTensorArgs;

/* c = op(alpha1 * a, alpha2 * b) + beta * c (binary ops), c = op(alpha1 * a) + beta * c (SQRT,
 * NOT). a has c's dims; b has c's number of dims and each of its dims is 1 or c's (broadcast).
 * For unary ops the host sets b to a copy of a and the kernel ignores b. Types of a, b and c
 * may differ; compute_type is the arithmetic's type. c may alias a when their tensors are
 * equal. */
typedef struct {
  size_t struct_size;
  int32_t op;              /* tsrpOpTensorOp_t */
  int32_t compute_type;    /* tsrpDataType_t the arithmetic runs in */
  int32_t nan_propagation; /* tsrpNanPropagation_t, for MIN and MAX */
  tsrpTensor a;            /* first input, c's dims */
  tsrpTensor b;            /* second input, broadcast to c (unused by unary ops) */
  tsrpTensor c;            /* input/output */
} tsrpOpTensorProblem;

typedef struct {
  size_t struct_size;
  const void* a;
  const void* b; /* NULL for unary ops */
  void* c;
  float alpha1; /* scales a */
  float alpha2; /* scales b */
  float beta;   /* blends c */
} tsrpOpTensorArgs;

/* y = alpha * y, in place. */
typedef struct {
  size_t struct_size;
  tsrpTensor y; /* input/output */
} tsrpScaleTensorProblem;

typedef struct {
  size_t struct_size;
  void* y;
  float alpha;
} tsrpScaleTensorArgs;

/* Every element of y the strides address = value, converted to y's type (round to nearest
 * even; integers saturate). y is never read. */
typedef struct {
  size_t struct_size;
  tsrpTensor y; /* output */
} tsrpSetTensorProblem;

typedef struct {
  size_t struct_size;
  void* y;
  double value; /* finite for integer y (the host has checked) */
} tsrpSetTensorArgs;

/* y = alpha * x + beta * y: same dims, any strides and types (the layout and precision
 * converter). */
typedef struct {
  size_t struct_size;
  tsrpTensor x; /* input */
  tsrpTensor y; /* input/output */
} tsrpTransformTensorProblem;

typedef struct {
  size_t struct_size;
  const void* x;
  void* y;
  float alpha;
  float beta;
} tsrpTransformTensorArgs;

/* c = alpha * reduce(a) + beta * c over the dims where c's dim is 1 and a's is not (c has a's
 * number of dims, each 1 or a's). With FLATTENED_INDICES (MIN, MAX and AMAX only), indices
 * receives, for each element of c in row-major order of c's dims, the position of the chosen
 * element of a within its reduced slice (row-major over the reduced dims); ties pick the
 * first. */
typedef struct {
  size_t struct_size;
  int32_t op;              /* tsrpReduceTensorOp_t */
  int32_t compute_type;    /* tsrpDataType_t the reduction accumulates in */
  int32_t nan_propagation; /* tsrpNanPropagation_t */
  int32_t indices;         /* tsrpReduceTensorIndices_t */
  int32_t indices_type;    /* tsrpIndicesType_t: uint32 indices */
  tsrpTensor a;            /* input */
  tsrpTensor c;            /* input/output: dims 1 where reduced */
} tsrpReduceTensorProblem;

typedef struct {
  size_t struct_size;
  const void* a;
  void* c;
  void* indices;       /* NULL unless the problem asks for indices */
  size_t indices_size; /* bytes at indices: at least 4 per element of c */
  float alpha;
  float beta;
} tsrpReduceTensorArgs;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_TENSOR_OPS_H */
