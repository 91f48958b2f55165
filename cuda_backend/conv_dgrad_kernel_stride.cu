// "conv_bwd_data_gemm_kernel_stride": backward data when the filter tiles dx exactly (extent =
// stride, no padding before, no dilation; conv_dgrad_kernel_stride.hpp says why that is one GEMM):
// Z = dy x w on the GEMM engine's tensor cores (fp32 Z in the workspace), then a scatter of Z's rows
// (one warp per dy pixel and tap: the index arithmetic once per row, not per element) that writes
// every dx element a window reaches once, alpha * Z + beta * dx, rounded once; the elements no
// window reaches (extents past P * stride) get 0 * alpha + beta * dx in a pass of their own.
// Passed the H200 conformance sweep, memcheck and racecheck on 2026-12-05 (second session) and
// registered since: the U-Net up-convolutions (fp16 NHWC, N=1) ran 3.39x / 1.33x / 0.35x cuDNN's
// speed where the tiled kernel ran 0.17x / 0.07x / 0.04x (docs/CUDA_BACKEND_NOTES.md).
#include "conv_dgrad_kernel_stride.hpp"
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "gemm_engine.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessera::cuda {
namespace {

namespace ks = kernel_stride;

// Z's rows to dx: one warp per row (a dy pixel and a tap: C contiguous fp32 values in Z, C
// contiguous elements of one dx pixel), the row's dx pixel worked out once by all its lanes, then
// dx = alpha * Z + beta * dx across the channels. Every dx element a window reaches is written by
// exactly one row.
template <typename T>
__global__ void scatter_rows(const float* __restrict__ z, T* __restrict__ dx, ks::plan q, float alpha, float beta) {
  const int lane = threadIdx.x % 32;
  const int64_t rows = q.m * q.t;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t row = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32; row < rows; row += warps) {
    const int64_t pixel = ks::dx_pixel(q, row);
    if (pixel < 0) continue;
    const float* source = z + row * q.c;
    T* target = dx + pixel * q.c;
    for (int64_t c = lane; c < q.c; c += 32) store_blended(target + c, source[c], alpha, beta);
  }
}

// The dx elements no window reaches, one box of them (unreached_of): 0 * alpha + beta * dx, the
// blend every output follows.
template <typename T>
__global__ void blend_unreached(T* __restrict__ dx, ks::plan q, ks::box b, float alpha, float beta) {
  const int64_t elements = q.n * b.pixels() * q.c;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < elements;
       i += int64_t{gridDim.x} * blockDim.x) {
    store_blended(dx + ks::box_element(q, b, i), 0.0f, alpha, beta);
  }
}

// The GEMM: Z (M x T*C, fp32) = dy (M x K, rows of K channels) times w (K x T*C: packed KRSC w
// row by row). Null data when only asking whether the engine takes it.
gemm_problem z_gemm(const tsrpConvolutionProblem& p, const ks::plan& q, const void* dy, const void* w, float* z) {
  gemm_problem g;
  g.m = q.m;
  g.n = q.z_columns();
  g.k = q.k;
  g.a = {dy, p.y.data_type, q.k, 1, 0};
  g.b = {w, p.w.data_type, q.z_columns(), 1, 0};
  g.c = {z, TSRP_DATA_FLOAT, q.z_columns(), 1, 0};
  g.alpha = 1.0f;
  g.beta = 0.0f;
  g.allow_tf32 = p.math_mode == TSRP_MATH_ALLOW_TF32;
  return g;
}

size_t z_bytes(const ks::plan& q) { return static_cast<size_t>(q.m) * static_cast<size_t>(q.z_columns()) * 4; }

struct dgrad_kernel_stride_traits {
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = "conv_bwd_data_gemm_kernel_stride";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "filter extent equal to the stride, no padding before, dilation 1 (transposed 'up' convolutions): one GEMM "
      "of dy and w (the GEMM engine: fp16/bf16 tensor cores; fp32 exact, whatever the math mode) into "
      "fp32 in the workspace, then a scatter of its rows writing each dx element once with one rounding; packed "
      "channels-last dx, w and dy; 1-3 spatial dims; fixed summation order: bitwise reproducible";

