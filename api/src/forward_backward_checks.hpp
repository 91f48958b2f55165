// Checks and dispatch shared by the element-wise-shaped forward/backward operations (activation,
// LRN, pooling, softmax). Their calls take the same tensors (x, y forward; y, dy, x, dx backward),
// the same alpha/beta blend and argument structs of one layout, so the checks are written once
// here and every message stays word for word what each operation reported on its own. Each helper
// checks in the order the operations always did; what differs per operation (its descriptor, its
// shape rules, where in the sequence it compares shapes) stays in its own file.
#pragma once

#include "dispatch.hpp"
#include "validation.hpp"

namespace tessera::api {

// alpha and beta are finite ("<fn>: alpha is not finite").
tsrStatus_t check_scalars(const char* fn, float alpha, float beta);

// A floating tensor: f32, f16 or bf16.
tsrStatus_t check_floating(const char* fn, const char* name, const tsrpTensor& t);

// The descriptors of a forward call exist and were set: x_desc, then y_desc.
tsrStatus_t check_forward_tensors(const char* fn, tsrTensorDescriptor_t x_desc,
                                  tsrTensorDescriptor_t y_desc);

// The descriptors of a backward call exist and were set: y_desc, dy_desc, x_desc, dx_desc.
tsrStatus_t check_backward_tensors(const char* fn, tsrTensorDescriptor_t y_desc,
                                   tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc,
                                   tsrTensorDescriptor_t dx_desc);

// y_desc, dy_desc and dx_desc each have x_desc's dims and data type (x first in every message).
tsrStatus_t check_backward_shapes_as_x(const char* fn, tsrTensorDescriptor_t y_desc,
                                       tsrTensorDescriptor_t dy_desc, tsrTensorDescriptor_t x_desc,
                                       tsrTensorDescriptor_t dx_desc);

// The data pointers and blend of a forward call: x, y not NULL, then alpha, beta finite.
tsrStatus_t check_forward_data(const char* fn, const void* x, const void* y, float alpha,
                               float beta);

// The data pointers and blend of a backward call: y, dy, x, dx not NULL, then alpha, beta finite.
tsrStatus_t check_backward_data(const char* fn, const void* y, const void* dy, const void* x,
                                const void* dx, float alpha, float beta);

// Copies a forward call's tensors into the problem (problems name them x and y).
template <class Problem>
void fill_forward_tensors(tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc,
                          Problem* p) {
  p->x = x_desc->tensor;
  p->y = y_desc->tensor;
}

// Copies a backward call's tensors into the problem.
template <class Problem>
void fill_backward_tensors(tsrTensorDescriptor_t y_desc, tsrTensorDescriptor_t dy_desc,
                           tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t dx_desc,
                           Problem* p) {
  p->x = x_desc->tensor;
  p->y = y_desc->tensor;
  p->dy = dy_desc->tensor;
  p->dx = dx_desc->tensor;
}

// Fills the operation's argument struct (all four share one layout: x, y_in, y, dy, dx, alpha,
// beta) for a forward call and dispatches it. A template, not a cast to one struct, so each
// operation keeps its own ABI type.
template <class Args>
tsrStatus_t dispatch_forward(tsrContext& handle, const char* fn, int op, const void* problem,
                             tsrAlgo_t algo, const void* x, void* y, float alpha, float beta,
                             describe_fn describe = nullptr) {
  Args args{};
  args.struct_size = sizeof(args);
  args.x = x;
  args.y = y;
  args.alpha = alpha;
  args.beta = beta;
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = problem;
  call.args = &args;
  call.algo = algo;
  call.describe = describe;
  return dispatch(handle, call);
}

// The same for a backward call; y is the forward output (y_in). x may be NULL for operations
// whose backward does not take it (softmax), which leaves it as the zeroed struct had it.
template <class Args>
tsrStatus_t dispatch_backward(tsrContext& handle, const char* fn, int op, const void* problem,
                              tsrAlgo_t algo, const void* y, const void* dy, const void* x,
                              void* dx, float alpha, float beta, describe_fn describe = nullptr) {
  Args args{};
  args.struct_size = sizeof(args);
  args.x = x;
  args.y_in = y;
  args.dy = dy;
  args.dx = dx;
  args.alpha = alpha;
  args.beta = beta;
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = problem;
  call.args = &args;
  call.algo = algo;
  call.describe = describe;
  return dispatch(handle, call);
}

}  // namespace tessera::api
