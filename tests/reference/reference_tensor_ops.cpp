#include "reference_tensor_ops.hpp"

#include <cmath>
#include <limits>

#include <tessera_common/problem_descriptor.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// `small` has big's number of dims and each dim 1 or big's.
bool ones_or_equal(const tsrpTensor& small, const char* small_name, const tsrpTensor& big,
                   const char* big_name, std::string* error) {
  bool ok = small.ndims == big.ndims && big.ndims >= 1 && big.ndims <= TSRP_MAX_DIMS;
  for (int i = 0; ok && i < big.ndims; ++i) ok = small.dims[i] == 1 || small.dims[i] == big.dims[i];
  if (!ok)
    return fail(error, std::string(small_name) + " has dims " +
                           common::format_dims(small.dims, small.ndims) + ", not 1 or " + big_name +
                           "'s " + common::format_dims(big.dims, big.ndims) + " in each dim");
  return true;
}

bool same_dims(const tsrpTensor& a, const char* a_name, const tsrpTensor& b, const char* b_name,
               std::string* error) {
  bool ok = a.ndims == b.ndims;
  for (int i = 0; ok && i < a.ndims; ++i) ok = a.dims[i] == b.dims[i];
  if (!ok)
    return fail(error, std::string(b_name) + " has dims " + common::format_dims(b.dims, b.ndims) +
                           ", expected " + a_name + "'s " + common::format_dims(a.dims, a.ndims));
  return true;
}

// Offset in `small` (broadcast to the index space of the caller) of `index`.
int64_t broadcast_offset(const tsrpTensor& small, const int64_t index[]) {
  int64_t offset = 0;
  for (int i = 0; i < small.ndims; ++i) offset += (small.dims[i] == 1 ? 0 : index[i]) * small.strides[i];
  return offset;
}

void blend(float& out, double value, double beta) {
  out = static_cast<float>(value + (beta != 0.0 ? beta * static_cast<double>(out) : 0.0));
}

}  // namespace

bool add_tensor(const tsrpAddTensorProblem& p, const float* a, double alpha, double beta, float* c,
                std::string* error) {
  if (!ones_or_equal(p.a, "a", p.c, "c", error)) return false;
  for_each_index(p.c.ndims, p.c.dims, [&](const int64_t index[]) {
    blend(c[offset_of(p.c, index)], alpha * a[broadcast_offset(p.a, index)], beta);
  });
  return true;
}

bool op_tensor(const tsrpOpTensorProblem& p, const float* a, const float* b, double alpha1,
               double alpha2, double beta, float* c, std::string* error) {
  const bool unary = p.op == TSRP_OP_TENSOR_SQRT || p.op == TSRP_OP_TENSOR_NOT;
  if (!same_dims(p.c, "c", p.a, "a", error)) return false;
  if (!unary && !ones_or_equal(p.b, "b", p.c, "c", error)) return false;
  for_each_index(p.c.ndims, p.c.dims, [&](const int64_t index[]) {
    const double x = alpha1 * a[offset_of(p.a, index)];
    const double y = unary ? 0.0 : alpha2 * b[broadcast_offset(p.b, index)];
    double r = std::numeric_limits<double>::quiet_NaN();
    switch (p.op) {
      case TSRP_OP_TENSOR_ADD: r = x + y; break;
      case TSRP_OP_TENSOR_MUL: r = x * y; break;
      case TSRP_OP_TENSOR_MIN: r = std::fmin(x, y); break;
      case TSRP_OP_TENSOR_MAX: r = std::fmax(x, y); break;
      case TSRP_OP_TENSOR_SQRT: r = std::sqrt(x); break;
      case TSRP_OP_TENSOR_NOT: r = 1.0 - x; break;
    }
    blend(c[offset_of(p.c, index)], r, beta);
  });
  return true;
}

void scale_tensor(const tsrpScaleTensorProblem& p, double alpha, float* y) {
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t index[]) {
    float& v = y[offset_of(p.y, index)];
    v = static_cast<float>(alpha * static_cast<double>(v));
  });
}

