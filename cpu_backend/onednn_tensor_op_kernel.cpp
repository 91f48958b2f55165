#include "onednn_tensor_op_kernel.hpp"

#include <algorithm>
#include <vector>

namespace tessera::onednn {

std::string check_output_does_not_overlap(const tsrpTensor& t, const char* name) {
  // Sufficient test: walking the dims from the smallest stride up, each stride must step over
  // everything the smaller ones span. Size-1 dims never step, so they do not count.
  std::vector<int> order;
  for (int i = 0; i < t.ndims; ++i)
    if (t.dims[i] > 1) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return t.strides[a] < t.strides[b]; });
  int64_t span = 1;  // elements covered by the dims so far
  for (int i : order) {
    if (t.strides[i] < span)
      return std::string("output tensor ") + name + " has overlapping strides (dim " +
             std::to_string(i) + " has stride " + std::to_string(t.strides[i]) +
             ", so two of its elements share memory)";
    span = t.strides[i] * t.dims[i];
  }
  return {};
}

tsrpTensor broadcast_view(const tsrpTensor& small, const tsrpTensor& big) {
  tsrpTensor v = big;
  v.data_type = small.data_type;
  for (int i = 0; i < big.ndims; ++i)
    v.strides[i] = (small.dims[i] == 1 && big.dims[i] != 1) ? 0 : small.strides[i];
  return v;
}

}  // namespace tessera::onednn
