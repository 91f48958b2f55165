#include "reference_layer_norm.hpp"

#include <cmath>
#include <vector>

#include "tensor_index.hpp"

namespace tessera::reference {

void norm_row_col(const tsrpTensor& x, int axis, const int64_t index[], int64_t* row, int64_t* col) {
  int64_t r = 0, c = 0;
  for (int i = 0; i < axis; ++i) r = r * x.dims[i] + index[i];
  for (int i = axis; i < x.ndims; ++i) c = c * x.dims[i] + index[i];
  *row = r;
  *col = c;
}

int64_t norm_inner_size(const tsrpTensor& x, int axis) {
  int64_t n = 1;
  for (int i = axis; i < x.ndims; ++i) n *= x.dims[i];
  return n;
}

namespace {
bool check(const tsrpTensor& x, int axis, std::string* error) {
  if (x.ndims >= 2 && axis >= 1 && axis < x.ndims) return true;
  if (error) *error = "begin_norm_axis does not split x";
  return false;
}
int64_t outer_size(const tsrpTensor& x, int axis) {
  int64_t n = 1;
  for (int i = 0; i < axis; ++i) n *= x.dims[i];
  return n;
}
}  // namespace

bool layer_norm_forward(const tsrpLayerNormProblem& p, const float* x, const float* scale,
                        const float* bias, float* y, float* mean, float* inv_std, std::string* error) {
  const int axis = p.begin_norm_axis;
  if (!check(p.x, axis, error)) return false;
  const size_t outer = static_cast<size_t>(outer_size(p.x, axis));
  const double inner = static_cast<double>(norm_inner_size(p.x, axis));
  std::vector<double> m(outer, 0.0), v(outer, 0.0);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    m[static_cast<size_t>(r)] += x[offset_of(p.x, i)];
  });
  for (double& a : m) a /= inner;
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const double d = x[offset_of(p.x, i)] - m[static_cast<size_t>(r)];
    v[static_cast<size_t>(r)] += d * d;
  });
  for (double& a : v) a /= inner;
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const size_t s = static_cast<size_t>(r);
    const double xhat = (x[offset_of(p.x, i)] - m[s]) / std::sqrt(v[s] + p.epsilon);
    y[offset_of(p.y, i)] = static_cast<float>(xhat * (scale ? scale[c] : 1.0) + (bias ? bias[c] : 0.0));
  });
  for (size_t r = 0; r < outer; ++r) {
    if (mean) mean[r] = static_cast<float>(m[r]);
    if (inv_std) inv_std[r] = static_cast<float>(1.0 / std::sqrt(v[r] + p.epsilon));
  }
  return true;
}

bool layer_norm_backward(const tsrpLayerNormProblem& p, const float* x, const float* dy,
                         const float* scale, const float* saved_mean, const float* saved_inv_std,
                         float* dx, float* dscale, float* dbias, std::string* error) {
  const int axis = p.begin_norm_axis;
  if (!check(p.x, axis, error)) return false;
  const size_t outer = static_cast<size_t>(outer_size(p.x, axis));
  const size_t inner_n = static_cast<size_t>(norm_inner_size(p.x, axis));
  const double inner = static_cast<double>(inner_n);
  std::vector<double> sum_g(outer, 0.0), sum_gx(outer, 0.0), ds(inner_n, 0.0), db(inner_n, 0.0);
  const auto xhat_at = [&](const int64_t* i, int64_t r) {
    return (x[offset_of(p.x, i)] - double(saved_mean[r])) * double(saved_inv_std[r]);
  };
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const double d = dy[offset_of(p.dy, i)];
    const double g = d * (scale ? scale[c] : 1.0);
    const double xhat = xhat_at(i, r);
    sum_g[static_cast<size_t>(r)] += g;
    sum_gx[static_cast<size_t>(r)] += g * xhat;
    ds[static_cast<size_t>(c)] += d * xhat;
    db[static_cast<size_t>(c)] += d;
  });
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const size_t s = static_cast<size_t>(r);
    const double g = dy[offset_of(p.dy, i)] * (scale ? scale[c] : 1.0);
    dx[offset_of(p.dx, i)] = static_cast<float>(
        saved_inv_std[r] * (g - sum_g[s] / inner - xhat_at(i, r) * sum_gx[s] / inner));
  });
  for (size_t c = 0; c < inner_n; ++c) {
    if (dscale) dscale[c] = static_cast<float>(ds[c]);
    if (dbias) dbias[c] = static_cast<float>(db[c]);
  }
  return true;
}

}  // namespace tessera::reference