void set_tensor(const tsrpSetTensorProblem& p, double value, float* y) {
  for_each_index(p.y.ndims, p.y.dims,
                 [&](const int64_t index[]) { y[offset_of(p.y, index)] = static_cast<float>(value); });
}

bool transform_tensor(const tsrpTransformTensorProblem& p, const float* x, double alpha,
                      double beta, float* y, std::string* error) {
  if (!same_dims(p.x, "x", p.y, "y", error)) return false;
  for_each_index(p.y.ndims, p.y.dims, [&](const int64_t index[]) {
    blend(y[offset_of(p.y, index)], alpha * x[offset_of(p.x, index)], beta);
  });
  return true;
}

int64_t reduction_length(const tsrpReduceTensorProblem& p) {
  int64_t n = 1;
  for (int i = 0; i < p.a.ndims; ++i)
    if (p.c.dims[i] == 1) n *= p.a.dims[i];
  return n;
}

bool reduce_tensor(const tsrpReduceTensorProblem& p, const float* a, double alpha, double beta,
                   float* c, std::vector<uint32_t>* indices, std::string* error) {
  if (!ones_or_equal(p.c, "c", p.a, "a", error)) return false;
  // Accumulators per element of c, in c's row-major order.
  int64_t count = 1;
  for (int i = 0; i < p.c.ndims; ++i) count *= p.c.dims[i];
  std::vector<double> acc(static_cast<size_t>(count), 0.0);
  std::vector<int64_t> seen(static_cast<size_t>(count), 0);
  std::vector<uint32_t> best(static_cast<size_t>(count), 0);
  for_each_index(p.a.ndims, p.a.dims, [&](const int64_t index[]) {
    int64_t slot = 0;  // row-major position of the c element this a element reduces into
    for (int i = 0; i < p.c.ndims; ++i) slot = slot * p.c.dims[i] + (p.c.dims[i] == 1 ? 0 : index[i]);
    const double v = a[offset_of(p.a, index)];
    double& s = acc[static_cast<size_t>(slot)];
    const int64_t position = seen[static_cast<size_t>(slot)]++;
    const bool first = position == 0;
    bool better = false;
    switch (p.op) {
      case TSRP_REDUCE_TENSOR_ADD:
      case TSRP_REDUCE_TENSOR_AVG: s += v; break;
      case TSRP_REDUCE_TENSOR_MUL: s = first ? v : s * v; break;
      case TSRP_REDUCE_TENSOR_MIN: better = first || v < s; break;
      case TSRP_REDUCE_TENSOR_MAX: better = first || v > s; break;
      case TSRP_REDUCE_TENSOR_AMAX: better = first || std::fabs(v) > s; break;
      case TSRP_REDUCE_TENSOR_NORM1: s += std::fabs(v); break;
      case TSRP_REDUCE_TENSOR_NORM2: s += v * v; break;
    }
    if (better) {
      s = p.op == TSRP_REDUCE_TENSOR_AMAX ? std::fabs(v) : v;
      best[static_cast<size_t>(slot)] = static_cast<uint32_t>(position);
    }
  });
  int64_t slot = 0;
  for_each_index(p.c.ndims, p.c.dims, [&](const int64_t index[]) {
    double r = acc[static_cast<size_t>(slot)];
    if (p.op == TSRP_REDUCE_TENSOR_AVG) r /= static_cast<double>(seen[static_cast<size_t>(slot)]);
    if (p.op == TSRP_REDUCE_TENSOR_NORM2) r = std::sqrt(r);
    blend(c[offset_of(p.c, index)], alpha * r, beta);
    ++slot;
  });
  if (indices) *indices = best;
  return true;
}

tolerance tensor_op_tolerance(int32_t data_type, int64_t reduction_length) {
  return conv_tolerance(data_type, reduction_length);
}

}  // namespace tessera::reference
