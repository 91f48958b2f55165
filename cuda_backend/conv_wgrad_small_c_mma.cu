// Backward filter for convolutions with few input columns per filter (C * R * S <= 160) and C not a
// multiple of 8 (the 3-channel stems of image networks), on the tensor cores:
//   "conv_bwd_filter_small_c_mma_<type>"   dw = alpha * conv_backward_filter(x, dy) + beta * dw
//
// Why a kernel of its own: the implicit-GEMM wgrad (CUTLASS's, conv_implicit_gemm_wgrad.cu)
// tiles dw's columns by channels within one filter tap, so a 7x7 stem with 3 (or 8 padded)
// channels is 49 narrow tiles and dy is read once per tap: 8.97 ms for ResNet-50's stem at N=256
// on the H200 where cuDNN (through PyTorch) takes 0.23 ms. Here one tile holds every (r, s, c)
// column of dw: each CTA builds the im2col rows of 64 output pixels in shared memory straight from
// x, takes the same pixels' dy, and multiplies them with mma.sync into a 64-filter x 160-column
// fp32 tile in registers, over its own contiguous range of N*P*Q (split across the grid's x).
// Every split writes its partial sums to the workspace and conv_wgrad_partials_reduce.cuh adds
// them in order (deterministic) with alpha, beta and one rounding.
//
// GEMM view: M = filters (64 per CTA, grid y), N = the C*R*S columns (one tile of 160, zero past
// C*R*S), K = output pixels (64 per step). Both operands sit in shared memory as [row][pixel] so
// that each mma fragment register is one 32-bit load: dy transposed (filter rows), the im2col
// tile (column rows). 8 warps as 4 (filters) x 2 (columns): 16 x 80 each, 10 mma tiles.
#include "conv_igemm_kernels.hpp"
#include "conv_wgrad_partials_reduce.cuh"
#include "cuda_context.hpp"
#include "element_types.cuh"
#include "gemm_mma_ptx.cuh"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

constexpr int filters_per_tile = 64;   // M of a CTA
constexpr int columns_per_tile = 160;  // N: every (r, s, c) of dw, zero past C * R * S
constexpr int pixels_per_step = 64;    // K of one shared-memory step
constexpr int row_pitch = pixels_per_step + 8;  // halves; 36 words, so fragment loads hit 32 banks
constexpr int threads = 256;
constexpr int max_splits = 256;

struct small_c_geometry {
  int n, h, w, c, k, r, s, p, q;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int columns;     // C * R * S
  int64_t pixels;  // N * P * Q
};

struct split_plan {
  int splits = 1;
  int64_t steps_per_split = 1;  // of pixels_per_step pixels
};

split_plan plan_splits(const small_c_geometry& g, int sms) {
  split_plan plan;
  const int64_t steps = (g.pixels + pixels_per_step - 1) / pixels_per_step;
  const int64_t filter_tiles = (g.k + filters_per_tile - 1) / filters_per_tile;
  // Two CTAs per SM fit (32 KB of shared memory, ~100 registers x 256 threads); one wave of them.
  int64_t splits = std::max<int64_t>(1, 2 * int64_t{std::max(sms, 1)} / filter_tiles);
  splits = std::min<int64_t>({splits, std::max<int64_t>(steps, 1), max_splits});
  plan.steps_per_split = std::max<int64_t>((steps + splits - 1) / splits, 1);
  plan.splits = static_cast<int>(std::max<int64_t>((steps + plan.steps_per_split - 1) / plan.steps_per_split, 1));
  return plan;
}

