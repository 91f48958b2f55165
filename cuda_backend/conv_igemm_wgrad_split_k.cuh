// Split-K for the sm90 backward-filter convolution. CUTLASS's sm90 conv kernel runs one CTA per
// dw tile over the whole N*P*Q reduction and takes no split-K or stream-K scheduler (CUTLASS 4.2:
// only the non-persistent warp-specialized schedule is wired for convolutions), so a layer with
// few filters and channels, ResNet-50's 64x64 at N=256 for one, runs on a handful of SMs for
// milliseconds. Here the same collectives (TMA im2col loads, wgmma, the register epilogue) run in
// a grid with a third dimension: CTA z reduces its own contiguous range of k-tiles and writes the
// unrounded partial sum to slice z of an fp32 workspace; a second kernel adds the slices in
// order z = 0, 1, ... (deterministic: the same split count gives the same bits) and applies alpha,
// beta and the one rounding to dw. How many splits: conv_wgrad_split_plan.hpp.
#pragma once

#include "conv_igemm_cutlass.cuh"
#include "conv_igemm_geometry.hpp"
#include "conv_igemm_wgrad_sm90.cuh"
#include "conv_wgrad_partials_reduce.cuh"
#include "conv_wgrad_split_plan.hpp"
#include "cuda_errors.hpp"
#include "element_types.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

namespace tessera::cuda::igemm {

// CUTLASS's sm90 conv kernel (Base, a cutlass::gemm::kernel::GemmUniversal over the conv
// collectives) with the reduction range chosen by blockIdx.z. Types, shared storage and the
// host-side argument conversion are Base's; only the device entry differs.
template <typename Base>
struct wgrad_split_k_kernel : Base {
  using base_params = typename Base::Params;
  using mainloop = typename Base::CollectiveMainloop;
  using epilogue = typename Base::CollectiveEpilogue;
  using SharedStorage = typename Base::SharedStorage;

  struct Params {
    base_params base;
    int64_t k_tiles_per_split;
    int64_t slice_elements;  // element offset of split z's partial sum: z * slice_elements
  };

  CUTLASS_DEVICE void operator()(const Params& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using namespace cute;
    static_assert(size(typename Base::ClusterShape{}) == 1, "one CTA per cluster: no cluster barriers below");
    SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem_buf);
    const base_params& p = params.base;

    const int thread_idx = int(threadIdx.x);
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % cutlass::NumThreadsPerWarpGroup;
    const bool producer_group = cutlass::canonical_warp_group_idx() == 0;
    const bool loading_warp = producer_group && warp_idx % cutlass::NumWarpsPerWarpGroup == 0;

    if (warp_idx == 0 && cute::elect_one_sync()) {
      mainloop::prefetch_tma_descriptors(p.mainloop);
      epilogue::prefetch_tma_descriptors(p.epilogue);
    }

    // The mainloop's smem pipeline: the loading warp produces, the MMA warp group consumes.
    using mainloop_pipeline = typename mainloop::MainloopPipeline;
    typename mainloop_pipeline::Params mainloop_pipe_params;
    if (loading_warp) mainloop_pipe_params.role = mainloop_pipeline::ThreadCategory::Producer;
    if (!producer_group) mainloop_pipe_params.role = mainloop_pipeline::ThreadCategory::Consumer;
    mainloop_pipe_params.is_leader = warp_group_thread_idx == 0;
    mainloop_pipe_params.num_consumers = cutlass::NumThreadsPerWarpGroup;
    mainloop_pipe_params.transaction_bytes = p.mainloop.tma_transaction_bytes;
    mainloop_pipeline pipeline(shared.pipelines.mainloop, mainloop_pipe_params, typename Base::ClusterShape{});

    // The register epilogue loads nothing through a pipeline (no C operand in the partials
    // configuration); its pipelines are built because its store interface takes them.
    using epi_load_pipeline = typename epilogue::LoadPipeline;
    typename epi_load_pipeline::Params epi_load_params;
    if (loading_warp) epi_load_params.role = epi_load_pipeline::ThreadCategory::Producer;
    if (!producer_group) epi_load_params.role = epi_load_pipeline::ThreadCategory::Consumer;
    epi_load_params.dst_blockid = cute::block_rank_in_cluster();
    epi_load_params.producer_arv_count = cutlass::NumThreadsPerWarp;
    epi_load_params.consumer_arv_count = cutlass::NumThreadsPerWarpGroup;
    epi_load_pipeline epi_load(shared.pipelines.epi_load, epi_load_params);
    using epi_store_pipeline = typename epilogue::StorePipeline;
    typename epi_store_pipeline::Params epi_store_params;
    epi_store_params.always_wait = true;
    epi_store_pipeline epi_store(epi_store_params);

    auto problem_mnkl = append<4>(p.problem_shape, Int<1>{});
    mainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_mnkl, p.mainloop);
    auto gA_mkl = get<0>(load_inputs);
    auto gB_nkl = get<1>(load_inputs);
    const auto k_shape = shape<3>(gA_mkl);
    const int64_t k_tiles = size(k_shape);
    const int64_t k_begin = int64_t(blockIdx.z) * params.k_tiles_per_split;
    const int k_count = static_cast<int>(cute::max(int64_t{0}, cute::min(params.k_tiles_per_split, k_tiles - k_begin)));

    auto blk_shape = typename Base::TileShape{};
    auto blk_coord = make_coord(idx2crd(int(blockIdx.x), shape<2>(gA_mkl)), idx2crd(int(blockIdx.y), shape<2>(gB_nkl)),
                                _, Int<0>{});
    __syncthreads();  // the pipelines' barriers are initialized before anyone waits on them

