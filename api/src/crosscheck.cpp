#include "crosscheck.hpp"

#include "error_state.hpp"
#include "logging.hpp"
#include "problem_key.hpp"

#include <tessera_common/half_float.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tessera::api {
namespace {

// One element as a double (NaN and infinities kept).
double element_at(const uint8_t* data, int32_t type, size_t i) {
  switch (type) {
    case TSRP_DATA_FLOAT: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    case TSRP_DATA_HALF:
    case TSRP_DATA_BFLOAT16: {
      uint16_t bits;
      std::memcpy(&bits, data + 2 * i, 2);
      return type == TSRP_DATA_HALF ? common::half_bits_to_float(bits) : common::bfloat16_bits_to_float(bits);
    }
    case TSRP_DATA_INT8: return static_cast<int8_t>(data[i]);
    case TSRP_DATA_INT32: {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    default: return 0.0;
  }
}

size_t element_size(int32_t type) {
  switch (type) {
    case TSRP_DATA_HALF:
    case TSRP_DATA_BFLOAT16: return 2;
    case TSRP_DATA_INT8: return 1;
    default: return 4;
  }
}

// |primary - reference| <= scale_part * max|reference| + relative_part * |reference|: backends
// sum in different orders (and the GPU may use tensor cores), so the bound follows the
// precision of the data type and the magnitude of the whole tensor; integers (int8 convolution
// outputs round once) may differ by one.
struct tolerance {
  double scale_part, relative_part, absolute;
};

tolerance tolerance_for(int32_t type, tsrMathMode_t math) {
  switch (type) {
    case TSRP_DATA_FLOAT:
      return math == TSR_MATH_ALLOW_TF32 ? tolerance{2e-3, 2e-3, 0} : tolerance{1e-4, 1e-4, 0};
    case TSRP_DATA_HALF: return {2e-3, 4e-3, 0};
    case TSRP_DATA_BFLOAT16: return {1e-2, 1.6e-2, 0};
    case TSRP_DATA_INT8:
    case TSRP_DATA_INT32: return {0, 0, 1};
    default: return {0, 0, 0};
  }
}

struct comparison {
  size_t count = 0, differing = 0, first = 0;
  double first_primary = 0, first_reference = 0, max_error = 0;
};

comparison compare(const uint8_t* primary, const uint8_t* reference, size_t bytes, int32_t type, tolerance tol) {
  comparison c;
  c.count = bytes / element_size(type);
  double scale = 0;
  for (size_t i = 0; i < c.count; ++i) {
    const double r = element_at(reference, type, i);
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  }
  for (size_t i = 0; i < c.count; ++i) {
    const double a = element_at(primary, type, i), r = element_at(reference, type, i);
    bool bad;
    if (std::isnan(a) || std::isnan(r)) {
      bad = std::isnan(a) != std::isnan(r);
    } else if (std::isinf(a) || std::isinf(r)) {
      bad = a != r;
    } else {
      const double error = std::fabs(a - r);
      c.max_error = std::max(c.max_error, error);
      bad = error > tol.scale_part * scale + tol.relative_part * std::fabs(r) + tol.absolute;
    }
    if (bad && c.differing++ == 0) {
      c.first = i;
      c.first_primary = a;
      c.first_reference = r;
    }
  }
  return c;
}

std::string replay_of(const tsrContext& h, const registry::registry& reg, const operation_call& call,
                      int64_t primary) {
  if (call.describe) {
    const std::string backend = reg.plugins()[reg.kernels()[primary].plugin_index].name;
    const call_description d = call.describe(call.problem, h, backend);
    if (!d.replay.empty()) return d.replay;
  }
  return std::string("(no tessera-bench replay for this operation yet; problem key ") +
         problem_key(tsrGetOperationName(static_cast<tsrOperation_t>(call.op)), call.problem) + ")";
}

}  // namespace

tsrStatus_t crosscheck_snapshot(tsrContext& h, const operation_call& call, host_staged_call* snapshot) {
  return stage_call_to_host(h, call.function, call, snapshot);
}

void crosscheck_compare(tsrContext& h, const registry::registry& reg, const operation_call& call, int64_t primary,
                        host_staged_call& snapshot) {
  const registry::kernel_record& primary_kernel = reg.kernels()[primary];
  tsrContext* host = nullptr;
  registry::selection_result reference;
  tsrStatus_t s = host_twin(h, reg, call.function, &host);
  // The reference is a host backend other than the one that ran the call.
  const int64_t excluded = reg.plugins()[primary_kernel.plugin_index].device_kind == TSRP_DEVICE_CPU
                               ? static_cast<int64_t>(primary_kernel.plugin_index)
                               : -1;
  // The primary's outputs, before the reference overwrites the snapshot's copies.
  std::vector<std::vector<uint8_t>> primary_outputs(snapshot.buffers.size());
  if (s == TSR_STATUS_SUCCESS) {
    for (size_t i = 0; i < snapshot.buffers.size() && s == TSR_STATUS_SUCCESS; ++i) {
      const operation_buffer& b = snapshot.buffers[i];
      if (b.role != buffer_role::output || b.data_type == k_opaque_data) continue;
      primary_outputs[i].resize(b.bytes);
      if (h.device->copy_device_to_host(h.device_context(), primary_outputs[i].data(),
                                        buffer_pointer(call.args, b.args_offset), b.bytes) != TSRP_STATUS_SUCCESS)
        s = TSR_STATUS_EXECUTION_FAILED_DEVICE;
    }
  }
  if (s == TSR_STATUS_SUCCESS) s = run_staged_on_host(*host, reg, call.function, call, snapshot, &reference, excluded);
  if (s != TSR_STATUS_SUCCESS) {
    ++h.crosscheck_counts.skipped;
    const std::string why = reference.kernel_id < 0 && !reference.declined.empty()
                                ? registry::join_reasons(reg, reference.declined)
                                : last_error();
    log::write(log::level::info, std::string("cross-check skipped for ") + call.function + " on " +
                                     primary_kernel.full_name + ": " + why);
    clear_error();
    return;
  }
  ++h.crosscheck_counts.checked;
  const registry::kernel_record& reference_kernel = reg.kernels()[reference.kernel_id];
  std::string report;
  for (size_t i = 0; i < snapshot.buffers.size(); ++i) {
    const operation_buffer& b = snapshot.buffers[i];
    if (b.role != buffer_role::output || b.data_type == k_opaque_data) continue;
    const comparison c = compare(primary_outputs[i].data(), snapshot.data[i].data(), b.bytes, b.data_type,
                                 tolerance_for(b.data_type, h.math_mode));
    if (c.differing == 0) continue;
    char line[256];
    std::snprintf(line, sizeof(line), "%s%s: %zu of %zu values differ, first at element %zu: %.9g vs %.9g, max abs error %.3g",
                  report.empty() ? "" : "; ", b.name, c.differing, c.count, c.first, c.first_primary,
                  c.first_reference, c.max_error);
    report += line;
  }
  if (report.empty()) return;
  ++h.crosscheck_counts.mismatched;
  log::write(log::level::error, std::string("cross-check mismatch in ") + call.function + ": " +
                                    primary_kernel.full_name + " vs reference " + reference_kernel.full_name + ": " +
                                    report + ". Replay: " + replay_of(h, reg, call, primary));
  if (h.crosscheck == TSR_CROSSCHECK_ABORT) {
    log::write(log::level::error, "TESSERA_CROSSCHECK=abort: aborting at the first mismatch");
    std::abort();
  }
}

}  // namespace tessera::api