template <typename T>
__global__ void __launch_bounds__(threads, 2)
    small_c_wgrad_partials(const T* __restrict__ x, const T* __restrict__ dy, float* __restrict__ partials,
                           const small_c_geometry g, int64_t steps_per_split) {
  __shared__ __align__(16) T dy_rows[filters_per_tile][row_pitch];      // dy transposed: [filter][pixel]
  __shared__ __align__(16) T column_rows[columns_per_tile][row_pitch];  // im2col: [column][pixel]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, pair = (lane & 3) * 2;
  const int warp_filters = (warp & 3) * 16, warp_columns = (warp >> 2) * 80;
  const int first_filter = blockIdx.y * filters_per_tile;
  const T zero = from_float<T>(0.0f);

  // Columns past C * R * S stay zero for the whole kernel.
  for (int i = tid; i < (columns_per_tile - g.columns) * pixels_per_step; i += threads) {
    column_rows[g.columns + i / pixels_per_step][i % pixels_per_step] = zero;
  }

  float acc[10][4] = {};
  const int64_t first_pixel = int64_t{blockIdx.x} * steps_per_split * pixels_per_step;
  const int64_t end_pixel = std::min<int64_t>(g.pixels, first_pixel + steps_per_split * pixels_per_step);
  const int64_t pq = int64_t{g.p} * g.q;

  for (int64_t base = first_pixel; base < end_pixel; base += pixels_per_step) {
    __syncthreads();  // the previous step's fragments are read
    // dy: consecutive threads read consecutive filters of one pixel (coalesced), stored transposed.
    for (int i = tid; i < filters_per_tile * pixels_per_step; i += threads) {
      const int f = i % filters_per_tile, m = i / filters_per_tile;
      const int64_t pixel = base + m;
      const int filter = first_filter + f;
      dy_rows[f][m] = pixel < end_pixel && filter < g.k ? dy[pixel * g.k + filter] : zero;
    }
    // im2col: one (pixel, filter row r) segment per thread, its S * C values contiguous in x.
    for (int i = tid; i < pixels_per_step * g.r; i += threads) {
      const int m = i % pixels_per_step, r = i / pixels_per_step;
      const int64_t pixel = base + m;
      const int first_column = r * g.s * g.c;
      if (pixel >= end_pixel) {
        for (int j = 0; j < g.s * g.c; ++j) column_rows[first_column + j][m] = zero;
        continue;
      }
      const int n = static_cast<int>(pixel / pq);
      const int rest = static_cast<int>(pixel % pq);
      const int oh = rest / g.q, ow = rest % g.q;
      const int ih = oh * g.stride_h - g.pad_h + r * g.dilation_h;
      const bool row_inside = ih >= 0 && ih < g.h;
      const int64_t row_base = (int64_t{n} * g.h + (row_inside ? ih : 0)) * g.w;
      for (int s = 0; s < g.s; ++s) {
        const int iw = ow * g.stride_w - g.pad_w + s * g.dilation_w;
        const bool inside = row_inside && iw >= 0 && iw < g.w;
        const T* source = x + (row_base + (inside ? iw : 0)) * g.c;
        for (int c = 0; c < g.c; ++c) column_rows[first_column + s * g.c + c][m] = inside ? source[c] : zero;
      }
    }
    __syncthreads();

#pragma unroll
    for (int kstep = 0; kstep < pixels_per_step; kstep += 16) {
      uint32_t a[4];
      const int col = kstep + pair;
      a[0] = *reinterpret_cast<const uint32_t*>(&dy_rows[warp_filters + group][col]);
      a[1] = *reinterpret_cast<const uint32_t*>(&dy_rows[warp_filters + group + 8][col]);
      a[2] = *reinterpret_cast<const uint32_t*>(&dy_rows[warp_filters + group][col + 8]);
      a[3] = *reinterpret_cast<const uint32_t*>(&dy_rows[warp_filters + group + 8][col + 8]);
#pragma unroll
      for (int t = 0; t < 10; ++t) {
        const int row = warp_columns + t * 8 + group;
        const uint32_t b0 = *reinterpret_cast<const uint32_t*>(&column_rows[row][col]);
        const uint32_t b1 = *reinterpret_cast<const uint32_t*>(&column_rows[row][col + 8]);
        gemm::mma_16816<T>(acc[t], a, b0, b1);
      }
    }
  }

  // This split's slice of the partial sums, laid out as dw (filter-major, then r, s, c).
  float* slice = partials + int64_t{blockIdx.x} * g.k * g.columns;
#pragma unroll
  for (int t = 0; t < 10; ++t) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int filter = first_filter + warp_filters + group + half * 8;
      const int column = warp_columns + t * 8 + pair;
      if (filter >= g.k) continue;
      if (column < g.columns) slice[int64_t{filter} * g.columns + column] = acc[t][half * 2];
      if (column + 1 < g.columns) slice[int64_t{filter} * g.columns + column + 1] = acc[t][half * 2 + 1];
    }
  }
}

