// RAII owners for cuDNN's descriptors and the mapping of Tessera's tensors (int64 dims and strides,
// 1 to 8 dims) onto cuDNN's tensor descriptors (int dims and strides, 4 or more dims for most
// calls). Everything that can refuse a problem returns a reason; everything that calls cuDNN
// throws plugin_error with cuDNN's words.
#pragma once

#include "cudnn_errors.hpp"

#include <tessera/plugin_abi.h>

#include <cudnn.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace tessera::cudnn_plugin {

// Owns one cuDNN descriptor and destroys it with the function it was created for.
template <typename Handle>
class descriptor {
 public:
  using destroy_function = cudnnStatus_t (*)(Handle);
  descriptor() = default;
  descriptor(Handle handle, destroy_function destroy) : handle_(handle), destroy_(destroy) {}
  ~descriptor() { reset(); }
  descriptor(descriptor&& other) noexcept { *this = std::move(other); }
  descriptor& operator=(descriptor&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      destroy_ = other.destroy_;
    }
    return *this;
  }
  descriptor(const descriptor&) = delete;
  descriptor& operator=(const descriptor&) = delete;

  Handle get() const noexcept { return handle_; }
  operator Handle() const noexcept { return handle_; }  // NOLINT: reads like the cuDNN handle

 private:
  void reset() noexcept {
    if (handle_ != nullptr && destroy_ != nullptr) (void)destroy_(handle_);
    handle_ = nullptr;
  }
  Handle handle_ = nullptr;
  destroy_function destroy_ = nullptr;
};

using tensor_descriptor = descriptor<cudnnTensorDescriptor_t>;
using filter_descriptor = descriptor<cudnnFilterDescriptor_t>;
using convolution_descriptor = descriptor<cudnnConvolutionDescriptor_t>;
using activation_descriptor = descriptor<cudnnActivationDescriptor_t>;
using pooling_descriptor = descriptor<cudnnPoolingDescriptor_t>;
using lrn_descriptor = descriptor<cudnnLRNDescriptor_t>;
using op_tensor_descriptor = descriptor<cudnnOpTensorDescriptor_t>;
using rnn_descriptor = descriptor<cudnnRNNDescriptor_t>;
using rnn_data_descriptor = descriptor<cudnnRNNDataDescriptor_t>;

// Each creates an empty descriptor (throws plugin_error when cuDNN cannot).
tensor_descriptor new_tensor_descriptor();
filter_descriptor new_filter_descriptor();
convolution_descriptor new_convolution_descriptor();
activation_descriptor new_activation_descriptor();
pooling_descriptor new_pooling_descriptor();
lrn_descriptor new_lrn_descriptor();
op_tensor_descriptor new_op_tensor_descriptor();
rnn_descriptor new_rnn_descriptor();
rnn_data_descriptor new_rnn_data_descriptor();

// cuDNN's data type for a Tessera one; "" or why not.
std::string cudnn_data_type(int32_t tsrp_data_type, cudnnDataType_t* out);

// The name Tessera users know a data type by ("f32", "f16", "bf16", "s8", "s32").
const char* data_type_name(int32_t tsrp_data_type);

// A tensor in cuDNN's terms. Tensors of fewer than `min_dims` dims get unit dims inserted right
// after the channel dim (N, C, 1.., spatial..), with strides that keep an NCHW- or NHWC-packed
// tensor recognisably packed; 1-D tensors get them appended.
struct cudnn_tensor_shape {
  int ndims = 0;
  int dims[TSRP_MAX_DIMS] = {};
  int strides[TSRP_MAX_DIMS] = {};
};

// "" and the shape, or why the tensor does not fit cuDNN (an extent beyond int, too many dims).
std::string cudnn_shape_of(const tsrpTensor& t, int min_dims, cudnn_tensor_shape* out);

// Merges adjacent spatial dims (index 2 and up) of all the given tensors, which have equal dims,
// until each has at most `max_dims` dims; a pair merges only where every tensor's strides allow
// it. Returns false when they cannot be brought down that far. Used for calls that take 4-D
// tensors only and treat spatial positions alike (softmax, LRN).
bool merge_spatial_dims(std::initializer_list<tsrpTensor*> tensors, int max_dims);

// A tensor descriptor for `t` (see cudnn_shape_of); throws plugin_error NOT_SUPPORTED when the
// tensor does not fit cuDNN, and cuDNN's status when cuDNN refuses it.
tensor_descriptor make_tensor_descriptor(const tsrpTensor& t, int min_dims = 4);

// The same, with `t`'s dims and strides but another data type (workspace copies, parameters).
tensor_descriptor make_tensor_descriptor(const tsrpTensor& t, int min_dims, int32_t data_type);

// A fully packed tensor of `t`'s dims and data type, row-major (NCHW-like): workspace buffers.
tsrpTensor packed_like(const tsrpTensor& t, int32_t data_type);

// Bytes of a packed tensor of `t`'s dims in `data_type`.
size_t packed_bytes(const tsrpTensor& t, int32_t data_type);

// Bytes per element of a Tessera data type.
size_t element_size(int32_t tsrp_data_type);

// True when two tensors address memory alike (same dims and same strides where dims exceed 1).
bool same_layout(const tsrpTensor& a, const tsrpTensor& b);

// The cuDNN math type for a problem: fp32 runs on FMA kernels unless the handle allows TF32
// (TSRP_MATH_ALLOW_TF32), which keeps Tessera's promise of exact fp32 arithmetic by default;
// fp16 and bf16 may use tensor cores in every mode, since their products are exact in the fp32
// accumulator.
cudnnMathType_t cudnn_math_type(int32_t data_type, int32_t tsrp_math_mode);

// Rounds up to a multiple of 256 bytes: every buffer this plugin carves out of a workspace starts
// aligned as cuDNN requires of its own workspace pointers.
constexpr size_t align_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace tessera::cudnn_plugin
