// Strided backward data on the sm90 tensor cores, by phase decomposition:
//   "conv_bwd_data_igemm_sm90_strided_<tile>_<type>"   dx = alpha * conv_backward_data(w, dy) + beta * dx
// CUTLASS's sm90 dgrad takes unit strides only. A stride-s backward data splits, per spatial dim,
// into s unit-stride ones: dx row h = s * i + phi receives dy only through the filter taps
// r = r0 + s * t, r0 = (phi + pad_before) mod s, from dy row i + c - t, c = (phi + pad_before - r0) / s.
// So each phase (phi_h, phi_w) is CUTLASS's unit-stride dgrad with
//   - the sub-filter of those taps, gathered into the workspace as a packed K x R' x S' x C tensor,
//   - padding c before (and whatever after makes dy's extent come out), dilation 1,
//   - dx written through a view: base dx + (phi_h * W + phi_w) * C, strides s_w * C, s_h * W * C and
//     H * W * C (the TMA epilogue's StrideD), so that no scatter pass is needed;
// and positions no phase covers (a whole phase when no tap reaches it, as three of four with a 1x1
// filter and stride 2; the last rows of a phase when dy ends first) get dx = beta * dx (0 when
// beta is 0, whatever dx held). The arithmetic is conv_dgrad_phases.hpp's. Each dx element is still one fp32 dot
// product over the taps that reach it, rounded once: deterministic, and the same products as the
// direct kernel. Dilation 1 only (with dilation the taps of a phase are not evenly spaced).
// Included by conv_implicit_gemm_dgrad.cu, so that the CUTLASS kernels are compiled once.
#pragma once

#include "conv_dgrad_phases.hpp"
#include "conv_igemm_dgrad_sm90.cuh"
#include "conv_igemm_geometry.hpp"
#include "cuda_context.hpp"
#include "element_types.cuh"
#include "kernel_glue.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace tessera::cuda::igemm {

// out[k][t][u][c] = w[k][r0 + sh * t][s0 + sw * u][c], 16 bytes at a time (C is a multiple of 8).
template <typename T>
__global__ void gather_subfilter(const uint4* __restrict__ w, uint4* __restrict__ out, int64_t vectors, int r, int s,
                                 int c_vectors, int r0, int taps_r, int s0, int taps_s, int sh, int sw) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i;
    const int cv = static_cast<int>(rest % c_vectors);
    rest /= c_vectors;
    const int u = static_cast<int>(rest % taps_s);
    rest /= taps_s;
    const int t = static_cast<int>(rest % taps_r);
    const int64_t k = rest / taps_r;
    out[i] = w[((k * r + r0 + int64_t{sh} * t) * s + s0 + int64_t{sw} * u) * c_vectors + cv];
  }
}

// dx = beta * dx (0 when beta is 0, whatever dx held) at every position no phase covers,
// 16 bytes at a time; covered positions are not touched.
template <typename T>
__global__ void scale_uncovered(uint4* __restrict__ dx, int64_t vectors, int w, int c_vectors, int64_t h,
                                const phase_coverage coverage, float beta) {
  constexpr int per_vector = 16 / static_cast<int>(sizeof(T));
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pixel = i / c_vectors;
    const int x = static_cast<int>(pixel % w);
    const int y = static_cast<int>((pixel / w) % h);
    if (coverage.covers(y, x)) continue;
    if (beta == 0.0f) {
      dx[i] = make_uint4(0, 0, 0, 0);
      continue;
    }
    uint4 v = dx[i];
    T values[per_vector];
    memcpy(values, &v, sizeof(v));
#pragma unroll
    for (int j = 0; j < per_vector; ++j) values[j] = from_float<T>(beta * to_float(values[j]));
    memcpy(&v, values, sizeof(v));
    dx[i] = v;
  }
}

// The registry's face of it: Config is one of the unit-stride dgrad configurations.
template <typename Config, typename Element>
struct strided_dgrad {
  static std::string support(const nhwc_geometry& g) {
    if (g.stride[0] == 1 && g.stride[1] == 1) return "unit strides: conv_bwd_data_igemm_sm90 takes them";
    if (g.k == 0) return "w has 0 filters: nothing for the tensor cores to reduce";
    const strided_plan plan = plan_strided_dgrad(g, sizeof(Element));
    if (!plan.why.empty()) return plan.why;
    for (int i = 0; i < plan.count; ++i) {
      const strided_plan::phase& f = plan.phases[i];
      if (!f.runs) continue;
      const std::string why = dgrad_support<Config>(f.g, f.view);
      if (!why.empty()) return "phase " + std::to_string(i) + " (a unit-stride dgrad): " + why;
    }
    return {};
  }

  // The phases run one after the other: the sum of their wave-model estimates, and the gather.
  static double estimate_us(const nhwc_geometry& g) {
    const strided_plan plan = plan_strided_dgrad(g, sizeof(Element));
    double us = 2.0 * double(plan.filters_bytes) / 3.5e6;
    for (int i = 0; i < plan.count; ++i)
      if (plan.phases[i].runs) us += dgrad_estimate_us<Config>(plan.phases[i].g);
    return us;
  }

  // The sub-filters, then CUTLASS's own workspace (the largest any phase asks).
  static size_t workspace(const nhwc_geometry& g) {
    const strided_plan plan = plan_strided_dgrad(g, sizeof(Element));
    size_t cutlass_bytes = 0;
    for (int i = 0; i < plan.count; ++i)
      if (plan.phases[i].runs) cutlass_bytes = std::max(cutlass_bytes, dgrad_workspace<Config>(plan.phases[i].g));
    return plan.filters_bytes + cutlass_bytes;
  }

  static void run(const nhwc_geometry& g, const void* w, const void* dy, void* dx, float alpha, float beta,
                  void* workspace, cudaStream_t stream) {
    const strided_plan plan = plan_strided_dgrad(g, sizeof(Element));
    auto* base = static_cast<uint8_t*>(workspace);
    void* cutlass_workspace = base + plan.filters_bytes;
    constexpr int threads = 256;
    const int c_vectors = g.c * static_cast<int>(sizeof(Element)) / 16;
    for (int i = 0; i < plan.count; ++i) {
      const strided_plan::phase& f = plan.phases[i];
      if (!f.runs) continue;
      const int64_t vectors = int64_t{g.k} * f.g.r * f.g.s * c_vectors;
      const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>((vectors + threads - 1) / threads, 65535));
      gather_subfilter<Element><<<blocks, threads, 0, stream>>>(
          static_cast<const uint4*>(w), reinterpret_cast<uint4*>(base + f.filter_offset), vectors, g.r, g.s, c_vectors,
          f.h.first_tap, f.g.r, f.w.first_tap, f.g.s, g.stride[0], g.stride[1]);
      run_dgrad<Config>(f.g, base + f.filter_offset, dy, static_cast<Element*>(dx) + f.dx_offset, alpha, beta,
                        cutlass_workspace, stream, f.view);
    }
    if (plan.any_uncovered) {
      const int64_t vectors = int64_t{g.n} * g.h * g.w * c_vectors;
      const unsigned int blocks =
          static_cast<unsigned int>(std::min<int64_t>((vectors + threads - 1) / threads, 0x7fffffff));
      scale_uncovered<Element><<<blocks, threads, 0, stream>>>(static_cast<uint4*>(dx), vectors, g.w, c_vectors, g.h,
                                                               coverage_of(plan, g), beta);
    }
  }
};

}  // namespace tessera::cuda::igemm
