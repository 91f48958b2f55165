// Kernel "conv_fwd_direct": y = alpha * conv(x, w) + beta * y for 1-D, 2-D and 3-D problems.
// One thread per output element accumulates its whole dot product in fp32 in a fixed order, so it
// is deterministic and its accuracy does not depend on the layout. Any strides work (NCHW, NHWC,
// anything else) because every access goes through the tensor's own strides. It is the
// correctness baseline: the fast kernels of later issues are checked against it.
#include "cuda_context.hpp"
#include "cuda_device.hpp"
#include "cuda_errors.hpp"
#include "cuda_kernels.hpp"
#include "current_device_guard.hpp"
#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda {
namespace {

constexpr const char* kernel_name = "conv_fwd_direct";
constexpr int threads_per_block = 256;
// Problems of lower rank are padded to 3 spatial dims in front (size 1, stride 0, pad 0, stride 1,
// dilation 1), so one kernel serves 1-D, 2-D and 3-D with no rank branches. Index 0 is depth,
// 1 height, 2 width.
constexpr int spatial = TSRP_MAX_SPATIAL_DIMS;

struct conv_geometry {
  int64_t batch;
  int64_t out_channels;
  int64_t channels_per_group;      // C / groups: the reduction length per filter tap
  int64_t out_channels_per_group;  // K / groups
  int64_t in_size[spatial];
  int64_t out_size[spatial];
  int64_t filter_size[spatial];
  int64_t pad_before[spatial];
  int64_t stride[spatial];
  int64_t dilation[spatial];
  // Element strides by dim: [0] N or K, [1] C, [2..4] depth, height, width.
  int64_t x_strides[2 + spatial];
  int64_t w_strides[2 + spatial];
  int64_t y_strides[2 + spatial];
  int64_t output_count;
  bool flip;  // TSRP_CONVOLUTION: the filter is applied mirrored in every spatial dim
};

// ChannelsLast picks the order in which consecutive threads walk the output: with K fastest when
// y's channel stride is the smallest (NHWC-like), with width fastest otherwise (NCHW-like), so
// that a warp's stores and x loads stay close in memory either way.
template <typename TIn, typename TOut, bool ChannelsLast>
__global__ void __launch_bounds__(threads_per_block)
    conv_fwd_direct(const TIn* x, const TIn* w, TOut* y, conv_geometry g, float alpha, float beta) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t index = first; index < g.output_count; index += step) {
    int64_t rest = index;
    int64_t n, k, o0, o1, o2;
    if constexpr (ChannelsLast) {  // index = (((n * O0 + o0) * O1 + o1) * O2 + o2) * K + k
      k = rest % g.out_channels;
      rest /= g.out_channels;
      o2 = rest % g.out_size[2];
      rest /= g.out_size[2];
      o1 = rest % g.out_size[1];
      rest /= g.out_size[1];
      o0 = rest % g.out_size[0];
      n = rest / g.out_size[0];
    } else {  // index = (((n * K + k) * O0 + o0) * O1 + o1) * O2 + o2
      o2 = rest % g.out_size[2];
      rest /= g.out_size[2];
      o1 = rest % g.out_size[1];
      rest /= g.out_size[1];
      o0 = rest % g.out_size[0];
      rest /= g.out_size[0];
      k = rest % g.out_channels;
      n = rest / g.out_channels;
    }
    // Filter k sees only the input channels of its group: [group * C/g, (group + 1) * C/g).
    const int64_t group = k / g.out_channels_per_group;
    const TIn* x_image = x + n * g.x_strides[0] + group * g.channels_per_group * g.x_strides[1];
    const TIn* w_filter = w + k * g.w_strides[0];
    // Input coordinate of filter tap 0; tap f reads origin + f * dilation.
    const int64_t origin0 = o0 * g.stride[0] - g.pad_before[0];
    const int64_t origin1 = o1 * g.stride[1] - g.pad_before[1];
    const int64_t origin2 = o2 * g.stride[2] - g.pad_before[2];

    float acc = 0.0f;
    for (int64_t f0 = 0; f0 < g.filter_size[0]; ++f0) {
      const int64_t i0 = origin0 + f0 * g.dilation[0];
      if (i0 < 0 || i0 >= g.in_size[0]) continue;  // zero padding
      const int64_t w0 = g.flip ? g.filter_size[0] - 1 - f0 : f0;
      for (int64_t f1 = 0; f1 < g.filter_size[1]; ++f1) {
        const int64_t i1 = origin1 + f1 * g.dilation[1];
        if (i1 < 0 || i1 >= g.in_size[1]) continue;
        const int64_t w1 = g.flip ? g.filter_size[1] - 1 - f1 : f1;
        for (int64_t f2 = 0; f2 < g.filter_size[2]; ++f2) {
          const int64_t i2 = origin2 + f2 * g.dilation[2];
          if (i2 < 0 || i2 >= g.in_size[2]) continue;
          const int64_t w2 = g.flip ? g.filter_size[2] - 1 - f2 : f2;
          const TIn* x_tap = x_image + i0 * g.x_strides[2] + i1 * g.x_strides[3] + i2 * g.x_strides[4];
          const TIn* w_tap = w_filter + w0 * g.w_strides[2] + w1 * g.w_strides[3] + w2 * g.w_strides[4];
          for (int64_t c = 0; c < g.channels_per_group; ++c) {
            acc += to_float(x_tap[c * g.x_strides[1]]) * to_float(w_tap[c * g.w_strides[1]]);
          }
        }
      }
    }
    TOut* y_out = y + n * g.y_strides[0] + k * g.y_strides[1] + o0 * g.y_strides[2] + o1 * g.y_strides[3] +
                  o2 * g.y_strides[4];
    float r = alpha * acc;
    if (beta != 0.0f) r += beta * to_float(*y_out);  // beta 0: y may hold NaN and is not read
    *y_out = from_float<TOut>(r);
  }
}

