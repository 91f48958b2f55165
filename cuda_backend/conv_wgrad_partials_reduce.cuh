// The second step of every split backward filter (the split-K implicit GEMM, the small-C mma
// kernel): fp32 partial sums, one slice per split, added in slice order (the same split count
// gives the same bits) and blended into dw with one rounding.
#pragma once

#include "element_types.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

// dw = alpha * sum_z partials[z] + beta * dw, four elements per thread (dw's element count is a
// multiple of 8: C is), the slices added in order. dw is not read when beta is 0.
template <typename T>
__global__ void reduce_wgrad_partials(const float4* __restrict__ partials, T* __restrict__ dw, int64_t quads,
                                      int64_t slice_quads, int splits, float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < quads; i += int64_t{gridDim.x} * blockDim.x) {
    float4 sum = partials[i];
    for (int z = 1; z < splits; ++z) {
      const float4 v = partials[z * slice_quads + i];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    T* out = dw + 4 * i;
    store_blended(out + 0, sum.x, alpha, beta);
    store_blended(out + 1, sum.y, alpha, beta);
    store_blended(out + 2, sum.z, alpha, beta);
    store_blended(out + 3, sum.w, alpha, beta);
  }
}

// The same when the kernel ran with more channels than dw has (conv_igemm_padded_channels.cuh):
// partial rows of `padded` channels, dw rows of `channels`, the extra (zero) channels dropped.
template <typename T>
__global__ void reduce_wgrad_partials_dropping_channels(const float* __restrict__ partials, T* __restrict__ dw,
                                                        int64_t elements, int64_t slice, int splits, int channels,
                                                        int padded, float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t source = i / channels * padded + i % channels;
    float sum = partials[source];
    for (int z = 1; z < splits; ++z) sum += partials[z * slice + source];
    store_blended(dw + i, sum, alpha, beta);
  }
}

}  // namespace tessera::cuda
