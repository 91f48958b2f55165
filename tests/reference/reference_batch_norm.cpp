#include "reference_batch_norm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// Offset in the param tensor of the statistic x[index] belongs to.
int64_t param_offset(const tsrpBatchNormProblem& p, const int64_t index[]) {
  int64_t idx[TSRP_MAX_DIMS] = {};
  idx[1] = index[1];
  if (p.mode == TSRP_BATCH_NORM_PER_ACTIVATION)
    for (int i = 2; i < p.x.ndims; ++i) idx[i] = index[i];
  return offset_of(p.param, idx);
}

int64_t param_extent(const tsrpBatchNormProblem& p) {
  int64_t e = 1;
  for (int i = 0; i < p.param.ndims; ++i) e += (p.param.dims[i] - 1) * p.param.strides[i];
  return e;
}

bool check(const tsrpBatchNormProblem& p, std::string* error) {
  if (p.x.ndims < 2 || p.x.ndims > TSRP_MAX_DIMS) return fail(error, "x has a bad number of dims");
  if (p.param.ndims != p.x.ndims) return fail(error, "param has other ndims than x");
  return true;
}

double act(const tsrpBatchNormProblem& p, double v) {
  return p.activation == TSRP_ACTIVATION_RELU ? std::max(v, 0.0) : v;
}

// Batch mean and biased variance per statistic, in double.
void batch_statistics(const tsrpBatchNormProblem& p, const float* x, std::vector<double>* mean,
                      std::vector<double>* var) {
  const int64_t n = param_extent(p);
  const double length = static_cast<double>(batch_norm_reduction_length(p));
  mean->assign(static_cast<size_t>(n), 0.0);
  var->assign(static_cast<size_t>(n), 0.0);
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    (*mean)[static_cast<size_t>(param_offset(p, i))] += x[offset_of(p.x, i)];
  });
  for (double& m : *mean) m /= length;
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    const size_t c = static_cast<size_t>(param_offset(p, i));
    const double d = x[offset_of(p.x, i)] - (*mean)[c];
    (*var)[c] += d * d;
  });
  for (double& v : *var) v /= length;
}

void normalize(const tsrpBatchNormProblem& p, const float* x, const float* scale, const float* bias,
               const std::vector<double>& mean, const std::vector<double>& var, double alpha,
               double beta, float* y) {
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    const int64_t c = param_offset(p, i);
    const double inv = 1.0 / std::sqrt(var[static_cast<size_t>(c)] + p.epsilon);
    const double v =
        act(p, scale[c] * (x[offset_of(p.x, i)] - mean[static_cast<size_t>(c)]) * inv + bias[c]);
    float& out = y[offset_of(p.y, i)];
    out = static_cast<float>(alpha * v + (beta != 0.0 ? beta * out : 0.0));
  });
}

}  // namespace

int64_t batch_norm_reduction_length(const tsrpBatchNormProblem& p) {
  int64_t m = p.x.dims[0];
  if (p.mode == TSRP_BATCH_NORM_SPATIAL)
    for (int i = 2; i < p.x.ndims; ++i) m *= p.x.dims[i];
  return m;
}

bool batch_norm_forward_training(const tsrpBatchNormProblem& p, const float* x, const float* scale,
                                 const float* bias, double alpha, double beta, float* y,
                                 float* running_mean, float* running_variance, float* save_mean,
                                 float* save_inv_variance, std::string* error) {
  if (!check(p, error)) return false;
  std::vector<double> mean, var;
  batch_statistics(p, x, &mean, &var);
  normalize(p, x, scale, bias, mean, var, alpha, beta, y);
  const int64_t length = batch_norm_reduction_length(p);
  const double unbias = length > 1 ? double(length) / double(length - 1) : 1.0;
  const double f = p.exponential_average_factor;
  for_each_index(p.param.ndims, p.param.dims, [&](const int64_t* i) {
    const int64_t c = offset_of(p.param, i);
    const size_t s = static_cast<size_t>(c);
    if (save_mean) save_mean[c] = static_cast<float>(mean[s]);
    if (save_inv_variance) save_inv_variance[c] = static_cast<float>(1.0 / std::sqrt(var[s] + p.epsilon));
    if (running_mean) running_mean[c] = static_cast<float>((1 - f) * running_mean[c] + f * mean[s]);
    if (running_variance)
      running_variance[c] = static_cast<float>((1 - f) * running_variance[c] + f * unbias * var[s]);
  });
  return true;
}

