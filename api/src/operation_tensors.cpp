#include "operation_tensors.hpp"

#include "validation.hpp"

#include <cstddef>

namespace tessera::api {
namespace {

// Collects the buffers of one call; pointers that are NULL are left out (the operation does not
// use them, or the caller did not ask for them).
class buffer_list {
 public:
  explicit buffer_list(const void* args) : args_(args) {}

  void tensor(const char* name, size_t offset, const tsrpTensor& t, buffer_role role) {
    size_t bytes = 0;
    if (!tensor_bytes(t, &bytes)) return;  // validation rejected such tensors before dispatch
    add(name, offset, bytes, role, t.data_type, true);
  }
  // `elements` floats laid out like the tensor `layout` (normalization parameters).
  void floats(const char* name, size_t offset, const tsrpTensor& layout, buffer_role role) {
    size_t bytes = 0;
    if (!tensor_bytes(layout, &bytes)) return;
    add(name, offset, bytes, role, TSRP_DATA_FLOAT, false);
  }
  // Bytes without tensor descriptor: weight spaces (of the RNN's data type), indices, reserve
  // spaces (k_opaque: their content is the kernel's own business).
  void raw(const char* name, size_t offset, size_t bytes, buffer_role role, int32_t data_type) {
    add(name, offset, bytes, role, data_type, false);
  }
  std::vector<operation_buffer> take() { return std::move(list_); }

