// Placeholder until the GEMM engine lands: every problem is declined.
#include "gemm_engine.hpp"

#include "cuda_errors.hpp"

namespace tessera::cuda {

const char* gemm_unsupported_reason(const gemm_problem&) noexcept { return "the CUDA GEMM engine is not built yet"; }

void launch_gemm(const gemm_problem&, cudaStream_t) {
  throw status_error(TSRP_STATUS_NOT_SUPPORTED, "the CUDA GEMM engine is not built yet");
}

}  // namespace tessera::cuda
