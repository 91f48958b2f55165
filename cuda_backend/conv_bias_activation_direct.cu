// Kernel "conv_bias_act_fwd_tiled": y = act(alpha1 * conv(x, w) + alpha2 * z + bias) on the
// family's implicit-GEMM engine (conv_direct_engine.cuh), fp32/fp16/bf16 with fp32 accumulation,
// every activation mode, any layouts (x, w, y, z and bias each at their own strides), 1-3 spatial
// dims, groups, padding, stride, dilation, both modes. All of it happens in fp32 in the epilogue,
// before the one rounding to y's type, as the ABI asks. The thread that computes an output is
// the only one that reads its z and writes its y, so z may alias y.
//
// add_conv_fused_kernels also registers the family's forward kernel, conv_fwd_tiled
// (conv_int8_direct.cu), which carries the int8 forward.
#include "activation_functions.cuh"
#include "conv_direct_engine.cuh"
#include "conv_direct_forward.cuh"
#include "conv_direct_geometry.cuh"
#include "conv_direct_kernels.hpp"
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

template <typename T>
struct bias_activation_epilogue {
  T* y;
  const T* z;  // null without a residual
  const T* bias;
  int64_t y_strides[2 + spatial];
  int64_t z_strides[2 + spatial];
  int64_t bias_stride;
  float alpha1;
  float alpha2;
  float coef;
  int32_t mode;
  __device__ __forceinline__ void apply(int32_t n, int32_t k, const int32_t (&o)[spatial], float acc) const {
    // The reference's order: the scaled convolution, the bias, then the scaled residual.
    float v = alpha1 * acc + to_float(bias[k * bias_stride]);
    if (z != nullptr) v += alpha2 * to_float(z[widened_offset(z_strides, n, k, o)]);
    y[widened_offset(y_strides, n, k, o)] = from_float<T>(activation_by_mode<false>(mode, v, coef));
  }
};

struct fused_traits {
  using problem_type = tsrpConvolutionBiasActivationProblem;
  using args_type = tsrpConvolutionBiasActivationArgs;
  static constexpr const char* name = "conv_bias_act_fwd_tiled";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "implicit GEMM on CUDA cores: 64x64 output tiles staged through shared memory for groups of "
      "16 or more filters, one output per 1-32 threads for narrower groups (depthwise); any layout. "
      "fp32 accumulation whatever the compute type (no tensor cores, no tf32); alpha1, bias, alpha2 "
      "* z and the activation (accurate libdevice expf/tanhf/erff) in fp32, one rounding to y's "
      "type. Fixed summation order: bitwise reproducible";

  static std::string support(const problem_type& p) {
    std::string why = geometry_support(p);
    if (!why.empty()) return why;
    const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "y"}};
    for (const auto& [t, tensor_name] : tensors) {
      if (!is_floating_storage(t->data_type)) {
        return std::string("data type ") + data_type_name(t->data_type) + " of tensor " + tensor_name +
               " (the fused convolution takes f32, f16 and bf16)";
      }
    }
    if (p.x.data_type != p.w.data_type || p.x.data_type != p.y.data_type) {
      return std::string("x, w and y must have one data type (got ") + data_type_name(p.x.data_type) + ", " +
             data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
    }
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " for floating inputs (fp32 accumulation)";
    }
    if (p.bias.ndims != p.y.ndims || p.bias.data_type != p.y.data_type) {
      return "bias must have y's number of dims and data type";
    }
    for (int d = 0; d < p.bias.ndims; ++d) {
      if (p.bias.dims[d] != (d == 1 ? p.y.dims[1] : 1)) return "bias must be 1 x K x 1 ... (K of y)";
    }
    if (p.has_z != 0 && p.has_z != 1) return "has_z " + std::to_string(p.has_z) + " is neither 0 nor 1";
    if (p.has_z) {
      if (!same_dims(p.z, p.y) || p.z.data_type != p.y.data_type) return "z must have y's dims and data type";
      // Another thread's y would be this thread's z: a race.
      if (p.z_aliases_y && !same_strides(p.z, p.y)) return "z aliases y but their strides differ";
    }
    if (p.activation_mode < TSRP_ACTIVATION_IDENTITY || p.activation_mode > TSRP_ACTIVATION_SWISH) {
      return "activation mode " + std::to_string(p.activation_mode) + " is not a tsrpActivationMode_t";
    }
    return {};
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.y, element_count(p.y), "y");
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.bias, element_count(p.bias), "bias");
    if (p.has_z) require_pointer(a.z, element_count(p.z), "z");
    const forward_launch l = plan_forward(p);
    dispatch_storage_type(p.y.data_type, [&](auto tag) {
      using T = decltype(tag);
      bias_activation_epilogue<T> e;
      e.y = static_cast<T*>(a.y);
      e.z = p.has_z ? static_cast<const T*>(a.z) : nullptr;
      e.bias = static_cast<const T*>(a.bias);
      widen_strides(p.y, p.spatial_dims, e.y_strides);
      widen_strides(p.has_z ? p.z : p.y, p.spatial_dims, e.z_strides);
      e.bias_stride = p.bias.strides[1];
      e.alpha1 = a.alpha1;
      e.alpha2 = a.alpha2;
      e.coef = static_cast<float>(p.activation_coef);
      e.mode = p.activation_mode;
      launch_gemm(make_forward_ops<T>(p, l, a.x, a.w, e), l.plan, l.flags, l.m_fastest, nullptr, ctx);
    });
  }
};

}  // namespace

void add_conv_fused_kernels(kernel_list& out) {
  out.push_back(make_kernel<fused_traits>());
  out.push_back(conv_fwd_tiled_kernel());
}

}  // namespace tessera::cuda
