// The backward convolution kernels, fp32/fp16/bf16 with fp32 accumulation, any layouts (each
// tensor at its own strides), 1-3 spatial dims, groups (depthwise included), padding, stride,
// dilation, both modes (convolution mode mirrors the filter):
//   conv_bwd_data_tiled    dx = alpha * conv_backward_data(w, dy) + beta * dx, a gather: each dx
//                          element sums over the filter taps and outputs that touch it;
//   conv_bwd_filter_tiled  dw = alpha * conv_backward_filter(x, dy) + beta * dw: each dw element
//                          reduces over N and the output positions, the reduction split into a
//                          fixed number of chunks whose partials are added in chunk order;
//   conv_bwd_bias_reduce   db = alpha * sum(dy over N and positions) + beta * db, two passes.
// Data and filter run on the family's implicit-GEMM engine (conv_direct_engine.cuh, operands in
// conv_direct_backward.cuh), bias on conv_direct_bias_grad.cuh. No atomics: bitwise reproducible.
#include "conv_direct_backward.cuh"
#include "conv_direct_bias_grad.cuh"
#include "conv_direct_engine.cuh"
#include "conv_direct_geometry.cuh"
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

using namespace conv_direct;

constexpr const char* tiled_notes_tail =
    "implicit GEMM on CUDA cores: 64x64 output tiles staged through shared memory where both "
    "sides of a group reach 16, one output per 1-32 threads otherwise (depthwise); fp32 "
    "accumulation whatever the compute type (no tensor cores, no tf32); any layout; fixed "
    "summation order, no atomics: bitwise reproducible";

// Backward data and filter share the forward problem and its checks.
std::string backward_support(const tsrpConvolutionProblem& p) {
  std::string why = geometry_support(p);
  if (!why.empty()) return why;
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "dy"}};
  for (const auto& [t, tensor_name] : tensors) {
    if (!is_floating_storage(t->data_type)) {
      return std::string("data type ") + data_type_name(t->data_type) + " of tensor " + tensor_name +
             " (backward convolutions take f32, f16 and bf16)";
    }
  }
  if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type) {
    return std::string("all tensors must have one data type (got ") + data_type_name(p.x.data_type) + ", " +
           data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
  }
  if (!is_floating_storage(p.compute_type)) {
    return std::string("compute type ") + data_type_name(p.compute_type) + " for floating tensors (fp32 accumulation)";
  }
  if (p.output_scale_count != 0) return "output scales are for the int8 forward convolution only";
  return {};
}

struct backward_data_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = "conv_bwd_data_tiled";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = tiled_notes_tail;

  static std::string support(const problem_type& p) { return backward_support(p); }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.dx, element_count(p.x), "dx");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.dy, element_count(p.y), "dy");
    const backward_launch l = plan_backward_data(p);
    dispatch_storage_type(p.x.data_type, [&](auto tag) {
      using T = decltype(tag);
      launch_gemm(make_backward_data_ops<T>(p, l, a.w, a.dy, a.dx, a.alpha, a.beta), l.plan, l.flags, l.m_fastest,
                  nullptr, ctx);
    });
  }
};

struct backward_filter_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = "conv_bwd_filter_tiled";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = tiled_notes_tail;

  static std::string support(const problem_type& p) { return backward_support(p); }

  // The split partials: splits x dw elements floats, none when the reduction is not split.
  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    return plan_workspace<float>(plan_backward_filter(p).plan);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* ws, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.dw, element_count(p.w), "dw");
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    const backward_launch l = plan_backward_filter(p);
    dispatch_storage_type(p.x.data_type, [&](auto tag) {
      using T = decltype(tag);
      launch_gemm(make_backward_filter_ops<T>(p, l, a.x, a.dy, a.dw, a.alpha, a.beta), l.plan, l.flags, l.m_fastest,
                  ws, ctx);
    });
  }
};

struct backward_bias_traits {
  using problem_type = tsrpConvolutionBackwardBiasProblem;
  using args_type = tsrpConvolutionBackwardBiasArgs;
  static constexpr const char* name = "conv_bwd_bias_reduce";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_BIAS;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "two-pass reduction: fixed chunks of each channel summed in fp32 into the workspace (16-byte "
      "loads for packed NCHW and NHWC), then added in chunk order; any layout; no atomics: bitwise "
      "reproducible";

