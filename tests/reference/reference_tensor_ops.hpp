// The naive tensor operations (add, op, scale, set, transform, reduce tensor): the ground truth
// their kernels are tested against. Plain loops in double over float arrays at the problem's
// strides; every "dst = ... + beta * dst" reads dst only when beta != 0.
#ifndef TESSERA_REFERENCE_REFERENCE_TENSOR_OPS_HPP
#define TESSERA_REFERENCE_REFERENCE_TENSOR_OPS_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tolerance.hpp"

namespace tessera::reference {

// c = alpha * a + beta * c, a broadcast along its size-1 dims. False with a message when a is not
// broadcastable to c.
bool add_tensor(const tsrpAddTensorProblem& problem, const float* a, double alpha, double beta,
                float* c, std::string* error);

// c = op(alpha1 * a, alpha2 * b) + beta * c; unary ops (sqrt, not = 1 - x) ignore b.
bool op_tensor(const tsrpOpTensorProblem& problem, const float* a, const float* b, double alpha1,
               double alpha2, double beta, float* c, std::string* error);

// y = alpha * y.
void scale_tensor(const tsrpScaleTensorProblem& problem, double alpha, float* y);

// y = value at every addressed element.
void set_tensor(const tsrpSetTensorProblem& problem, double value, float* y);

// y = alpha * x + beta * y (same dims).
bool transform_tensor(const tsrpTransformTensorProblem& problem, const float* x, double alpha,
                      double beta, float* y, std::string* error);

// c = alpha * reduce(a) + beta * c over the dims where c is 1 and a is not. When `indices` is
// not null (min, max, amax), it receives per element of c (row-major) the position of the
// first extreme element within its slice (row-major over the reduced dims). NaN inputs are not
// expected here.
bool reduce_tensor(const tsrpReduceTensorProblem& problem, const float* a, double alpha,
                   double beta, float* c, std::vector<uint32_t>* indices, std::string* error);

// Number of elements of a reduced into each element of c.
int64_t reduction_length(const tsrpReduceTensorProblem& problem);

// Tolerances. With the integer fills the f32 arithmetic of a kernel is exact except for
// averages, square roots and the final rounding, so this is the convolution's rule (a base
// per type that grows like sqrt(length) beyond 256 terms): elementwise ops have length 1.
//   f32 1e-6, f16 1e-3, bf16 8e-3, int8/int32 0 (integer results are exact and saturate alike).
tolerance tensor_op_tolerance(int32_t data_type, int64_t reduction_length);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_TENSOR_OPS_HPP
