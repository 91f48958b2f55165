#include "cudnn_descriptors.hpp"

#include "cudnn_symbols.hpp"

#include <climits>
#include <cstdint>

namespace tessera::cudnn_plugin {
namespace {

template <typename Handle, typename Create, typename Destroy>
descriptor<Handle> create(Create create_fn, Destroy destroy_fn, const char* what) {
  Handle handle = nullptr;
  check_cudnn(create_fn(&handle), what);
  return descriptor<Handle>(handle, destroy_fn);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

tensor_descriptor new_tensor_descriptor() {
  return create<cudnnTensorDescriptor_t>(cudnn().cudnnCreateTensorDescriptor,
                                         cudnn().cudnnDestroyTensorDescriptor, "cudnnCreateTensorDescriptor");
}
filter_descriptor new_filter_descriptor() {
  return create<cudnnFilterDescriptor_t>(cudnn().cudnnCreateFilterDescriptor,
                                         cudnn().cudnnDestroyFilterDescriptor, "cudnnCreateFilterDescriptor");
}
convolution_descriptor new_convolution_descriptor() {
  return create<cudnnConvolutionDescriptor_t>(cudnn().cudnnCreateConvolutionDescriptor,
                                              cudnn().cudnnDestroyConvolutionDescriptor,
                                              "cudnnCreateConvolutionDescriptor");
}
activation_descriptor new_activation_descriptor() {
  return create<cudnnActivationDescriptor_t>(cudnn().cudnnCreateActivationDescriptor,
                                             cudnn().cudnnDestroyActivationDescriptor,
                                             "cudnnCreateActivationDescriptor");
}
pooling_descriptor new_pooling_descriptor() {
  return create<cudnnPoolingDescriptor_t>(cudnn().cudnnCreatePoolingDescriptor,
                                          cudnn().cudnnDestroyPoolingDescriptor, "cudnnCreatePoolingDescriptor");
}
lrn_descriptor new_lrn_descriptor() {
  return create<cudnnLRNDescriptor_t>(cudnn().cudnnCreateLRNDescriptor, cudnn().cudnnDestroyLRNDescriptor,
                                      "cudnnCreateLRNDescriptor");
}
op_tensor_descriptor new_op_tensor_descriptor() {
  return create<cudnnOpTensorDescriptor_t>(cudnn().cudnnCreateOpTensorDescriptor,
                                           cudnn().cudnnDestroyOpTensorDescriptor,
                                           "cudnnCreateOpTensorDescriptor");
}
rnn_descriptor new_rnn_descriptor() {
  return create<cudnnRNNDescriptor_t>(cudnn().cudnnCreateRNNDescriptor, cudnn().cudnnDestroyRNNDescriptor,
                                      "cudnnCreateRNNDescriptor");
}
rnn_data_descriptor new_rnn_data_descriptor() {
  return create<cudnnRNNDataDescriptor_t>(cudnn().cudnnCreateRNNDataDescriptor,
                                          cudnn().cudnnDestroyRNNDataDescriptor, "cudnnCreateRNNDataDescriptor");
}

std::string cudnn_data_type(int32_t tsrp_data_type, cudnnDataType_t* out) {
  switch (tsrp_data_type) {
    case TSRP_DATA_FLOAT: *out = CUDNN_DATA_FLOAT; return {};
    case TSRP_DATA_HALF: *out = CUDNN_DATA_HALF; return {};
    case TSRP_DATA_BFLOAT16: *out = CUDNN_DATA_BFLOAT16; return {};
    case TSRP_DATA_INT8: *out = CUDNN_DATA_INT8; return {};
    case TSRP_DATA_INT32: *out = CUDNN_DATA_INT32; return {};
  }
  return "unknown data type " + std::to_string(tsrp_data_type);
}

const char* data_type_name(int32_t tsrp_data_type) {
  switch (tsrp_data_type) {
    case TSRP_DATA_FLOAT: return "f32";
    case TSRP_DATA_HALF: return "f16";
    case TSRP_DATA_BFLOAT16: return "bf16";
    case TSRP_DATA_INT8: return "s8";
    case TSRP_DATA_INT32: return "s32";
  }
  return "unknown";
}

size_t element_size(int32_t tsrp_data_type) {
  switch (tsrp_data_type) {
    case TSRP_DATA_HALF:
    case TSRP_DATA_BFLOAT16: return 2;
    case TSRP_DATA_INT8: return 1;
    default: return 4;
  }
}

std::string cudnn_shape_of(const tsrpTensor& t, int min_dims, cudnn_tensor_shape* out) {
  if (t.ndims < 1 || t.ndims > TSRP_MAX_DIMS) return "tensor has " + std::to_string(t.ndims) + " dims";
  const int extra = min_dims > t.ndims ? min_dims - t.ndims : 0;
  if (t.ndims + extra > TSRP_MAX_DIMS) return "tensor has too many dims for cuDNN";
  int64_t extent = 1;  // largest offset + 1: cuDNN indexes with int
  for (int i = 0; i < t.ndims; ++i) {
    if (!fits_int(t.dims[i]) || !fits_int(t.strides[i]))
      return "dim " + std::to_string(i) + " (" + std::to_string(t.dims[i]) + ", stride " +
             std::to_string(t.strides[i]) + ") exceeds cuDNN's int range";
    if (t.dims[i] > 0) extent += (t.dims[i] - 1) * t.strides[i];
  }
  if (!fits_int(extent)) return "tensor spans more than 2^31 elements, beyond cuDNN's int indexing";
  // Unit dims go after the channel dim: a packed NCHW or NHWC tensor stays packed in cuDNN's eyes
  // (the new dims take the stride the first spatial dim's extent gives them).
  const int insert_at = t.ndims >= 2 ? 2 : t.ndims;
  const int64_t unit_stride = t.ndims > 2 ? t.dims[2] * t.strides[2] : 1;
  int n = 0;
  for (int i = 0; i < insert_at; ++i, ++n) {
    out->dims[n] = static_cast<int>(t.dims[i]);
    out->strides[n] = static_cast<int>(t.strides[i]);
  }
  for (int i = 0; i < extra; ++i, ++n) {
    out->dims[n] = 1;
    out->strides[n] = static_cast<int>(fits_int(unit_stride) && unit_stride > 0 ? unit_stride : 1);
  }
  for (int i = insert_at; i < t.ndims; ++i, ++n) {
    out->dims[n] = static_cast<int>(t.dims[i]);
    out->strides[n] = static_cast<int>(t.strides[i]);
  }
  out->ndims = n;
  return {};
}

bool merge_spatial_dims(std::initializer_list<tsrpTensor*> tensors, int max_dims) {
  if (tensors.size() == 0) return true;
  tsrpTensor& first = **tensors.begin();
  while (first.ndims > max_dims) {
    int merge_at = -1;
    for (int i = 2; i + 1 < first.ndims && merge_at < 0; ++i) {
      bool ok = true;
      for (tsrpTensor* t : tensors)
        ok = ok && (t->dims[i] == 1 || t->dims[i + 1] == 1 || t->strides[i] == t->dims[i + 1] * t->strides[i + 1]);
      if (ok) merge_at = i;
    }
    if (merge_at < 0) return false;
    for (tsrpTensor* t : tensors) {
      const int i = merge_at;
      const int64_t stride = t->dims[i + 1] == 1 ? t->strides[i] : t->strides[i + 1];
      t->dims[i] *= t->dims[i + 1];
      t->strides[i] = stride;
      for (int j = i + 1; j + 1 < t->ndims; ++j) {
        t->dims[j] = t->dims[j + 1];
        t->strides[j] = t->strides[j + 1];
      }
      --t->ndims;
    }
  }
  return true;
}

tensor_descriptor make_tensor_descriptor(const tsrpTensor& t, int min_dims, int32_t data_type) {
  cudnn_tensor_shape shape;
  std::string why = cudnn_shape_of(t, min_dims, &shape);
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  if (why.empty()) why = cudnn_data_type(data_type, &type);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  tensor_descriptor d = new_tensor_descriptor();
  check_cudnn(cudnn().cudnnSetTensorNdDescriptor(d, type, shape.ndims, shape.dims, shape.strides),
              "cudnnSetTensorNdDescriptor");
  return d;
}

tensor_descriptor make_tensor_descriptor(const tsrpTensor& t, int min_dims) {
  return make_tensor_descriptor(t, min_dims, t.data_type);
}

tsrpTensor packed_like(const tsrpTensor& t, int32_t data_type) {
  tsrpTensor p = t;
  p.data_type = data_type;
  int64_t stride = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    p.strides[i] = stride;
    stride *= t.dims[i] > 0 ? t.dims[i] : 1;
  }
  return p;
}

size_t packed_bytes(const tsrpTensor& t, int32_t data_type) {
  size_t n = 1;
  for (int i = 0; i < t.ndims; ++i) n *= static_cast<size_t>(t.dims[i]);
  return n * element_size(data_type);
}

bool same_layout(const tsrpTensor& a, const tsrpTensor& b) {
  if (a.ndims != b.ndims) return false;
  for (int i = 0; i < a.ndims; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
    if (a.dims[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

cudnnMathType_t cudnn_math_type(int32_t data_type, int32_t tsrp_math_mode) {
  if (data_type == TSRP_DATA_FLOAT)
    return tsrp_math_mode == TSRP_MATH_ALLOW_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

}  // namespace tessera::cudnn_plugin
