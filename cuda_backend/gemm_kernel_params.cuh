// What every GEMM kernel of the engine receives (one by-value kernel parameter, so a launch is a
// single packet and nothing lives in device memory that graph capture would have to own), and
// the two pieces of index arithmetic all of them share: which C tile a block computes and where
// one batch's matrices start.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda::gemm {

constexpr int max_batch_dims = TSRP_MAX_DIMS - 2;

// The batch as the kernels walk it: `count` = prod(dims[0..rank)), dims[rank - 1] innermost.
// Each operand has its own strides, 0 where it broadcasts. The host has dropped extent-1 dims and
// merged dims that are contiguous in every operand, so rank is usually 0 or 1.
struct batch_layout {
  int32_t rank = 0;
  int64_t count = 1;
  int64_t dims[max_batch_dims] = {};
  int64_t a[max_batch_dims] = {};
  int64_t b[max_batch_dims] = {};
  int64_t c[max_batch_dims] = {};
  int64_t bias[max_batch_dims] = {};
};

// The epilogue, per element of C (all fp32):
//   t = alpha * acc (+ bias(i, j));  prev = beta != 0 ? beta * C(i, j) : 0
//   C(i, j) = blend_before ? act(t + prev) : act(t) + prev
// C is not read when beta == 0, so an output poisoned with NaN stays unread.
struct epilogue_params {
  void* c = nullptr;
  int32_t c_type = TSRP_DATA_FLOAT;  // float, half, bfloat16 or int32
  int64_t c_row_stride = 0, c_col_stride = 0;
  // C(i, j) and C(i, j + 1) are one aligned 2-element vector for every even j (unit column
  // stride, even row and batch strides, base aligned to two elements).
  bool c_pairs = false;
  const void* bias = nullptr;  // null: no bias
  int32_t bias_type = TSRP_DATA_FLOAT;
  int64_t bias_row_stride = 0, bias_col_stride = 0;  // 0 where the bias broadcasts
  float alpha = 1.0f, beta = 0.0f;
  int32_t activation = TSRP_ACTIVATION_IDENTITY;
  float activation_coef = 0.0f;
  bool blend_before_activation = false;
  // Integer accumulators stored as they are (an s32 C with alpha 1, beta 0, no bias and no
  // activation): exact over the whole int32 range, where the fp32 epilogue is exact to 2^24.
  bool store_raw_integer = false;
};

struct kernel_params {
  int32_t m = 0, n = 0, k = 0;
  int32_t tiles_m = 0, tiles_n = 0;
  // A(i, p) = a[i * a_row_stride + p * a_col_stride], B(p, j) = b[p * b_row_stride + j * b_col_stride].
  const void* a = nullptr;
  int64_t a_row_stride = 0, a_col_stride = 0;
  const void* b = nullptr;
  int64_t b_row_stride = 0, b_col_stride = 0;
  batch_layout batch;
  epilogue_params epilogue;
};

struct batch_offsets {
  int64_t a = 0, b = 0, c = 0, bias = 0;
};

__device__ __forceinline__ batch_offsets offsets_of_batch(const batch_layout& layout, int64_t index) {
  batch_offsets o;
#pragma unroll
  for (int d = max_batch_dims - 1; d >= 0; --d) {
    if (d < layout.rank) {
      const int64_t i = index % layout.dims[d];
      index /= layout.dims[d];
      o.a += i * layout.a[d];
      o.b += i * layout.b[d];
      o.c += i * layout.c[d];
      o.bias += i * layout.bias[d];
    }
  }
  return o;
}

// Grouped raster: blocks that run together cover a band of `group` tile rows, so the A rows and
// B columns they read stay in L2 instead of each block streaming its own panels from HBM.
__device__ __forceinline__ void tile_of_block(int32_t tiles_m, int32_t tiles_n, int32_t& tile_m, int32_t& tile_n) {
  constexpr int32_t group = 8;
  const int32_t id = static_cast<int32_t>(blockIdx.x);
  const int32_t per_group = group * tiles_n;
  const int32_t first_m = (id / per_group) * group;
  const int32_t rows = min(tiles_m - first_m, group);
  const int32_t in_group = id % per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

}  // namespace tessera::cuda::gemm
