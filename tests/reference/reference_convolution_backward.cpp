#include "reference_convolution_backward.hpp"

#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_index.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// Calls f(x_offset, w_offset, y_offset) for every multiply-add of the forward convolution: each
// (n, k, output position, c, filter position) whose input position lies inside x. Every
// direction of the convolution is this one walk with a different pair of operands.
template <class F>
void for_each_term(const tsrpConvolutionProblem& p, F&& f) {
  const int sd = p.spatial_dims;
  const bool flip = p.mode == TSRP_CONVOLUTION;
  const int64_t group_in = p.w.dims[1];
  const int64_t group_out = p.w.dims[0] / p.groups;
  int64_t y_sp[3] = {1, 1, 1}, w_sp[3] = {1, 1, 1};
  for (int i = 0; i < sd; ++i) y_sp[i] = p.y.dims[2 + i], w_sp[i] = p.w.dims[2 + i];
  for (int64_t n = 0; n < p.x.dims[0]; ++n)
    for (int64_t k = 0; k < p.w.dims[0]; ++k) {
      const int64_t first_c = (k / group_out) * group_in;
      for_each_index(sd, y_sp, [&](const int64_t* o) {
        const int64_t y_off = n * p.y.strides[0] + k * p.y.strides[1] + [&] {
          int64_t s = 0;
          for (int i = 0; i < sd; ++i) s += o[i] * p.y.strides[2 + i];
          return s;
        }();
        for (int64_t c = 0; c < group_in; ++c)
          for_each_index(sd, w_sp, [&](const int64_t* r) {
            int64_t x_off = n * p.x.strides[0] + (first_c + c) * p.x.strides[1];
            int64_t w_off = k * p.w.strides[0] + c * p.w.strides[1];
            for (int i = 0; i < sd; ++i) {
              const int64_t in = o[i] * p.stride[i] - p.pad_before[i] + r[i] * p.dilation[i];
              if (in < 0 || in >= p.x.dims[2 + i]) return;
              x_off += in * p.x.strides[2 + i];
              const int64_t fr = flip ? w_sp[i] - 1 - r[i] : r[i];
              w_off += fr * p.w.strides[2 + i];
            }
            f(x_off, w_off, y_off);
          });
      });
    }
}

// Sums accumulated per element offset, then blended into `out` at its logical elements.
void blend(const tsrpTensor& t, const std::vector<double>& sums, double alpha, double beta,
           float* out) {
  for_each_index(t.ndims, t.dims, [&](const int64_t* index) {
    const int64_t off = offset_of(t, index);
    const double previous = beta != 0.0 ? beta * static_cast<double>(out[off]) : 0.0;
    out[off] = static_cast<float>(alpha * sums[static_cast<size_t>(off)] + previous);
  });
}

int64_t extent(const tsrpTensor& t) {
  int64_t e = 1;
  for (int i = 0; i < t.ndims; ++i) e += (t.dims[i] - 1) * t.strides[i];
  return e;
}

}  // namespace

bool convolution_backward_data(const tsrpConvolutionProblem& p, const float* w, const float* dy,
                               double alpha, double beta, float* dx, std::string* error) {
  if (!check_convolution_problem(p, error)) return false;
  std::vector<double> sums(static_cast<size_t>(extent(p.x)), 0.0);
  for_each_term(p, [&](int64_t xo, int64_t wo, int64_t yo) {
    sums[static_cast<size_t>(xo)] += static_cast<double>(w[wo]) * static_cast<double>(dy[yo]);
  });
  blend(p.x, sums, alpha, beta, dx);
  return true;
}

bool convolution_backward_filter(const tsrpConvolutionProblem& p, const float* x, const float* dy,
                                 double alpha, double beta, float* dw, std::string* error) {
  if (!check_convolution_problem(p, error)) return false;
  std::vector<double> sums(static_cast<size_t>(extent(p.w)), 0.0);
  for_each_term(p, [&](int64_t xo, int64_t wo, int64_t yo) {
    sums[static_cast<size_t>(wo)] += static_cast<double>(x[xo]) * static_cast<double>(dy[yo]);
  });
  blend(p.w, sums, alpha, beta, dw);
  return true;
}

