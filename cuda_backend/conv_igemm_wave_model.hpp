// The registry's heuristic among the tensor-core convolutions (tsrpKernel.estimate_us), one model
// for the three directions: a wave model of the H200 that only has to rank tiles, split counts
// and kernels sensibly; a tuned result overrides it. Each CTA (one per SM: these tiles use most
// of the shared memory) runs its output tiles one after the other; a tile costs, per k-iteration,
// the larger of its MMAs and its operand loads from L2, then the store of its outputs to memory.
// A split reduction (split-K) adds the round trip of its fp32 partial sums and a second launch.
// Calibrated on ResNet-50 at N=256 (2026-12-03); tests/cuda/igemm_wave_model_host_test.cpp holds
// the choices measured on the H200 that it must reproduce.
#pragma once

#include "conv_igemm_geometry.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::cuda::igemm {

struct gemm_work {
  double m = 0, n = 0;          // the GEMM's output extents, tiled by tile_m x tile_n
  double k_iterations = 0;      // tile_k steps of the whole reduction of one output tile
  int splits = 1;               // CTAs sharing one output tile's reduction
  bool fp32_partials = false;   // the split-K path: partial sums through memory, then a reduction
  double partial_elements = 0;  // elements of one partial sum (the output) when fp32_partials
  double staging_bytes = 0;     // operand copies made before the GEMM (written and read)
  // Bytes per operand and output element: 2 (fp16/bf16), or 4 for fp32 on the TF32 tensor cores,
  // whose dense rate is half of fp16's per clock.
  int element_bytes = 2;
};

constexpr int model_sms = 132;  // the H200 SXM the model is calibrated on

inline double wave_estimate_us(int tile_m, int tile_n, int tile_k, const gemm_work& w) {
  constexpr double sms = model_sms;
  constexpr double mma_flop_per_us = 990e6 / sms;  // dense fp16/bf16 per SM
  constexpr double l2_bytes_per_us = 10e6 / sms;   // L2 -> SM, per SM
  constexpr double dram_bytes_per_us = 3.5e6;      // achieved DRAM bandwidth, whole chip
  // Bigger tiles keep the tensor cores busier (fewer barrier waits per MMA).
  const double mma_efficiency = tile_m * tile_n >= 128 * 128 ? 0.75 : 0.65;
  const int splits = std::max(w.splits, 1);
  const double tiles = std::ceil(w.m / tile_m) * std::ceil(w.n / tile_n);
  const double waves = std::ceil(tiles * splits / sms);
  const double k_per_cta = std::ceil(w.k_iterations / splits);
  const double bytes = w.element_bytes;
  const double mma_us = 2.0 * tile_m * tile_n * tile_k / (mma_flop_per_us * mma_efficiency) * (bytes / 2.0);
  const double load_us = bytes * (tile_m + tile_n) * tile_k / l2_bytes_per_us;
  const double store_us = bytes * tile_m * tile_n / (dram_bytes_per_us / sms);
  double us = waves * (k_per_cta * std::max(mma_us, load_us) + store_us) + 2.0 * w.staging_bytes / dram_bytes_per_us;
  // Each split writes its fp32 partials and the reduction reads them all back: 8 bytes per element.
  if (w.fp32_partials) us += 8.0 * splits * w.partial_elements / dram_bytes_per_us + 4.0;
  return us + 4.0;
}

// Each direction as the GEMM CUTLASS runs.
// Forward: M is y's pixels N*P*Q, N the filters, each tile reduces R*S*C.
inline gemm_work fprop_work(const nhwc_geometry& g, int tile_k, double staging_bytes) {
  gemm_work w;
  w.m = double(g.n) * g.p * g.q;
  w.n = g.k;
  w.k_iterations = double(g.r) * g.s * std::ceil(double(g.c) / tile_k);
  w.staging_bytes = staging_bytes;
  return w;
}

// Backward data: M is dx's pixels N*H*W, N its channels, each tile reduces K*R*S.
inline gemm_work dgrad_work(const nhwc_geometry& g, int tile_k) {
  gemm_work w;
  w.m = double(g.n) * g.h * g.w;
  w.n = g.c;
  w.k_iterations = double(g.r) * g.s * std::ceil(double(g.k) / tile_k);
  return w;
}

// Backward filter: M is the filters, N is (C, S, R) tiled by channels within one tap, each tile
// reduces N*P*Q, possibly in `splits` CTAs through fp32 partials.
inline gemm_work wgrad_work(const nhwc_geometry& g, int tile_n, int tile_k, int splits, bool fp32_partials) {
  gemm_work w;
  w.m = g.k;
  w.n = std::ceil(double(g.c) / tile_n) * tile_n * g.r * g.s;
  w.k_iterations = std::ceil(double(g.n) * g.p * g.q / tile_k);
  w.splits = splits;
  w.fp32_partials = fp32_partials;
  w.partial_elements = fp32_partials ? double(g.k) * g.r * g.s * g.c : 0.0;
  return w;
}

}  // namespace tessera::cuda::igemm
