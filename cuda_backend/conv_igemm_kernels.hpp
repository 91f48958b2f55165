// The tensor-core convolution family's kernel lists, one function per translation unit so that
// each CUTLASS direction compiles on its own. add_conv_implicit_gemm_kernels (cuda_kernels.hpp)
// adds the forward kernels and calls the other two.
#pragma once

#include "kernel_glue.hpp"

namespace tessera::cuda {

void add_conv_igemm_dgrad_kernels(kernel_list& out);  // conv_implicit_gemm_dgrad.cu
void add_conv_igemm_wgrad_kernels(kernel_list& out);  // conv_implicit_gemm_wgrad.cu

}  // namespace tessera::cuda
