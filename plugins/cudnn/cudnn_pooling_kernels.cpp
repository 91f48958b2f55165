// Pooling forward and backward (cudnnPoolingForward / cudnnPoolingBackward), 2-D and 3-D.
//
// cuDNN pads symmetrically. A problem with pad_before != pad_after is still exactly cuDNN's when
// cuDNN, padded by pad_before on both sides, yields the same output size: every window then
// starts where Tessera's starts and covers the same elements (the floor in the output size keeps
// the last window inside Tessera's padding), so max, average-including-padding (window size
// divisor) and average-excluding-padding (count of real elements) agree. Other asymmetric
// problems are declined: padding x with zeros would change max pooling and the exclude-padding
// counts, so the convolution's staging trick does not apply.
//
// Max pooling uses CUDNN_POOLING_MAX_DETERMINISTIC, so both kernels are deterministic; its
// backward gives a window's gradient to one maximum, which the conformance test's tie rule
// (the first in window order) checks on the GPU.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

#include <climits>

namespace tessera::cudnn_plugin {
namespace {

struct pooling_prepared : prepared_problem {
  pooling_descriptor pooling;
  tensor_descriptor x, y, dy, dx;
};

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

std::string pooling_support(const tsrpPoolingProblem& p, bool backward) {
  if (p.spatial_dims != 2 && p.spatial_dims != 3)
    return std::to_string(p.spatial_dims) + " spatial dims (cuDNN pools 2-D and 3-D)";
  if (p.mode != TSRP_POOLING_MAX && p.mode != TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING &&
      p.mode != TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)
    return "unknown pooling mode " + std::to_string(p.mode);
  if (!floating(p.x.data_type)) return std::string(data_type_name(p.x.data_type)) + " pooling not supported";
  if (p.x.ndims != p.spatial_dims + 2 || p.y.ndims != p.x.ndims) return "x and y must have spatial_dims + 2 dims";
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (p.window[i] > INT_MAX || p.stride[i] > INT_MAX || p.pad_before[i] > INT_MAX)
      return "window, stride or padding exceeds cuDNN's int range";
    // cuDNN's output size with pad_before on both sides must be Tessera's (see the file comment).
    const int64_t in = p.x.dims[2 + i];
    const int64_t symmetric_out = (in + 2 * p.pad_before[i] - p.window[i]) / p.stride[i] + 1;
    if (p.pad_before[i] != p.pad_after[i] && symmetric_out != p.y.dims[2 + i])
      return "asymmetric padding (before " + std::to_string(p.pad_before[i]) + ", after " +
             std::to_string(p.pad_after[i]) + ") that cuDNN's symmetric padding cannot express";
  }
  if (backward) {
    // cuDNN reads y and dy (and x and dx) through one layout each.
    if (!same_layout(p.y, p.dy)) return "y and dy in different layouts";
    if (!same_layout(p.x, p.dx)) return "x and dx in different layouts";
  }
  cudnn_tensor_shape shape;
  for (const tsrpTensor* t : {&p.x, &p.y}) {
    std::string why = cudnn_shape_of(*t, 4, &shape);
    if (!why.empty()) return why;
  }
  return {};
}

std::unique_ptr<pooling_prepared> prepare_pooling(const tsrpPoolingProblem& p, bool backward) {
  auto prepared = std::make_unique<pooling_prepared>();
  int window[3], padding[3], stride[3];
  for (int i = 0; i < p.spatial_dims; ++i) {
    window[i] = static_cast<int>(p.window[i]);
    padding[i] = static_cast<int>(p.pad_before[i]);
    stride[i] = static_cast<int>(p.stride[i]);
  }
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  if (p.mode == TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING) mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  if (p.mode == TSRP_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) mode = CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  const cudnnNanPropagation_t nan = p.nan_propagation == TSRP_PROPAGATE_NAN ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
  prepared->pooling = new_pooling_descriptor();
  check_cudnn(cudnn().cudnnSetPoolingNdDescriptor(prepared->pooling, mode, nan, p.spatial_dims, window, padding, stride),
              "cudnnSetPoolingNdDescriptor");
  prepared->x = make_tensor_descriptor(p.x);
  prepared->y = make_tensor_descriptor(p.y);
  if (backward) {
    prepared->dy = make_tensor_descriptor(p.dy);
    prepared->dx = make_tensor_descriptor(p.dx);
  }
  return prepared;
}

struct pooling_forward {
  using problem_type = tsrpPoolingProblem;
  using args_type = tsrpPoolingArgs;
  using prepared_type = pooling_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return pooling_support(p, false); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_pooling(p, false);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    check_cudnn(cudnn().cudnnPoolingForward(handle, d.pooling, &a.alpha, d.x, a.x, &a.beta, d.y, a.y),
                "cudnnPoolingForward");
  }
};

struct pooling_backward {
  using problem_type = tsrpPoolingProblem;
  using args_type = tsrpPoolingArgs;
  using prepared_type = pooling_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return pooling_support(p, true); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_pooling(p, true);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y_in, "y");
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    check_cudnn(cudnn().cudnnPoolingBackward(handle, d.pooling, &a.alpha, d.y, a.y_in, d.dy, a.dy, d.x, a.x,
                                             &a.beta, d.dx, a.dx),
                "cudnnPoolingBackward");
  }
};

const kernel_spec forward_specs[] = {
    {"cudnn_pool_fwd", TSRP_OP_POOLING_FORWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnPoolingForward (max: MAX_DETERMINISTIC)", 0},
};
const kernel_spec backward_specs[] = {
    {"cudnn_pool_bwd", TSRP_OP_POOLING_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnPoolingBackward (max: MAX_DETERMINISTIC, routes through the forward y)", 0},
};

}  // namespace

void add_pooling_kernels(kernel_list& list) {
  add_kernels<pooling_forward>(list, forward_specs);
  add_kernels<pooling_backward>(list, backward_specs);
}

}  // namespace tessera::cudnn_plugin
