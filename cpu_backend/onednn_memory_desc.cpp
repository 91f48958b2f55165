#include "onednn_memory_desc.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace tessera::onednn {

using dt = dnnl::memory::data_type;

std::optional<dt> to_dnnl_data_type(int32_t tsrp_data_type) noexcept {
  switch (tsrp_data_type) {
    case TSRP_DATA_FLOAT: return dt::f32;
    case TSRP_DATA_HALF: return dt::f16;
    case TSRP_DATA_BFLOAT16: return dt::bf16;
    case TSRP_DATA_INT8: return dt::s8;
    case TSRP_DATA_INT32: return dt::s32;
    default: return std::nullopt;
  }
}

const char* data_type_name(int32_t tsrp_data_type) noexcept {
  switch (tsrp_data_type) {
    case TSRP_DATA_FLOAT: return "f32";
    case TSRP_DATA_HALF: return "f16";
    case TSRP_DATA_BFLOAT16: return "bf16";
    case TSRP_DATA_INT8: return "s8";
    case TSRP_DATA_INT32: return "s32";
    default: return "unknown data type";
  }
}

bool is_floating_data_type(int32_t tsrp_data_type) noexcept {
  return tsrp_data_type == TSRP_DATA_FLOAT || tsrp_data_type == TSRP_DATA_HALF ||
         tsrp_data_type == TSRP_DATA_BFLOAT16;
}

std::string check_tensor(const tsrpTensor& t, const char* name) {
  if (t.ndims < 1 || t.ndims > TSRP_MAX_DIMS)
    return std::string("tensor ") + name + " has " + std::to_string(t.ndims) + " dims";
  if (!to_dnnl_data_type(t.data_type))
    return std::string("tensor ") + name + " has unknown data type " + std::to_string(t.data_type);
  for (int i = 0; i < t.ndims; ++i) {
    if (t.dims[i] < 0) return std::string("tensor ") + name + " has a negative dim";
    // oneDNN's kernels block and index dims with int: a larger one divided by zero in the
    // brgemm matmul's blocking heuristic (the fuzzer's M = 2^40), so it is declined here.
    if (t.dims[i] > std::numeric_limits<int32_t>::max())
      return std::string("tensor ") + name + " has dim " + std::to_string(i) + " = " +
             std::to_string(t.dims[i]) + ", above the 2^31 - 1 oneDNN's kernels index with int";
    // oneDNN addresses memory as base + sum(index * stride) with non-negative strides only.
    if (t.strides[i] < 0)
      return std::string("tensor ") + name + " has a negative stride (not supported by oneDNN)";
  }
  return {};
}

int64_t element_count(const tsrpTensor& t) noexcept {
  int64_t n = 1;
  for (int i = 0; i < t.ndims; ++i) n *= t.dims[i];
  return n;
}

bool same_dims(const tsrpTensor& a, const tsrpTensor& b) noexcept {
  if (a.ndims != b.ndims) return false;
  for (int i = 0; i < a.ndims; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

namespace {
dnnl::memory::dims dims_of(const tsrpTensor& t) {
  return dnnl::memory::dims(t.dims, t.dims + t.ndims);
}
// The stride of a size-1 dim never moves an address, so the host lets it be anything, and
// oneDNN takes it at its word. Two things the fuzzer found go wrong then: a 1-element tensor with
// stride 9e18 overflows oneDNN's layout analysis (SEGV in jit_uni_binary_t::pd_t::init), and a
// matmul C of dims 2x1x6 with strides 6,1,1 (channels-last with one channel) is accepted at
// primitive creation and refused at execution (invalid_arguments: its gemm sees ldc 1 < N 6).
// So a size-1 dim gets the stride it would have packed right outside the next dim (innermost: 1):
// the same memory, in the layout oneDNN expects most.
dnnl::memory::dims strides_of(const tsrpTensor& t) {
  dnnl::memory::dims strides(t.strides, t.strides + t.ndims);
  for (int i = t.ndims - 1; i >= 0; --i) {
    if (t.dims[i] != 1) continue;
    const size_t k = static_cast<size_t>(i);
    int64_t packed = 1;
    if (i + 1 < t.ndims &&
        __builtin_mul_overflow(strides[k + 1], std::max<int64_t>(t.dims[i + 1], 1), &packed))
      continue;  // keep the given stride rather than invent one that overflows
    strides[k] = packed;
  }
  return strides;
}
dnnl::memory::desc make_memory_desc(const tsrpTensor& t, dt data_type) {
  return dnnl::memory::desc(dims_of(t), data_type, strides_of(t));
}
}  // namespace

dnnl::memory::desc make_memory_desc(const tsrpTensor& t) {
  return make_memory_desc(t, *to_dnnl_data_type(t.data_type));
}

dnnl::memory::desc make_dense_desc_like(const tsrpTensor& t, dt data_type) {
  std::vector<int> order(static_cast<size_t>(t.ndims));
  std::iota(order.begin(), order.end(), 0);
  // Outermost first: larger stride first; equal strides (size-1 dims) keep the logical order.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return t.strides[a] > t.strides[b]; });
  dnnl::memory::dims strides(static_cast<size_t>(t.ndims));
  int64_t running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = running;
    running *= std::max<int64_t>(t.dims[*it], 1);
  }
  return dnnl::memory::desc(dims_of(t), data_type, strides);
}

namespace {
dnnl::memory::dims grouped_dims(const tsrpTensor& w, int64_t groups) {
  dnnl::memory::dims d = dims_of(w);
  if (groups <= 1) return d;
  d[0] /= groups;
  d.insert(d.begin(), groups);
  return d;
}
}  // namespace

dnnl::memory::desc make_weights_desc(const tsrpTensor& w, int64_t groups) {
  const dt data_type = *to_dnnl_data_type(w.data_type);
  if (groups <= 1) return make_memory_desc(w, data_type);
  dnnl::memory::dims s = strides_of(w);
  s.insert(s.begin(), w.strides[0] * (w.dims[0] / groups));
  return dnnl::memory::desc(grouped_dims(w, groups), data_type, s);
}

dnnl::memory::desc make_weights_any_desc(const tsrpTensor& w, int64_t groups, dt data_type) {
  return dnnl::memory::desc(grouped_dims(w, groups), data_type, dnnl::memory::format_tag::any);
}

dnnl::memory::desc make_any_desc(const tsrpTensor& t, dt data_type) {
  return dnnl::memory::desc(dims_of(t), data_type, dnnl::memory::format_tag::any);
}

}  // namespace tessera::onednn
