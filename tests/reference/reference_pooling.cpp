#include "reference_pooling.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <tessera_common/problem_descriptor.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool check_shapes(const tsrpPoolingProblem& p, bool backward, std::string* error) {
  const int sd = p.spatial_dims;
  if (sd < 1 || sd > TSRP_MAX_SPATIAL_DIMS)
    return fail(error, "spatial_dims " + std::to_string(sd));
  if (p.x.ndims != sd + 2 || p.y.ndims != sd + 2)
    return fail(error, "x and y must have spatial_dims + 2 dims");
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.x.dims[1])
    return fail(error, "y must have x's N and C");
  for (int i = 0; i < sd; ++i) {
    const int64_t padded = p.x.dims[2 + i] + p.pad_before[i] + p.pad_after[i];
    if (p.window[i] < 1 || p.stride[i] < 1 || padded < p.window[i] ||
        p.y.dims[2 + i] != (padded - p.window[i]) / p.stride[i] + 1)
      return fail(error, "y spatial dim " + std::to_string(i) + " is " +
                             std::to_string(p.y.dims[2 + i]) + ", not the pooling output size");
  }
  if (backward) {
    bool same = p.dy.ndims == p.y.ndims && p.dx.ndims == p.x.ndims;
    for (int i = 0; same && i < p.y.ndims; ++i)
      same = p.dy.dims[i] == p.y.dims[i] && p.dx.dims[i] == p.x.dims[i];
    if (!same)
      return fail(error, "dy has dims " + common::format_dims(p.dy.dims, p.dy.ndims) +
                             " and dx " + common::format_dims(p.dx.dims, p.dx.ndims) +
                             ", expected y's and x's");
  }
  return true;
}

// Calls f(x_index, inside) for every window element of output `out_index`, in window order.
template <class F>
void for_each_window_element(const tsrpPoolingProblem& p, const int64_t out_index[], F&& f) {
  const int sd = p.spatial_dims;
  int64_t window_dims[TSRP_MAX_DIMS] = {};
  for (int i = 0; i < sd; ++i) window_dims[i] = p.window[i];
  for_each_index(sd, window_dims, [&](const int64_t w[]) {
    int64_t x_index[TSRP_MAX_DIMS] = {out_index[0], out_index[1]};
    bool inside = true;
    for (int i = 0; i < sd; ++i) {
      const int64_t at = out_index[2 + i] * p.stride[i] - p.pad_before[i] + w[i];
      inside = inside && at >= 0 && at < p.x.dims[2 + i];
      x_index[2 + i] = at;
    }
    f(static_cast<const int64_t*>(x_index), inside);
  });
}

int64_t window_size(const tsrpPoolingProblem& p) {
  int64_t n = 1;
  for (int i = 0; i < p.spatial_dims; ++i) n *= p.window[i];
  return n;
}

}  // namespace

bool pooling_forward(const tsrpPoolingProblem& p, const float* x, double alpha, double beta,
                     float* y, std::string* error) {
  if (!check_shapes(p, false, error)) return false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t o[]) {
    double value = 0.0;
    if (p.mode == TSRP_POOLING_MAX) {
      bool any = false, saw_nan = false;
      double best = 0.0;
      for_each_window_element(p, o, [&](const int64_t xi[], bool inside) {
        if (!inside) return;
        const double v = x[offset_of(p.x, xi)];
        if (std::isnan(v)) {
          saw_nan = true;
          return;
        }
        if (!any || v > best) best = v;
        any = true;
      });
      value = (saw_nan && (p.nan_propagation == TSRP_PROPAGATE_NAN || !any)) ? nan : best;
    } else {
      double sum = 0.0;
      int64_t count = 0;
      for_each_window_element(p, o, [&](const int64_t xi[], bool inside) {
        if (!inside) return;
        sum += x[offset_of(p.x, xi)];
        ++count;
      });
      const int64_t divisor =
          p.mode == TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? window_size(p) : count;
      value = sum / static_cast<double>(divisor);
    }
    float& out = y[offset_of(p.y, o)];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(alpha * value + previous);
  });
  return true;
}

bool pooling_backward(const tsrpPoolingProblem& p, const float* x, const float* dy, double alpha,
                      double beta, float* dx, std::string* error) {
  if (!check_shapes(p, true, error)) return false;
  // Gradients accumulate in double, indexed by x's logical row-major position.
  int64_t x_count = 1;
  for (int i = 0; i < p.x.ndims; ++i) x_count *= p.x.dims[i];
  std::vector<double> grad(static_cast<size_t>(x_count), 0.0);
  const auto linear = [&](const int64_t xi[]) {
    int64_t l = 0;
    for (int i = 0; i < p.x.ndims; ++i) l = l * p.x.dims[i] + xi[i];
    return static_cast<size_t>(l);
  };
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t o[]) {
    const double g = dy[offset_of(p.dy, o)];
    if (p.mode == TSRP_POOLING_MAX) {
      bool any = false;
      double best = 0.0;
      size_t where = 0;
      for_each_window_element(p, o, [&](const int64_t xi[], bool inside) {
        if (!inside) return;
        const double v = x[offset_of(p.x, xi)];
        if (std::isnan(v)) return;
        if (!any || v > best) {  // strictly greater: ties stay with the first
          best = v;
          where = linear(xi);
        }
        any = true;
      });
      if (any) grad[where] += g;
    } else {
      int64_t count = 0;
      for_each_window_element(p, o, [&](const int64_t[], bool inside) { count += inside; });
      const int64_t divisor =
          p.mode == TSRP_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? window_size(p) : count;
      for_each_window_element(p, o, [&](const int64_t xi[], bool inside) {
        if (inside) grad[linear(xi)] += g / static_cast<double>(divisor);
      });
    }
  });
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t xi[]) {
    float& out = dx[offset_of(p.dx, xi)];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(alpha * grad[linear(xi)] + previous);
  });
  return true;
}

tolerance pooling_tolerance(int32_t data_type) {
  switch (data_type) {
    case TSRP_DATA_FLOAT: return {2e-6, 2e-6};
    case TSRP_DATA_HALF: return {2e-3, 2e-3};
    case TSRP_DATA_BFLOAT16: return {1.6e-2, 1.6e-2};
    default: return {0.0, 0.0};
  }
}

}  // namespace tessera::reference