template <int32_t DataType>
struct small_c_choice;
template <>
struct small_c_choice<TSRP_DATA_HALF> {
  using type = __half;
  static constexpr const char* name = "conv_bwd_filter_small_c_mma_f16";
};
template <>
struct small_c_choice<TSRP_DATA_BFLOAT16> {
  using type = __nv_bfloat16;
  static constexpr const char* name = "conv_bwd_filter_small_c_mma_bf16";
};

small_c_geometry geometry_of(const tsrpConvolutionProblem& p) {
  small_c_geometry g{};
  g.n = static_cast<int>(p.x.dims[0]);
  g.c = static_cast<int>(p.x.dims[1]);
  g.h = static_cast<int>(p.x.dims[2]);
  g.w = static_cast<int>(p.x.dims[3]);
  g.k = static_cast<int>(p.w.dims[0]);
  g.r = static_cast<int>(p.w.dims[2]);
  g.s = static_cast<int>(p.w.dims[3]);
  g.p = static_cast<int>(p.y.dims[2]);
  g.q = static_cast<int>(p.y.dims[3]);
  g.stride_h = static_cast<int>(p.stride[0]);
  g.stride_w = static_cast<int>(p.stride[1]);
  g.pad_h = static_cast<int>(p.pad_before[0]);
  g.pad_w = static_cast<int>(p.pad_before[1]);
  g.dilation_h = static_cast<int>(p.dilation[0]);
  g.dilation_w = static_cast<int>(p.dilation[1]);
  g.columns = g.c * g.r * g.s;
  g.pixels = int64_t{g.n} * g.p * g.q;
  return g;
}

template <int32_t DataType>
struct small_c_wgrad_traits {
  using T = typename small_c_choice<DataType>::type;
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionBackwardFilterArgs;
  static constexpr const char* name = small_c_choice<DataType>::name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_BACKWARD_FILTER;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "C * R * S <= 160, C not a multiple of 8 (3-channel stems) on the tensor cores: every filter tap in one "
      "tile, the im2col rows built in shared memory from x, mma.sync with fp32 accumulation over N*P*Q split "
      "across CTAs, fp32 partial sums added in a fixed order, one rounding of dw; 2-D, packed NHWC x and dy, "
      "KRSC dw; deterministic";

