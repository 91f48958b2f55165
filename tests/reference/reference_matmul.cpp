#include "reference_matmul.hpp"

#include <tessera_common/problem_descriptor.hpp>

#include <algorithm>

#include "reference_activation.hpp"
#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string dims_text(const tsrpTensor& t) { return common::format_dims(t.dims, t.ndims); }

// Offset of `index` (c's index) in a tensor that broadcasts its extent-1 dims.
int64_t broadcast_offset(const tsrpTensor& t, const int64_t index[]) {
  int64_t offset = 0;
  for (int i = 0; i < t.ndims; ++i) offset += (t.dims[i] == 1 ? 0 : index[i]) * t.strides[i];
  return offset;
}

}  // namespace

bool check_matmul_problem(const tsrpMatmulProblem& p, std::string* error) {
  const int n = p.c.ndims;
  if (n < 2 || n > TSRP_MAX_DIMS) return fail(error, "c has " + std::to_string(n) + " dims");
  if (p.a.ndims != n || p.b.ndims != n)
    return fail(error, "a has " + std::to_string(p.a.ndims) + " dims and b " +
                           std::to_string(p.b.ndims) + ", expected c's " + std::to_string(n));
  if (p.a.dims[n - 1] != p.b.dims[n - 2])
    return fail(error, "a is " + dims_text(p.a) + " and b " + dims_text(p.b) + ": K differs");
  if (p.c.dims[n - 2] != p.a.dims[n - 2] || p.c.dims[n - 1] != p.b.dims[n - 1])
    return fail(error, "c is " + dims_text(p.c) + ", expected M of a and N of b");
  for (int i = 0; i < n - 2; ++i)
    for (const tsrpTensor* t : {&p.a, &p.b})
      if (t->dims[i] != 1 && t->dims[i] != p.c.dims[i])
        return fail(error, "batch dim " + std::to_string(i) + " of " + dims_text(*t) +
                               " is neither 1 nor c's " + std::to_string(p.c.dims[i]));
  if (p.has_bias) {
    if (p.bias.ndims != n) return fail(error, "bias has " + std::to_string(p.bias.ndims) + " dims");
    for (int i = 0; i < n; ++i)
      if (p.bias.dims[i] != 1 && p.bias.dims[i] != p.c.dims[i])
        return fail(error, "bias " + dims_text(p.bias) + " does not broadcast to c " + dims_text(p.c));
  }
  return true;
}

int64_t matmul_reduction_length(const tsrpMatmulProblem& p) { return p.a.dims[p.a.ndims - 1]; }

bool matmul(const tsrpMatmulProblem& p, const float* a, const float* b, const float* bias,
            double alpha, double beta, float* c, std::string* error) {
  if (!check_matmul_problem(p, error)) return false;
  if (p.has_bias && bias == nullptr) return fail(error, "the problem has a bias but bias is null");
  const int n = p.c.ndims;
  const int64_t k_len = p.a.dims[n - 1];
  const auto mode = static_cast<tsrpActivationMode_t>(p.activation_mode);
  const bool blend_first = p.epilogue_order == TSRP_MATMUL_BLEND_BEFORE_ACTIVATION;
  for_each_index(n, p.c.dims, [&](const int64_t index[]) {
    // a's index is [batch..., m, k] and b's [batch..., k, n]: c's index with k put in.
    int64_t ai[TSRP_MAX_DIMS], bi[TSRP_MAX_DIMS];
    std::copy(index, index + n, ai);
    std::copy(index, index + n, bi);
    double sum = 0.0;
    for (int64_t k = 0; k < k_len; ++k) {
      ai[n - 1] = k;
      bi[n - 2] = k;
      sum += static_cast<double>(a[broadcast_offset(p.a, ai)]) *
             static_cast<double>(b[broadcast_offset(p.b, bi)]);
    }
    double t = alpha * sum;
    if (p.has_bias) t += static_cast<double>(bias[broadcast_offset(p.bias, index)]);
    float& out = c[offset_of(p.c, index)];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    const double result = blend_first ? activation_value(mode, p.activation_coef, t + previous)
                                      : activation_value(mode, p.activation_coef, t) + previous;
    out = static_cast<float>(result);
  });
  return true;
}

tolerance matmul_tolerance(const tsrpMatmulProblem& p) {
  const int32_t dt = p.c.data_type;
  const bool act = p.activation_mode != TSRP_ACTIVATION_IDENTITY;
  if (dt == TSRP_DATA_INT32) return act ? tolerance{1.0, 0.0} : tolerance{0.0, 0.0};
  tolerance t = conv_tolerance(dt, matmul_reduction_length(p));
  if (act) {
    const tolerance a = activation_tolerance(dt, false);
    t.abs = std::max(t.abs, a.abs);
    t.rel = std::max(t.rel, a.rel);
  }
  return t;
}

}  // namespace tessera::reference
