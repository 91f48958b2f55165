// How the depthwise backward filter (conv_depthwise_wgrad_nhwc.cu) divides the output pixels
// N*P*Q into chunks, one fp32 partial slice [tap][C] per chunk in the workspace; host arithmetic
// only, so that tests/cuda/depthwise_wgrad_plan_host_test.cpp checks it without a GPU.
//
// A pass-1 thread walks its chunk's pixels one after another, about one memory round trip each,
// so pass 1 takes at least (pixels per chunk) x (latency); with every thread slot of the GPU busy
// that is also about what the bytes take (Little's law). So chunks are sized for one wave of
// threads on the planning GPU, pixels * vectors / wave_threads pixels each, kept within [16, 264]:
// 264 keeps the partials (9 taps x 4 bytes per channel and chunk) under 4 % of the bytes pass 1
// reads (264 pixels x 2 tensors x 2 or 4 bytes per channel) once the problem has more than a wave
// of work; 16 keeps a small problem's partials below its bytes of x and dy. Below 264 the partials
// are at most one wave of slices (19.5 MB for 3x3 in fp16). Past 64 MiB (x above about 1 GB in
// fp16) chunks grow beyond 264 pixels instead: 264 is a target, not a bound. The plan depends on
// the problem alone (planned for the H200 whatever device runs it), so the same problem gives the
// same bits on every GPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tessera::cuda::depthwise {

constexpr int wgrad_pass1_threads = 256;
constexpr int wgrad_pass1_blocks_per_sm = 2;  // __launch_bounds__: at most 128 registers per thread
constexpr int64_t wgrad_target_pixels_per_chunk = 264;
// 4, not the former 16: on the H200 (2026-12-05, tools/gpu/device_run.sh variants dw_wgrad_chunk,
// the MobileNet-v2 depthwise layers' backward filter, fp16 NHWC) the small late layers, which one
// wave of threads covers many times over, ran 1.3-2.2x faster with chunks of 4 (e.g. 0.0718 ->
// 0.0323 ms); the large early layers, whose chunks are longer anyway, kept their times.
constexpr int64_t wgrad_min_pixels_per_chunk = 4;
constexpr int wgrad_planning_sms = 132;  // the H200's; fixed so that the plan does not depend on the device
constexpr int64_t wgrad_wave_threads = int64_t{wgrad_planning_sms} * wgrad_pass1_blocks_per_sm * wgrad_pass1_threads;
constexpr int64_t wgrad_max_workspace_bytes = int64_t{64} << 20;

struct chunk_plan {
  int64_t pixels = 0;            // N * P * Q
  int64_t pixels_per_chunk = 0;  // the last chunk may have fewer
  int64_t chunks = 0;            // 0 when there are no pixels: pass 2 then writes beta * dw
  int64_t slice = 0;             // partial sums per chunk: taps * C

  size_t workspace_bytes() const { return size_t(chunks) * size_t(slice) * sizeof(float); }
};

// `vector`: channels per thread on the 16-byte path, which sizes the plan in both paths (so that
// the workspace does not depend on pointer alignment). `min_pixels`: the smallest chunk
// (wgrad_min_pixels_per_chunk unless an experiment overrides it).
inline chunk_plan plan_wgrad_chunks(int64_t pixels, int64_t taps, int64_t channels, int vector,
                                    int64_t min_pixels = wgrad_min_pixels_per_chunk) {
  chunk_plan plan;
  plan.pixels = pixels;
  plan.slice = taps * channels;
  if (plan.pixels == 0 || plan.slice == 0) return plan;
  const int64_t vectors = (channels + vector - 1) / vector;
  // Pixels per chunk for one thread per (chunk, channel vector) on every resident thread slot.
  const int64_t per_wave = (plan.pixels * vectors + wgrad_wave_threads - 1) / wgrad_wave_threads;
  int64_t per_chunk = std::clamp(per_wave, std::min(min_pixels, wgrad_target_pixels_per_chunk), wgrad_target_pixels_per_chunk);
  int64_t chunks = (plan.pixels + per_chunk - 1) / per_chunk;
  const int64_t slice_bytes = plan.slice * int64_t{sizeof(float)};
  const int64_t max_chunks = std::max<int64_t>(1, wgrad_max_workspace_bytes / slice_bytes);
  if (chunks > max_chunks) {
    per_chunk = (plan.pixels + max_chunks - 1) / max_chunks;
    chunks = (plan.pixels + per_chunk - 1) / per_chunk;
  }
  plan.pixels_per_chunk = per_chunk;
  plan.chunks = chunks;
  return plan;
}

}  // namespace tessera::cuda::depthwise
