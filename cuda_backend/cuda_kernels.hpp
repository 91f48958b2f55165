// The kernels of the CUDA plugin. Each operation family's file appends its kernels to the list
// the plugin entry hands the host (built once, kept until the process exits); the order within
// an operation is the order the registry tries them in when no tuning result says otherwise, so
// every family lists its fast kernels before its general fallbacks.
#pragma once

#include "kernel_glue.hpp"

#include <tessera/plugin_abi.h>

namespace tessera::cuda {

const tsrpKernel& eltwise_fwd_kernel() noexcept;     // activation_kernels.cu
const tsrpKernel& eltwise_bwd_kernel() noexcept;     // activation_kernels.cu
// conv_depthwise_nhwc.cu: groups == C == K, forward and backward data.
void add_conv_depthwise_kernels(kernel_list& out);
// conv_depthwise_wgrad_nhwc.cu: groups == C == K, backward filter, R * S <= 9.
void add_conv_depthwise_wgrad_kernels(kernel_list& out);
const tsrpKernel& conv_fwd_direct_kernel() noexcept;  // conv_fwd_direct.cu

void add_conv_implicit_gemm_kernels(kernel_list& out);  // conv_implicit_gemm*.cu: tensor-core conv
void add_conv_backward_kernels(kernel_list& out);       // conv_backward_direct.cu: bwd data/filter/bias
void add_conv_dgrad_kernel_stride_kernels(kernel_list& out);  // conv_dgrad_kernel_stride.cu: up-convolutions
void add_conv_fused_kernels(kernel_list& out);          // conv_bias_activation_direct.cu, int8 forward
void add_pooling_kernels(kernel_list& out);             // pooling_kernels.cu
void add_softmax_kernels(kernel_list& out);             // softmax_kernels.cu
void add_lrn_kernels(kernel_list& out);                 // lrn_kernels.cu
void add_batch_norm_kernels(kernel_list& out);          // batch_norm_kernels.cu
void add_layer_norm_kernels(kernel_list& out);          // layer_norm_kernels.cu (layer and RMS)
void add_tensor_op_kernels(kernel_list& out);           // tensor_op_kernels.cu, transform, reduce
void add_matmul_kernels(kernel_list& out);              // matmul_kernels.cu
void add_rnn_kernels(kernel_list& out);                 // rnn_kernels.cu

}  // namespace tessera::cuda
