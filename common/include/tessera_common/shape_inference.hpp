// Shape arithmetic shared by the API's validation, the backends, the tools and the tests, so that
// every layer agrees on output sizes, strides and byte counts (and on when they overflow).
#ifndef TESSERA_COMMON_SHAPE_INFERENCE_HPP
#define TESSERA_COMMON_SHAPE_INFERENCE_HPP

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::common {

// ---- convolution ------------------------------------------------------------------------------

// Output size of one spatial dim of a forward convolution, Tessera convention (dilation 1 means
// none): (in + pad_before + pad_after - ((kernel - 1) * dilation + 1)) / stride + 1, rounded
// down. Returns false, with a message in `error` (if not null), when an argument is out of range
// (in, kernel, stride, dilation < 1; a pad < 0), when the arithmetic overflows, or when the
// output would be smaller than 1. The message names the values, not the dim: callers prefix it.
bool infer_conv_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before,
                            int64_t pad_after, int64_t dilation, int64_t* out,
                            std::string* error = nullptr);

// The span of the dilated kernel, (kernel - 1) * dilation + 1; false on overflow.
bool effective_kernel_size(int64_t kernel, int64_t dilation, int64_t* span);

// ---- tensor extents ---------------------------------------------------------------------------

// Number of logical elements (the product of dims); false on overflow or a negative dim.
bool element_count(int ndims, const int64_t dims[], int64_t* count);

// Elements spanned by a strided tensor: 1 + sum((dims[i] - 1) * strides[i]), i.e. the furthest
// element plus one (0 when a dim is 0). False when ndims is outside 0..TSRP_MAX_DIMS, a dim or
// stride is negative, or the sum overflows int64.
bool tensor_extent_elements(int ndims, const int64_t dims[], const int64_t strides[],
                            int64_t* elements);
bool tensor_extent_elements(const tsrpTensor& tensor, int64_t* elements);

// Bytes spanned by the tensor: the extent in elements times the element size. False also for
// an unknown data type, or when the product does not fit in size_t.
bool tensor_extent_bytes(const tsrpTensor& tensor, size_t* bytes);

// ---- packed layouts ---------------------------------------------------------------------------

// Strides of a packed tensor whose dims are given in N, C, spatial... order, 1..TSRP_MAX_DIMS
// dims. channels_last false: NCHW-like (the last dim innermost). channels_last true: NHWC-like
// (C innermost, then the spatial dims from the last outwards, then N); for 1 or 2 dims both are
// the same. False for a bad ndims, a dim < 1, or when the element count overflows.
bool packed_strides(int ndims, const int64_t dims[], bool channels_last, int64_t strides[]);

// True when the tensor has exactly the packed strides of that layout. Strides of dims of extent
// 1 are ignored: they never change an address, and callers set them to anything.
bool is_packed(const tsrpTensor& tensor, bool channels_last);

// ---- data types -------------------------------------------------------------------------------

// Bytes per element of a tsrpDataType_t; 0 for an unknown value.
size_t data_type_size(int32_t data_type);

// benchdnn's name: "f32", "f16", "bf16", "s8", "s32"; "unknown" otherwise (never null).
const char* data_type_name(int32_t data_type);

// The inverse of data_type_name; false (and *data_type untouched) for other names.
bool parse_data_type(std::string_view name, tsrpDataType_t* data_type);

}  // namespace tessera::common

#endif  // TESSERA_COMMON_SHAPE_INFERENCE_HPP
