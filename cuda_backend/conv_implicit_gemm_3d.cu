// 3-D forward convolution as implicit GEMM on the H200's tensor cores (3-D U-Net, video models):
//   "conv_fwd_igemm3d_sm90_128x128x64_<type>"   y = alpha * conv3d(x, w) + beta * y
//   "conv_fwd_igemm3d_sm90_128x32x32_<type>"    the same on a tile for layers of few filters
//   "conv_fwd_igemm3d_sm90_padded_c_128x32x32_<type>"  C not a multiple of 8, by zero channels
// fp16 or bf16, fp32 accumulation, packed NDHWC x / KTRSC w / NOPQK y with K a multiple of 8 and C
// too (or padded to one), one group, cross-correlation. CUTLASS's sm90 implicit-GEMM collectives
// take three spatial dims when the layout tags say NDHWC (TMA im2col over 5-D tensors); until this
// kernel the 3-D convolutions ran the direct kernel (the unet3d suite at 0.047 of cuDNN on the H200).
//
// GEMM view: M = N*O*P*Q output pixels, N = K filters, K = C*T*R*S (each k-tile TileK channels of
// one filter tap). Two tiles (fprop3d_tile below). The epilogue is the plain blend (no bias or
// activation: the fused forward stays 2-D).
#include "conv_igemm_cutlass.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_kernels.hpp"
#include "conv_igemm_padded_channels.cuh"
#include "conv_igemm_wave_model.hpp"
#include "cuda_context.hpp"
#include "kernel_glue.hpp"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cutlass/epilogue/fusion/operations.hpp>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

struct ndhwc_geometry {
  int n, d, h, w, c;  // x
  int k, t, r, s;     // w
  int o, p, q;        // y
  int pad_before[3], pad_after[3], stride[3], dilation[3];  // depth, height, width
};

template <int32_t DataType, int TileM, int TileN, int TileK, int ClusterM>
struct fprop3d_sm90 {
  static constexpr int tile_m = TileM, tile_n = TileN, tile_k = TileK;
  using element = typename igemm::cutlass_element<DataType>::type;
  static constexpr int alignment = 128 / cutlass::sizeof_bits<element>::value;  // 16-byte rows

  // The K tile is a one-mode tuple so that it tiles the channel sub-mode of K = (C, S, R, T).
  using tile_shape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using cluster_shape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;

  using fusion = cutlass::epilogue::fusion::LinearCombination<element, float, element, float>;
  using collective_epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, tile_shape, cluster_shape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, element, cutlass::layout::TensorNDHWC,
      alignment, element, cutlass::layout::TensorNDHWC, alignment, cutlass::epilogue::TmaWarpSpecialized,
      fusion>::CollectiveOp;

  using collective_mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop, element,
      cutlass::layout::TensorNDHWC, alignment, element, cutlass::layout::TensorNDHWC, alignment, float, tile_shape,
      cluster_shape,
      cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename collective_epilogue::SharedStorage))>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

  using problem_shape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, 3>;
  using kernel = cutlass::conv::kernel::ConvUniversal<problem_shape, collective_mainloop, collective_epilogue>;
  using device = cutlass::conv::device::ConvUniversalAdapter<kernel>;
  using arguments = typename device::Arguments;
};

