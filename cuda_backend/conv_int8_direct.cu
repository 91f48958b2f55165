// Kernel "conv_fwd_tiled": the forward convolution on the family's implicit-GEMM engine
// (conv_direct_engine.cuh), any layout, 1-3 spatial dims, groups, padding, stride, dilation,
// both modes.
//  - s8 x and w: the exact s32 sum of x * w, then, as plugin_abi.h defines it,
//      y = saturate(round_half_even(alpha * scale[k] * acc + beta * y))  for s8 and s32 y,
//      y = alpha * scale[k] * acc + beta * y                              for f32 y,
//    in fp32, with 0 (scale 1), 1 (per tensor) or K (per output channel) scales.
//  - fp32, fp16, bf16: y = alpha * conv + beta * y with fp32 accumulation; the same engine, so the
//    floating problems conv_fwd_direct serves run here too (tiled, so usually faster) and the
//    kernel is not one that declines every floating case of the conformance sweep.
// Per-channel scales arrive in host memory and are read during the call: they travel to the
// device as kernel parameters of a small copy kernel (capturable into a CUDA graph, unlike a copy
// from pageable memory) that writes them into the workspace.
#include "conv_direct_engine.cuh"
#include "conv_direct_forward.cuh"
#include "conv_direct_geometry.cuh"
#include "conv_direct_kernels.hpp"
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

using namespace conv_direct;

// ---- device side ------------------------------------------------------------------------------

template <typename TOut>
struct blend_epilogue {
  TOut* y;
  int64_t y_strides[2 + spatial];
  float alpha;
  float beta;
  __device__ __forceinline__ void apply(int32_t n, int32_t k, const int32_t (&o)[spatial], float acc) const {
    TOut* out = y + widened_offset(y_strides, n, k, o);
    float r = alpha * acc;
    if (beta != 0.0f) r += beta * to_float(*out);  // beta 0: y may hold NaN and is not read
    *out = from_float<TOut>(r);
  }
};

