// Backward data in fp32 on the TF32 tensor cores, as a forward convolution (issue 4: TF32 for every
// direction where the handle's math mode allows it):
//   "conv_bwd_data_igemm_sm90_fprop_form_128x128x32_tf32"   dx = alpha * dgrad(w, dy) + beta * dx
//
// Why a forward: the TF32 wgmma reads both operands K-major. CUTLASS's dgrad reads w (KRSC) with C,
// its GEMM N, contiguous: N-major, which the TF32 path cannot take (conv_igemm_cutlass.cuh). With
// unit strides, backward data IS a forward convolution of dy with the filter flipped in space and
// its K and C swapped (the arithmetic, host-tested: conv_dgrad_fprop_form.hpp). Both operands of that
// forward are K-major (dy's K and wt's K contiguous), so the TF32 forward kernel of
// conv_implicit_gemm.cu runs it unchanged, epilogue and all. The cost over a native dgrad is one
// filter-sized copy (wt, in the workspace) per call.
// Declined: strides above 1 (the forward form would need the phase split of the strided dgrad),
// padding above (R-1) d (a negative forward padding), and whatever the forward kernel declines.
//
// Written on 2026-12-04 without a GPU; registered since the H200 conformance run of 2026-12-05 passed
// it (ResNet-50's unit-stride backward data at N=32: 0.80-2.58x cuDNN's TF32 speed).
#pragma once

#include "conv_dgrad_fprop_form.hpp"
#include "conv_igemm_fprop_kernels.cuh"
#include "conv_igemm_fprop_sm90.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_wave_model.hpp"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <string>

namespace tessera::cuda::igemm {

// wt[c, R-1-r, S-1-s, k] = w[k, r, s, c], one 32 x 32 tile of (k, c) of one tap per block, through
// shared memory so that both the reads (along c) and the writes (along k) are coalesced. A template
// so that the header can define it.
template <typename Element>
__global__ void flip_and_swap_filter_kernel(const Element* __restrict__ w, Element* __restrict__ wt, int k_count,
                                            int r_count, int s_count, int c_count) {
  constexpr int tile = 32;
  __shared__ Element staged[tile][tile + 1];  // +1: the transposed reads hit 32 different banks
  const int tap = blockIdx.z;
  const int r = tap / s_count, s = tap % s_count;
  const int c0 = blockIdx.x * tile, k0 = blockIdx.y * tile;
  const int64_t taps = int64_t{r_count} * s_count;
  for (int dk = threadIdx.y; dk < tile; dk += blockDim.y) {
    const int k = k0 + dk, c = c0 + threadIdx.x;
    if (k < k_count && c < c_count) staged[dk][threadIdx.x] = w[(int64_t{k} * taps + tap) * c_count + c];
  }
  __syncthreads();
  for (int dc = threadIdx.y; dc < tile; dc += blockDim.y) {
    const int c = c0 + dc, k = k0 + threadIdx.x;
    if (k < k_count && c < c_count)
      wt[swapped_filter_offset(k, r, s, c, k_count, r_count, s_count)] = staged[threadIdx.x][dc];
  }
}

inline size_t swapped_filter_bytes(const nhwc_geometry& g) {
  return align_workspace(size_t(g.k) * g.r * g.s * g.c * sizeof(float));
}

// Config: the TF32 forward kernel (fprop_sm90<TSRP_DATA_FLOAT, ...>).
template <typename Config>
struct dgrad_fprop_form_traits {
  static_assert(Config::data_type == TSRP_DATA_FLOAT, "the forward form exists for the TF32 path");
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardDataArgs;
  static constexpr const char* name = "conv_bwd_data_igemm_sm90_fprop_form_128x128x32_tf32";
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 backward data on sm90 TF32 tensor cores (only under TSR_MATH_ALLOW_TF32), run as the forward "
      "convolution of dy with the filter flipped and its K and C swapped (one filter-sized copy into the "
      "workspace); w and dy enter the multiplies with 10-bit mantissas, fp32 accumulation; packed NHWC dx, KRSC "
      "w, NPQK dy; C and K multiples of 8; unit strides, padding at most (filter-1)*dilation; 1-D and 2-D; "
      "deterministic";

  // problem.x describes dx, problem.y describes dy.
  static std::string support(const problem_type& p) {
    if (p.math_mode != TSRP_MATH_ALLOW_TF32) {
      return "fp32 backward data runs on the TF32 tensor cores only when the handle's math mode is "
             "TSR_MATH_ALLOW_TF32 (tsrSetMathMode); exact fp32 runs on the direct kernels";
    }
    return backward_support(p, TSRP_DATA_FLOAT, p.x, [](const nhwc_geometry& g) -> std::string {
      if (g.k == 0) return "w has 0 filters: nothing for the tensor cores to reduce";
      if (std::string why = dgrad_fprop_form_reason(g); !why.empty()) return why;
      // The flip kernel's grid: 32 filters and 32 channels a block, blocks along y capped at 65535.
      if ((int64_t{g.k} + 31) / 32 > 65535) return "more than 2,097,120 filters (K): beyond the filter copy's grid";
      const nhwc_geometry f = dgrad_as_forward(g);
      // The forward's TMA walks dy from -pb' to pa' - (filter - 1) * dilation past its end.
      const int lower[2] = {-f.pad_before[0], -f.pad_before[1]};
      const int upper[2] = {f.pad_after[0] - (f.r - 1) * f.dilation[0], f.pad_after[1] - (f.s - 1) * f.dilation[1]};
      const int filter[2] = {f.r, f.s};
      std::string why = im2col_corner_support("dy", lower, upper, filter, f.dilation);
      if (!why.empty()) return why;
      return fprop_cutlass_support<Config>(f);
    });
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.x) == 0) return 0;
    const nhwc_geometry g = make_geometry(view_of(p));
    return swapped_filter_bytes(g) + fprop_workspace<Config>(dgrad_as_forward(g));
  }

  static double estimate_us(const problem_type& p) {
    const nhwc_geometry g = make_geometry(view_of(p));
    return fprop_geometry_estimate_us<Config>(dgrad_as_forward(g), double(swapped_filter_bytes(g)));
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.x) == 0) return;
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dx, element_count(p.x), "dx");
    require_pointer(workspace, 1, "workspace");
    require_tma_alignment(a.dy, "dy");
    require_tma_alignment(a.dx, "dx");
    require_tma_alignment(workspace, "workspace");  // wt is the forward's TMA filter operand
    const nhwc_geometry g = make_geometry(view_of(p));
    float* wt = static_cast<float*>(workspace);
    const dim3 block(32, 8);
    const dim3 grid((g.c + 31) / 32, (g.k + 31) / 32, g.r * g.s);
    flip_and_swap_filter_kernel<float><<<grid, block, 0, ctx.stream()>>>(static_cast<const float*>(a.w), wt, g.k, g.r, g.s,
                                                                  g.c);
    check_cuda(cudaGetLastError(), "launching the filter flip of the TF32 backward data");
    fprop_epilogue e;
    e.alpha = a.alpha;
    e.beta = a.beta;
    e.source = a.dx;  // read only when beta != 0
    run_fprop<Config>(dgrad_as_forward(g), a.dy, wt, a.dx, e, static_cast<char*>(workspace) + swapped_filter_bytes(g),
                      ctx.stream());
  }
};

}  // namespace tessera::cuda::igemm