  // problem.x describes dx, problem.y describes dy.
  static std::string support(const problem_type& p) {
    std::string why = ks::support(p);
    if (!why.empty()) return why;
    if (!is_floating_storage(p.x.data_type) || p.w.data_type != p.x.data_type || p.y.data_type != p.x.data_type) {
      return std::string("dx, w and dy must share one of f32, f16, bf16 (got ") + data_type_name(p.x.data_type) +
             ", " + data_type_name(p.w.data_type) + ", " + data_type_name(p.y.data_type) + ")";
    }
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " not supported (fp32 accumulation)";
    }
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (element_count(p.x) == 0 || element_count(p.y) == 0) return {};
    const ks::plan q = ks::plan_of(p);
    if (const char* engine = gemm_unsupported_reason(z_gemm(p, q, nullptr, nullptr, nullptr))) {
      return std::string("the GEMM of dy and w: ") + engine;
    }
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0 || element_count(p.y) == 0) return 0;
    return z_bytes(ks::plan_of(p));
  }

  static double estimate_us(const problem_type& p) {
    const ks::plan q = ks::plan_of(p);
    const double flops = 2.0 * q.m * q.z_columns() * q.k;
    const double element = p.x.data_type == TSRP_DATA_FLOAT ? 4.0 : 2.0;
    // The engine's mma.sync tiles at ~100 TFLOP/s for fp16/bf16; fp32 runs its exact SIMT kernel
    // (~20; the engine has no TF32 path, whatever the math mode). Z written and read back, dy and
    // w read, dx written (and read when blended), at ~3.5 TB/s.
    const double rate = p.x.data_type == TSRP_DATA_FLOAT ? 20e6 : 100e6;
    const double bytes = 2.0 * z_bytes(q) + element * (q.m * q.k + q.k * q.z_columns() + 2.0 * q.dx_elements());
    return 5.0 + flops / rate + bytes / 3.5e6;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.dx, element_count(p.x), "dx");
    const ks::plan q = ks::plan_of(p);
    const cudaStream_t stream = ctx.stream();
    float* z = nullptr;
    if (element_count(p.y) != 0) {  // with no outputs every dx element is beta * dx
      require_pointer(a.w, element_count(p.w), "w");
      require_pointer(a.dy, element_count(p.y), "dy");
      // (The glue has checked that the workspace is there and large enough.)
      if (reinterpret_cast<uintptr_t>(workspace) % alignof(float) != 0) {
        throw status_error(TSRP_STATUS_BAD_PARAM, "workspace is not 4-byte aligned (it holds Z in fp32)");
      }
      z = static_cast<float*>(workspace);
      launch_gemm(z_gemm(p, q, a.dy, a.w, z), stream);
    }
    constexpr int threads = 256;
    const int64_t most_blocks = int64_t{std::max(ctx.sm_count(), 1)} * 16;
    dispatch_storage_type(p.x.data_type, [&](auto tag) {
      using T = decltype(tag);
      T* dx = static_cast<T*>(a.dx);
      if (z != nullptr) {
        const int64_t rows = q.m * q.t;
        const auto blocks = static_cast<unsigned int>(std::clamp<int64_t>((rows + 7) / 8, 1, most_blocks));
        scatter_rows<T><<<blocks, threads, 0, stream>>>(z, dx, q, a.alpha, a.beta);
        check_cuda(cudaGetLastError(), "launching the kernel-stride dgrad's scatter");
      }
      // With no outputs every element is unreached: one box, the whole of dx.
      ks::unreached_boxes unreached = ks::unreached_of(q);
      if (z == nullptr) {
        unreached.count = 1;
        unreached.boxes[0] = ks::box{};
        for (int i = 0; i < 3; ++i) unreached.boxes[0].hi[i] = q.dx[i];
      }
      for (int i = 0; i < unreached.count; ++i) {
        const int64_t elements = q.n * unreached.boxes[i].pixels() * q.c;
        if (elements == 0) continue;
        const auto blocks =
            static_cast<unsigned int>(std::clamp<int64_t>((elements + threads - 1) / threads, 1, most_blocks));
        blend_unreached<T><<<blocks, threads, 0, stream>>>(dx, q, unreached.boxes[i], a.alpha, a.beta);
        check_cuda(cudaGetLastError(), "launching the kernel-stride dgrad's unreached elements");
      }
    });
  }
};

}  // namespace

void add_conv_dgrad_kernel_stride_kernels(kernel_list& out) {
  out.push_back(make_kernel<dgrad_kernel_stride_traits>());
}

}  // namespace tessera::cuda