bool batch_norm_forward_inference(const tsrpBatchNormProblem& p, const float* x, const float* scale,
                                  const float* bias, const float* mean, const float* variance,
                                  double alpha, double beta, float* y, std::string* error) {
  if (!check(p, error)) return false;
  const int64_t n = param_extent(p);
  std::vector<double> m(mean, mean + n), v(variance, variance + n);
  normalize(p, x, scale, bias, m, v, alpha, beta, y);
  return true;
}

bool batch_norm_backward(const tsrpBatchNormProblem& p, const float* x, const float* y,
                         const float* dy, const float* scale, const float* saved_mean,
                         const float* saved_inv_variance, double alpha, double beta,
                         double alpha_param, double beta_param, float* dx, float* dscale,
                         float* dbias, std::string* error) {
  if (!check(p, error)) return false;
  const bool relu = p.activation == TSRP_ACTIVATION_RELU;
  if (relu && !y) return fail(error, "relu backward needs y");
  const size_t n = static_cast<size_t>(param_extent(p));
  const double length = static_cast<double>(batch_norm_reduction_length(p));
  std::vector<double> sum_g(n, 0.0), sum_gx(n, 0.0);
  const auto g_at = [&](const int64_t* i) {
    const double g = dy[offset_of(p.dy, i)];
    return relu && !(y[offset_of(p.y, i)] > 0.0f) ? 0.0 : g;
  };
  const auto xhat_at = [&](const int64_t* i, int64_t c) {
    return (x[offset_of(p.x, i)] - double(saved_mean[c])) * double(saved_inv_variance[c]);
  };
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    const int64_t c = param_offset(p, i);
    const double g = g_at(i);
    sum_g[static_cast<size_t>(c)] += g;
    sum_gx[static_cast<size_t>(c)] += g * xhat_at(i, c);
  });
  for_each_index(p.x.ndims, p.x.dims, [&](const int64_t* i) {
    const int64_t c = param_offset(p, i);
    const size_t s = static_cast<size_t>(c);
    const double v = scale[c] * saved_inv_variance[c] / length *
                     (length * g_at(i) - sum_g[s] - xhat_at(i, c) * sum_gx[s]);
    float& out = dx[offset_of(p.dx, i)];
    out = static_cast<float>(alpha * v + (beta != 0.0 ? beta * out : 0.0));
  });
  for_each_index(p.param.ndims, p.param.dims, [&](const int64_t* i) {
    const int64_t c = offset_of(p.param, i);
    const size_t s = static_cast<size_t>(c);
    dscale[c] = static_cast<float>(alpha_param * sum_gx[s] + (beta_param != 0.0 ? beta_param * dscale[c] : 0.0));
    dbias[c] = static_cast<float>(alpha_param * sum_g[s] + (beta_param != 0.0 ? beta_param * dbias[c] : 0.0));
  });
  return true;
}

namespace {
double growth(int64_t length) {
  return std::max(1.0, std::sqrt(static_cast<double>(std::max<int64_t>(length, 1))) / 16.0);
}
}  // namespace

// f32 sums of `length` same-signed terms (the variance's squares) round the same way more often
// than not, so their error grows up to linearly: 1e-7 * length (about 2 ulp per term) bounds it.
double f32_error(int64_t length) {
  return std::max(1e-5 * growth(length), 1e-7 * static_cast<double>(length));
}

tolerance norm_data_tolerance(int32_t data_type, int64_t length) {
  double t = f32_error(length);
  if (data_type == TSRP_DATA_HALF) t = std::max(t, 2e-3 * growth(length));
  if (data_type == TSRP_DATA_BFLOAT16) t = std::max(t, 1.6e-2 * growth(length));
  return tolerance{t, t};
}

tolerance norm_stat_tolerance(int64_t length) { return tolerance{f32_error(length), f32_error(length)}; }

tolerance norm_param_grad_tolerance(int64_t length) {
  return tolerance{2e-6 * static_cast<double>(std::max<int64_t>(16, length)), 1e-5 * growth(length)};
}

}  // namespace tessera::reference