 private:
  void add(const char* name, size_t offset, size_t bytes, buffer_role role, int32_t data_type,
           bool has_own_descriptor) {
    if (!buffer_pointer(args_, offset) || bytes == 0) return;
    list_.push_back({name, offset, bytes, role, data_type, has_own_descriptor});
  }
  const void* args_;
  std::vector<operation_buffer> list_;
};

constexpr buffer_role in = buffer_role::input;
constexpr buffer_role out = buffer_role::output;

#define TSR_AT(Struct, field) offsetof(Struct, field)

std::vector<operation_buffer> convolution_buffers(int op, const void* problem, const void* args) {
  buffer_list b(args);
  switch (op) {
    case TSRP_OP_CONVOLUTION_FORWARD: {
      const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
      using A = tsrpConvolutionForwardArgs;
      b.tensor("x", TSR_AT(A, x), p.x, in);
      b.tensor("w", TSR_AT(A, w), p.w, in);
      b.tensor("y", TSR_AT(A, y), p.y, out);
      break;  // output_scales live in host memory and are read during the call: not staged
    }
    case TSRP_OP_CONVOLUTION_BACKWARD_DATA: {
      const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
      using A = tsrpConvolutionBackwardDataArgs;
      b.tensor("w", TSR_AT(A, w), p.w, in);
      b.tensor("dy", TSR_AT(A, dy), p.y, in);
      b.tensor("dx", TSR_AT(A, dx), p.x, out);
      break;
    }
    case TSRP_OP_CONVOLUTION_BACKWARD_FILTER: {
      const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
      using A = tsrpConvolutionBackwardFilterArgs;
      b.tensor("x", TSR_AT(A, x), p.x, in);
      b.tensor("dy", TSR_AT(A, dy), p.y, in);
      b.tensor("dw", TSR_AT(A, dw), p.w, out);
      break;
    }
    case TSRP_OP_CONVOLUTION_BACKWARD_BIAS: {
      const auto& p = *static_cast<const tsrpConvolutionBackwardBiasProblem*>(problem);
      using A = tsrpConvolutionBackwardBiasArgs;
      b.tensor("dy", TSR_AT(A, dy), p.dy, in);
      b.tensor("db", TSR_AT(A, db), p.db, out);
      break;
    }
    case TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD: {
      const auto& p = *static_cast<const tsrpConvolutionBiasActivationProblem*>(problem);
      using A = tsrpConvolutionBiasActivationArgs;
      b.tensor("x", TSR_AT(A, x), p.x, in);
      b.tensor("w", TSR_AT(A, w), p.w, in);
      // z that aliases y is y's memory, staged (and read) as y.
      if (p.has_z && !p.z_aliases_y) b.tensor("z", TSR_AT(A, z), p.z, in);
      b.tensor("bias", TSR_AT(A, bias), p.bias, in);
      b.tensor("y", TSR_AT(A, y), p.y, out);
      break;
    }
  }
  return b.take();
}

// Activation, pooling, softmax and LRN share the x / y_in / y / dy / dx argument shape.
template <typename Args, typename Problem>
std::vector<operation_buffer> forward_backward_buffers(bool backward, const Problem& p, const void* args) {
  buffer_list b(args);
  if (!backward) {
    b.tensor("x", TSR_AT(Args, x), p.x, in);
    b.tensor("y", TSR_AT(Args, y), p.y, out);
  } else {
    b.tensor("x", TSR_AT(Args, x), p.x, in);
    b.tensor("y", TSR_AT(Args, y_in), p.y, in);
    b.tensor("dy", TSR_AT(Args, dy), p.dy, in);
    b.tensor("dx", TSR_AT(Args, dx), p.dx, out);
  }
  return b.take();
}

std::vector<operation_buffer> softmax_buffers(bool backward, const tsrpSoftmaxProblem& p, const void* args) {
  buffer_list b(args);
  using A = tsrpSoftmaxArgs;
  if (!backward) {
    b.tensor("x", TSR_AT(A, x), p.x, in);
    b.tensor("y", TSR_AT(A, y), p.y, out);
  } else {
    b.tensor("y", TSR_AT(A, y_in), p.y, in);
    b.tensor("dy", TSR_AT(A, dy), p.dy, in);
    b.tensor("dx", TSR_AT(A, dx), p.dx, out);
  }
  return b.take();
}

std::vector<operation_buffer> batch_norm_buffers(int op, const tsrpBatchNormProblem& p, const void* args) {
  buffer_list b(args);
  using A = tsrpBatchNormArgs;
  b.tensor("x", TSR_AT(A, x), p.x, in);
  b.floats("scale", TSR_AT(A, scale), p.param, in);
  if (op == TSRP_OP_BATCH_NORM_BACKWARD) {
    b.tensor("y", TSR_AT(A, y_in), p.y, in);
    b.tensor("dy", TSR_AT(A, dy), p.dy, in);
    b.floats("saved_mean", TSR_AT(A, saved_mean), p.param, in);
    b.floats("saved_inv_variance", TSR_AT(A, saved_inv_variance), p.param, in);
    b.tensor("dx", TSR_AT(A, dx), p.dx, out);
    b.floats("dscale", TSR_AT(A, dscale), p.param, out);
    b.floats("dbias", TSR_AT(A, dbias), p.param, out);
    return b.take();
  }
  b.floats("bias", TSR_AT(A, bias), p.param, in);
  if (op == TSRP_OP_BATCH_NORM_FORWARD_INFERENCE) {
    b.floats("estimated_mean", TSR_AT(A, estimated_mean), p.param, in);
    b.floats("estimated_variance", TSR_AT(A, estimated_variance), p.param, in);
  } else {
    if (p.update_running_stats) {
      b.floats("running_mean", TSR_AT(A, running_mean), p.param, out);
      b.floats("running_variance", TSR_AT(A, running_variance), p.param, out);
    }
    if (p.write_saved_stats) {
      b.floats("save_mean", TSR_AT(A, save_mean), p.param, out);
      b.floats("save_inv_variance", TSR_AT(A, save_inv_variance), p.param, out);
    }
  }
  b.tensor("y", TSR_AT(A, y), p.y, out);
  return b.take();
}

std::vector<operation_buffer> layer_norm_buffers(bool backward, const tsrpLayerNormProblem& p, const void* args) {
  buffer_list b(args);
  using A = tsrpLayerNormArgs;
  b.tensor("x", TSR_AT(A, x), p.x, in);
  if (p.has_scale) b.floats("scale", TSR_AT(A, scale), p.scale, in);
  if (!backward) {
    if (p.has_bias) b.floats("bias", TSR_AT(A, bias), p.scale, in);
    b.tensor("y", TSR_AT(A, y), p.y, out);
    if (p.write_saved_stats) {
      b.floats("mean", TSR_AT(A, mean), p.stats, out);
      b.floats("inv_std", TSR_AT(A, inv_std), p.stats, out);
    }
  } else {
    b.tensor("dy", TSR_AT(A, dy), p.dy, in);
    b.floats("saved_mean", TSR_AT(A, saved_mean), p.stats, in);
    b.floats("saved_inv_std", TSR_AT(A, saved_inv_std), p.stats, in);
    b.tensor("dx", TSR_AT(A, dx), p.dx, out);
    if (p.has_dscale) b.floats("dscale", TSR_AT(A, dscale), p.scale, out);
    if (p.has_bias) b.floats("dbias", TSR_AT(A, dbias), p.scale, out);
  }
  return b.take();
}

std::vector<operation_buffer> rms_norm_buffers(bool backward, const tsrpRmsNormProblem& p, const void* args) {
  buffer_list b(args);
  using A = tsrpRmsNormArgs;
  b.tensor("x", TSR_AT(A, x), p.x, in);
  b.floats("scale", TSR_AT(A, scale), p.scale, in);
  if (!backward) {
    b.tensor("y", TSR_AT(A, y), p.y, out);
    if (p.has_saved_stats) b.floats("inv_rms", TSR_AT(A, inv_rms), p.stats, out);
  } else {
    b.tensor("dy", TSR_AT(A, dy), p.dy, in);
    if (p.has_saved_stats) b.floats("saved_inv_rms", TSR_AT(A, saved_inv_rms), p.stats, in);
    b.tensor("dx", TSR_AT(A, dx), p.dx, out);
    if (p.has_dscale) b.floats("dscale", TSR_AT(A, dscale), p.scale, out);
  }
  return b.take();
}

std::vector<operation_buffer> tensor_op_buffers(int op, const void* problem, const void* args) {
  buffer_list b(args);
  switch (op) {
    case TSRP_OP_ADD_TENSOR: {
      const auto& p = *static_cast<const tsrpAddTensorProblem*>(problem);
      b.tensor("a", TSR_AT(tsrpAddTensorArgs, a), p.a, in);
      b.tensor("c", TSR_AT(tsrpAddTensorArgs, c), p.c, out);
      break;
    }
    case TSRP_OP_OP_TENSOR: {
      const auto& p = *static_cast<const tsrpOpTensorProblem*>(problem);
      b.tensor("a", TSR_AT(tsrpOpTensorArgs, a), p.a, in);
      b.tensor("b", TSR_AT(tsrpOpTensorArgs, b), p.b, in);
      b.tensor("c", TSR_AT(tsrpOpTensorArgs, c), p.c, out);
      break;
    }
    case TSRP_OP_SCALE_TENSOR:
      b.tensor("y", TSR_AT(tsrpScaleTensorArgs, y), static_cast<const tsrpScaleTensorProblem*>(problem)->y, out);
      break;
    case TSRP_OP_SET_TENSOR:
      b.tensor("y", TSR_AT(tsrpSetTensorArgs, y), static_cast<const tsrpSetTensorProblem*>(problem)->y, out);
      break;
    case TSRP_OP_TRANSFORM_TENSOR: {
      const auto& p = *static_cast<const tsrpTransformTensorProblem*>(problem);
      b.tensor("x", TSR_AT(tsrpTransformTensorArgs, x), p.x, in);
      b.tensor("y", TSR_AT(tsrpTransformTensorArgs, y), p.y, out);
      break;
    }
    case TSRP_OP_REDUCE_TENSOR: {
      const auto& p = *static_cast<const tsrpReduceTensorProblem*>(problem);
      using A = tsrpReduceTensorArgs;
      b.tensor("a", TSR_AT(A, a), p.a, in);
      b.tensor("c", TSR_AT(A, c), p.c, out);
      b.raw("indices", TSR_AT(A, indices), static_cast<const A*>(args)->indices_size, out, TSRP_DATA_INT32);
      break;
    }
    case TSRP_OP_MATMUL: {
      const auto& p = *static_cast<const tsrpMatmulProblem*>(problem);
      using A = tsrpMatmulArgs;
      b.tensor("a", TSR_AT(A, a), p.a, in);
      b.tensor("b", TSR_AT(A, b), p.b, in);
      if (p.has_bias) b.tensor("bias", TSR_AT(A, bias), p.bias, in);
      b.tensor("c", TSR_AT(A, c), p.c, out);
      break;
    }
  }
  return b.take();
}

std::vector<operation_buffer> rnn_buffers(int op, const tsrpRnnProblem& p, const void* args) {
  buffer_list b(args);
  const size_t weights = static_cast<size_t>(p.weight_space_bytes);
  if (op == TSRP_OP_RNN_FORWARD_INFERENCE || op == TSRP_OP_RNN_FORWARD_TRAINING) {
    using A = tsrpRnnForwardArgs;
    b.tensor("x", TSR_AT(A, x), p.x, in);
    b.tensor("hx", TSR_AT(A, hx), p.h, in);
    b.tensor("cx", TSR_AT(A, cx), p.c, in);
    b.raw("weights", TSR_AT(A, weights), weights, in, p.data_type);
    b.tensor("y", TSR_AT(A, y), p.y, out);
    b.tensor("hy", TSR_AT(A, hy), p.h, out);
    b.tensor("cy", TSR_AT(A, cy), p.c, out);
    if (op == TSRP_OP_RNN_FORWARD_TRAINING)
      b.raw("reserve_space", TSR_AT(A, reserve_space), static_cast<const A*>(args)->reserve_space_size, out,
          k_opaque_data);
  } else if (op == TSRP_OP_RNN_BACKWARD_DATA) {
    using A = tsrpRnnBackwardDataArgs;
    b.tensor("y", TSR_AT(A, y), p.y, in);
    b.tensor("dy", TSR_AT(A, dy), p.y, in);
    b.tensor("hx", TSR_AT(A, hx), p.h, in);
    b.tensor("cx", TSR_AT(A, cx), p.c, in);
    b.tensor("dhy", TSR_AT(A, dhy), p.h, in);
    b.tensor("dcy", TSR_AT(A, dcy), p.c, in);
    b.raw("weights", TSR_AT(A, weights), weights, in, p.data_type);
    b.tensor("dx", TSR_AT(A, dx), p.x, out);
    b.tensor("dhx", TSR_AT(A, dhx), p.h, out);
    b.tensor("dcx", TSR_AT(A, dcx), p.c, out);
    // cuDNN's contract: backward data may rewrite the reserve space for backward weights.
    b.raw("reserve_space", TSR_AT(A, reserve_space), static_cast<const A*>(args)->reserve_space_size, out,
          k_opaque_data);
  } else if (op == TSRP_OP_RNN_BACKWARD_WEIGHTS) {
    using A = tsrpRnnBackwardWeightsArgs;
    b.tensor("x", TSR_AT(A, x), p.x, in);
    b.tensor("hx", TSR_AT(A, hx), p.h, in);
    b.tensor("y", TSR_AT(A, y), p.y, in);
    b.raw("reserve_space", TSR_AT(A, reserve_space), static_cast<const A*>(args)->reserve_space_size, in,
          k_opaque_data);
    b.raw("dweights", TSR_AT(A, dweights), weights, out, p.data_type);
  }
  return b.take();
}

}  // namespace

std::vector<operation_buffer> operation_buffers(int op, const void* problem, const void* args) {
  switch (op) {
    case TSRP_OP_CONVOLUTION_FORWARD:
    case TSRP_OP_CONVOLUTION_BACKWARD_DATA:
    case TSRP_OP_CONVOLUTION_BACKWARD_FILTER:
    case TSRP_OP_CONVOLUTION_BACKWARD_BIAS:
    case TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD:
      return convolution_buffers(op, problem, args);
    case TSRP_OP_ACTIVATION_FORWARD:
    case TSRP_OP_ACTIVATION_BACKWARD:
      return forward_backward_buffers<tsrpActivationArgs>(
          op == TSRP_OP_ACTIVATION_BACKWARD, *static_cast<const tsrpActivationProblem*>(problem), args);
    case TSRP_OP_POOLING_FORWARD:
    case TSRP_OP_POOLING_BACKWARD:
      return forward_backward_buffers<tsrpPoolingArgs>(
          op == TSRP_OP_POOLING_BACKWARD, *static_cast<const tsrpPoolingProblem*>(problem), args);
    case TSRP_OP_LRN_FORWARD:
    case TSRP_OP_LRN_BACKWARD:
      return forward_backward_buffers<tsrpLrnArgs>(op == TSRP_OP_LRN_BACKWARD,
                                                   *static_cast<const tsrpLrnProblem*>(problem), args);
    case TSRP_OP_SOFTMAX_FORWARD:
    case TSRP_OP_SOFTMAX_BACKWARD:
      return softmax_buffers(op == TSRP_OP_SOFTMAX_BACKWARD, *static_cast<const tsrpSoftmaxProblem*>(problem),
                             args);
    case TSRP_OP_BATCH_NORM_FORWARD_TRAINING:
    case TSRP_OP_BATCH_NORM_FORWARD_INFERENCE:
    case TSRP_OP_BATCH_NORM_BACKWARD:
      return batch_norm_buffers(op, *static_cast<const tsrpBatchNormProblem*>(problem), args);
    case TSRP_OP_LAYER_NORM_FORWARD:
    case TSRP_OP_LAYER_NORM_BACKWARD:
      return layer_norm_buffers(op == TSRP_OP_LAYER_NORM_BACKWARD,
                                *static_cast<const tsrpLayerNormProblem*>(problem), args);
    case TSRP_OP_RMS_NORM_FORWARD:
    case TSRP_OP_RMS_NORM_BACKWARD:
      return rms_norm_buffers(op == TSRP_OP_RMS_NORM_BACKWARD, *static_cast<const tsrpRmsNormProblem*>(problem),
                              args);
    case TSRP_OP_ADD_TENSOR:
    case TSRP_OP_OP_TENSOR:
    case TSRP_OP_SCALE_TENSOR:
    case TSRP_OP_SET_TENSOR:
    case TSRP_OP_TRANSFORM_TENSOR:
    case TSRP_OP_REDUCE_TENSOR:
    case TSRP_OP_MATMUL:
      return tensor_op_buffers(op, problem, args);
    case TSRP_OP_RNN_FORWARD_INFERENCE:
    case TSRP_OP_RNN_FORWARD_TRAINING:
    case TSRP_OP_RNN_BACKWARD_DATA:
    case TSRP_OP_RNN_BACKWARD_WEIGHTS:
      return rnn_buffers(op, *static_cast<const tsrpRnnProblem*>(problem), args);
    default:
      return {};
  }
}

size_t operation_args_size(int op) {
  switch (op) {
    case TSRP_OP_CONVOLUTION_FORWARD: return sizeof(tsrpConvolutionForwardArgs);
    case TSRP_OP_ACTIVATION_FORWARD:
    case TSRP_OP_ACTIVATION_BACKWARD: return sizeof(tsrpActivationArgs);
    case TSRP_OP_CONVOLUTION_BACKWARD_DATA: return sizeof(tsrpConvolutionBackwardDataArgs);
    case TSRP_OP_CONVOLUTION_BACKWARD_FILTER: return sizeof(tsrpConvolutionBackwardFilterArgs);
    case TSRP_OP_CONVOLUTION_BACKWARD_BIAS: return sizeof(tsrpConvolutionBackwardBiasArgs);
    case TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD: return sizeof(tsrpConvolutionBiasActivationArgs);
    case TSRP_OP_POOLING_FORWARD:
    case TSRP_OP_POOLING_BACKWARD: return sizeof(tsrpPoolingArgs);
    case TSRP_OP_SOFTMAX_FORWARD:
    case TSRP_OP_SOFTMAX_BACKWARD: return sizeof(tsrpSoftmaxArgs);
    case TSRP_OP_LRN_FORWARD:
    case TSRP_OP_LRN_BACKWARD: return sizeof(tsrpLrnArgs);
    case TSRP_OP_BATCH_NORM_FORWARD_TRAINING:
    case TSRP_OP_BATCH_NORM_FORWARD_INFERENCE:
    case TSRP_OP_BATCH_NORM_BACKWARD: return sizeof(tsrpBatchNormArgs);
    case TSRP_OP_LAYER_NORM_FORWARD:
    case TSRP_OP_LAYER_NORM_BACKWARD: return sizeof(tsrpLayerNormArgs);
    case TSRP_OP_RMS_NORM_FORWARD:
    case TSRP_OP_RMS_NORM_BACKWARD: return sizeof(tsrpRmsNormArgs);
    case TSRP_OP_ADD_TENSOR: return sizeof(tsrpAddTensorArgs);
    case TSRP_OP_OP_TENSOR: return sizeof(tsrpOpTensorArgs);
    case TSRP_OP_SCALE_TENSOR: return sizeof(tsrpScaleTensorArgs);
    case TSRP_OP_SET_TENSOR: return sizeof(tsrpSetTensorArgs);
    case TSRP_OP_TRANSFORM_TENSOR: return sizeof(tsrpTransformTensorArgs);
    case TSRP_OP_REDUCE_TENSOR: return sizeof(tsrpReduceTensorArgs);
    case TSRP_OP_MATMUL: return sizeof(tsrpMatmulArgs);
    case TSRP_OP_RNN_FORWARD_INFERENCE:
    case TSRP_OP_RNN_FORWARD_TRAINING: return sizeof(tsrpRnnForwardArgs);
    case TSRP_OP_RNN_BACKWARD_DATA: return sizeof(tsrpRnnBackwardDataArgs);
    case TSRP_OP_RNN_BACKWARD_WEIGHTS: return sizeof(tsrpRnnBackwardWeightsArgs);
    default: return 0;
  }
}

}  // namespace tessera::api