// CUTLASS's arguments; null pointers when only checking shapes.
template <typename Config>
typename Config::arguments fprop3d_arguments(const ndhwc_geometry& g, const void* x, const void* w, void* y,
                                             float alpha, float beta) {
  using shape_t = typename Config::problem_shape;
  using element = typename Config::element;
  const typename shape_t::TensorExtent activation{g.n, g.d, g.h, g.w, g.c};
  const typename shape_t::TensorExtent filter{g.k, g.t, g.r, g.s, g.c};
  const typename shape_t::ShapePadding lower{g.pad_before[0], g.pad_before[1], g.pad_before[2]};
  const typename shape_t::ShapePadding upper{g.pad_after[0], g.pad_after[1], g.pad_after[2]};
  const typename shape_t::TraversalStride stride{g.stride[0], g.stride[1], g.stride[2]};
  const typename shape_t::ShapeDilation dilation{g.dilation[0], g.dilation[1], g.dilation[2]};
  const shape_t shape(cutlass::conv::Mode::kCrossCorrelation, activation, filter, lower, upper, stride, dilation, 1);

  // y as the epilogue sees it: ((Q, P, O, N), K) with K contiguous.
  using stride_c = typename Config::kernel::StrideC;
  using stride_d = typename Config::kernel::StrideD;
  const int64_t q_stride = g.k, p_stride = int64_t{g.q} * g.k, o_stride = int64_t{g.p} * g.q * g.k,
                n_stride = int64_t{g.o} * g.p * g.q * g.k;
  stride_c dc{};
  stride_d dd{};
  cute::get<0>(dc) = cute::make_stride(q_stride, p_stride, o_stride, n_stride);
  cute::get<0>(dd) = cute::make_stride(q_stride, p_stride, o_stride, n_stride);

  typename Config::arguments args(shape, {static_cast<const element*>(x), static_cast<const element*>(w)},
                                  {{}, static_cast<const element*>(y), dc, static_cast<element*>(y), dd});
  args.epilogue.thread.alpha = alpha;
  args.epilogue.thread.beta = beta;  // 0: y is never loaded
  return args;
}

// Two tiles. 128x128x64 (a cluster of 2 along M) is the forward's best on wide layers. The 3-D
// U-Net's full-resolution layers have 32 filters and 16 to 96 channels, where that tile computes
// 4x more columns than there are filters and, at 16 channels, pads each tap's 64-channel k-step
// 4x: there it ran at 0.32-0.50 of cuDNN's speed (H200, 2026-12-05, suite unet3d: enc1b, dec1a,
// dec1b). 128x32x32 fits those layers exactly (16 channels: half a k-step). estimate_us ranks the
// two (the wave model, and the narrow tile after the wide one above 64 filters); a tuned result
// overrides it.
enum class fprop3d_tile { wide, narrow };

template <int32_t DataType, fprop3d_tile Tile>
struct fprop3d_choice {
  static constexpr bool wide = Tile == fprop3d_tile::wide, f16 = DataType == TSRP_DATA_HALF;
  using config = fprop3d_sm90<DataType, 128, wide ? 128 : 32, wide ? 64 : 32, 2>;
  static constexpr const char* name =
      wide ? (f16 ? "conv_fwd_igemm3d_sm90_128x128x64_f16" : "conv_fwd_igemm3d_sm90_128x128x64_bf16")
           : (f16 ? "conv_fwd_igemm3d_sm90_128x32x32_f16" : "conv_fwd_igemm3d_sm90_128x32x32_bf16");
};

// C not a multiple of 8 (the U-Net's one-channel input layer, 0.18 of cuDNN's speed on the direct
// kernel): x and w staged with zero channels up to the next multiple of 8 in the workspace, then the
// narrow tile's kernel (the same instantiation) on the padded problem. Every product the zero
// channels add is zero, so y is the real convolution's, rounded once.
template <int32_t DataType>
struct fprop3d_padded_choice : fprop3d_choice<DataType, fprop3d_tile::narrow> {
  static constexpr const char* name = DataType == TSRP_DATA_HALF ? "conv_fwd_igemm3d_sm90_padded_c_128x32x32_f16"
                                                                 : "conv_fwd_igemm3d_sm90_padded_c_128x32x32_bf16";
};

