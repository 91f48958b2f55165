// What every CUTLASS-built convolution of this family shares: the CUTLASS headers in an order
// that compiles (the conv headers are not self-contained: the kernel layer must come before the
// collective builders, which use KernelHardwareInfo), the element type of each Tessera storage
// type, and the can_implement / launch steps of CUTLASS's device adapter turned into our
// reasons and exceptions.
#pragma once

#include "cuda_errors.hpp"
#include "element_types.cuh"

#include <tessera/plugin_abi.h>

// clang-format off
#include <cutlass/cutlass.h>
#include <cutlass/numeric_types.h>
#include <cute/tensor.hpp>
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/dispatch_policy.hpp>
#include <cutlass/conv/device/conv_universal_adapter.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
// clang-format on

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <string>

namespace tessera::cuda::igemm {

template <int32_t DataType>
struct cutlass_element;
template <>
struct cutlass_element<TSRP_DATA_HALF> {
  using type = cutlass::half_t;
};
template <>
struct cutlass_element<TSRP_DATA_BFLOAT16> {
  using type = cutlass::bfloat16_t;
};
// fp32 operands: CUTLASS's sm90 builders select the TF32 wgmma for float A and B (the top 19
// bits of each value; both operands must be K-major, which only the forward's x and w are). Only
// the forward offers it, and only where the handle's math mode allows TF32 (fprop_support).
template <>
struct cutlass_element<TSRP_DATA_FLOAT> {
  using type = float;
};

// The CUDA type of the same storage type, for the kernels of our own around CUTLASS's (the
// strided dgrad's gather and scaling, the split-K wgrad's reduction): element_types.cuh's.
template <int32_t DataType>
using cuda_element = storage_type<DataType>;

// Empty when CUTLASS's can_implement accepts `args` (built with null pointers: it looks at shapes
// only). Our own checks run first and name the argument; this is the backstop for TMA limits we
// did not spell out, so its reason is generic.
template <typename Device>
std::string cutlass_support(const typename Device::Arguments& args, const char* direction) {
  if (Device::can_implement(args) != cutlass::Status::kSuccess) {
    return std::string("CUTLASS's sm90 implicit-GEMM ") + direction +
           " cannot implement this shape (TMA im2col or alignment limits)";
  }
  return {};
}

// Builds the TMA descriptors on the host (driver calls only, no device memory touched), sets the
// kernel's shared-memory size and launches on `stream`: nothing that breaks graph capture.
template <typename Device>
void launch(const typename Device::Arguments& args, void* workspace, cudaStream_t stream, const char* direction) {
  Device op;
  const cutlass::Status status = op.run(args, workspace, stream);
  if (status != cutlass::Status::kSuccess) {
    throw status_error(TSRP_STATUS_EXECUTION_FAILED, std::string("CUTLASS ") + direction +
                                                         " launch failed: " + cutlass::cutlassGetStatusString(status));
  }
}

}  // namespace tessera::cuda::igemm
