// Backward bias, db[k] = alpha * sum over n and positions of dy[n, k, ...] + beta * db[k]: a
// memory-bound reduction, run in two passes so that it is deterministic without atomics. Pass one
// splits each channel's N * positions elements into a fixed number of chunks and writes one fp32
// partial per (chunk, channel) to the workspace; pass two adds a channel's partials in chunk
// order and blends into db.
//
// Pass one walks dy the way it lies in memory:
//  - channel-major (NCHW-like, positions contiguous): one block per (channel, chunk), threads
//    stride the positions; packed planes are read 16 bytes at a time;
//  - channel-minor (NHWC-like, channels contiguous): 32 lanes cover 32 channels (32 x 16 bytes
//    when packed) and 8 rows of a block walk the positions.
// The vector width comes from the strides alone; an unaligned pointer only turns one 16-byte load
// into its elements, summed in the same order, so the result never depends on alignment.
#pragma once

#include "conv_direct_geometry.cuh"
#include "element_types.cuh"

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tessera::cuda::conv_direct {

constexpr int bias_threads = 256;
constexpr int bias_rows = 8;  // channel-minor: position rows per block (of 32 lanes each)

// dy's positions (n, p0, p1, p2) after merging dims that are contiguous with each other; when
// vectorized along the positions, the innermost dim counts units of `vector` elements.
struct bias_positions {
  position_decoder decoder;
  int64_t strides[1 + spatial];  // n (outermost), p0, p1, p2
  __device__ __forceinline__ int64_t offset(int32_t unit) const {
    int32_t outer, p[spatial];
    decoder.decode(unit, outer, p);
    return outer * strides[0] + p[0] * strides[1] + p[1] * strides[2] + p[2] * strides[3];
  }
};

template <typename T, int V>
__device__ __forceinline__ void load_elements(const T* p, bool aligned, T (&v)[V]) {
  if constexpr (V > 1) {
    if (aligned) {
      const uint4 raw = *reinterpret_cast<const uint4*>(p);
      memcpy(v, &raw, sizeof(raw));
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) v[j] = p[j];
}

// grid: x = channels, y = chunks.
template <typename T, int V>
__global__ void __launch_bounds__(bias_threads)
    bias_grad_channel_major(const T* dy, bias_positions positions, int64_t channel_stride, int32_t units,
                            int32_t units_per_chunk, int32_t channels, float* partials, bool aligned) {
  __shared__ float sums[bias_threads];
  const int32_t k = blockIdx.x;
  const int32_t chunk = blockIdx.y;
  const int32_t begin = chunk * units_per_chunk;
  const int32_t end = static_cast<int32_t>(min(static_cast<int64_t>(units), static_cast<int64_t>(begin) + units_per_chunk));
  const T* plane = dy + k * channel_stride;
  float sum = 0.0f;
  for (int32_t u = begin + threadIdx.x; u < end; u += bias_threads) {
    T v[V];
    load_elements<T, V>(plane + positions.offset(u), aligned, v);
    float part = 0.0f;
#pragma unroll
    for (int j = 0; j < V; ++j) part += to_float(v[j]);
    sum += part;
  }
  // A fixed tree: the same additions in the same order on every run.
  sums[threadIdx.x] = sum;
  __syncthreads();
#pragma unroll
  for (int width = bias_threads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) sums[threadIdx.x] += sums[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[static_cast<int64_t>(chunk) * channels + k] = sums[0];
}

// grid: x = tiles of 32 * V channels, y = chunks. V > 1 only when channels are contiguous and a
// multiple of V, so a lane's V channels are all inside dy or all outside.
template <typename T, int V>
__global__ void __launch_bounds__(bias_threads)
    bias_grad_channel_minor(const T* dy, bias_positions positions, int64_t channel_stride, int32_t units,
                            int32_t units_per_chunk, int32_t channels, float* partials, bool aligned) {
  constexpr int tile = 32 * V;
  __shared__ float sums[bias_rows][tile];
  const int lane = threadIdx.x % 32;
  const int row = threadIdx.x / 32;
  const int32_t chunk = blockIdx.y;
  const int32_t begin = chunk * units_per_chunk;
  const int32_t end = static_cast<int32_t>(min(static_cast<int64_t>(units), static_cast<int64_t>(begin) + units_per_chunk));
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * tile + lane * V;
  float sum[V];
#pragma unroll
  for (int j = 0; j < V; ++j) sum[j] = 0.0f;
  if (c0 < channels) {
    const T* first = dy + c0 * channel_stride;
    for (int32_t u = begin + row; u < end; u += bias_rows) {
      const T* p = first + positions.offset(u);
      if constexpr (V > 1) {
        T v[V];
        load_elements<T, V>(p, aligned, v);
#pragma unroll
        for (int j = 0; j < V; ++j) sum[j] += to_float(v[j]);
      } else {
        sum[0] += to_float(*p);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) sums[row][lane * V + j] = sum[j];
  __syncthreads();
  for (int c = threadIdx.x; c < tile; c += bias_threads) {
    const int64_t k = static_cast<int64_t>(blockIdx.x) * tile + c;
    if (k >= channels) continue;
    float total = 0.0f;
#pragma unroll
    for (int r = 0; r < bias_rows; ++r) total += sums[r][c];
    partials[static_cast<int64_t>(chunk) * channels + k] = total;
  }
}

template <typename T>
__global__ void __launch_bounds__(bias_threads)
    bias_grad_finalize(const float* partials, int32_t chunks, int32_t channels, T* db, int64_t db_stride, float alpha,
                       float beta) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < channels;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = partials[k];
    for (int32_t s = 1; s < chunks; ++s) sum += partials[static_cast<int64_t>(s) * channels + k];
    T* out = db + k * db_stride;
    float r = alpha * sum;
    if (beta != 0.0f) r += beta * to_float(*out);  // beta 0: db may hold NaN and is not read
    *out = from_float<T>(r);
  }
}

// ---- host side ---------------------------------------------------------------------------------

struct bias_plan {
  bool channel_minor = false;
  int vector = 1;  // elements per load: 1 or 16 / sizeof(element)
  int32_t channels = 0;
  int32_t units = 0;  // per channel: positions (channel-minor) or vector units of positions
  int32_t units_per_chunk = 0;
  int32_t chunks = 1;
  int64_t channel_stride = 0;
  bias_positions positions{};
};

// A pure function of dy's descriptor, so that the workspace query and the run agree.
inline bias_plan plan_bias(const tsrpTensor& dy) {
  bias_plan plan;
  plan.channels = static_cast<int32_t>(dy.dims[1]);
  plan.channel_stride = dy.strides[1];
  const int elements_per_16_bytes = 16 / static_cast<int>(dy.data_type == TSRP_DATA_FLOAT ? 4 : 2);

  // Position dims (n, then spatial), outermost first, size-1 dims dropped, neighbours merged
  // where stepping the outer one equals stepping the inner one through its whole extent.
  int64_t size[1 + spatial], stride[1 + spatial];
  int used = 0;
  for (int d = 0; d < dy.ndims; ++d) {
    if (d == 1 || dy.dims[d] == 1) continue;
    if (used > 0 && stride[used - 1] == dy.strides[d] * dy.dims[d]) {
      size[used - 1] *= dy.dims[d];
      stride[used - 1] = dy.strides[d];
      continue;
    }
    size[used] = dy.dims[d];
    stride[used] = dy.strides[d];
    ++used;
  }
  // Right-align into (n, p0, p1, p2): missing outer dims have size 1.
  int64_t sizes[1 + spatial], strides[1 + spatial];
  const int lead = 1 + spatial - used;
  for (int i = 0; i < 1 + spatial; ++i) {
    sizes[i] = i < lead ? 1 : size[i - lead];
    strides[i] = i < lead ? 0 : stride[i - lead];
  }
  const int64_t innermost = used > 0 ? (strides[spatial] < 0 ? -strides[spatial] : strides[spatial])
                                     : std::numeric_limits<int64_t>::max();
  const int64_t channel_step = plan.channel_stride < 0 ? -plan.channel_stride : plan.channel_stride;
  plan.channel_minor = plan.channels > 1 && channel_step < innermost;

  const auto strides_divisible = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      if (sizes[i] > 1 && strides[i] % elements_per_16_bytes != 0) return false;
    }
    return true;
  };
  if (plan.channel_minor) {
    if (plan.channel_stride == 1 && plan.channels % elements_per_16_bytes == 0 && strides_divisible(0, 1 + spatial)) {
      plan.vector = elements_per_16_bytes;
    }
  } else if (used > 0 && strides[spatial] == 1 && sizes[spatial] % elements_per_16_bytes == 0 &&
             strides_divisible(0, spatial) && plan.channel_stride % elements_per_16_bytes == 0) {
    plan.vector = elements_per_16_bytes;
    sizes[spatial] /= plan.vector;
    strides[spatial] = plan.vector;
  }
  int64_t units = 1;
  for (int i = 0; i < 1 + spatial; ++i) units *= sizes[i];
  plan.units = static_cast<int32_t>(units);
  for (int i = 0; i < 1 + spatial; ++i) plan.positions.strides[i] = strides[i];
  for (int s = 0; s < spatial; ++s) plan.positions.decoder.extent[s] = fast_divmod(sizes[1 + s]);

  // Chunks: enough blocks for a large GPU, but never fewer than a few loads per thread.
  int64_t wanted, longest;
  if (plan.channel_minor) {
    const int64_t tiles = (plan.channels + 32 * plan.vector - 1) / (32 * plan.vector);
    wanted = (1024 + tiles - 1) / tiles;
    longest = units / (bias_rows * 8);
  } else {
    wanted = (1024 + plan.channels - 1) / std::max<int32_t>(plan.channels, 1);
    longest = units / (bias_threads * 4);
  }
  const int64_t chunks = std::clamp<int64_t>(std::min(wanted, longest), 1, 65535);
  if (units == 0) {
    plan.chunks = 1;
    plan.units_per_chunk = 0;
  } else {
    const int64_t per_chunk = (units + chunks - 1) / chunks;
    plan.units_per_chunk = static_cast<int32_t>(per_chunk);
    plan.chunks = static_cast<int32_t>((units + per_chunk - 1) / per_chunk);
  }
  return plan;
}

inline size_t bias_workspace(const bias_plan& plan) {
  return static_cast<size_t>(plan.chunks) * static_cast<size_t>(plan.channels) * sizeof(float);
}

}  // namespace tessera::cuda::conv_direct