// The problem CUTLASS runs; `padded`: C rounded up to a multiple of 8 (the staged x and w).
ndhwc_geometry geometry_of(const tsrpConvolutionProblem& p, bool padded = false) {
  ndhwc_geometry g{};
  auto extent = [](const tsrpTensor& t, int d) { return static_cast<int>(t.dims[d]); };
  g.n = extent(p.x, 0);
  g.c = extent(p.x, 1);
  g.d = extent(p.x, 2);
  g.h = extent(p.x, 3);
  g.w = extent(p.x, 4);
  g.k = extent(p.w, 0);
  g.t = extent(p.w, 2);
  g.r = extent(p.w, 3);
  g.s = extent(p.w, 4);
  g.o = extent(p.y, 2);
  g.p = extent(p.y, 3);
  g.q = extent(p.y, 4);
  for (int i = 0; i < 3; ++i) {
    g.pad_before[i] = static_cast<int>(p.pad_before[i]);
    g.pad_after[i] = static_cast<int>(p.pad_after[i]);
    g.stride[i] = static_cast<int>(p.stride[i]);
    g.dilation[i] = static_cast<int>(p.dilation[i]);
  }
  if (padded) g.c = igemm::padded_channel_count(g.c);
  return g;
}

// The padded form's workspace: x with zero channels, then w with zero channels, then CUTLASS's.
template <typename T>
struct padded_fprop3d_space {
  static size_t x_bytes(const ndhwc_geometry& gp) { return size_t(gp.n) * gp.d * gp.h * gp.w * gp.c * sizeof(T); }
  static size_t w_bytes(const ndhwc_geometry& gp) { return size_t(gp.k) * gp.t * gp.r * gp.s * gp.c * sizeof(T); }
  static size_t bytes(const ndhwc_geometry& gp, size_t inner_bytes) {
    return igemm::align_workspace(x_bytes(gp)) + igemm::align_workspace(w_bytes(gp)) + inner_bytes;
  }
  padded_fprop3d_space(void* workspace, const ndhwc_geometry& gp) {
    auto* base = static_cast<uint8_t*>(workspace);
    x = reinterpret_cast<T*>(base);
    w = reinterpret_cast<T*>(base + igemm::align_workspace(x_bytes(gp)));
    inner = base + igemm::align_workspace(x_bytes(gp)) + igemm::align_workspace(w_bytes(gp));
  }
  T* x;
  T* w;
  void* inner;
};

template <int32_t DataType, typename Choice, bool Padded>
struct fprop3d_traits {
  using config = typename Choice::config;
  using element = typename storage_type<DataType>::type;  // __half or __nv_bfloat16 (the staging kernels')
  using problem_type = tsrpConvolutionProblem;
  using args_type = tsrpConvolutionForwardArgs;
  static constexpr const char* name = Choice::name;
  static constexpr int32_t operation = TSRP_OP_CONVOLUTION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "3-D implicit GEMM on sm90 tensor cores (CUTLASS TMA im2col + wgmma collectives), fp32 accumulation, one "
      "rounding of y; packed NDHWC x, KTRSC w, NOPQK y; K a multiple of 8; C a multiple of 8, or (the padded_c "
      "kernels) any other C, x and w then staged with zero channels in the workspace; deterministic";