__device__ __forceinline__ float stored_value(int8_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float stored_value(int32_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float stored_value(float v) { return v; }

// cvt.rni.s32.f32 rounds half to even and saturates (NaN gives 0), so s32 needs nothing more and
// s8 only the clamp.
template <typename TOut>
__device__ __forceinline__ TOut quantize(float v);
template <>
__device__ __forceinline__ float quantize<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ int32_t quantize<int32_t>(float v) {
  return __float2int_rn(v);
}
template <>
__device__ __forceinline__ int8_t quantize<int8_t>(float v) {
  return static_cast<int8_t>(min(127, max(-128, __float2int_rn(v))));
}

template <typename TOut>
struct quantized_epilogue {
  TOut* y;
  int64_t y_strides[2 + spatial];
  float alpha;
  float beta;
  float scale;          // per tensor (1 when there are no scales)
  const float* scales;  // per output channel, in the workspace; null for per tensor
  __device__ __forceinline__ void apply(int32_t n, int32_t k, const int32_t (&o)[spatial], int32_t acc) const {
    TOut* out = y + widened_offset(y_strides, n, k, o);
    const float s = scales != nullptr ? scales[k] : scale;
    float v = alpha * s * static_cast<float>(acc);
    if (beta != 0.0f) v += beta * stored_value(*out);
    *out = quantize<TOut>(v);
  }
};

// 960 floats keep the parameter block under the classic 4 KB kernel parameter limit.
constexpr int scale_chunk = 960;
struct scale_block {
  float values[scale_chunk];
};

__global__ void upload_scales(scale_block block, int32_t count, float* destination) {
  for (int i = threadIdx.x; i < count; i += blockDim.x) destination[i] = block.values[i];
}

// ---- host side ---------------------------------------------------------------------------------

bool is_int8_problem(const tsrpConvolutionProblem& p) {
  return p.x.data_type == TSRP_DATA_INT8 || p.w.data_type == TSRP_DATA_INT8;
}

// K scales (K > 1) go through the workspace; one scale (per tensor, or K == 1) is a parameter.
bool per_channel_scales(const tsrpConvolutionProblem& p) { return p.output_scale_count > 1; }

struct forward_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr const char* name = "conv_fwd_tiled";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "implicit GEMM on CUDA cores: 64x64 output tiles staged through shared memory for groups of "
      "16 or more filters, one output per 1-32 threads for narrower groups (depthwise); any layout. "
      "s8: exact s32 accumulation, then alpha * scale[k] * acc + beta * y in fp32, rounded half to "
      "even and saturated once (s8, s32 y) or stored as is (f32 y). fp32/fp16/bf16: fp32 "
      "accumulation whatever the compute type (no tensor cores, no tf32). Fixed summation order: "
      "bitwise reproducible";

  static std::string support(const problem_type& p) {
    std::string why = geometry_support(p);
    if (!why.empty()) return why;
    if (is_int8_problem(p)) {
      if (p.x.data_type != TSRP_DATA_INT8 || p.w.data_type != TSRP_DATA_INT8) {
        return std::string("int8 convolution needs s8 x and w (got ") + data_type_name(p.x.data_type) + ", " +
               data_type_name(p.w.data_type) + ")";
      }
      if (p.y.data_type != TSRP_DATA_INT8 && p.y.data_type != TSRP_DATA_INT32 && p.y.data_type != TSRP_DATA_FLOAT) {
        return std::string("int8 convolution writes s8, s32 or f32 y, not ") + data_type_name(p.y.data_type);
      }
      if (p.compute_type != TSRP_DATA_INT32) {
        return std::string("compute type ") + data_type_name(p.compute_type) +
               ": int8 convolutions accumulate in s32 (use compute type int32)";
      }
      if (p.output_scale_count != 0 && p.output_scale_count != 1 && p.output_scale_count != p.y.dims[1]) {
        return "output_scale_count " + std::to_string(p.output_scale_count) + ", expected 0, 1 or K = " +
               std::to_string(p.y.dims[1]);
      }
      return {};
    }
    const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "y"}};
    for (const auto& [t, tensor_name] : tensors) {
      if (!is_floating_storage(t->data_type)) {
        return std::string("data type ") + data_type_name(t->data_type) + " of tensor " + tensor_name +
               " (f32, f16, bf16 or s8 x and w)";
      }
    }
    if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type) {
      return std::string("x, w and y must have one data type (got ") + data_type_name(p.x.data_type) + ", " +
             data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
    }
    // fp32 accumulation is at least as accurate as an f16 or bf16 compute type asks for.
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " for floating inputs (fp32 accumulation)";
    }
    if (p.output_scale_count != 0) return "output scales are for int8 convolutions only";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    return per_channel_scales(p) ? static_cast<size_t>(p.output_scale_count) * sizeof(float) : 0;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* ws, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.y, element_count(p.y), "y");
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    const forward_launch l = plan_forward(p);
    if (!is_int8_problem(p)) {
      dispatch_storage_type(p.y.data_type, [&](auto tag) {
        using T = decltype(tag);
        blend_epilogue<T> e;
        e.y = static_cast<T*>(a.y);
        widen_strides(p.y, p.spatial_dims, e.y_strides);
        e.alpha = a.alpha;
        e.beta = a.beta;
        launch_gemm(make_forward_ops<T>(p, l, a.x, a.w, e), l.plan, l.flags, l.m_fastest, nullptr, ctx);
      });
      return;
    }
    if (p.output_scale_count > 0 && a.output_scales == nullptr) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "output_scales is null but output_scale_count is " +
                                                    std::to_string(p.output_scale_count));
    }
    const float* device_scales = nullptr;
    if (per_channel_scales(p)) {
      if (reinterpret_cast<uintptr_t>(ws) % alignof(float) != 0) {
        throw status_error(TSRP_STATUS_BAD_PARAM, "the workspace is not aligned to 4 bytes");
      }
      float* destination = static_cast<float*>(ws);
      for (int32_t first = 0; first < p.output_scale_count; first += scale_chunk) {
        const int32_t count = std::min(scale_chunk, p.output_scale_count - first);
        scale_block block{};
        std::memcpy(block.values, a.output_scales + first, static_cast<size_t>(count) * sizeof(float));
        upload_scales<<<1, 256, 0, ctx.stream()>>>(block, count, destination + first);
      }
      device_scales = destination;
    }
    const float scale = p.output_scale_count == 1 ? a.output_scales[0] : 1.0f;
    auto launch = [&](auto tag) {
      using TOut = decltype(tag);
      quantized_epilogue<TOut> e;
      e.y = static_cast<TOut*>(a.y);
      widen_strides(p.y, p.spatial_dims, e.y_strides);
      e.alpha = a.alpha;
      e.beta = a.beta;
      e.scale = scale;
      e.scales = device_scales;
      launch_gemm(make_forward_ops<int8_t>(p, l, a.x, a.w, e), l.plan, l.flags, l.m_fastest, nullptr, ctx);
    };
    switch (p.y.data_type) {
      case TSRP_DATA_INT8: launch(int8_t{}); break;
      case TSRP_DATA_INT32: launch(int32_t{}); break;
      default: launch(float{}); break;
    }
  }
};

}  // namespace

tsrpKernel conv_fwd_tiled_kernel() noexcept { return make_kernel<forward_traits>(); }

}  // namespace tessera::cuda
