// The GEMM engine's full interface, below gemm_engine.hpp (which is this with one batch dim, a
// per-column fp32 bias and the kernel chosen for the caller). Matmul needs the rest: batches of
// up to six dims that broadcast independently in A, B, C and the bias; a bias of any broadcast
// shape in C's type or f32; an activation with both blend orders; s8 x s8 with int32
// accumulation; and the choice between the tensor-core and the SIMT kernel, which matmul offers
// as two kernels.
//
// Host side only: the kernels behind it live in gemm_simt.cuh and gemm_mma_sync.cuh and are
// instantiated once, in gemm_engine.cu.
#pragma once

#include "gemm_kernel_params.cuh"

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::gemm {

// Element (i, j) of batch (b_0, ..., b_{rank-1}) is at
//   data + i * row_stride + j * col_stride + sum_d b_d * batch_strides[d]   (in elements).
struct matrix_ref {
  const void* data = nullptr;
  int32_t data_type = TSRP_DATA_FLOAT;
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_strides[max_batch_dims] = {};
};

struct output_ref {
  void* data = nullptr;
  int32_t data_type = TSRP_DATA_FLOAT;
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_strides[max_batch_dims] = {};
};

// C = epilogue(alpha * A @ B) per element, in fp32 (see epilogue_params):
//   t = alpha * acc + bias;  C = blend_before ? act(t + beta * C) : act(t) + beta * C.
struct general_problem {
  int64_t m = 0, n = 0, k = 0;
  int32_t batch_rank = 0;  // 0 .. max_batch_dims
  int64_t batch_dims[max_batch_dims] = {};
  matrix_ref a;  // m x k; float, half, bfloat16 or int8
  matrix_ref b;  // k x n; a's type
  output_ref c;  // m x n; float/half/bfloat16 for floating inputs, int32 or float for int8
  float alpha = 1.0f;
  float beta = 0.0f;
  matrix_ref bias;  // data null: none; strides 0 where it broadcasts; C's type or float
  int32_t activation_mode = TSRP_ACTIVATION_IDENTITY;
  float activation_coef = 0.0f;
  bool blend_before_activation = false;
  bool allow_tf32 = false;  // fp32 may run on the TF32 kernel (see tf32_support)
};

enum class engine_path {
  tensor_cores,  // fp16/bf16 on mma.sync (any strides); fp32 on the TF32 mma.sync kernel where
                 // tf32_support allows it; other types on the SIMT kernel
  simt,          // the SIMT kernel whatever the type (fp32 exact)
};

// Empty when `launch` can run the problem; else why not, naming the argument. Looks at types and
// sizes only, never at pointers or strides: every stride and alignment has a kernel.
std::string problem_support(const general_problem& problem);

// Empty when the tensor-core kernel takes the problem's types; else why not.
std::string tensor_core_support(const general_problem& problem);

// Empty when the TF32 kernel (gemm_mma_tf32.cuh) takes the problem: fp32 operands, allow_tf32,
// and the kernel not switched off (TESSERA_CUDA_GEMM_TF32=0); else why not.
std::string tf32_support(const general_problem& problem);

// Whether the TF32 kernel is on (default; TESSERA_CUDA_GEMM_TF32=0 turns it off; read once per
// process).
bool tf32_switched_on();

// Enqueues on `stream`; nothing else (no allocation, no synchronization). Throws status_error:
// BAD_PARAM for negative sizes or a null pointer that is needed, NOT_SUPPORTED for what
// problem_support refuses.
void launch(const general_problem& problem, engine_path path, cudaStream_t stream);

}  // namespace tessera::cuda::gemm