  static std::string support(const problem_type& p) {
    if (p.mode != TSRP_CROSS_CORRELATION) {
      return "flipped-filter (convolution) mode not supported: cross-correlation only";
    }
    // The element type first: a kernel that can never take a type says so for every problem of
    // it (the conformance sweep reads "int8 not supported" as declining int8 as a whole).
    const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", &p.x}, {"w", &p.w}, {"y", &p.y}};
    for (const auto& [label, t] : tensors) {
      if (t->data_type != DataType) {
        return std::string(label) + " data type " + data_type_name(t->data_type) +
               " not supported: this kernel takes " + data_type_name(DataType) + " x, w and y";
      }
    }
    if (p.spatial_dims != 3) return std::to_string(p.spatial_dims) + " spatial dims not supported (3-D only)";
    for (const auto& [label, t] : tensors) {
      if (t->ndims != 5) return std::string(label) + " has " + std::to_string(t->ndims) + " dims, expected 5";
      if (!is_packed_channels_last(*t)) return std::string(label) + " is not packed channels-last (NDHWC)";
      for (int d = 0; d < 5; ++d) {
        if (t->dims[d] < 0 || t->dims[d] > std::numeric_limits<int32_t>::max()) {
          return std::string(label) + " dim " + std::to_string(d) + " is outside CUTLASS's int32 extents";
        }
      }
      if (element_count(*t) > (int64_t{1} << 38)) return std::string(label) + " is too large for a TMA descriptor";
    }
    if (!is_floating_storage(p.compute_type)) {
      return std::string("compute type ") + data_type_name(p.compute_type) + " not supported (fp32 accumulation)";
    }
    if (p.groups != 1) return "groups " + std::to_string(p.groups) + " not supported (dense convolution only)";
    if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
    if (p.w.dims[1] != p.x.dims[1]) return "w's channels differ from x's";
    if (!Padded && p.x.dims[1] % 8 != 0) {
      return "x has " + std::to_string(p.x.dims[1]) + " channels (C), not a multiple of 8 (16-byte TMA rows; the "
             "padded_c kernels take it)";
    }
    if (Padded && p.x.dims[1] % 8 == 0) return "C is a multiple of 8: the kernels without channel padding take it";
    if (Padded && p.x.dims[1] > 4096) return "x has more than 4096 channels: padding them serves few-channel layers";
    const int64_t padded_x_elements =
        p.x.dims[1] > 0 ? element_count(p.x) / p.x.dims[1] * igemm::padded_channel_count(static_cast<int>(p.x.dims[1]))
                        : 0;
    if (Padded && padded_x_elements > (int64_t{1} << 38))
      return "x with its channels padded to a multiple of 8 is too large for a TMA descriptor";
    if (p.w.dims[0] % 8 != 0) {
      return "w has " + std::to_string(p.w.dims[0]) + " filters (K), not a multiple of 8 (16-byte TMA rows)";
    }
    for (int i = 0; i < 3; ++i) {
      if (p.stride[i] < 1 || p.stride[i] > 8) return "strides outside 1..8 not supported (TMA's traversal limit)";
      if (p.dilation[i] < 1 || p.dilation[i] > 255) return "dilations outside 1..255 not supported";
      if (p.pad_before[i] < 0 || p.pad_after[i] < 0 || p.pad_before[i] > 255 || p.pad_after[i] > 255) {
        return "padding outside 0..255 not supported";
      }
    }
    if (p.y.dims[0] * p.y.dims[2] * p.y.dims[3] * p.y.dims[4] > std::numeric_limits<int32_t>::max()) {
      return "y has more than 2^31 pixels (N*O*P*Q), more than the int32 GEMM M";
    }
    if (element_count(p.y) == 0) return {};
    if (p.x.dims[1] == 0) return "x has 0 channels: nothing for the tensor cores to reduce";
    // TMA's im2col limits for 5-D tensors (corner and filter-offset ranges) are CUTLASS's check.
    return igemm::cutlass_support<typename config::device>(
        fprop3d_arguments<config>(geometry_of(p, Padded), nullptr, nullptr, nullptr, 1.0f, 0.0f), "3-D fprop");
  }

  static size_t workspace(const problem_type& p) {
    if (element_count(p.y) == 0) return 0;
    const ndhwc_geometry g = geometry_of(p, Padded);
    const size_t inner =
        config::device::get_workspace_size(fprop3d_arguments<config>(g, nullptr, nullptr, nullptr, 1.0f, 0.0f));
    return Padded ? padded_fprop3d_space<element>::bytes(g, inner) : inner;
  }

  // The forward's wave model with the depth folded into the pixels and the taps; the padded form
  // adds its staging (x' and w' written and read back).
  template <typename Tile>
  static double wave_estimate(const ndhwc_geometry& g) {
    igemm::gemm_work work;
    work.m = double(g.n) * g.o * g.p * g.q;
    work.n = g.k;
    work.k_iterations = double(g.t) * g.r * g.s * std::ceil(double(g.c) / Tile::tile_k);
    using space = padded_fprop3d_space<element>;
    if (Padded) work.staging_bytes = double(space::x_bytes(g) + space::w_bytes(g));
    return igemm::wave_estimate_us(Tile::tile_m, Tile::tile_n, Tile::tile_k, work);
  }

