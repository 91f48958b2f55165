#include "cudnn_convolution_geometry.hpp"

#include "cudnn_symbols.hpp"

#include <algorithm>
#include <climits>

namespace tessera::cudnn_plugin {
namespace {

// (N, C, W) -> (N, C, 1, W): the unit height's stride keeps a packed tensor packed.
tsrpTensor lift_to_2d(const tsrpTensor& t) {
  tsrpTensor u = t;
  u.ndims = t.ndims + 1;
  u.dims[2] = 1;
  u.strides[2] = t.dims[2] * t.strides[2];
  for (int i = 2; i < t.ndims; ++i) {
    u.dims[i + 1] = t.dims[i];
    u.strides[i + 1] = t.strides[i];
  }
  return u;
}

// Dims in memory order, outermost first: NCHW (0, 1, 2, ...) or NHWC (0, 2, ..., 1).
void memory_order(int ndims, bool channels_last, int* order) {
  order[0] = 0;
  if (!channels_last) {
    for (int i = 1; i < ndims; ++i) order[i] = i;
    return;
  }
  for (int i = 2; i < ndims; ++i) order[i - 1] = i;
  order[ndims - 1] = 1;
}

// Packed in that memory order; unit dims may have any stride.
bool packed_in(const tsrpTensor& t, bool channels_last) {
  int order[TSRP_MAX_DIMS];
  memory_order(t.ndims, channels_last, order);
  int64_t expect = 1;
  for (int k = t.ndims - 1; k >= 0; --k) {
    const int i = order[k];
    if (t.dims[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.dims[i];
  }
  return true;
}

tsrpTensor packed_tensor(int32_t data_type, int ndims, const int64_t* dims, bool channels_last) {
  tsrpTensor t{};
  t.data_type = data_type;
  t.ndims = ndims;
  int order[TSRP_MAX_DIMS];
  memory_order(ndims, channels_last, order);
  int64_t stride = 1;
  for (int k = ndims - 1; k >= 0; --k) {
    const int i = order[k];
    t.dims[i] = dims[i];
    t.strides[i] = stride;
    stride *= dims[i];
  }
  return t;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

}  // namespace

std::string plan_convolution(const convolution_shape& s, convolution_plan* plan) {
  const int32_t dt = s.x.data_type;
  if (dt == TSRP_DATA_INT8 || s.w.data_type == TSRP_DATA_INT8)
    return "int8 not supported by the cudnn plugin (cuDNN's legacy int8 convolution needs vectorised "
           "INT8x4/x32 layouts and has no per-channel output scales)";
  if (!floating(dt)) return std::string("x data type ") + data_type_name(dt) + " not supported";
  if (s.w.data_type != dt || s.y.data_type != dt)
    return std::string("x, w and y must share one data type (x ") + data_type_name(dt) + ", w " +
           data_type_name(s.w.data_type) + ", y " + data_type_name(s.y.data_type) + ")";
  if (!(s.compute_type == TSRP_DATA_FLOAT || (s.compute_type == TSRP_DATA_HALF && dt == TSRP_DATA_HALF)))
    return std::string("compute type ") + data_type_name(s.compute_type) + " with " + data_type_name(dt) +
           " data is not a cuDNN configuration";
  if (s.spatial_dims < 1 || s.spatial_dims > 3)
    return std::to_string(s.spatial_dims) + " spatial dims (cuDNN convolves 1 to 3)";
  if (s.groups < 1 || !fits_int(s.groups)) return "group count " + std::to_string(s.groups) + " out of range";

  const bool one_d = s.spatial_dims == 1;
  plan->x = one_d ? lift_to_2d(s.x) : s.x;
  plan->w = one_d ? lift_to_2d(s.w) : s.w;
  plan->y = one_d ? lift_to_2d(s.y) : s.y;
  plan->spatial = one_d ? 2 : s.spatial_dims;
  const int first = one_d ? 1 : 0;  // the lifted height: no padding, unit stride and dilation
  plan->pad[0] = 0;
  plan->stride[0] = 1;
  plan->dilation[0] = 1;
  plan->staged = false;
  for (int i = 0; i < s.spatial_dims; ++i) {
    const int j = i + first;
    const int64_t low = std::min(s.pad_before[i], s.pad_after[i]);
    if (!fits_int(low) || !fits_int(s.stride[i]) || !fits_int(s.dilation[i]))
      return "padding, stride or dilation of spatial dim " + std::to_string(i) + " exceeds cuDNN's int range";
    plan->pad[j] = static_cast<int>(low);
    plan->stride[j] = static_cast<int>(s.stride[i]);
    plan->dilation[j] = static_cast<int>(s.dilation[i]);
    if (s.pad_before[i] != s.pad_after[i]) plan->staged = true;
  }

  // A filter packed both ways (one input channel per group, e.g. depthwise) takes x's layout
  // family, the combination cuDNN's kernels are built for.
  const bool x_channels_last = plan->x.dims[1] > 1 && plan->x.strides[1] == 1;
  if (x_channels_last && packed_in(plan->w, true)) {
    plan->filter_format = CUDNN_TENSOR_NHWC;
  } else if (packed_in(plan->w, false)) {
    plan->filter_format = CUDNN_TENSOR_NCHW;
  } else if (packed_in(plan->w, true)) {
    plan->filter_format = CUDNN_TENSOR_NHWC;
  } else {
    return "the filter must be packed KCRS or KRSC (cuDNN describes filters by format, not strides)";
  }

  if (plan->staged) {
    // Stage in x's own layout family, so cuDNN sees the layout the caller chose.
    const bool channels_last = x_channels_last;
    int64_t extended[TSRP_MAX_DIMS];
    for (int i = 0; i < plan->x.ndims; ++i) extended[i] = plan->x.dims[i];
    size_t offset = 0;
    for (int i = 0; i < s.spatial_dims; ++i)
      extended[2 + i + first] += std::max(s.pad_before[i], s.pad_after[i]) - std::min(s.pad_before[i], s.pad_after[i]);
    plan->x_staged = packed_tensor(dt, plan->x.ndims, extended, channels_last);
    plan->x_interior = plan->x;
    for (int i = 0; i < plan->x.ndims; ++i) plan->x_interior.strides[i] = plan->x_staged.strides[i];
    for (int i = 0; i < s.spatial_dims; ++i) {
      const int64_t shift = s.pad_before[i] - std::min(s.pad_before[i], s.pad_after[i]);
      offset += static_cast<size_t>(shift * plan->x_staged.strides[2 + i + first]);
    }
    plan->interior_offset = offset * element_size(dt);
    plan->staged_bytes = align_up(packed_bytes(plan->x_staged, dt));
  }
  // Every tensor must fit cuDNN's int indexing.
  for (const tsrpTensor* t : {&plan->x, &plan->w, &plan->y, &plan->x_staged}) {
    if (t == &plan->x_staged && !plan->staged) continue;
    cudnn_tensor_shape shape;
    std::string why = cudnn_shape_of(*t, 4, &shape);
    if (!why.empty()) return why;
  }
  return {};
}

tsrpTensor lifted_like_plan(const convolution_shape& s, const tsrpTensor& t) {
  return s.spatial_dims == 1 ? lift_to_2d(t) : t;
}

void build_convolution_descriptors(const convolution_shape& s, const convolution_plan& plan,
                                   convolution_descriptors* d) {
  const int32_t dt = plan.x.data_type;
  if (plan.staged) {
    d->x = make_tensor_descriptor(plan.x_staged);
    d->x_user = make_tensor_descriptor(plan.x);
    d->x_interior = make_tensor_descriptor(plan.x_interior);
  } else {
    d->x = make_tensor_descriptor(plan.x);
  }
  d->y = make_tensor_descriptor(plan.y);

  cudnnDataType_t type = CUDNN_DATA_FLOAT, compute = CUDNN_DATA_FLOAT;
  (void)cudnn_data_type(dt, &type);
  (void)cudnn_data_type(s.compute_type, &compute);
  int filter_dims[TSRP_MAX_DIMS];
  for (int i = 0; i < plan.w.ndims; ++i) filter_dims[i] = static_cast<int>(plan.w.dims[i]);
  d->w = new_filter_descriptor();
  check_cudnn(cudnn().cudnnSetFilterNdDescriptor(d->w, type, plan.filter_format, plan.w.ndims, filter_dims),
              "cudnnSetFilterNdDescriptor");

  // Tessera's mode values are cuDNN's swapped: cuDNN's CUDNN_CONVOLUTION is 0.
  const cudnnConvolutionMode_t mode = s.mode == TSRP_CONVOLUTION ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  d->conv = new_convolution_descriptor();
  check_cudnn(cudnn().cudnnSetConvolutionNdDescriptor(d->conv, plan.spatial, plan.pad, plan.stride, plan.dilation,
                                                      mode, compute),
              "cudnnSetConvolutionNdDescriptor");
  check_cudnn(cudnn().cudnnSetConvolutionGroupCount(d->conv, static_cast<int>(s.groups)),
              "cudnnSetConvolutionGroupCount");
  check_cudnn(cudnn().cudnnSetConvolutionMathType(d->conv, cudnn_math_type(dt, s.math_mode)),
              "cudnnSetConvolutionMathType");
}

void stage_input(cudnnHandle_t handle, const convolution_plan& plan, const convolution_descriptors& d,
                 const void* x, void* staging) {
  // cudnnSetTensor reads one element of the tensor's type: eight zero bytes are 0 in all of them.
  static const double zero = 0.0;
  check_cudnn(cudnn().cudnnSetTensor(handle, d.x, staging, &zero), "cudnnSetTensor (zeroing the padded copy of x)");
  const float one = 1.0f, none = 0.0f;
  check_cudnn(cudnn().cudnnTransformTensor(handle, &one, d.x_user, x, &none, d.x_interior,
                                           static_cast<char*>(staging) + plan.interior_offset),
              "cudnnTransformTensor (x into its padded copy)");
}

}  // namespace tessera::cudnn_plugin
