// Host-side facts about tsrpTensor descriptors that many CUDA kernels ask.
#pragma once

#include <tessera/plugin_abi.h>

#include <cstdint>

namespace tessera::cuda {

inline int64_t element_count(const tsrpTensor& t) {
  int64_t count = 1;
  for (int d = 0; d < t.ndims; ++d) count *= t.dims[d];
  return count;
}

// Dense row-major: the last dim has stride 1 and every other stride is the product of the dims
// after it (size-1 dims may have any stride).
inline bool is_packed_row_major(const tsrpTensor& t) {
  int64_t expected = 1;
  for (int d = t.ndims - 1; d >= 0; --d) {
    if (t.dims[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.dims[d];
  }
  return true;
}

// Dense channels-last (NHWC / NDHWC for dims ordered N, C, spatial...): C has stride 1.
inline bool is_packed_channels_last(const tsrpTensor& t) {
  if (t.ndims < 3) return false;
  int64_t expected = 1;
  if (t.dims[1] != 1 && t.strides[1] != expected) return false;
  expected *= t.dims[1];
  for (int d = t.ndims - 1; d >= 2; --d) {
    if (t.dims[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.dims[d];
  }
  return t.dims[0] == 1 || t.strides[0] == expected;
}

inline bool same_dims(const tsrpTensor& a, const tsrpTensor& b) {
  if (a.ndims != b.ndims) return false;
  for (int d = 0; d < a.ndims; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

inline bool same_strides(const tsrpTensor& a, const tsrpTensor& b) {
  if (!same_dims(a, b)) return false;
  for (int d = 0; d < a.ndims; ++d) {
    if (a.dims[d] != 1 && a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

}  // namespace tessera::cuda
