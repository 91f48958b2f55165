#include "reference_convolution.hpp"

#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// A problem's spatial dims widened to three (missing outer dims have extent 1 and stride 0),
// so that one loop nest serves 1-D, 2-D and 3-D.
struct spatial3 {
  int64_t x_dims[3], x_strides[3];
  int64_t w_dims[3], w_strides[3];
  int64_t y_dims[3], y_strides[3];
  int64_t stride[3], pad[3], dilation[3];
};

spatial3 widen(const tsrpConvolutionProblem& p) {
  spatial3 s{};
  const int missing = 3 - p.spatial_dims;
  for (int d = 0; d < 3; ++d) {
    const int i = d - missing;  // index into the problem's spatial arrays
    const bool used = i >= 0;
    s.x_dims[d] = used ? p.x.dims[2 + i] : 1;
    s.x_strides[d] = used ? p.x.strides[2 + i] : 0;
    s.w_dims[d] = used ? p.w.dims[2 + i] : 1;
    s.w_strides[d] = used ? p.w.strides[2 + i] : 0;
    s.y_dims[d] = used ? p.y.dims[2 + i] : 1;
    s.y_strides[d] = used ? p.y.strides[2 + i] : 0;
    s.stride[d] = used ? p.stride[i] : 1;
    s.pad[d] = used ? p.pad_before[i] : 0;
    s.dilation[d] = used ? p.dilation[i] : 1;
  }
  return s;
}

std::string dims_text(const tsrpTensor& t) {
  return common::format_dims(t.dims, t.ndims);
}

}  // namespace

bool check_convolution_problem(const tsrpConvolutionProblem& p, std::string* error) {
  const int n = p.spatial_dims;
  if (n < 1 || n > TSRP_MAX_SPATIAL_DIMS)
    return fail(error, "spatial_dims is " + std::to_string(n) + ", expected 1 to 3");
  const int ndims = n + 2;
  const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", &p.x}, {"w", &p.w}, {"y", &p.y}};
  for (const auto& [name, t] : tensors)
    if (t->ndims != ndims)
      return fail(error, std::string(name) + " has " + std::to_string(t->ndims) +
                             " dims, expected " + std::to_string(ndims));
  if (p.groups < 1) return fail(error, "groups is " + std::to_string(p.groups));
  if (p.x.dims[1] != p.w.dims[1] * p.groups)
    return fail(error, "x has " + std::to_string(p.x.dims[1]) + " channels, expected w's " +
                           std::to_string(p.w.dims[1]) + " times groups " +
                           std::to_string(p.groups));
  if (p.w.dims[0] % p.groups != 0)
    return fail(error, "w has " + std::to_string(p.w.dims[0]) +
                           " output channels, not divisible by groups " + std::to_string(p.groups));
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.w.dims[0])
    return fail(error, "y has dims " + dims_text(p.y) + ", expected batch " +
                           std::to_string(p.x.dims[0]) + " and " + std::to_string(p.w.dims[0]) +
                           " channels");
  for (int i = 0; i < n; ++i) {
    int64_t out;
    std::string why;
    if (!common::infer_conv_output_size(p.x.dims[2 + i], p.w.dims[2 + i], p.stride[i],
                                        p.pad_before[i], p.pad_after[i], p.dilation[i], &out,
                                        &why))
      return fail(error, "spatial dim " + std::to_string(i) + ": " + why);
    if (out != p.y.dims[2 + i])
      return fail(error, "y has dims " + dims_text(p.y) + ", expected " + std::to_string(out) +
                             " in spatial dim " + std::to_string(i));
  }
  return true;
}

int64_t convolution_reduction_length(const tsrpConvolutionProblem& p) {
  int64_t length = p.w.dims[1];
  for (int i = 0; i < p.spatial_dims; ++i) length *= p.w.dims[2 + i];
  return length;
}

bool convolution_forward(const tsrpConvolutionProblem& p, const float* x, const float* w,
                         double alpha, double beta, float* y, std::string* error) {
  if (!check_convolution_problem(p, error)) return false;
  const spatial3 s = widen(p);
  const bool flip = p.mode == TSRP_CONVOLUTION;
  const int64_t batch = p.x.dims[0];
  const int64_t out_channels = p.w.dims[0];
  const int64_t group_in = p.w.dims[1];
  const int64_t group_out = out_channels / p.groups;

  for (int64_t n = 0; n < batch; ++n)
    for (int64_t k = 0; k < out_channels; ++k) {
      const int64_t first_c = (k / group_out) * group_in;
      for (int64_t od = 0; od < s.y_dims[0]; ++od)
        for (int64_t oh = 0; oh < s.y_dims[1]; ++oh)
          for (int64_t ow = 0; ow < s.y_dims[2]; ++ow) {
            double sum = 0.0;
            for (int64_t c = 0; c < group_in; ++c)
              for (int64_t kd = 0; kd < s.w_dims[0]; ++kd) {
                const int64_t id = od * s.stride[0] - s.pad[0] + kd * s.dilation[0];
                if (id < 0 || id >= s.x_dims[0]) continue;
                for (int64_t kh = 0; kh < s.w_dims[1]; ++kh) {
                  const int64_t ih = oh * s.stride[1] - s.pad[1] + kh * s.dilation[1];
                  if (ih < 0 || ih >= s.x_dims[1]) continue;
                  for (int64_t kw = 0; kw < s.w_dims[2]; ++kw) {
                    const int64_t iw = ow * s.stride[2] - s.pad[2] + kw * s.dilation[2];
                    if (iw < 0 || iw >= s.x_dims[2]) continue;
                    // Convolution mode walks the filter backwards in every spatial dim.
                    const int64_t fd = flip ? s.w_dims[0] - 1 - kd : kd;
                    const int64_t fh = flip ? s.w_dims[1] - 1 - kh : kh;
                    const int64_t fw = flip ? s.w_dims[2] - 1 - kw : kw;
                    const float xv = x[n * p.x.strides[0] + (first_c + c) * p.x.strides[1] +
                                       id * s.x_strides[0] + ih * s.x_strides[1] +
                                       iw * s.x_strides[2]];
                    const float wv = w[k * p.w.strides[0] + c * p.w.strides[1] +
                                       fd * s.w_strides[0] + fh * s.w_strides[1] +
                                       fw * s.w_strides[2]];
                    sum += static_cast<double>(xv) * static_cast<double>(wv);
                  }
                }
              }
            float& out = y[n * p.y.strides[0] + k * p.y.strides[1] + od * s.y_strides[0] +
                           oh * s.y_strides[1] + ow * s.y_strides[2]];
            const double previous = beta != 0.0 ? beta * static_cast<double>(out) : 0.0;
            out = static_cast<float>(alpha * sum + previous);
          }
    }
  return true;
}

}  // namespace tessera::reference
