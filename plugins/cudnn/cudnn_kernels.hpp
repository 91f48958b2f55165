// The kernel table of the plugin, one family per file; each adds its kernels best first.
#pragma once

#include "cudnn_kernel_glue.hpp"

namespace tessera::cudnn_plugin {

void add_convolution_kernels(kernel_list& list);   // cudnn_convolution_kernels.cpp
void add_pooling_kernels(kernel_list& list);       // cudnn_pooling_kernels.cpp
void add_activation_kernels(kernel_list& list);    // cudnn_activation_kernels.cpp
void add_softmax_kernels(kernel_list& list);       // cudnn_softmax_kernels.cpp
void add_lrn_kernels(kernel_list& list);           // cudnn_lrn_kernels.cpp
void add_batch_norm_kernels(kernel_list& list);    // cudnn_batch_norm_kernels.cpp
void add_tensor_op_kernels(kernel_list& list);     // cudnn_tensor_op_kernels.cpp
void add_rnn_kernels(kernel_list& list);           // cudnn_rnn_kernels.cpp

}  // namespace tessera::cudnn_plugin