// ---- host side ---------------------------------------------------------------------------------

// Empty when the kernel can run the problem; otherwise why not. The device is not looked at here.
std::string problem_support(const void* problem) {
  if (problem == nullptr) return "convolution problem is null";
  const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
  if (p.struct_size < sizeof(tsrpConvolutionProblem)) {
    return "convolution problem struct_size " + std::to_string(p.struct_size) + " is smaller than " +
           std::to_string(sizeof(tsrpConvolutionProblem));
  }
  const std::string by = std::string(" not supported by ") + kernel_name;
  if (p.spatial_dims < 1 || p.spatial_dims > spatial) {
    return std::to_string(p.spatial_dims) + " spatial dims" + by + " (1 to 3)";
  }
  for (int32_t type : {p.x.data_type, p.w.data_type, p.y.data_type}) {
    if (!is_floating_storage(type)) return std::string("data type ") + data_type_name(type) + by;
  }
  if (p.x.data_type != p.w.data_type) {
    return std::string("x is ") + data_type_name(p.x.data_type) + " but w is " + data_type_name(p.w.data_type) +
           ": " + kernel_name + " needs x and w of one data type";
  }
  // Accumulating in fp32 is at least as accurate as a half or bf16 compute type asks for.
  if (!is_floating_storage(p.compute_type)) {
    return std::string("compute type ") + data_type_name(p.compute_type) + by;
  }
  if (p.mode != TSRP_CROSS_CORRELATION && p.mode != TSRP_CONVOLUTION) {
    return "convolution mode " + std::to_string(p.mode) + by;
  }
  const int32_t rank = p.spatial_dims + 2;
  if (p.x.ndims != rank || p.w.ndims != rank || p.y.ndims != rank) {
    return "x, w and y must have " + std::to_string(rank) + " dims for " + std::to_string(p.spatial_dims) +
           " spatial dims";
  }
  for (const tsrpTensor* t : {&p.x, &p.w, &p.y}) {
    for (int d = 0; d < rank; ++d) {
      if (t->dims[d] < 0) return "negative tensor dim";
    }
  }
  if (p.groups < 1) return "groups " + std::to_string(p.groups) + by;
  const int64_t channels = p.x.dims[1], out_channels = p.w.dims[0];
  if (channels % p.groups != 0 || out_channels % p.groups != 0) {
    return "channels " + std::to_string(channels) + " and filters " + std::to_string(out_channels) +
           " are not both divisible by groups " + std::to_string(p.groups);
  }
  if (p.w.dims[1] != channels / p.groups) return "filter channels differ from input channels / groups";
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != out_channels) return "y's N or K differs from x's N or w's K";
  for (int s = 0; s < p.spatial_dims; ++s) {
    if (p.stride[s] < 1) return "stride " + std::to_string(p.stride[s]) + by;
    if (p.dilation[s] < 1) return "dilation " + std::to_string(p.dilation[s]) + by;
  }
  return {};
}

conv_geometry make_geometry(const tsrpConvolutionProblem& p) {
  conv_geometry g{};
  g.batch = p.x.dims[0];
  g.out_channels = p.w.dims[0];
  g.channels_per_group = p.x.dims[1] / p.groups;
  g.out_channels_per_group = p.w.dims[0] / p.groups;
  g.flip = p.mode == TSRP_CONVOLUTION;
  for (int d = 0; d < 2; ++d) {
    g.x_strides[d] = p.x.strides[d];
    g.w_strides[d] = p.w.strides[d];
    g.y_strides[d] = p.y.strides[d];
  }
  const int lead = spatial - p.spatial_dims;  // padded leading spatial dims
  for (int s = 0; s < spatial; ++s) {
    if (s < lead) {
      g.in_size[s] = g.out_size[s] = g.filter_size[s] = 1;
      g.pad_before[s] = 0;
      g.stride[s] = g.dilation[s] = 1;
      g.x_strides[2 + s] = g.w_strides[2 + s] = g.y_strides[2 + s] = 0;
    } else {
      const int from = s - lead;  // index into the problem's spatial arrays
      g.in_size[s] = p.x.dims[2 + from];
      g.out_size[s] = p.y.dims[2 + from];
      g.filter_size[s] = p.w.dims[2 + from];
      g.pad_before[s] = p.pad_before[from];
      g.stride[s] = p.stride[from];
      g.dilation[s] = p.dilation[from];
      g.x_strides[2 + s] = p.x.strides[2 + from];
      g.w_strides[2 + s] = p.w.strides[2 + from];
      g.y_strides[2 + s] = p.y.strides[2 + from];
    }
  }
  g.output_count = element_count(p.y);
  return g;
}