    if (producer_group) {
      if (loading_warp && k_count > 0) {
        auto producer_state = cutlass::make_producer_start_state<mainloop_pipeline>();
        auto k_tile_iter = make_coord_iterator(idx2crd(int(k_begin), k_shape), k_shape);
        collective_mainloop.load(p.mainloop, pipeline, producer_state, load_inputs, blk_coord, k_tile_iter, k_count,
                                 cutlass::canonical_lane_idx(), cute::block_rank_in_cluster(), shared.tensors.mainloop);
        producer_state.advance(k_count);
        collective_mainloop.load_tail(pipeline, producer_state);
      }
    } else {
      typename Base::TiledMma tiled_mma;
      auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));
      if (k_count > 0) {
        typename mainloop::PipelineState consumer_state;
        collective_mainloop.mma(pipeline, consumer_state, accumulators, k_count, warp_group_thread_idx,
                                shared.tensors.mainloop, p.mainloop);
        collective_mainloop.mma_tail(pipeline, consumer_state, k_count);
      } else {
        clear(accumulators);  // a split past the last k-tile still owns its slice: zeros
      }
      typename epilogue::Params slice = p.epilogue;
      slice.ptr_D += int64_t(blockIdx.z) * params.slice_elements;
      epilogue collective_epilogue(slice, shared.tensors.epilogue);
      typename epilogue::LoadPipelineState epi_load_state;
      auto epi_store_state = cutlass::make_producer_start_state<epi_store_pipeline>();
      auto [epi_load_next, epi_store_next] =
          collective_epilogue.store(epi_load, epi_load_state, epi_store, epi_store_state, problem_mnkl, blk_shape,
                                    blk_coord, accumulators, tiled_mma, warp_group_thread_idx, shared.tensors.epilogue);
      collective_epilogue.store_tail(epi_load, epi_load_next, epi_store, epi_store_next);
    }
#else
    (void)params;
    (void)smem_buf;
    __trap();  // built without sm90a: the host never launches it (the plugin checks the device)
#endif
  }
};

template <typename Kernel>
__global__ void __launch_bounds__(Kernel::MaxThreadsPerBlock, Kernel::MinBlocksPerMultiprocessor)
    wgrad_split_k_entry(const __grid_constant__ typename Kernel::Params params) {
  extern __shared__ char smem[];
  Kernel{}(params, smem);
}

// The split-K wgrad of Config (a wgrad_sm90<..., Fp32Partials = true>) on dw of type T.
template <typename Config, typename T>
struct wgrad_split_k {
  static_assert(Config::fp32_partials, "the split kernels write fp32 partial sums");
  using kernel = wgrad_split_k_kernel<typename Config::kernel>;

  // Empty when the split kernel can run the problem (after common_support); else why not.
  static std::string support(const nhwc_geometry& g) {
    const std::string why = wgrad_support<Config>(g);
    if (!why.empty()) return why;
    const wgrad_split_plan plan = plan_wgrad_split<Config>(g, split_planning_sms);
    if (plan.splits < 2) {
      return "dw has " + std::to_string(plan.dw_tiles) + " tiles for " + std::to_string(plan.k_tiles) +
             " k-tiles: enough CTAs without splitting N*P*Q (the unsplit kernel runs it)";
    }
    return {};
  }

  static size_t workspace(const nhwc_geometry& g) {
    const wgrad_split_plan plan = plan_wgrad_split<Config>(g, split_planning_sms);
    return static_cast<size_t>(plan.splits) * plan.slice_elements * sizeof(float);
  }

  static void run(const nhwc_geometry& g, const void* x, const void* dy, void* dw, float alpha, float beta,
                  void* workspace, int sms, cudaStream_t stream) {
    run_dropping_channels(g, g.c, x, dy, dw, alpha, beta, workspace, sms, stream);
  }

  // g is the problem the kernel runs; dw has `channels` (at most g.c) of its channels, the first.
  static void run_dropping_channels(const nhwc_geometry& g, int channels, const void* x, const void* dy, void* dw,
                                    float alpha, float beta, void* workspace, int sms, cudaStream_t stream) {
    const wgrad_split_plan plan = plan_wgrad_split<Config>(g, sms);
    auto* partials = static_cast<float*>(workspace);
    const auto arguments = wgrad_arguments<Config>(g, x, dy, partials, 1.0f, 0.0f);
    typename kernel::Params params{kernel::to_underlying_arguments(arguments, nullptr), plan.k_tiles_per_split,
                                   plan.slice_elements};
    dim3 grid = kernel::get_grid_shape(params.base);
    grid.z = static_cast<unsigned int>(plan.splits);
    constexpr int smem_bytes = kernel::SharedStorageSize;
    // Per call, not once: the attribute belongs to the current device.
    check_cuda(cudaFuncSetAttribute(wgrad_split_k_entry<kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    smem_bytes),
               "cudaFuncSetAttribute(split-K wgrad shared memory)");
    wgrad_split_k_entry<kernel><<<grid, kernel::MaxThreadsPerBlock, smem_bytes, stream>>>(params);
    check_cuda(cudaGetLastError(), "launching the split-K wgrad");

    launch_wgrad_partials_reduction<T>(partials, dw, plan.slice_elements, plan.splits, channels, g.c, alpha, beta, sms,
                                       stream, "launching the split-K wgrad reduction");
  }
};

}  // namespace tessera::cuda::igemm