bool convolution_backward_bias(const tsrpConvolutionBackwardBiasProblem& p, const float* dy,
                               double alpha, double beta, float* db, std::string* error) {
  if (p.dy.ndims < 3 || p.db.ndims != p.dy.ndims)
    return fail(error, "dy needs 3 or more dims and db as many");
  for (int i = 0; i < p.db.ndims; ++i)
    if (p.db.dims[i] != (i == 1 ? p.dy.dims[1] : 1)) return fail(error, "db must be 1 x K x 1...");
  std::vector<double> sums(static_cast<size_t>(p.dy.dims[1]), 0.0);
  for_each_index(p.dy.ndims, p.dy.dims, [&](const int64_t* index) {
    sums[static_cast<size_t>(index[1])] += static_cast<double>(dy[offset_of(p.dy, index)]);
  });
  for (int64_t k = 0; k < p.dy.dims[1]; ++k) {
    float& out = db[k * p.db.strides[1]];
    const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
    out = static_cast<float>(alpha * sums[static_cast<size_t>(k)] + previous);
  }
  return true;
}

bool convolution_bias_activation_forward(const tsrpConvolutionBiasActivationProblem& f,
                                         const float* x, const float* w, const float* z,
                                         const float* bias, double alpha1, double alpha2,
                                         float* y, std::string* error) {
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.x = f.x, p.w = f.w, p.y = f.y;
  p.spatial_dims = f.spatial_dims;
  p.mode = f.mode;
  p.compute_type = f.compute_type;
  p.groups = f.groups;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    p.pad_before[i] = f.pad_before[i];
    p.pad_after[i] = f.pad_after[i];
    p.stride[i] = f.stride[i];
    p.dilation[i] = f.dilation[i];
  }
  if (!check_convolution_problem(p, error)) return false;
  std::vector<double> sums(static_cast<size_t>(extent(p.y)), 0.0);
  for_each_term(p, [&](int64_t xo, int64_t wo, int64_t yo) {
    sums[static_cast<size_t>(yo)] += static_cast<double>(x[xo]) * static_cast<double>(w[wo]);
  });
  // All values are computed before y is written, so z may alias y.
  std::vector<std::pair<int64_t, double>> results;
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t* index) {
    const int64_t yo = offset_of(p.y, index);
    double v = alpha1 * sums[static_cast<size_t>(yo)] +
               static_cast<double>(bias[index[1] * f.bias.strides[1]]);
    if (z) v += alpha2 * static_cast<double>(z[offset_of(f.z, index)]);
    results.push_back({yo, activation_value(static_cast<tsrpActivationMode_t>(f.activation_mode),
                                            f.activation_coef, v)});
  });
  for (const auto& [yo, v] : results) y[yo] = static_cast<float>(v);
  return true;
}

bool convolution_forward_int8(const tsrpConvolutionProblem& p, const float* x, const float* w,
                              const float* scales, double alpha, double beta, float* y,
                              std::string* error) {
  if (!check_convolution_problem(p, error)) return false;
  if (p.output_scale_count != 0 && p.output_scale_count != 1 && p.output_scale_count != p.y.dims[1])
    return fail(error, "output_scale_count must be 0, 1 or K");
  std::vector<double> sums(static_cast<size_t>(extent(p.y)), 0.0);
  for_each_term(p, [&](int64_t xo, int64_t wo, int64_t yo) {
    sums[static_cast<size_t>(yo)] += static_cast<double>(x[xo]) * static_cast<double>(w[wo]);
  });
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t* index) {
    const int64_t yo = offset_of(p.y, index);
    const double scale = p.output_scale_count == 0   ? 1.0
                         : p.output_scale_count == 1 ? scales[0]
                                                     : scales[index[1]];
    const double previous = beta != 0.0 ? beta * static_cast<double>(y[yo]) : 0.0;
    double v = alpha * scale * sums[static_cast<size_t>(yo)] + previous;
    if (p.y.data_type == TSRP_DATA_INT8 || p.y.data_type == TSRP_DATA_INT32) {
      const double lo = p.y.data_type == TSRP_DATA_INT8 ? -128.0 : -2147483648.0;
      const double hi = p.y.data_type == TSRP_DATA_INT8 ? 127.0 : 2147483647.0;
      v = std::nearbyint(v);  // the default rounding mode: half to even
      v = v < lo ? lo : v > hi ? hi : v;
    }
    y[yo] = static_cast<float>(v);
  });
  return true;
}

}  // namespace tessera::reference
