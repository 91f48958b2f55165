#include "onednn_pooling_nan.hpp"

#include "host_element_access.hpp"
#include "onednn_errors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace tessera::onednn {
namespace {

constexpr int max_spatial = 3;  // pool_fwd / pool_bwd take 2-D and 3-D

int32_t plugin_type_of(dnnl::memory::data_type t) {
  switch (t) {
    case dnnl::memory::data_type::f32: return TSRP_DATA_FLOAT;
    case dnnl::memory::data_type::f16: return TSRP_DATA_HALF;
    case dnnl::memory::data_type::bf16: return TSRP_DATA_BFLOAT16;
    default: throw plugin_error(TSRP_STATUS_INTERNAL_ERROR, "NaN-aware max pooling: unexpected oneDNN data type");
  }
}

strided_view view_of(const dnnl::memory::desc& d, void* data) {
  strided_view v;
  v.data = static_cast<char*>(data);
  v.data_type = plugin_type_of(d.get_data_type());
  const dnnl::memory::dims dims = d.get_dims(), strides = d.get_strides();
  if (strides.size() != dims.size() || dims.size() > static_cast<size_t>(TSRP_MAX_DIMS))
    throw plugin_error(TSRP_STATUS_INTERNAL_ERROR, "NaN-aware max pooling: tensor is not plain strided");
  v.ndims = static_cast<int>(dims.size());
  for (int i = 0; i < v.ndims; ++i) {
    v.dims[i] = dims[i];
    v.strides[i] = strides[i];
  }
  return v;
}

strided_view view_of(const dnnl::memory& m) { return view_of(m.get_desc(), m.get_data_handle()); }

int64_t count_of(const strided_view& v) {
  int64_t n = 1;
  for (int i = 0; i < v.ndims; ++i) n *= v.dims[i];
  return n;
}

// Densely packed in some order of its dims: sorted by stride (dims of 1 aside), each stride is the
// product of the dims inside it. Then the elements are one run of count_of(v) in memory.
bool is_dense(const strided_view& v) {
  int order[TSRP_MAX_DIMS];
  int used = 0;
  for (int i = 0; i < v.ndims; ++i)
    if (v.dims[i] != 1) order[used++] = i;
  for (int k = 1; k < used; ++k)  // insertion sort by stride: at most TSRP_MAX_DIMS entries
    for (int j = k; j > 0 && v.strides[order[j]] < v.strides[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  int64_t expected = 1;
  for (int k = 0; k < used; ++k) {
    if (v.strides[order[k]] != expected) return false;
    expected *= v.dims[order[k]];
  }
  return true;
}

// NaN test on the bits of a run of packed elements: a magnitude above infinity's, per block (an OR
// reduction the compiler vectorizes), blocks shared among oneDNN's OpenMP threads (GNU OpenMP,
// which the plugin already runs under through libdnnl) above a size where a team pays for itself.
template <typename Bits>
bool packed_run_holds_nan(const char* data, int64_t count, Bits magnitude_mask, Bits infinity) {
  constexpr int64_t block = 4096;
  [[maybe_unused]] constexpr int64_t parallel_from = 1 << 18;  // read by the OpenMP clause only
  const int64_t blocks = (count + block - 1) / block;
  bool found = false;
#ifdef _OPENMP  // GCC builds only (CMakeLists.txt)
#pragma omp parallel for schedule(static) reduction(|| : found) if (count >= parallel_from)
#endif
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t start = b * block, end = std::min(count, start + block);
    // Signed compares of the magnitude bits (non-negative once masked): SSE2 has them for both
    // widths (pcmpgtd / pcmpgtw), where an unsigned max needs SSE4.1 and ran at a third the speed.
    using Signed = std::make_signed_t<Bits>;
    Signed any = 0;
    for (int64_t i = start; i < end; ++i) {
      Bits bits;
      std::memcpy(&bits, data + i * static_cast<int64_t>(sizeof(Bits)), sizeof bits);
      any |= -static_cast<Signed>(static_cast<Signed>(bits & magnitude_mask) > static_cast<Signed>(infinity));
    }
    found = found || any != 0;
  }
  return found;
}

int64_t offset_of(const strided_view& v, const int64_t index[]) {
  int64_t o = 0;
  for (int i = 0; i < v.ndims; ++i) o += index[i] * v.strides[i];
  return o;
}

// Row-major increment of `index` within `dims`; false after the last index.
bool next_index(int ndims, const int64_t dims[], int64_t index[]) {
  for (int i = ndims - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// The pooling geometry of one problem, with x's and y's views.
struct pool_geometry {
  int sd = 0;
  int64_t window[max_spatial] = {}, stride[max_spatial] = {}, pad[max_spatial] = {};
  int64_t in[max_spatial] = {}, out[max_spatial] = {};
};

pool_geometry geometry_of(const tsrpPoolingProblem& p) {
  pool_geometry g;
  g.sd = p.spatial_dims;
  for (int i = 0; i < g.sd; ++i) {
    g.window[i] = p.window[i];
    g.stride[i] = p.stride[i];
    g.pad[i] = p.pad_before[i];
    g.in[i] = p.x.dims[2 + i];
    g.out[i] = p.y.dims[2 + i];
  }
  return g;
}

// The winner of one window of x (plane: x's N and C fixed, `origin` the window's first spatial
// position, padding included): the first of the largest non-NaN elements in window order.
struct window_result {
  bool any = false;      // a non-NaN element was seen
  bool saw_nan = false;
  double best = 0.0;
  int64_t where[max_spatial] = {};  // spatial position of the winner when `any`
};

window_result scan_window(const pool_geometry& g, const strided_view& x, int64_t plane_offset,
                          const int64_t origin[]) {
  window_result r;
  int64_t w[max_spatial] = {};
  do {
    int64_t pos[max_spatial];
    int64_t offset = plane_offset;
    bool inside = true;
    for (int i = 0; i < g.sd; ++i) {
      pos[i] = origin[i] + w[i];
      inside = inside && pos[i] >= 0 && pos[i] < g.in[i];
      offset += pos[i] * x.strides[2 + i];
    }
    if (!inside) continue;
    const double v = load_element(x.data, x.data_type, offset);
    if (v != v) {
      r.saw_nan = true;
      continue;
    }
    if (!r.any || v > r.best) {  // strictly greater: ties stay with the first
      r.best = v;
      std::copy(pos, pos + g.sd, r.where);
    }
    r.any = true;
  } while (next_index(g.sd, g.window, w));
  return r;
}

void window_origin(const pool_geometry& g, const int64_t o[], int64_t origin[]) {
  for (int i = 0; i < g.sd; ++i) origin[i] = o[i] * g.stride[i] - g.pad[i];
}

}  // namespace

nan_scan nan_scan_of(const dnnl::memory::desc& x) {
  nan_scan scan;
  scan.layout = view_of(x, nullptr);
  scan.count = count_of(scan.layout);
  scan.dense = is_dense(scan.layout);
  return scan;
}

bool holds_nan(const nan_scan& scan, const void* x) {
  if (scan.count == 0) return false;
  strided_view v = scan.layout;
  v.data = static_cast<char*>(const_cast<void*>(x));  // only read
  if (scan.dense) {
    switch (v.data_type) {
      case TSRP_DATA_FLOAT: return packed_run_holds_nan<uint32_t>(v.data, scan.count, 0x7fffffffu, 0x7f800000u);
      case TSRP_DATA_HALF: return packed_run_holds_nan<uint16_t>(v.data, scan.count, 0x7fff, 0x7c00);
      default: return packed_run_holds_nan<uint16_t>(v.data, scan.count, 0x7fff, 0x7f80);
    }
  }
  int64_t index[TSRP_MAX_DIMS] = {};
  do {
    if (element_is_nan(v.data, v.data_type, offset_of(v, index))) return true;
  } while (next_index(v.ndims, v.dims, index));
  return false;
}

void max_pool_forward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x_memory,
                                const dnnl::memory& y_memory) {
  const strided_view x = view_of(x_memory), y = view_of(y_memory);
  const pool_geometry g = geometry_of(p);
  const bool propagate = p.nan_propagation == TSRP_PROPAGATE_NAN;
  const float nan = __builtin_nanf("");
  int64_t index[TSRP_MAX_DIMS] = {};  // y's: N, C, spatial
  if (count_of(y) == 0) return;
  do {
    int64_t origin[max_spatial];
    window_origin(g, index + 2, origin);
    const window_result r = scan_window(g, x, index[0] * x.strides[0] + index[1] * x.strides[1], origin);
    const bool gives_nan = r.saw_nan && (propagate || !r.any);
    store_element(y.data, y.data_type, offset_of(y, index), gives_nan ? nan : static_cast<float>(r.best));
  } while (next_index(y.ndims, y.dims, index));
}

void max_pool_backward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x_memory,
                                 const dnnl::memory& dy_memory, const dnnl::memory& dx_memory) {
  const strided_view x = view_of(x_memory), dy = view_of(dy_memory), dx = view_of(dx_memory);
  const pool_geometry g = geometry_of(p);
  if (count_of(dx) == 0) return;
  int64_t out_count = 1;
  for (int i = 0; i < g.sd; ++i) out_count *= g.out[i];
  // Per (N, C) plane: each window's winner once (its row-major spatial position in x, -1 for a
  // window of NaNs), then a gather: each dx element sums the dy of the covering windows it wins,
  // so it is written once, with no accumulation buffer and no second rounding. A buffer of one
  // plane's winners: this path runs only for inputs holding NaN.
  std::vector<int64_t> winner(static_cast<size_t>(out_count));
  const auto spatial_position = [&](const int64_t pos[]) {
    int64_t flat = 0;
    for (int i = 0; i < g.sd; ++i) flat = flat * g.in[i] + pos[i];
    return flat;
  };
  for (int64_t n = 0; n < dx.dims[0]; ++n)
    for (int64_t c = 0; c < dx.dims[1]; ++c) {
      const int64_t x_plane = n * x.strides[0] + c * x.strides[1];
      const int64_t dy_plane = n * dy.strides[0] + c * dy.strides[1];
      const int64_t dx_plane = n * dx.strides[0] + c * dx.strides[1];
      int64_t o[max_spatial] = {};
      if (out_count > 0) {
        size_t w = 0;
        do {
          int64_t origin[max_spatial];
          window_origin(g, o, origin);
          const window_result r = scan_window(g, x, x_plane, origin);
          winner[w++] = r.any ? spatial_position(r.where) : -1;
        } while (next_index(g.sd, g.out, o));
      }
      int64_t h[max_spatial] = {};
      do {
        int64_t first[max_spatial], count[max_spatial];
        bool covered = true;
        for (int i = 0; i < g.sd; ++i) {
          // Windows o with o*stride - pad <= h <= o*stride - pad + window - 1, within [0, out).
          const int64_t low = h[i] + g.pad[i] - g.window[i] + 1;
          first[i] = low <= 0 ? 0 : (low + g.stride[i] - 1) / g.stride[i];
          const int64_t last = std::min(g.out[i] - 1, (h[i] + g.pad[i]) / g.stride[i]);
          count[i] = last - first[i] + 1;
          covered = covered && count[i] > 0;
        }
        double sum = 0.0;
        if (covered) {
          const int64_t here = spatial_position(h);
          int64_t step[max_spatial] = {};
          do {
            int64_t window = 0, dy_offset = dy_plane;
            for (int i = 0; i < g.sd; ++i) {
              window = window * g.out[i] + first[i] + step[i];
              dy_offset += (first[i] + step[i]) * dy.strides[2 + i];
            }
            if (winner[static_cast<size_t>(window)] == here) sum += load_element(dy.data, dy.data_type, dy_offset);
          } while (next_index(g.sd, count, step));
        }
        int64_t dx_offset = dx_plane;
        for (int i = 0; i < g.sd; ++i) dx_offset += h[i] * dx.strides[2 + i];
        store_element(dx.data, dx.data_type, dx_offset, static_cast<float>(sum));
      } while (next_index(g.sd, g.in, h));
    }
}

}  // namespace tessera::onednn
