// The kernels this plugin offers; each is defined in the file for its operation.
#pragma once

#include <tessera/plugin_abi.h>

namespace tessera::onednn {

const tsrpKernel& convolution_forward_kernel() noexcept;  // onednn_convolution.cpp
const tsrpKernel& convolution_backward_data_kernel() noexcept;    // onednn_convolution_backward.cpp
const tsrpKernel& convolution_backward_filter_kernel() noexcept;  // onednn_convolution_backward.cpp
const tsrpKernel& convolution_backward_bias_kernel() noexcept;    // onednn_convolution_backward.cpp
const tsrpKernel& convolution_bias_activation_forward_kernel() noexcept;  // onednn_convolution_fused.cpp
const tsrpKernel& activation_forward_kernel() noexcept;   // onednn_activation.cpp
const tsrpKernel& activation_backward_kernel() noexcept;  // onednn_activation.cpp
const tsrpKernel& matmul_kernel() noexcept;                // onednn_matmul.cpp
const tsrpKernel& pooling_forward_kernel() noexcept;     // onednn_pooling.cpp
const tsrpKernel& pooling_backward_kernel() noexcept;    // onednn_pooling.cpp
const tsrpKernel& softmax_forward_kernel() noexcept;     // onednn_softmax.cpp
const tsrpKernel& softmax_backward_kernel() noexcept;    // onednn_softmax.cpp
const tsrpKernel& lrn_forward_kernel() noexcept;         // onednn_lrn.cpp
const tsrpKernel& lrn_backward_kernel() noexcept;        // onednn_lrn.cpp
const tsrpKernel& add_tensor_kernel() noexcept;        // onednn_reorder.cpp
const tsrpKernel& op_tensor_kernel() noexcept;         // onednn_binary.cpp
const tsrpKernel& scale_tensor_kernel() noexcept;      // onednn_set_scale.cpp
const tsrpKernel& set_tensor_kernel() noexcept;        // onednn_set_scale.cpp
const tsrpKernel& transform_tensor_kernel() noexcept;  // onednn_reorder.cpp
const tsrpKernel& reduce_tensor_kernel() noexcept;     // onednn_reduction.cpp
const tsrpKernel& rnn_forward_inference_kernel() noexcept;  // onednn_rnn.cpp
const tsrpKernel& rnn_forward_training_kernel() noexcept;   // onednn_rnn.cpp
const tsrpKernel& rnn_backward_data_kernel() noexcept;      // onednn_rnn.cpp
const tsrpKernel& rnn_backward_weights_kernel() noexcept;   // onednn_rnn.cpp
const tsrpKernel& batch_norm_forward_training_kernel() noexcept;   // onednn_batch_norm.cpp
const tsrpKernel& batch_norm_forward_inference_kernel() noexcept;  // onednn_batch_norm.cpp
const tsrpKernel& batch_norm_backward_kernel() noexcept;           // onednn_batch_norm.cpp
const tsrpKernel& layer_norm_forward_kernel() noexcept;            // onednn_layer_norm.cpp
const tsrpKernel& layer_norm_backward_kernel() noexcept;           // onednn_layer_norm.cpp
const tsrpKernel& rms_norm_forward_kernel() noexcept;              // onednn_rms_norm.cpp
const tsrpKernel& rms_norm_backward_kernel() noexcept;             // onednn_rms_norm.cpp

}  // namespace tessera::onednn
