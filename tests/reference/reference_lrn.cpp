#include "reference_lrn.hpp"

#include <algorithm>
#include <cmath>

#include <tessera_common/problem_descriptor.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool same_dims(const tsrpTensor& a, const char* a_name, const tsrpTensor& b, const char* b_name,
               std::string* error) {
  if (a.ndims < 2 || a.ndims > TSRP_MAX_DIMS)
    return fail(error, std::string(a_name) + " has " + std::to_string(a.ndims) + " dims");
  bool same = a.ndims == b.ndims;
  for (int i = 0; same && i < a.ndims; ++i) same = a.dims[i] == b.dims[i];
  if (!same)
    return fail(error, std::string(b_name) + " has dims " + common::format_dims(b.dims, b.ndims) +
                           ", expected " + a_name + "'s " + common::format_dims(a.dims, a.ndims));
  return true;
}

// First and last channel (inclusive) of the window of channel c.
void window_of(const tsrpLrnProblem& p, int64_t c, int64_t* first, int64_t* last) {
  *first = std::max<int64_t>(0, c - (p.n - 1) / 2);
  *last = std::min<int64_t>(p.x.dims[1] - 1, c + p.n / 2);
}

// s_c at the element `index` (whose channel is index[1]).
double scale_at(const tsrpLrnProblem& p, const float* x, const int64_t index[]) {
  int64_t first, last;
  window_of(p, index[1], &first, &last);
  int64_t j[TSRP_MAX_DIMS];
  std::copy(index, index + p.x.ndims, j);
  double sum = 0.0;
  for (j[1] = first; j[1] <= last; ++j[1]) {
    const double v = x[offset_of(p.x, j)];
    sum += v * v;
  }
  return p.k + p.alpha / static_cast<double>(p.n) * sum;
}

}  // namespace

bool lrn_forward(const tsrpLrnProblem& p, const float* x, double blend_alpha, double blend_beta,
                 float* y, std::string* error) {
  if (!same_dims(p.x, "x", p.y, "y", error)) return false;
  if (p.n < 1) return fail(error, "n is " + std::to_string(p.n));
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t index[]) {
    const double value = x[offset_of(p.x, index)] * std::pow(scale_at(p, x, index), -p.beta);
    float& out = y[offset_of(p.y, index)];
    const double previous = blend_beta != 0.0 ? blend_beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(blend_alpha * value + previous);
  });
  return true;
}

bool lrn_backward(const tsrpLrnProblem& p, const float* x, const float* dy, double blend_alpha,
                  double blend_beta, float* dx, std::string* error) {
  if (!same_dims(p.x, "x", p.dy, "dy", error) || !same_dims(p.x, "x", p.dx, "dx", error))
    return false;
  if (p.n < 1) return fail(error, "n is " + std::to_string(p.n));
  const double coef = 2.0 * p.beta * p.alpha / static_cast<double>(p.n);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t m[]) {
    const double xm = x[offset_of(p.x, m)];
    double value = dy[offset_of(p.dy, m)] * std::pow(scale_at(p, x, m), -p.beta);
    // Channels c whose window [c - (n-1)/2, c + n/2] holds m: c in [m - n/2, m + (n-1)/2].
    int64_t c[TSRP_MAX_DIMS];
    std::copy(m, m + p.x.ndims, c);
    const int64_t lo = std::max<int64_t>(0, m[1] - p.n / 2);
    const int64_t hi = std::min<int64_t>(p.x.dims[1] - 1, m[1] + (p.n - 1) / 2);
    for (c[1] = lo; c[1] <= hi; ++c[1]) {
      const double s = scale_at(p, x, c);
      value -= coef * xm * dy[offset_of(p.dy, c)] * x[offset_of(p.x, c)] * std::pow(s, -p.beta - 1.0);
    }
    float& out = dx[offset_of(p.dx, m)];
    const double previous = blend_beta != 0.0 ? blend_beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(blend_alpha * value + previous);
  });
  return true;
}

tolerance lrn_tolerance(int32_t data_type, bool backward) {
  switch (data_type) {
    case TSRP_DATA_FLOAT: return backward ? tolerance{4e-5, 4e-5} : tolerance{1e-5, 1e-5};
    case TSRP_DATA_HALF: return {4e-3, 4e-3};
    case TSRP_DATA_BFLOAT16: return {3e-2, 3e-2};
    default: return {0.0, 0.0};
  }
}

}  // namespace tessera::reference
