#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <tessera_common/problem_descriptor.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

tolerance unit_scale(double rel) { return {rel, rel}; }

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

tolerance conv_tolerance(int32_t data_type, int64_t reduction_length) {
  const double growth =
      std::max(1.0, std::sqrt(static_cast<double>(std::max<int64_t>(reduction_length, 1))) / 16.0);
  switch (data_type) {
    case TSRP_DATA_FLOAT: return unit_scale(1e-6 * growth);
    case TSRP_DATA_HALF: return unit_scale(1e-3 * growth);
    case TSRP_DATA_BFLOAT16: return unit_scale(8e-3 * growth);
    default: return unit_scale(0.0);
  }
}

tolerance activation_tolerance(int32_t data_type, bool backward) {
  const double factor = backward ? 2.0 : 1.0;
  switch (data_type) {
    case TSRP_DATA_FLOAT: return unit_scale(4e-6 * factor);
    case TSRP_DATA_HALF: return unit_scale(2e-3);
    case TSRP_DATA_BFLOAT16: return unit_scale(1.6e-2);
    default: return unit_scale(0.0);
  }
}

compare_result compare(const host_tensor& result, const host_tensor& expected,
                       const tolerance& tol) {
  compare_result r;
  const tsrpTensor& a = result.desc();
  const tsrpTensor& b = expected.desc();
  bool same = a.ndims == b.ndims;
  for (int i = 0; same && i < a.ndims; ++i) same = a.dims[i] == b.dims[i];
  if (!same) {
    r.mismatches = 1;
    r.message = "result has dims " + common::format_dims(a.dims, a.ndims) +
                ", the reference " + common::format_dims(b.dims, b.ndims);
    return r;
  }

  std::string first;
  for_each_index(a.ndims, a.dims, [&](const int64_t index[]) {
    const double got = result.at(index);
    const double want = expected.at(index);
    bool pass;
    double abs_error = 0.0, rel_error = 0.0;
    if (std::isnan(got) || std::isnan(want)) {
      pass = std::isnan(got) && std::isnan(want);
      abs_error = rel_error = pass ? 0.0 : INFINITY;
    } else if (std::isinf(got) || std::isinf(want)) {
      pass = got == want;
      abs_error = rel_error = pass ? 0.0 : INFINITY;
    } else {
      abs_error = std::fabs(got - want);
      rel_error = want != 0.0 ? abs_error / std::fabs(want) : (abs_error == 0.0 ? 0.0 : INFINITY);
      pass = abs_error <= tol.abs || abs_error <= tol.rel * std::fabs(want);
    }
    r.max_abs_error = std::max(r.max_abs_error, abs_error);
    r.max_rel_error = std::max(r.max_rel_error, rel_error);
    if (!pass) {
      if (r.mismatches++ == 0) {
        r.first_mismatch = r.checked;
        first = index_text(a.ndims, index) + " (element " + std::to_string(r.checked) +
                "): got " + number(got) + ", expected " + number(want);
      }
    }
    ++r.checked;
  });

  const std::string errors = "max abs error " + number(r.max_abs_error) + ", max rel error " +
                             number(r.max_rel_error) + "; tolerance abs " + number(tol.abs) +
                             ", rel " + number(tol.rel);
  if (r.ok())
    r.message = std::to_string(r.checked) + " values match (" + errors + ")";
  else
    r.message = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
                " values differ; first at " + first + "; " + errors;
  return r;
}

}  // namespace tessera::reference
