// The tensor-core convolution family's kernel lists, one function per translation unit so that
// each CUTLASS direction compiles on its own. add_conv_implicit_gemm_kernels (cuda_kernels.hpp)
// adds the forward kernels and calls the other two.
#pragma once

#include "kernel_glue.hpp"

namespace tessera::cuda {

void add_conv_igemm_dgrad_kernels(kernel_list& out);  // conv_implicit_gemm_dgrad.cu
// conv_implicit_gemm_space_to_depth.cu: the small-C stem kernels, after the as-given ones.
void add_conv_igemm_space_to_depth_kernels(kernel_list& forward, kernel_list& fused);
void add_conv_igemm_wgrad_kernels(kernel_list& out);  // conv_implicit_gemm_wgrad.cu
void add_conv_igemm_3d_kernels(kernel_list& out);     // conv_implicit_gemm_3d.cu: 3-D forward
// conv_wgrad_small_c_mma.cu: backward filter with C * R * S <= 160 (mma.sync, not CUTLASS).
void add_conv_wgrad_small_c_kernels(kernel_list& out);
// conv_backward_tf32_sm80.cu: fp32 backward data and filter on TF32 tensor cores (CUTLASS sm80).
void add_conv_backward_tf32_kernels(kernel_list& out);

}  // namespace tessera::cuda
