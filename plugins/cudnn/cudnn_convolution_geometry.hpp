// How a Tessera convolution becomes cuDNN descriptors, shared by the forward, backward data,
// backward filter and fused kernels:
//  - 1-D convolutions become 2-D ones with a unit height (cuDNN takes 2-D and 3-D only);
//  - the filter must be packed KCRS or KRSC (cuDNN describes filters by format, not strides);
//  - cuDNN pads symmetrically. Asymmetric padding (pad_before != pad_after) is served by staging
//    x in the workspace: a zero-filled buffer extended by |pad_before - pad_after| on the larger
//    side, x copied into its interior, and cuDNN given min(pad_before, pad_after). The windows
//    then start where Tessera's start, and the output size is Tessera's. Backward data computes
//    the extended dx in the workspace and copies its interior out with the caller's alpha/beta.
#pragma once

#include "cudnn_descriptors.hpp"

#include <tessera/plugin_abi.h>

#include <cudnn.h>

#include <string>

namespace tessera::cudnn_plugin {

// The geometry fields tsrpConvolutionProblem and tsrpConvolutionBiasActivationProblem share.
struct convolution_shape {
  tsrpTensor x, w, y;
  int32_t spatial_dims;
  int32_t mode;          // tsrpConvolutionMode_t
  int32_t compute_type;  // tsrpDataType_t
  int32_t math_mode;     // tsrpMathMode_t
  int64_t groups;
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS];
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS];
  int64_t stride[TSRP_MAX_SPATIAL_DIMS];
  int64_t dilation[TSRP_MAX_SPATIAL_DIMS];
};

template <typename Problem>
convolution_shape convolution_shape_of(const Problem& p) {
  convolution_shape s{};
  s.x = p.x;
  s.w = p.w;
  s.y = p.y;
  s.spatial_dims = p.spatial_dims;
  s.mode = p.mode;
  s.compute_type = p.compute_type;
  s.math_mode = p.math_mode;
  s.groups = p.groups;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    s.pad_before[i] = p.pad_before[i];
    s.pad_after[i] = p.pad_after[i];
    s.stride[i] = p.stride[i];
    s.dilation[i] = p.dilation[i];
  }
  return s;
}

// The plan: tensors as cuDNN will see them, and the staging of x for asymmetric padding.
struct convolution_plan {
  tsrpTensor x, w, y;  // lifted to 2-D spatial when 1-D
  int spatial = 0;     // 2 or 3
  int pad[TSRP_MAX_SPATIAL_DIMS] = {};
  int stride[TSRP_MAX_SPATIAL_DIMS] = {};
  int dilation[TSRP_MAX_SPATIAL_DIMS] = {};
  cudnnTensorFormat_t filter_format = CUDNN_TENSOR_NCHW;
  bool staged = false;
  tsrpTensor x_staged{};       // packed, zero-extended buffer at the workspace's start
  tsrpTensor x_interior{};     // x's dims with x_staged's strides: where x lives inside it
  size_t interior_offset = 0;  // bytes from the staged buffer's start to x's first element
  size_t staged_bytes = 0;     // rounded up to 256: cuDNN's own workspace follows it
};

// "" and the plan, or why cuDNN cannot run the convolution (data types, filter layout, sizes).
// Data-type rules: x, w and y share a floating type (f32, f16, bf16) with an f32 compute type
// (or f16 for f16 data); int8 is declined as a whole.
std::string plan_convolution(const convolution_shape& s, convolution_plan* plan);

// A tensor of the convolution (bias, residual) lifted like x, w and y when the problem is 1-D.
tsrpTensor lifted_like_plan(const convolution_shape& s, const tsrpTensor& t);

// The descriptors of a plan. `x` is the one cuDNN convolves (the staged buffer when staged);
// `x_user` and `x_interior` move data in and out of the staging buffer.
struct convolution_descriptors {
  tensor_descriptor x, x_user, x_interior, y;
  filter_descriptor w;
  convolution_descriptor conv;
};

// Builds them (cuDNN may refuse: plugin_error with its words).
void build_convolution_descriptors(const convolution_shape& s, const convolution_plan& plan,
                                   convolution_descriptors* d);

// Fills the staging buffer (zeros, then x in its interior) on the handle's stream.
void stage_input(cudnnHandle_t handle, const convolution_plan& plan, const convolution_descriptors& d,
                 const void* x, void* staging);

}  // namespace tessera::cudnn_plugin