void run_conv(void* context, const void* problem, const void* args) {
  cuda_context& ctx = context_from_handle(context);
  const std::string unsupported = problem_support(problem);
  if (!unsupported.empty()) throw status_error(TSRP_STATUS_NOT_SUPPORTED, unsupported);
  if (args == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, "convolution arguments are null");
  const auto& a = *static_cast<const tsrpConvolutionForwardArgs*>(args);
  if (a.struct_size < sizeof(tsrpConvolutionForwardArgs)) {
    throw status_error(TSRP_STATUS_BAD_PARAM, "convolution arguments struct_size " + std::to_string(a.struct_size) +
                                                  " is smaller than " +
                                                  std::to_string(sizeof(tsrpConvolutionForwardArgs)));
  }
  if (!ctx.can_run_plugin_code()) {
    throw status_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string(kernel_name) + " needs compute capability 9.0 or newer; CUDA device " +
                           std::to_string(ctx.device_ordinal()) + " is sm_" +
                           std::to_string(ctx.compute_capability_major()) +
                           std::to_string(ctx.compute_capability_minor()));
  }
  const auto& p = *static_cast<const tsrpConvolutionProblem*>(problem);
  const conv_geometry g = make_geometry(p);
  if (g.output_count == 0) return;
  // An empty x or w is legal (C == 0 gives y = beta * y) and may come with a null pointer.
  if (a.y == nullptr || (a.x == nullptr && element_count(p.x) > 0) || (a.w == nullptr && element_count(p.w) > 0)) {
    throw status_error(TSRP_STATUS_BAD_PARAM, std::string(kernel_name) + ": a tensor pointer is null");
  }
  const int y_last = p.y.ndims - 1;
  const bool channels_last = g.out_channels > 1 && p.y.strides[1] < p.y.strides[y_last];

  current_device_guard on_device(ctx.device_ordinal());
  const cudaStream_t stream = ctx.stream();
  const unsigned int blocks = ctx.grid_stride_blocks(g.output_count, threads_per_block);
  dispatch_storage_type(p.x.data_type, [&](auto in_tag) {
    using TIn = decltype(in_tag);
    dispatch_storage_type(p.y.data_type, [&](auto out_tag) {
      using TOut = decltype(out_tag);
      const TIn* x = static_cast<const TIn*>(a.x);
      const TIn* w = static_cast<const TIn*>(a.w);
      TOut* y = static_cast<TOut*>(a.y);
      if (channels_last) {
        conv_fwd_direct<TIn, TOut, true><<<blocks, threads_per_block, 0, stream>>>(x, w, y, g, a.alpha, a.beta);
      } else {
        conv_fwd_direct<TIn, TOut, false><<<blocks, threads_per_block, 0, stream>>>(x, w, y, g, a.alpha, a.beta);
      }
    });
  });
  check_cuda(cudaGetLastError(), "launching conv_fwd_direct");
}

int can_implement(void*, const void* problem, char* reason, size_t reason_size) noexcept {
  try {
    std::string why = problem_support(problem);
    if (why.empty() && visible_device_count() == 0) why = "no CUDA device present";
    if (why.empty()) return 1;
    write_text(reason, reason_size, why);
    return 0;
  } catch (...) {
    write_text(reason, reason_size, "conv_fwd_direct: internal error while checking the problem");
    return 0;
  }
}

tsrpStatus_t run(void*, void* context, const void* problem, const void* args, void*, size_t, char* message,
                 size_t message_size) {
  return call_with_message(message, message_size, [&] { run_conv(context, problem, args); });
}

constexpr const char* conv_notes =
    "direct convolution, one thread per output element, fp32 accumulation whatever the compute "
    "type (no tensor cores, no tf32); any layout; reference speed";

}  // namespace

const tsrpKernel& conv_fwd_direct_kernel() noexcept {
  static const tsrpKernel kernel = {sizeof(tsrpKernel), kernel_name, TSRP_OP_CONVOLUTION_FORWARD,
                                    TSRP_KERNEL_DETERMINISTIC, conv_notes, nullptr, can_implement,
                                    nullptr, run, nullptr /* estimate_us */};
  return kernel;
}

}  // namespace tessera::cuda
