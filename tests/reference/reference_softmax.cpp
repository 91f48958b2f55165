#include "reference_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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

// Calls row(indices) once per softmax row with the logical indices of its elements.
template <class F>
void for_each_row(const tsrpTensor& t, int32_t mode, F&& row) {
  int64_t outer_dims[TSRP_MAX_DIMS], inner_dims[TSRP_MAX_DIMS];
  for (int i = 0; i < t.ndims; ++i) {
    const bool in_row = mode == TSRP_SOFTMAX_MODE_INSTANCE ? i >= 1 : i == 1;
    outer_dims[i] = in_row ? 1 : t.dims[i];
    inner_dims[i] = in_row ? t.dims[i] : 1;
  }
  std::vector<std::vector<int64_t>> indices;
  for_each_index(t.ndims, outer_dims, [&](const int64_t outer[]) {
    indices.clear();
    for_each_index(t.ndims, inner_dims, [&](const int64_t inner[]) {
      std::vector<int64_t> index(static_cast<size_t>(t.ndims));
      for (int i = 0; i < t.ndims; ++i) index[i] = outer[i] + inner[i];
      indices.push_back(index);
    });
    row(indices);
  });
}

}  // namespace

int64_t softmax_row_length(const tsrpTensor& t, int32_t mode) {
  int64_t n = 1;
  for (int i = 1; i < t.ndims; ++i)
    if (mode == TSRP_SOFTMAX_MODE_INSTANCE || i == 1) n *= t.dims[i];
  return n;
}

bool softmax_forward(const tsrpSoftmaxProblem& p, const float* x, double alpha, double beta,
                     float* y, std::string* error) {
  if (!same_dims(p.x, "x", p.y, "y", error)) return false;
  const bool log_softmax = p.algorithm == TSRP_SOFTMAX_LOG;
  for_each_row(p.x, p.mode, [&](const std::vector<std::vector<int64_t>>& row) {
    double max = -INFINITY;
    for (const auto& i : row) max = std::max(max, static_cast<double>(x[offset_of(p.x, i.data())]));
    double sum = 0.0;
    for (const auto& i : row) sum += std::exp(x[offset_of(p.x, i.data())] - max);
    for (const auto& i : row) {
      const double shifted = x[offset_of(p.x, i.data())] - max;
      const double value = log_softmax ? shifted - std::log(sum) : std::exp(shifted) / sum;
      float& out = y[offset_of(p.y, i.data())];
      const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
      out = static_cast<float>(alpha * value + previous);
    }
  });
  return true;
}

bool softmax_backward(const tsrpSoftmaxProblem& p, const float* y, const float* dy, double alpha,
                      double beta, float* dx, std::string* error) {
  if (!same_dims(p.y, "y", p.dy, "dy", error) || !same_dims(p.y, "y", p.dx, "dx", error))
    return false;
  const bool log_softmax = p.algorithm == TSRP_SOFTMAX_LOG;
  for_each_row(p.y, p.mode, [&](const std::vector<std::vector<int64_t>>& row) {
    double sum = 0.0;  // sum(dy * y), or sum(dy) for log
    for (const auto& i : row) {
      const double g = dy[offset_of(p.dy, i.data())];
      sum += log_softmax ? g : g * y[offset_of(p.y, i.data())];
    }
    for (const auto& i : row) {
      const double yv = y[offset_of(p.y, i.data())];
      const double g = dy[offset_of(p.dy, i.data())];
      const double value = log_softmax ? g - std::exp(yv) * sum : yv * (g - sum);
      float& out = dx[offset_of(p.dx, i.data())];
      const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
      out = static_cast<float>(alpha * value + previous);
    }
  });
  return true;
}

tolerance softmax_tolerance(int32_t data_type, int64_t row_length, bool backward) {
  const double growth =
      std::max(1.0, std::sqrt(static_cast<double>(std::max<int64_t>(row_length, 1))) / 8.0);
  const double factor = backward ? 2.0 : 1.0;
  switch (data_type) {
    case TSRP_DATA_FLOAT: return {1e-5 * growth * factor, 1e-5 * growth * factor};
    case TSRP_DATA_HALF: return {2e-3 * factor, 2e-3 * factor};
    case TSRP_DATA_BFLOAT16: return {1.6e-2 * factor, 1.6e-2 * factor};
    default: return {0.0, 0.0};
  }
}

}  // namespace tessera::reference
