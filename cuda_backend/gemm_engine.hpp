// The CUDA plugin's own dense GEMM, shared by matmul and the RNN kernels (input projections and
// recurrent steps): C = alpha * A * B + beta * C over a batch, every operand given by element
// strides so transposes and views need no copies. Arithmetic accumulates in fp32; fp16/bf16
// operands go through the tensor cores, fp32 operands through tf32 tensor cores only when
// allow_tf32 is set and exact fp32 FMA otherwise.
//
// Enqueues on `stream` only: no allocation, no synchronization (graph-capturable). Throws
// status_error(NOT_SUPPORTED) for type combinations it lacks, BAD_PARAM for inconsistent sizes.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tessera::cuda {

struct gemm_operand {
  const void* data = nullptr;
  int32_t data_type = TSRP_DATA_FLOAT;  // TSRP_DATA_FLOAT, _HALF or _BFLOAT16
  int64_t row_stride = 0;               // elements between (i, j) and (i + 1, j)
  int64_t col_stride = 0;               // elements between (i, j) and (i, j + 1)
  int64_t batch_stride = 0;             // elements between batch b and b + 1 (0: broadcast)
};

struct gemm_output {
  void* data = nullptr;
  int32_t data_type = TSRP_DATA_FLOAT;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
  int64_t batch_stride = 0;
};

// Epilogue applied in fp32 before the store: r = alpha * acc + beta * c_old (+ bias[j] when
// bias is non-null: one fp32 value per column n, device memory).
struct gemm_problem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  gemm_operand a;  // m x k
  gemm_operand b;  // k x n
  gemm_output c;   // m x n
  float alpha = 1.0f;
  float beta = 0.0f;
  const float* bias = nullptr;
  bool allow_tf32 = false;
};

// nullptr when launch_gemm can run `problem`; otherwise why not (a static string).
const char* gemm_unsupported_reason(const gemm_problem& problem) noexcept;

void launch_gemm(const gemm_problem& problem, cudaStream_t stream);

}  // namespace tessera::cuda
