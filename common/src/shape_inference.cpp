#include "tessera_common/shape_inference.hpp"

namespace tessera::common {
namespace {

bool add_overflows(int64_t a, int64_t b, int64_t* sum) { return __builtin_add_overflow(a, b, sum); }
bool mul_overflows(int64_t a, int64_t b, int64_t* product) {
  return __builtin_mul_overflow(a, b, product);
}

// Writes the message (when the caller wants one) and returns false, so checks read as one line.
bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace

bool effective_kernel_size(int64_t kernel, int64_t dilation, int64_t* span) {
  int64_t stretched;
  if (mul_overflows(kernel - 1, dilation, &stretched)) return false;
  return !add_overflows(stretched, 1, span);
}

bool infer_conv_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before,
                            int64_t pad_after, int64_t dilation, int64_t* out,
                            std::string* error) {
  if (in < 1) return fail(error, "input size " + std::to_string(in) + " is not positive");
  if (kernel < 1)
    return fail(error, "kernel size " + std::to_string(kernel) + " is not positive");
  if (stride < 1)
    return fail(error, "stride " + std::to_string(stride) + " is not positive");
  if (dilation < 1)
    return fail(error, "dilation " + std::to_string(dilation) + " is less than 1");
  if (pad_before < 0 || pad_after < 0)
    return fail(error, "padding " + std::to_string(pad_before) + "/" +
                                std::to_string(pad_after) + " is negative");

  int64_t span, padded_in;
  if (!effective_kernel_size(kernel, dilation, &span) || add_overflows(in, pad_before, &padded_in) ||
      add_overflows(padded_in, pad_after, &padded_in))
    return fail(error, "output size overflows");
  // Checked before dividing: C++ division truncates toward zero, so a slightly negative
  // numerator would otherwise come out as an output of 1.
  if (padded_in < span)
    return fail(error, "output would be empty: padded input " + std::to_string(padded_in) +
                                " is smaller than the dilated kernel " + std::to_string(span) +
                                " (kernel " + std::to_string(kernel) + ", dilation " +
                                std::to_string(dilation) + ")");
  *out = (padded_in - span) / stride + 1;
  return true;
}

bool element_count(int ndims, const int64_t dims[], int64_t* count) {
  int64_t product = 1;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] < 0 || mul_overflows(product, dims[i], &product)) return false;
  *count = product;
  return true;
}

bool tensor_extent_elements(int ndims, const int64_t dims[], const int64_t strides[],
                            int64_t* elements) {
  if (ndims < 0 || ndims > TSRP_MAX_DIMS) return false;
  int64_t furthest = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0 || strides[i] < 0) return false;
    if (dims[i] == 0) {
      *elements = 0;
      return true;
    }
    int64_t reach;
    if (mul_overflows(dims[i] - 1, strides[i], &reach) || add_overflows(furthest, reach, &furthest))
      return false;
  }
  return !add_overflows(furthest, 1, elements);
}

bool tensor_extent_elements(const tsrpTensor& tensor, int64_t* elements) {
  return tensor_extent_elements(tensor.ndims, tensor.dims, tensor.strides, elements);
}

bool tensor_extent_bytes(const tsrpTensor& tensor, size_t* bytes) {
  const size_t element_size = data_type_size(tensor.data_type);
  int64_t elements;
  if (element_size == 0 || !tensor_extent_elements(tensor, &elements)) return false;
  size_t total;
  if (__builtin_mul_overflow(static_cast<size_t>(elements), element_size, &total)) return false;
  *bytes = total;
  return true;
}

bool packed_strides(int ndims, const int64_t dims[], bool channels_last, int64_t strides[]) {
  if (ndims < 1 || ndims > TSRP_MAX_DIMS) return false;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] < 1) return false;
  // The order of dims from innermost to outermost.
  int order[TSRP_MAX_DIMS];
  int n = 0;
  if (channels_last && ndims >= 3) {
    order[n++] = 1;                                      // C
    for (int i = ndims - 1; i >= 2; --i) order[n++] = i;  // spatial, last outwards
    order[n++] = 0;                                      // N
  } else {
    for (int i = ndims - 1; i >= 0; --i) order[n++] = i;
  }
  int64_t stride = 1;
  for (int i = 0; i < ndims; ++i) {
    strides[order[i]] = stride;
    if (mul_overflows(stride, dims[order[i]], &stride)) return false;
  }
  return true;
}

bool is_packed(const tsrpTensor& tensor, bool channels_last) {
  int64_t expected[TSRP_MAX_DIMS];
  if (!packed_strides(tensor.ndims, tensor.dims, channels_last, expected)) return false;
  for (int i = 0; i < tensor.ndims; ++i)
    if (tensor.dims[i] != 1 && tensor.strides[i] != expected[i]) return false;
  return true;
}

namespace {
struct data_type_entry {
  tsrpDataType_t type;
  const char* name;
  size_t size;
};
// clang-format off
constexpr data_type_entry data_types[] = {
  {TSRP_DATA_FLOAT,    "f32",  4},
  {TSRP_DATA_HALF,     "f16",  2},
  {TSRP_DATA_BFLOAT16, "bf16", 2},
  {TSRP_DATA_INT8,     "s8",   1},
  {TSRP_DATA_INT32,    "s32",  4},
};
// clang-format on

const data_type_entry* find_data_type(int32_t data_type) {
  for (const auto& entry : data_types)
    if (entry.type == data_type) return &entry;
  return nullptr;
}
}  // namespace

size_t data_type_size(int32_t data_type) {
  const data_type_entry* entry = find_data_type(data_type);
  return entry ? entry->size : 0;
}

const char* data_type_name(int32_t data_type) {
  const data_type_entry* entry = find_data_type(data_type);
  return entry ? entry->name : "unknown";
}

bool parse_data_type(std::string_view name, tsrpDataType_t* data_type) {
  for (const auto& entry : data_types)
    if (name == entry.name) {
      *data_type = entry.type;
      return true;
    }
  return false;
}

}  // namespace tessera::common
