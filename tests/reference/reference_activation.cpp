#include "reference_activation.hpp"

#include <cmath>
#include <limits>

#include <tessera_common/problem_descriptor.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

constexpr double pi = 3.14159265358979323846;
// GELU's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
constexpr double gelu_tanh_cubic = 0.044715;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gelu_tanh_inner(double x) {
  return std::sqrt(2.0 / pi) * (x + gelu_tanh_cubic * x * x * x);
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool same_dims(const tsrpTensor& a, const char* a_name, const tsrpTensor& b, const char* b_name,
               std::string* error) {
  if (a.ndims < 1 || a.ndims > TSRP_MAX_DIMS)
    return fail(error, std::string(a_name) + " has " + std::to_string(a.ndims) + " dims");
  bool same = a.ndims == b.ndims;
  for (int i = 0; same && i < a.ndims; ++i) same = a.dims[i] == b.dims[i];
  if (!same)
    return fail(error, std::string(b_name) + " has dims " + common::format_dims(b.dims, b.ndims) +
                           ", expected " + a_name + "'s " + common::format_dims(a.dims, a.ndims));
  return true;
}

}  // namespace

double activation_value(tsrpActivationMode_t mode, double coef, double x) {
  switch (mode) {
    case TSRP_ACTIVATION_IDENTITY: return x;
    case TSRP_ACTIVATION_RELU: return x > 0.0 ? x : 0.0;
    case TSRP_ACTIVATION_SIGMOID: return sigmoid(x);
    case TSRP_ACTIVATION_TANH: return std::tanh(x);
    case TSRP_ACTIVATION_LEAKY_RELU: return x > 0.0 ? x : coef * x;
    case TSRP_ACTIVATION_CLIPPED_RELU: return std::fmin(std::fmax(x, 0.0), coef);
    case TSRP_ACTIVATION_ELU: return x > 0.0 ? x : coef * std::expm1(x);
    case TSRP_ACTIVATION_GELU_ERF: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case TSRP_ACTIVATION_GELU_TANH: return 0.5 * x * (1.0 + std::tanh(gelu_tanh_inner(x)));
    case TSRP_ACTIVATION_SWISH: return x * sigmoid(coef * x);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double activation_derivative(tsrpActivationMode_t mode, double coef, double x) {
  switch (mode) {
    case TSRP_ACTIVATION_IDENTITY: return 1.0;
    case TSRP_ACTIVATION_RELU: return x > 0.0 ? 1.0 : 0.0;
    case TSRP_ACTIVATION_SIGMOID: {
      const double s = sigmoid(x);
      return s * (1.0 - s);
    }
    case TSRP_ACTIVATION_TANH: {
      const double t = std::tanh(x);
      return 1.0 - t * t;
    }
    case TSRP_ACTIVATION_LEAKY_RELU: return x > 0.0 ? 1.0 : coef;
    case TSRP_ACTIVATION_CLIPPED_RELU: return x > 0.0 && x < coef ? 1.0 : 0.0;
    case TSRP_ACTIVATION_ELU: return x > 0.0 ? 1.0 : coef * std::exp(x);
    case TSRP_ACTIVATION_GELU_ERF: {
      // d/dx x * Phi(x) = Phi(x) + x * phi(x), Phi the normal CDF and phi its density.
      const double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
      const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * pi);
      return cdf + x * density;
    }
    case TSRP_ACTIVATION_GELU_TANH: {
      const double t = std::tanh(gelu_tanh_inner(x));
      const double inner_derivative =
          std::sqrt(2.0 / pi) * (1.0 + 3.0 * gelu_tanh_cubic * x * x);
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_derivative;
    }
    case TSRP_ACTIVATION_SWISH: {
      // d/dx x * s(cx) = s(cx) + c x s(cx) (1 - s(cx)).
      const double s = sigmoid(coef * x);
      return s + coef * x * s * (1.0 - s);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool activation_forward(const tsrpActivationProblem& p, const float* x, double alpha,
                        double beta, float* y, std::string* error) {
  if (!same_dims(p.x, "x", p.y, "y", error)) return false;
  const auto mode = static_cast<tsrpActivationMode_t>(p.mode);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t index[]) {
    float& out = y[offset_of(p.y, index)];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(alpha * activation_value(mode, p.coef, x[offset_of(p.x, index)]) +
                             previous);
  });
  return true;
}

bool activation_backward(const tsrpActivationProblem& p, const float* x, const float* dy,
                         double alpha, double beta, float* dx, std::string* error) {
  if (!same_dims(p.x, "x", p.dy, "dy", error) || !same_dims(p.x, "x", p.dx, "dx", error))
    return false;
  const auto mode = static_cast<tsrpActivationMode_t>(p.mode);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t index[]) {
    float& out = dx[offset_of(p.dx, index)];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    const double slope = activation_derivative(mode, p.coef, x[offset_of(p.x, index)]);
    out = static_cast<float>(alpha * slope * dy[offset_of(p.dy, index)] + previous);
  });
  return true;
}

}  // namespace tessera::reference
