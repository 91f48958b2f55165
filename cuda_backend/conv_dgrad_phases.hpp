// The phase decomposition of a strided backward data (conv_igemm_dgrad_strided.cuh): host-side
// arithmetic only, so that tests/cuda/dgrad_phases_host_test.cpp can check it against the naive
// reference on any machine. Per spatial dim with stride s, dx row h = s * i + phi receives dy only
// through the filter taps r = r0 + s * t, r0 = (phi + pad_before) mod s, from dy row i + c - t,
// c = (phi + pad_before - r0) / s: a unit-stride backward data with R' taps, padding c before
// and, after, whatever keeps dy's extent (P = H' + c + pad_after - R' + 1).
#pragma once

#include "conv_igemm_geometry.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::cuda::igemm {

// One phase along one spatial dim.
struct phase_dim {
  int first_tap = 0;   // r0
  int taps = 0;        // R': taps r0, r0 + s, ... below R
  int pad_before = 0;  // c
  int extent = 0;      // dx positions in the phase
};

inline phase_dim phase_along(int phase, int stride, int pad_before, int filter, int in_extent) {
  phase_dim d;
  d.first_tap = (phase + pad_before) % stride;
  d.taps = filter > d.first_tap ? (filter - d.first_tap + stride - 1) / stride : 0;
  d.pad_before = (phase + pad_before - d.first_tap) / stride;
  d.extent = in_extent > phase ? (in_extent - 1 - phase) / stride + 1 : 0;
  return d;
}

// The phases of a strided problem, row-major over (phi_h, phi_w). A phase's unit-stride problem
// covers its first `rows` x `cols` positions: the rest (all of them when no tap reaches the phase,
// and the last rows or columns when dy ends before the phase does, as when the forward's
// (H + pads - R) / s rounded down) receive nothing, and get dx = beta * dx.
struct strided_plan {
  struct phase {
    phase_dim h, w;
    int rows = 0, cols = 0;    // positions the unit-stride problem covers
    nhwc_geometry g{};         // that problem (valid when runs)
    dx_strides view{};         // its dx: strides sw * C, sh * W * C, H * W * C
    int64_t dx_offset = 0;     // elements from dx to the phase's first element
    size_t filter_offset = 0;  // bytes into the workspace
    bool runs = false;         // rows, cols and taps in both dims
    bool uncovered = false;    // some positions of the phase get beta * dx
  };
  static constexpr int max_phases = 64;  // strides up to 8 per dim
  int count = 0;
  phase phases[max_phases];
  size_t filters_bytes = 0;
  bool any_uncovered = false;
  std::string why;  // non-empty: the decomposition cannot run this problem
};

constexpr size_t strided_workspace_alignment = 256;

inline size_t align_up(size_t bytes) {
  return (bytes + strided_workspace_alignment - 1) / strided_workspace_alignment * strided_workspace_alignment;
}

// Positions of a phase that dy reaches: row i takes dy rows i + c - t for t < R', which exist
// while i + c - (R' - 1) <= P - 1.
inline int covered(const phase_dim& d, int out_extent) {
  if (d.taps == 0) return 0;
  const int reach = out_extent - d.pad_before + d.taps - 1;
  return reach < 0 ? 0 : (reach < d.extent ? reach : d.extent);
}

inline strided_plan plan_strided_dgrad(const nhwc_geometry& g, size_t element_bytes) {
  strided_plan plan;
  if (g.dilation[0] != 1 || g.dilation[1] != 1) {
    plan.why = "dilated strided backward data not supported (the phases' taps would not be evenly spaced)";
    return plan;
  }
  const int sh = g.stride[0], sw = g.stride[1];
  if (sh < 1 || sw < 1 || sh * sw > strided_plan::max_phases) {
    plan.why = "strides " + std::to_string(sh) + "x" + std::to_string(sw) + " not supported (up to 64 phases)";
    return plan;
  }
  for (int ph = 0; ph < sh; ++ph) {
    for (int pw = 0; pw < sw; ++pw) {
      strided_plan::phase& f = plan.phases[plan.count++];
      f.h = phase_along(ph, sh, g.pad_before[0], g.r, g.h);
      f.w = phase_along(pw, sw, g.pad_before[1], g.s, g.w);
      f.rows = covered(f.h, g.p);
      f.cols = covered(f.w, g.q);
      f.runs = f.rows > 0 && f.cols > 0;
      f.uncovered = f.h.extent > 0 && f.w.extent > 0 && (f.rows < f.h.extent || f.cols < f.w.extent);
      plan.any_uncovered = plan.any_uncovered || f.uncovered;
      f.view = {int64_t{sw} * g.c, int64_t{sh} * g.w * g.c, int64_t{g.h} * g.w * g.c};
      f.dx_offset = (int64_t{ph} * g.w + pw) * g.c;
      if (!f.runs) continue;
      nhwc_geometry& u = f.g;
      u = g;
      u.h = f.rows;
      u.w = f.cols;
      u.r = f.h.taps;
      u.s = f.w.taps;
      u.stride[0] = u.stride[1] = 1;
      u.pad_before[0] = f.h.pad_before;
      u.pad_before[1] = f.w.pad_before;
      // dy keeps its extents: P = rows + pad_before + pad_after - R' + 1 fixes pad_after, which
      // `covered` keeps at 0 or above.
      u.pad_after[0] = g.p - u.h - u.pad_before[0] + u.r - 1;
      u.pad_after[1] = g.q - u.w - u.pad_before[1] + u.s - 1;
      f.filter_offset = plan.filters_bytes;
      plan.filters_bytes += align_up(static_cast<size_t>(g.k) * u.r * u.s * g.c * element_bytes);
    }
  }
  return plan;
}

// Per phase (phi_h * sw + phi_w), the positions its unit-stride problem covers; what the kernel
// that scales the uncovered positions reads.
struct phase_coverage {
  int32_t rows[strided_plan::max_phases];
  int32_t cols[strided_plan::max_phases];
  int32_t sh, sw;
  __host__ __device__ bool covers(int y, int x) const {
    const int phase = (y % sh) * sw + x % sw;
    return y / sh < rows[phase] && x / sw < cols[phase];
  }
};

inline phase_coverage coverage_of(const strided_plan& plan, const nhwc_geometry& g) {
  phase_coverage c{};
  c.sh = g.stride[0];
  c.sw = g.stride[1];
  for (int i = 0; i < plan.count; ++i) {
    c.rows[i] = plan.phases[i].runs ? plan.phases[i].rows : 0;
    c.cols[i] = plan.phases[i].runs ? plan.phases[i].cols : 0;
  }
  return c;
}

}  // namespace tessera::cuda::igemm
