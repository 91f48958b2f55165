// The RNN kernels' data movement around the GEMMs: a strided 3-D copy with type conversion (user
// tensors of any strides in and out of the dense buffers the GEMMs and cell kernels use, initial
// and final states, zeros where the user passed NULL), and the deterministic column sums that
// give the bias gradients.
#pragma once

#include "cuda_context.hpp"
#include "element_types.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::rnn {

struct strides3 {
  int64_t s0 = 0, s1 = 0, s2 = 0;
};

constexpr int copy_threads = 256;

// dst(i0, i1, i2) = src(i0, i1, i2), or 0 where src is null; the innermost index is the fastest,
// so unit inner strides give coalesced accesses.
template <typename Src, typename Dst>
__global__ void __launch_bounds__(copy_threads)
    rnn_copy_3d(const Src* src, strides3 ss, Dst* dst, strides3 ds, int64_t d0, int64_t d1, int64_t d2) {
  const int64_t count = d0 * d1 * d2;
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t i2 = i % d2, rest = i / d2;
    const int64_t i1 = rest % d1, i0 = rest / d1;
    const float v = src != nullptr ? to_float(src[i0 * ss.s0 + i1 * ss.s1 + i2 * ss.s2]) : 0.0f;
    dst[i0 * ds.s0 + i1 * ds.s1 + i2 * ds.s2] = from_float<Dst>(v);
  }
}

template <typename Src, typename Dst>
void copy_3d(const cuda_context& ctx, const Src* src, strides3 ss, Dst* dst, strides3 ds, int64_t d0,
             int64_t d1, int64_t d2) {
  const int64_t count = d0 * d1 * d2;
  if (count == 0) return;
  rnn_copy_3d<Src, Dst><<<ctx.grid_stride_blocks(count, copy_threads), copy_threads, 0, ctx.stream()>>>(
      src, ss, dst, ds, d0, d1, d2);
}

constexpr int bias_columns = 32;  // one warp across consecutive columns: coalesced rows
constexpr int bias_row_groups = 16;

// For each direction d (blockIdx.y) and column j: sum over `rows` rows of src[d][row][j], in a
// fixed order (each row group strides through the rows, then the groups are added in order), so
// the result is bitwise reproducible. Written to dst_a and, when not null, dst_b (a gradient two
// biases share) at [d * dst_dir + j], added to what is there when `add`.
template <typename T>
__global__ void __launch_bounds__(bias_columns* bias_row_groups)
    rnn_bias_gradient(const T* src, int64_t rows, int64_t cols, int64_t src_dir, T* dst_a, T* dst_b,
                      int64_t dst_dir, bool add) {
  __shared__ float partial[bias_row_groups][bias_columns + 1];
  const int64_t col = int64_t{blockIdx.x} * bias_columns + threadIdx.x;
  const int64_t d = blockIdx.y;
  float sum = 0.0f;
  if (col < cols) {
    const T* column = src + d * src_dir + col;
    for (int64_t r = threadIdx.y; r < rows; r += bias_row_groups) sum += to_float(column[r * cols]);
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || col >= cols) return;
  float total = 0.0f;
#pragma unroll
  for (int g = 0; g < bias_row_groups; ++g) total += partial[g][threadIdx.x];
  T* a = dst_a + d * dst_dir + col;
  *a = from_float<T>(add ? to_float(*a) + total : total);
  if (dst_b != nullptr) {
    T* b = dst_b + d * dst_dir + col;
    *b = from_float<T>(add ? to_float(*b) + total : total);
  }
}

template <typename T>
void bias_gradient(const cuda_context& ctx, const T* src, int64_t rows, int64_t cols, int64_t src_dir,
                   int dirs, T* dst_a, T* dst_b, int64_t dst_dir, bool add) {
  const dim3 block(bias_columns, bias_row_groups);
  const dim3 grid(static_cast<unsigned int>((cols + bias_columns - 1) / bias_columns),
                  static_cast<unsigned int>(dirs));
  rnn_bias_gradient<T><<<grid, block, 0, ctx.stream()>>>(src, rows, cols, src_dir, dst_a, dst_b, dst_dir, add);
}

}  // namespace tessera::cuda::rnn
