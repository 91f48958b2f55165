// What the three depthwise kernel families share (conv_depthwise_nhwc.cu: forward and backward
// data; conv_depthwise_wgrad_nhwc.cu: backward filter): the problem they accept, its geometry,
// their names and the choice between the 16-byte and the one-element path. Kept here once so that
// the three directions cannot drift apart on what "depthwise" means (groups == C == K, packed
// NHWC activations, a K x 1 x R x S filter read channel-major) or on the words they decline with.
//
// The problem describes the forward convolution in every direction (plugin_abi_convolution.h):
// x is dx for backward data, w is dw for backward filter, y is dy for both backward directions.
// Included by .cu files only (element_types.cuh brings cuda_fp16.h / cuda_bf16.h).
#pragma once

#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace tessera::cuda::depthwise {

enum class direction { forward, backward_data, backward_filter };

// h, w: x's (dx's) extents; p, q: y's (dy's). int32 throughout: support() bounds every extent,
// the pads and the strides, so that oh * stride - pad + r * dilation stays far below 2^31.
struct geometry {
  int n, h, w, c, r, s, p, q;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

// Call only after support() returned empty.
inline geometry geometry_of(const tsrpConvolutionProblem& p) {
  geometry g{};
  g.n = static_cast<int>(p.x.dims[0]);
  g.c = static_cast<int>(p.x.dims[1]);
  g.h = static_cast<int>(p.x.dims[2]);
  g.w = static_cast<int>(p.x.dims[3]);
  g.r = static_cast<int>(p.w.dims[2]);
  g.s = static_cast<int>(p.w.dims[3]);
  g.p = static_cast<int>(p.y.dims[2]);
  g.q = static_cast<int>(p.y.dims[3]);
  g.stride_h = static_cast<int>(p.stride[0]);
  g.stride_w = static_cast<int>(p.stride[1]);
  g.pad_h = static_cast<int>(p.pad_before[0]);
  g.pad_w = static_cast<int>(p.pad_before[1]);
  g.dilation_h = static_cast<int>(p.dilation[0]);
  g.dilation_w = static_cast<int>(p.dilation[1]);
  return g;
}

// "conv_<direction>_depthwise_nhwc_<type>": the names users and tuning files know the kernels by.
template <int32_t DataType, direction Direction>
constexpr const char* kernel_name() {
  static_assert(DataType == TSRP_DATA_FLOAT || DataType == TSRP_DATA_HALF || DataType == TSRP_DATA_BFLOAT16);
  constexpr bool half = DataType == TSRP_DATA_HALF, bf16 = DataType == TSRP_DATA_BFLOAT16;
  switch (Direction) {
    case direction::forward:
      return half   ? "conv_fwd_depthwise_nhwc_f16"
             : bf16 ? "conv_fwd_depthwise_nhwc_bf16"
                    : "conv_fwd_depthwise_nhwc_f32";
    case direction::backward_data:
      return half   ? "conv_bwd_data_depthwise_nhwc_f16"
             : bf16 ? "conv_bwd_data_depthwise_nhwc_bf16"
                    : "conv_bwd_data_depthwise_nhwc_f32";
    default:
      return half   ? "conv_bwd_filter_depthwise_nhwc_f16"
             : bf16 ? "conv_bwd_filter_depthwise_nhwc_bf16"
                    : "conv_bwd_filter_depthwise_nhwc_f32";
  }
}

// The names the problem's x, w and y go by in a direction's arguments, so that a reason names the
// tensor the caller passed ("dw is not packed", not "w is not packed").
struct tensor_names {
  const char* x;
  const char* w;
  const char* y;
};
constexpr tensor_names names_of(direction d) {
  switch (d) {
    case direction::forward: return {"x", "w", "y"};
    case direction::backward_data: return {"dx", "w", "dy"};
    default: return {"x", "dw", "dy"};
  }
}

// Empty when every depthwise kernel of `data_type` and direction `d` can take the problem as far
// as the shared rules go; otherwise why not. Each family adds its own limits after this (the
// forward's shared-memory filter table, the backward filter's tap count).
inline std::string support(const tsrpConvolutionProblem& p, int32_t data_type, direction d) {
  // The mode first: the conformance tests read the word "flipped" in the reason.
  if (p.mode != TSRP_CROSS_CORRELATION) {
    return "flipped-filter (convolution) mode not supported: cross-correlation only";
  }
  if (p.spatial_dims != 2) return std::to_string(p.spatial_dims) + " spatial dims not supported (2-D only)";
  const tensor_names names = names_of(d);
  const std::pair<const char*, const tsrpTensor*> tensors[] = {{names.x, &p.x}, {names.w, &p.w}, {names.y, &p.y}};
  for (const auto& [label, t] : tensors) {
    if (t->data_type != data_type) {
      // "int8 not supported" is the phrase the conformance test reads as "declined as a whole".
      return std::string(label) + " data type " + data_type_name(t->data_type) + " not supported: this kernel takes " +
             data_type_name(data_type) + " " + names.x + ", " + names.w + " and " + names.y;
    }
    if (t->ndims != 4) return std::string(label) + " has " + std::to_string(t->ndims) + " dims, expected 4";
    for (int dim = 0; dim < 4; ++dim) {
      if (t->dims[dim] < 0 || t->dims[dim] > std::numeric_limits<int32_t>::max() / 4) {
        return std::string(label) + " dim " + std::to_string(dim) + " is outside this kernel's int32 extents";
      }
    }
  }
  if (!is_floating_storage(p.compute_type)) {
    return std::string("compute type ") + data_type_name(p.compute_type) + " not supported (fp32 accumulation)";
  }
  if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
  const int64_t c = p.x.dims[1];
  if (p.groups != c || p.w.dims[0] != c || p.w.dims[1] != 1) {
    return "not depthwise: needs groups == C == K with one input channel per filter (groups " +
           std::to_string(p.groups) + ", C " + std::to_string(c) + ", K " + std::to_string(p.w.dims[0]) + ")";
  }
  if (!is_packed_channels_last(p.x)) return std::string(names.x) + " is not packed channels-last";
  if (!is_packed_channels_last(p.y)) return std::string(names.y) + " is not packed channels-last";
  // w is K x 1 x R x S: packed channel-major whether its tag says NCHW or NHWC.
  const std::string unpacked = std::string(names.w) + " is not packed";
  if (p.w.dims[0] > 1 && p.w.strides[0] != p.w.dims[2] * p.w.dims[3]) return unpacked;
  if (p.w.dims[3] > 1 && p.w.strides[3] != 1) return unpacked;
  if (p.w.dims[2] > 1 && p.w.strides[2] != p.w.dims[3]) return unpacked;
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1) return "strides and dilations must be at least 1";
    if (p.stride[i] > (1 << 20) || p.dilation[i] > (1 << 20)) return "strides and dilations above 2^20 not supported";
    // Both pads bounded too: with y the forward output shape, (P - 1) * stride and (R - 1) *
    // dilation are then at most H + pads + stride, far below 2^31.
    if (p.pad_before[i] < 0 || p.pad_before[i] > 1024 || p.pad_after[i] < 0 || p.pad_after[i] > 1024) {
      return "padding outside 0..1024 not supported";
    }
  }
  return {};
}

// Calls f(std::integral_constant<int, V>{}) with V = 16 / sizeof(T), the 16-byte path, when the
// C channels of a pixel and every pointer allow 16-byte accesses; with V = 1, one element at a
// time, otherwise. Both paths add in the same order, so they give the same bits.
template <typename T, typename F>
void dispatch_vector_width(int64_t c, std::initializer_list<const void*> pointers, F&& f) {
  constexpr int vector = 16 / sizeof(T);
  bool aligned = c % vector == 0;
  for (const void* pointer : pointers) aligned = aligned && reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
  if (aligned) {
    f(std::integral_constant<int, vector>{});
  } else {
    f(std::integral_constant<int, 1>{});
  }
}

}  // namespace tessera::cuda::depthwise
