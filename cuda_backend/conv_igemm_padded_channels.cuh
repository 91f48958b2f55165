// The staging kernels of the zero-channel backward convolutions (conv_igemm_padded_channels.hpp
// says what they are for).
#pragma once

#include "conv_igemm_padded_channels.hpp"
#include "element_types.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace tessera::cuda::igemm {

// out[row][c] = in[row][c] for c < channels, 0 for channels <= c < padded.
template <typename T>
__global__ void pad_channels(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int channels, int padded) {
  const int64_t elements = rows * padded;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int c = static_cast<int>(i % padded);
    out[i] = c < channels ? in[i / padded * channels + c] : from_float<T>(0.0f);
  }
}

// out[row][c] = alpha * in[row][c] + beta * out[row][c] for c < channels (in has `padded`).
template <typename T>
__global__ void unpad_channels_blended(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int channels,
                                       int padded, float alpha, float beta) {
  const int64_t elements = rows * channels;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    store_blended(out + i, to_float(in[i / channels * padded + i % channels]), alpha, beta);
  }
}

inline unsigned int padding_blocks(int64_t elements, int sms) {
  constexpr int64_t threads = 256;
  const int64_t blocks = std::min((elements + threads - 1) / threads, int64_t{sms} * 16);
  return static_cast<unsigned int>(std::max<int64_t>(blocks, 1));
}

}  // namespace tessera::cuda::igemm