  static std::string support(const problem_type& p) {
    if (p.dy.ndims < 3 || p.dy.ndims > 2 + spatial) {
      return "dy has " + std::to_string(p.dy.ndims) + " dims, expected 3 to 5";
    }
    if (p.db.ndims != p.dy.ndims) return "db must have as many dims as dy";
    for (int d = 0; d < p.dy.ndims; ++d) {
      if (p.dy.dims[d] < 0) return "dy has a negative dim";
      if (p.db.dims[d] != (d == 1 ? p.dy.dims[1] : 1)) return "db must be 1 x K x 1 ... (K of dy)";
    }
    if (!is_floating_storage(p.dy.data_type) || p.db.data_type != p.dy.data_type) {
      return std::string("dy and db must share one of f32, f16, bf16 (got ") + data_type_name(p.dy.data_type) + ", " +
             data_type_name(p.db.data_type) + ")";
    }
    if (element_count(p.dy) > index_limit) return "dy has more than 2^31 elements";
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (p.dy.dims[1] == 0) return 0;
    return bias_workspace(plan_bias(p.dy));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* ws, size_t) {
    if (p.dy.dims[1] == 0) return;
    require_pointer(a.db, p.dy.dims[1], "db");
    require_pointer(a.dy, element_count(p.dy), "dy");
    if (ws == nullptr || reinterpret_cast<uintptr_t>(ws) % alignof(float) != 0) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "the workspace is null or not aligned to 4 bytes");
    }
    const bias_plan plan = plan_bias(p.dy);
    float* partials = static_cast<float*>(ws);
    const cudaStream_t stream = ctx.stream();
    dispatch_storage_type(p.dy.data_type, [&](auto tag) {
      using T = decltype(tag);
      constexpr int wide = 16 / sizeof(T);
      const T* dy = static_cast<const T*>(a.dy);
      const bool aligned = reinterpret_cast<uintptr_t>(dy) % 16 == 0;
      if (plan.channel_minor) {
        const unsigned tiles = static_cast<unsigned>((plan.channels + 32 * plan.vector - 1) / (32 * plan.vector));
        const dim3 grid(tiles, static_cast<unsigned>(plan.chunks));
        if (plan.vector > 1) {
          bias_grad_channel_minor<T, wide><<<grid, bias_threads, 0, stream>>>(
              dy, plan.positions, plan.channel_stride, plan.units, plan.units_per_chunk, plan.channels, partials, aligned);
        } else {
          bias_grad_channel_minor<T, 1><<<grid, bias_threads, 0, stream>>>(
              dy, plan.positions, plan.channel_stride, plan.units, plan.units_per_chunk, plan.channels, partials, aligned);
        }
      } else {
        const dim3 grid(static_cast<unsigned>(plan.channels), static_cast<unsigned>(plan.chunks));
        if (plan.vector > 1) {
          bias_grad_channel_major<T, wide><<<grid, bias_threads, 0, stream>>>(
              dy, plan.positions, plan.channel_stride, plan.units, plan.units_per_chunk, plan.channels, partials, aligned);
        } else {
          bias_grad_channel_major<T, 1><<<grid, bias_threads, 0, stream>>>(
              dy, plan.positions, plan.channel_stride, plan.units, plan.units_per_chunk, plan.channels, partials, aligned);
        }
      }
      bias_grad_finalize<T><<<ctx.grid_stride_blocks(plan.channels, bias_threads), bias_threads, 0, stream>>>(
          partials, plan.chunks, plan.channels, static_cast<T*>(a.db), p.db.strides[1], a.alpha, a.beta);
    });
  }
};

}  // namespace

void add_conv_backward_kernels(kernel_list& out) {
  out.push_back(make_kernel<backward_data_traits>());
  out.push_back(make_kernel<backward_filter_traits>());
  out.push_back(make_kernel<backward_bias_traits>());
}

}  // namespace tessera::cuda