  // problem.w describes dw, problem.y describes dy.
  static std::string support(const problem_type& p) {
    if (p.mode != TSRP_CROSS_CORRELATION) {
      return "flipped-filter (convolution) mode not supported: cross-correlation only";
    }
    if (p.spatial_dims != 2) return std::to_string(p.spatial_dims) + " spatial dims not supported (2-D only)";
    const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", &p.x}, {"w", &p.w}, {"y", &p.y}};
    for (const auto& [label, t] : tensors) {
      if (t->data_type != DataType) {
        return std::string(label) + " data type " + data_type_name(t->data_type) +
               " not supported: this kernel takes " + data_type_name(DataType) + " x, w and y";
      }
      if (t->ndims != 4) return std::string(label) + " has " + std::to_string(t->ndims) + " dims, expected 4";
      if (!is_packed_channels_last(*t)) return std::string(label) + " is not packed channels-last (NHWC / KRSC)";
      for (int d = 0; d < 4; ++d) {
        if (t->dims[d] < 0 || t->dims[d] > std::numeric_limits<int32_t>::max() / 4) {
          return std::string(label) + " dim " + std::to_string(d) + " of " + std::to_string(t->dims[d]) +
                 " is outside this kernel's int32 extents";
        }
      }
    }
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " not supported (fp32 accumulation)";
    }
    if (p.groups != 1) return "groups " + std::to_string(p.groups) + " not supported (dense convolution only)";
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (p.w.dims[1] != p.x.dims[1]) return "w's channels differ from x's";
    // Where C is a multiple of 8 the implicit-GEMM wgrad runs on wgmma with split-K; this kernel is
    // for the channel counts it cannot take (measured against them on the H200 before widening).
    if (p.x.dims[1] % 8 == 0) return "C is a multiple of 8: the implicit-GEMM wgrad kernels take it";
    const int64_t columns = p.x.dims[1] * p.w.dims[2] * p.w.dims[3];
    if (columns > columns_per_tile) {
      return "C * R * S = " + std::to_string(columns) + " is more than the " + std::to_string(columns_per_tile) +
             " columns of this kernel's one tile (the implicit-GEMM wgrad takes wide filters)";
    }
    for (int i = 0; i < 2; ++i) {
      if (p.stride[i] < 1 || p.dilation[i] < 1) return "strides and dilations must be at least 1";
      if (p.pad_before[i] < 0 || p.pad_before[i] > 1024) return "padding outside 0..1024 not supported";
    }
    if (p.y.dims[0] * p.y.dims[2] * p.y.dims[3] > std::numeric_limits<int32_t>::max()) {
      return "dy has more than 2^31 pixels";
    }
    return {};
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.w) == 0) return 0;
    const small_c_geometry g = geometry_of(p);
    return size_t(plan_splits(g, 256).splits) * size_t(g.k) * size_t(g.columns) * sizeof(float);
  }

  // mma.sync at ~300 TFLOP/s on the padded tile, dy read once, x once per filter tile (its rows
  // mostly from cache), two launches.
  static double estimate_us(const problem_type& p) {
    const small_c_geometry g = geometry_of(p);
    const double filter_tiles = std::ceil(double(g.k) / filters_per_tile);
    const double flops = 2.0 * filter_tiles * filters_per_tile * columns_per_tile * double(g.pixels);
    const double bytes = (double(g.pixels) * g.k + filter_tiles * double(g.n) * g.h * g.w * g.c) * sizeof(T);
    return flops / 300e6 + bytes / 3.5e6 + 8.0;
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.w) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.dy, element_count(p.y), "dy");
    require_pointer(a.dw, element_count(p.w), "dw");
    require_pointer(workspace, 1, "workspace");
    if (reinterpret_cast<uintptr_t>(workspace) % alignof(float) != 0) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "workspace is not 4-byte aligned (it holds fp32 partial sums)");
    }
    const small_c_geometry g = geometry_of(p);
    auto* partials = static_cast<float*>(workspace);
    const int sms = std::max(ctx.sm_count(), 1);
    const split_plan plan = plan_splits(g, std::min(sms, 256));
    if (g.pixels == 0) {
      // No dy: dw = beta * dw, through the reduction of one zero slice.
      check_cuda(cudaMemsetAsync(partials, 0, size_t(g.k) * g.columns * sizeof(float), ctx.stream()),
                 "cudaMemsetAsync(small-C wgrad partials)");
    } else {
      const dim3 grid(static_cast<unsigned int>(plan.splits),
                      static_cast<unsigned int>((g.k + filters_per_tile - 1) / filters_per_tile));
      small_c_wgrad_partials<T><<<grid, threads, 0, ctx.stream()>>>(static_cast<const T*>(a.x),
                                                                    static_cast<const T*>(a.dy), partials, g,
                                                                    plan.steps_per_split);
      check_cuda(cudaGetLastError(), "launching the small-C wgrad");
    }
    const int64_t elements = int64_t{g.k} * g.columns;
    const int splits = g.pixels == 0 ? 1 : plan.splits;
    const auto blocks = static_cast<unsigned int>(std::min<int64_t>((elements + 255) / 256, int64_t{sms} * 8));
    // One "channel" per row: the partial slices are laid out exactly as dw.
    reduce_wgrad_partials_dropping_channels<T><<<std::max(blocks, 1u), 256, 0, ctx.stream()>>>(
        partials, static_cast<T*>(a.dw), elements, elements, splits, 1, 1, a.alpha, a.beta);
    check_cuda(cudaGetLastError(), "launching the small-C wgrad reduction");
  }
};

}  // namespace

void add_conv_wgrad_small_c_kernels(kernel_list& out) {
  out.push_back(make_kernel<small_c_wgrad_traits<TSRP_DATA_HALF>>());
  out.push_back(make_kernel<small_c_wgrad_traits<TSRP_DATA_BFLOAT16>>());
}

}  // namespace tessera::cuda