  // The narrow tile ranks after the wide one on layers of more than 64 filters. The wave model,
  // calibrated on 2-D layers of wide tiles, has the narrow tile ahead there too, but measured it
  // was not: 3-D U-Net layers of 128 filters took 0.0997 ms (dec3a, 384 channels) and 0.043 (dec3b)
  // on the narrow tile (H100, 2026-12-05, 12:20 UTC) against 0.067 and 0.034 on the wide one (H200,
  // 12:05 UTC; the two GPUs share their tensor-core rate); with 32 or 64 filters the narrow tile
  // won by 1.3-2.3x (enc1b 0.150 vs 0.286, dec1a 0.254 vs 0.590). A tuned result still measures
  // both.
  static double estimate_us(const problem_type& p) {
    const ndhwc_geometry g = geometry_of(p, Padded);
    using wide = typename fprop3d_choice<DataType, fprop3d_tile::wide>::config;
    const bool narrow = config::tile_n < wide::tile_n;
    if (narrow && !Padded && g.k > 64) return wave_estimate<wide>(g) + 1.0;
    return wave_estimate<config>(g);
  }

  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointer(a.x, element_count(p.x), "x");
    require_pointer(a.w, element_count(p.w), "w");
    require_pointer(a.y, element_count(p.y), "y");
    igemm::require_tma_alignment(a.y, "y");
    const ndhwc_geometry g = geometry_of(p, Padded);
    if constexpr (Padded) {
      require_pointer(workspace, 1, "workspace");
      // x' and w' start in the workspace and are TMA operands (16-byte aligned); thrown before
      // anything is written.
      igemm::require_tma_alignment(workspace, "workspace");
      const padded_fprop3d_space<element> space(workspace, g);
      const int channels = static_cast<int>(p.x.dims[1]);
      igemm::stage_zero_channels<element>(a.x, space.x, int64_t{g.n} * g.d * g.h * g.w, channels, g.c, ctx.sm_count(),
                                          ctx.stream(), "launching x's channel padding (3-D fprop)");
      igemm::stage_zero_channels<element>(a.w, space.w, int64_t{g.k} * g.t * g.r * g.s, channels, g.c, ctx.sm_count(),
                                          ctx.stream(), "launching w's channel padding (3-D fprop)");
      igemm::launch<typename config::device>(fprop3d_arguments<config>(g, space.x, space.w, a.y, a.alpha, a.beta),
                                             space.inner, ctx.stream(), "3-D fprop on padded channels");
    } else {
      igemm::require_tma_alignment(a.x, "x");
      igemm::require_tma_alignment(a.w, "w");
      igemm::launch<typename config::device>(fprop3d_arguments<config>(g, a.x, a.w, a.y, a.alpha, a.beta), workspace,
                                             ctx.stream(), "3-D fprop");
    }
  }
};

}  // namespace

void add_conv_igemm_3d_kernels(kernel_list& out) {
  constexpr int32_t f16 = TSRP_DATA_HALF, bf16 = TSRP_DATA_BFLOAT16;
  out.push_back(make_kernel<fprop3d_traits<f16, fprop3d_choice<f16, fprop3d_tile::wide>, false>>());
  out.push_back(make_kernel<fprop3d_traits<bf16, fprop3d_choice<bf16, fprop3d_tile::wide>, false>>());
  out.push_back(make_kernel<fprop3d_traits<f16, fprop3d_choice<f16, fprop3d_tile::narrow>, false>>());
  out.push_back(make_kernel<fprop3d_traits<bf16, fprop3d_choice<bf16, fprop3d_tile::narrow>, false>>());
  out.push_back(make_kernel<fprop3d_traits<f16, fprop3d_padded_choice<f16>, true>>());
  out.push_back(make_kernel<fprop3d_traits<bf16, fprop3d_padded_choice<bf16>, true>>());
}

}  // namespace tessera::cuda
