// How the three tensor-operation files meet: tensor_op_kernels.cu owns the elementwise engine
// (add, op, scale and set tensor, and transform's general fallback) and add_tensor_op_kernels;
// tensor_transform_kernels.cu and tensor_reduce_kernels.cu add their operations' kernels.
#pragma once

#include "cuda_context.hpp"
#include "kernel_glue.hpp"

#include <tessera/plugin_abi.h>

#include <cstdint>

namespace tessera::cuda::tensor_ops {

constexpr int elementwise_threads = 256;

// What the engine computes per element, x = alpha1 * a and y = alpha2 * b:
//   copy x;  add x + y;  mul x * y;  min/max (NaN propagated only when asked);  sqrt(x);  1 - x.
// Then c = that + beta * c, with c not read when beta is 0.
enum elementwise_op : int32_t {
  elementwise_copy = 0,
  elementwise_add = 1,
  elementwise_mul = 2,
  elementwise_min = 3,
  elementwise_max = 4,
  elementwise_sqrt = 5,
  elementwise_not = 6
};

constexpr bool is_binary(int32_t op) { return op >= elementwise_add && op <= elementwise_max; }

// One call of the engine. a has c's dims or is broadcast to them along its size-1 dims, as is b
// (nullptr for ops that read only a). c may be a itself (same tensor, same pointer): every
// element is read and then written by one thread. The caller has checked shapes, types and that
// c's strides do not overlap.
struct elementwise_request {
  int32_t op = elementwise_copy;
  bool propagate_nan = false;
  const tsrpTensor* a = nullptr;
  const void* a_data = nullptr;
  const tsrpTensor* b = nullptr;
  const void* b_data = nullptr;
  const tsrpTensor* c = nullptr;
  void* c_data = nullptr;
  float alpha1 = 1.0f;
  float alpha2 = 1.0f;
  float beta = 0.0f;
};

// Enqueues the request on ctx.stream(): 16-byte vectors along the innermost dim where every
// operand is contiguous or broadcast there, a flat loop when everything merges into one dim,
// else a strided walk. tensor_op_kernels.cu.
void launch_elementwise(cuda_context& ctx, const elementwise_request& request);

void add_transform_kernels(kernel_list& out);  // tensor_transform_kernels.cu
void add_reduce_kernels(kernel_list& out);     // tensor_reduce_kernels.cu

}  // namespace tessera::cuda::tensor_ops
