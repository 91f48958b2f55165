// Convolution validation shared by every convolution entry point (forward, backward data and
// filter, fused, int8): the descriptor check and the problem builder, so that the shape rules
// and their messages live in one place (convolution_api.cpp).
#pragma once

#include "descriptors.hpp"
#include "handle.hpp"

namespace tessera::api {

// conv exists and was set.
tsrStatus_t check_convolution_desc(const char* function, tsrConvolutionDescriptor_t conv);

// How the three tensors are called in messages: "x_desc", "w_desc", "y_desc" for the forward
// call, "dx_desc"/"dy_desc"/"dw_desc" for the backward ones.
struct convolution_names {
  const char* x = "x_desc";
  const char* w = "w_desc";
  const char* y = "y_desc";
};

// Which data types the entry point takes.
enum class convolution_types {
  same,            // x, w and y of one dtype (the float forward; int8 also passes through here)
  floating,        // one of f32, f16, bf16 for all three (backward, fused)
  int8_quantized,  // x and w s8, y s8/s32/f32, compute type s32
};

// Checks the tensors against conv and each other (x (*) w must give y's dims) and builds the
// problem; output_scale_count is left 0.
tsrStatus_t build_convolution_problem(const char* function, tsrContext& handle,
                                      tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t w_desc,
                                      tsrConvolutionDescriptor_t conv,
                                      tsrTensorDescriptor_t y_desc, const convolution_names& names,
                                      convolution_types types, tsrpConvolutionProblem* problem);

}  // namespace tessera::api
