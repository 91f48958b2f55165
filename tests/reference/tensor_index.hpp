// Walking the logical elements of a strided tensor: the one loop every reference routine, fill
// and comparison is built on, so that all of them agree on what "element i" means (row-major
// order of the logical dims, whatever the strides).
#ifndef TESSERA_REFERENCE_TENSOR_INDEX_HPP
#define TESSERA_REFERENCE_TENSOR_INDEX_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::reference {

// Calls f(index) for every index of `dims` in row-major order; index has ndims entries.
template <class F>
void for_each_index(int ndims, const int64_t dims[], F&& f) {
  int64_t index[TSRP_MAX_DIMS] = {};
  for (int i = 0; i < ndims; ++i)
    if (dims[i] <= 0) return;
  while (true) {
    f(static_cast<const int64_t*>(index));
    int d = ndims - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Element offset of `index` in a tensor with the given strides.
inline int64_t offset_of(const tsrpTensor& t, const int64_t index[]) {
  int64_t offset = 0;
  for (int i = 0; i < t.ndims; ++i) offset += index[i] * t.strides[i];
  return offset;
}

// "[0,3,1,2]": an index in messages.
inline std::string index_text(int ndims, const int64_t index[]) {
  std::string s = "[";
  for (int i = 0; i < ndims; ++i) s += (i ? "," : "") + std::to_string(index[i]);
  return s + "]";
}

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_TENSOR_INDEX_HPP
