// The staging kernels of the zero-channel backward convolutions (conv_igemm_padded_channels.hpp
// says what they are for).
#pragma once

#include "conv_igemm_padded_channels.hpp"
#include "cuda_errors.hpp"
#include "element_types.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
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

// ---- What every zero-channel kernel does around its inner kernel (fp16/bf16 sm90, TF32 sm80) ----

// The staged copies of T elements, on the padded geometry gp.
template <typename T>
size_t padded_filter_bytes(const nhwc_geometry& gp) { return size_t(gp.k) * gp.r * gp.s * gp.c * sizeof(T); }
template <typename T>
size_t padded_image_bytes(const nhwc_geometry& gp) { return size_t(gp.n) * gp.h * gp.w * gp.c * sizeof(T); }

// Backward data's workspace: the padded filter, then the padded dx, then the inner kernel's own.
template <typename T>
struct padded_dgrad_space {
  static size_t bytes(const nhwc_geometry& gp, size_t inner_bytes) {
    return align_workspace(padded_filter_bytes<T>(gp)) + align_workspace(padded_image_bytes<T>(gp)) + inner_bytes;
  }
  padded_dgrad_space(void* workspace, const nhwc_geometry& gp) {
    auto* base = static_cast<uint8_t*>(workspace);
    filters = reinterpret_cast<T*>(base);
    dx = reinterpret_cast<T*>(base + align_workspace(padded_filter_bytes<T>(gp)));
    inner = base + align_workspace(padded_filter_bytes<T>(gp)) + align_workspace(padded_image_bytes<T>(gp));
  }
  T* filters;
  T* dx;
  void* inner;
};

// What the staging adds to the inner kernel's time: backward data writes dx' and reads it back,
// reads and writes dx (its C of gp.c channels); backward filter writes x' and reads it back,
// reads x. At ~3.5 TB/s.
template <typename T>
double padded_dgrad_staging_us(const nhwc_geometry& gp, int64_t channels) {
  const double dx_bytes = double(padded_image_bytes<T>(gp));
  return (2.0 * dx_bytes + 2.0 * dx_bytes * channels / gp.c) / 3.5e6;
}
template <typename T>
double padded_wgrad_staging_us(const nhwc_geometry& gp) {
  return 3.0 * double(padded_image_bytes<T>(gp)) / 3.5e6;
}

// `rows` rows of `channels` copied into rows of `padded` with zero channels (w before backward
// data, x before backward filter); `what` names the launch in an error.
template <typename T>
void stage_zero_channels(const void* in, T* out, int64_t rows, int channels, int padded, int sms,
                         cudaStream_t stream, const char* what) {
  pad_channels<T><<<padding_blocks(rows * padded, sms), 256, 0, stream>>>(static_cast<const T*>(in), out, rows,
                                                                          channels, padded);
  check_cuda(cudaGetLastError(), what);
}

// dx = alpha * dx'[..., :channels] + beta * dx, after backward data ran on the padded problem.
template <typename T>
void blend_unpadded_dx(const T* padded_dx, void* dx, int64_t pixels, int channels, int padded, float alpha,
                       float beta, int sms, cudaStream_t stream) {
  unpad_channels_blended<T><<<padding_blocks(pixels * channels, sms), 256, 0, stream>>>(
      padded_dx, static_cast<T*>(dx), pixels, channels, padded, alpha, beta);
  check_cuda(cudaGetLastError(), "launching dx's channel unpadding");
}

}  // namespace tessera::cuda::igemm
