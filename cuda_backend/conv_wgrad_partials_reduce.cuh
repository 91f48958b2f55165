// The second step of every split backward filter (the split-K implicit GEMM, the small-C mma
// kernel): fp32 partial sums, one slice per split, added in slice order (the same split count
// gives the same bits) and blended into dw with one rounding.
#pragma once

#include "cuda_errors.hpp"
#include "element_types.cuh"

#include <cuda_runtime.h>

#include <algorithm>
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

// The launch of either, as every split backward filter asks for it: `splits` slices of
// `slice_elements` partial sums whose rows have `padded` channels, into dw whose rows have
// `channels` (equal: the float4 form; C is a multiple of 8 then); `what` names it in an error.
template <typename T>
void launch_wgrad_partials_reduction(const float* partials, void* dw, int64_t slice_elements, int splits,
                                     int channels, int padded, float alpha, float beta, int sms, cudaStream_t stream,
                                     const char* what) {
  constexpr int threads = 256;
  const int64_t most_blocks = int64_t{sms} * 8;
  const auto blocks_for = [&](int64_t items) {
    return static_cast<unsigned int>(std::clamp<int64_t>((items + threads - 1) / threads, 1, most_blocks));
  };
  if (channels == padded) {
    const int64_t quads = slice_elements / 4;
    reduce_wgrad_partials<T><<<blocks_for(quads), threads, 0, stream>>>(
        reinterpret_cast<const float4*>(partials), static_cast<T*>(dw), quads, quads, splits, alpha, beta);
  } else {
    const int64_t elements = slice_elements / padded * channels;
    reduce_wgrad_partials_dropping_channels<T><<<blocks_for(elements), threads, 0, stream>>>(
        partials, static_cast<T*>(dw), elements, slice_elements, splits, channels, padded, alpha, beta);
  }
  check_cuda(cudaGetLastError(), what);
}

}  // namespace tessera::cuda
