#include "reference_rms_norm.hpp"

#include <cmath>
#include <vector>

#include "reference_layer_norm.hpp"
#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool check(const tsrpTensor& x, int axis, std::string* error) {
  if (x.ndims >= 2 && axis >= 1 && axis < x.ndims) return true;
  if (error) *error = "begin_norm_axis does not split x";
  return false;
}

// 1 / sqrt(mean(x^2) + eps) per row.
std::vector<double> inverse_rms(const tsrpRmsNormProblem& p, const float* x) {
  const int axis = p.begin_norm_axis;
  const double inner = static_cast<double>(norm_inner_size(p.x, axis));
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= p.x.dims[i];
  std::vector<double> sum(static_cast<size_t>(outer), 0.0);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const double v = x[offset_of(p.x, i)];
    sum[static_cast<size_t>(r)] += v * v;
  });
  for (double& s : sum) s = 1.0 / std::sqrt(s / inner + p.epsilon);
  return sum;
}

}  // namespace

bool rms_norm_forward(const tsrpRmsNormProblem& p, const float* x, const float* scale, float* y,
                      float* inv_rms, std::string* error) {
  if (!check(p.x, p.begin_norm_axis, error)) return false;
  const std::vector<double> inv = inverse_rms(p, x);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, p.begin_norm_axis, i, &r, &c);
    y[offset_of(p.y, i)] = static_cast<float>(x[offset_of(p.x, i)] * inv[static_cast<size_t>(r)] * scale[c]);
  });
  if (inv_rms)
    for (size_t r = 0; r < inv.size(); ++r) inv_rms[r] = static_cast<float>(inv[r]);
  return true;
}

bool rms_norm_backward(const tsrpRmsNormProblem& p, const float* x, const float* dy,
                       const float* scale, const float* saved_inv_rms, float* dx, float* dscale,
                       std::string* error) {
  const int axis = p.begin_norm_axis;
  if (!check(p.x, axis, error)) return false;
  std::vector<double> inv = inverse_rms(p, x);
  if (saved_inv_rms)
    for (size_t r = 0; r < inv.size(); ++r) inv[r] = saved_inv_rms[r];
  const size_t inner_n = static_cast<size_t>(norm_inner_size(p.x, axis));
  std::vector<double> sum_gx(inv.size(), 0.0), ds(inner_n, 0.0);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const double xv = x[offset_of(p.x, i)], d = dy[offset_of(p.dy, i)];
    sum_gx[static_cast<size_t>(r)] += d * scale[c] * xv;
    ds[static_cast<size_t>(c)] += d * xv * inv[static_cast<size_t>(r)];
  });
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    int64_t r, c;
    norm_row_col(p.x, axis, i, &r, &c);
    const size_t s = static_cast<size_t>(r);
    const double xv = x[offset_of(p.x, i)], g = dy[offset_of(p.dy, i)] * scale[c];
    dx[offset_of(p.dx, i)] = static_cast<float>(
        inv[s] * g - inv[s] * inv[s] * inv[s] * xv * sum_gx[s] / static_cast<double>(inner_n));
  });
  if (dscale)
    for (size_t c = 0; c < inner_n; ++c) dscale[c] = static_cast<float>(ds[c]);
  return true;
}

}  // namespace tessera::reference
