// Transform tensor, y = alpha * x + beta * y (same dims, any strides and types):
//   "transform_tensor_tiled_transpose"  x and y are contiguous along different dims (NCHW <->
//       NHWC and every other batched transpose): square tiles pass through shared memory, read
//       along x's stride-1 dim and written along y's, so both sides are coalesced;
//   "transform_tensor_elementwise"      everything else, on the elementwise engine (16-byte
//       vectors when x and y share their innermost dim, a strided walk otherwise).
// Each element is converted by one thread, in fp32, and rounded once: bitwise reproducible.
#include "tensor_ops_common.cuh"
#include "tensor_ops_kernels.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::tensor_ops {
namespace {

constexpr int slot_x = 0;
constexpr int slot_y = 1;
constexpr int tile_threads_x = 32;
constexpr int tile_threads_y = 8;

// The problem as a batch of 2-D transposes: dim `across` is where x has stride 1 and `along` is
// where y has stride 1; every other dim is walked by `batch`.
struct transpose_geometry {
  int64_t across_extent, along_extent;
  int64_t x_across_stride, x_along_stride;
  int64_t y_across_stride, y_along_stride;
  int64_t batch_count;
  merged_layout<2> batch;  // the other dims
};

struct transpose_params {
  const void* x;
  void* y;
  int32_t x_type, y_type;  // read only by dyn_t instantiations
  float alpha, beta;
  int64_t across_extent, along_extent;
  int64_t x_across_stride, x_along_stride;
  int64_t y_across_stride, y_along_stride;
  fast_divmod tiles_across;  // tiles along `across`
  fast_divmod tiles_along;
  int64_t items;             // tiles times batch
  index_walker<2> batch;
};

// Why the problem is not a batched transpose (empty: it is, and `g` describes it).
std::string transpose_geometry_of(const tsrpTransformTensorProblem& p, transpose_geometry& g) {
  const tsrpTensor* tensors[2] = {&p.x, &p.y};
  const merged_layout<2> layout = elementwise_layout<2>(p.y, tensors, slot_y);
  if (layout.strides[slot_y][0] != 1) return "tensor y has no dim of stride 1 longer than 1: nothing to transpose";
  if (layout.strides[slot_x][0] == 1) {
    return "tensors x and y are both contiguous along the same dim: transform_tensor_elementwise copies it with "
           "16-byte vectors";
  }
  int across = -1;
  for (int d = 1; d < layout.ndims && across < 0; ++d) {
    if (layout.strides[slot_x][d] == 1) across = d;
  }
  if (across < 0) return "tensor x has no dim of stride 1 longer than 1 (other than y's): nothing to transpose";
  g.along_extent = layout.extents[0];
  g.across_extent = layout.extents[across];
  g.x_along_stride = layout.strides[slot_x][0];
  g.y_along_stride = layout.strides[slot_y][0];
  g.x_across_stride = layout.strides[slot_x][across];
  g.y_across_stride = layout.strides[slot_y][across];
  g.batch_count = 1;
  g.batch = merged_layout<2>{};
  int kept = 0;
  for (int d = 1; d < layout.ndims; ++d) {
    if (d == across) continue;
    g.batch.extents[kept] = layout.extents[d];
    for (int o = 0; o < 2; ++o) g.batch.strides[o][kept] = layout.strides[o][d];
    g.batch_count *= layout.extents[d];
    ++kept;
  }
  g.batch.ndims = kept > 0 ? kept : 1;
  return {};
}

template <int Tile>
int64_t tile_count(const transpose_geometry& g) {
  return ((g.across_extent + Tile - 1) / Tile) * ((g.along_extent + Tile - 1) / Tile) * g.batch_count;
}

// The tile holds fp32, whatever the types, so conversion happens once on each side. A 32 x 8
// block moves one Tile x Tile tile per iteration: 32 for 4-byte types (4 KiB), 64 when both types
// are narrower (8 KiB for fp16), so that narrow types keep as many bytes in flight. The +1
// column keeps the transposed reads free of bank conflicts.
template <typename TX, typename TY, int Tile>
__global__ void __launch_bounds__(tile_threads_x* tile_threads_y) transpose_tiles(const transpose_params p) {
  __shared__ float tile[Tile][Tile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool read_y = p.beta != 0.0f;
  // The loop condition depends on blockIdx only, so every thread reaches the same barriers.
  for (int64_t item = blockIdx.x; item < p.items; item += gridDim.x) {
    const uint32_t index = static_cast<uint32_t>(item);
    const uint32_t rest = p.tiles_across.div(index);
    const uint32_t tile_across = index - rest * p.tiles_across.divisor;
    const uint32_t batch = p.tiles_along.div(rest);
    const uint32_t tile_along = rest - batch * p.tiles_along.divisor;
    int64_t base[2];
    p.batch.template offsets<false>(batch, base);
    const int64_t across0 = static_cast<int64_t>(tile_across) * Tile;
    const int64_t along0 = static_cast<int64_t>(tile_along) * Tile;

    // Read: consecutive threads step x's stride-1 dim (across).
#pragma unroll
    for (int r = 0; r < Tile; r += tile_threads_y) {
#pragma unroll
      for (int c = 0; c < Tile; c += tile_threads_x) {
        const int64_t across = across0 + c + tx, along = along0 + r + ty;
        if (across < p.across_extent && along < p.along_extent) {
          tile[r + ty][c + tx] =
              load_element<TX>(p.x, base[slot_x] + across * p.x_across_stride + along * p.x_along_stride, p.x_type);
        }
      }
    }
    __syncthreads();
    // Write: consecutive threads step y's stride-1 dim (along).
#pragma unroll
    for (int r = 0; r < Tile; r += tile_threads_y) {
#pragma unroll
      for (int c = 0; c < Tile; c += tile_threads_x) {
        const int64_t along = along0 + c + tx, across = across0 + r + ty;
        if (across < p.across_extent && along < p.along_extent) {
          const int64_t offset = base[slot_y] + across * p.y_across_stride + along * p.y_along_stride;
          float v = p.alpha * tile[c + tx][r + ty];
          if (read_y) v += p.beta * load_element<TY>(p.y, offset, p.y_type);
          store_element<TY>(p.y, offset, p.y_type, v);
        }
      }
    }
    __syncthreads();
  }
}

template <typename TX, typename TY, int Tile>
void launch_transpose(cuda_context& ctx, const transpose_geometry& g, transpose_params p) {
  const int64_t across_tiles = (g.across_extent + Tile - 1) / Tile;
  const int64_t along_tiles = (g.along_extent + Tile - 1) / Tile;
  p.tiles_across = fast_divmod(static_cast<uint32_t>(across_tiles));
  p.tiles_along = fast_divmod(static_cast<uint32_t>(along_tiles));
  p.items = across_tiles * along_tiles * g.batch_count;
  // 8 blocks of 256 threads per SM is full occupancy for 32-tiles; 64-tiles (60 registers,
  // 16.6 KiB of shared memory) fit 4 at a time and the rest wait, which costs nothing.
  const int64_t cap = static_cast<int64_t>(ctx.sm_count() > 0 ? ctx.sm_count() : 1) * 8;
  const unsigned int blocks = static_cast<unsigned int>(p.items < cap ? p.items : cap);
  transpose_tiles<TX, TY, Tile>
      <<<blocks, dim3(tile_threads_x, tile_threads_y), 0, ctx.stream()>>>(p);
}

std::string transform_reason(const tsrpTransformTensorProblem& p) {
  std::string why = tensor_reason(p.x, "x");
  if (why.empty()) why = tensor_reason(p.y, "y");
  if (why.empty()) why = output_overlap_reason(p.y, "y");
  if (why.empty() && !same_dims(p.x, p.y)) why = "tensors x and y have different dims";
  return why;
}

void require_pointers(const tsrpTransformTensorProblem& p, const tsrpTransformTensorArgs& a) {
  const int64_t elements = element_count(p.y);
  require_pointer(a.x, elements, "x");
  require_pointer(a.y, elements, "y");
}

struct transform_transpose_traits {
  using problem_type = tsrpTransformTensorProblem;
  using args_type = tsrpTransformTensorArgs;
  static constexpr const char* name = "transform_tensor_tiled_transpose";
  static constexpr int32_t operation = TSRP_OP_TRANSFORM_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "batched transpose through shared-memory tiles (NCHW <-> NHWC and the like), coalesced "
      "reads and writes; fp32 arithmetic, rounded once to y's type (integers round to nearest "
      "even and saturate)";

  static std::string support(const problem_type& p) {
    std::string why = transform_reason(p);
    if (!why.empty()) return why;
    if (element_count(p.y) == 0) return {};
    transpose_geometry g;
    why = transpose_geometry_of(p, g);
    if (why.empty() && (tile_count<32>(g) > max_int32 || g.across_extent > max_int32 || g.along_extent > max_int32)) {
      why = "more than 2^31 tiles: transform_tensor_elementwise takes it";
    }
    return why;
  }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointers(p, a);
    transpose_geometry g;
    transpose_geometry_of(p, g);
    transpose_params tp{};
    tp.x = a.x;
    tp.y = a.y;
    tp.x_type = p.x.data_type;
    tp.y_type = p.y.data_type;
    tp.alpha = a.alpha;
    tp.beta = a.beta;
    tp.across_extent = g.across_extent;
    tp.along_extent = g.along_extent;
    tp.x_across_stride = g.x_across_stride;
    tp.x_along_stride = g.x_along_stride;
    tp.y_across_stride = g.y_across_stride;
    tp.y_along_stride = g.y_along_stride;
    tp.batch = make_walker<2>(g.batch, 1);
    dispatch_operand_types(p.x.data_type, p.x.data_type, p.y.data_type, [&](auto x_tag, auto, auto y_tag) {
      using TX = decltype(x_tag);
      using TY = decltype(y_tag);
      constexpr bool narrow = !is_dyn<TX> && sizeof(TX) <= 2 && sizeof(TY) <= 2;
      launch_transpose<TX, TY, narrow ? 64 : 32>(ctx, g, tp);
    });
  }
};

struct transform_elementwise_traits {
  using problem_type = tsrpTransformTensorProblem;
  using args_type = tsrpTransformTensorArgs;
  static constexpr const char* name = "transform_tensor_elementwise";
  static constexpr int32_t operation = TSRP_OP_TRANSFORM_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "any strides and types: 16-byte vectors when x and y are contiguous along the same "
      "innermost dim, a strided walk in y's memory order otherwise; fp32 arithmetic, rounded "
      "once to y's type (integers round to nearest even and saturate)";

  static std::string support(const problem_type& p) { return transform_reason(p); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    if (element_count(p.y) == 0) return;
    require_pointers(p, a);
    elementwise_request r;
    r.op = elementwise_copy;
    r.a = &p.x;
    r.a_data = a.x;
    r.c = &p.y;
    r.c_data = a.y;
    r.alpha1 = a.alpha;
    r.beta = a.beta;
    launch_elementwise(ctx, r);
  }
};

}  // namespace

void add_transform_kernels(kernel_list& out) {
  out.push_back(make_kernel<transform_transpose_traits>());
  out.push_back(make_kernel<transform_elementwise_traits>());
}

}  // namespace tessera::cuda::tensor_ops
