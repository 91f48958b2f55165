// Deterministic fp32 reductions shared by the normalization and softmax kernels: Welford / Chan
// statistics (a numerically stable mean and sum of squared deviations that can be merged), the
// online softmax's max and sum of exponentials, warp, lane-group and block trees with a fixed
// shape, and the second pass that folds per-block partials stored in the workspace. Every
// combination happens in an order fixed by the launch geometry alone, so a result is bitwise
// reproducible on a given GPU (no floating atomics anywhere).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace tessera::cuda {

constexpr unsigned int norm_full_warp = 0xffffffffu;

// n values with mean `mean` and sum of squared deviations `m2`. The empty state is all zeros,
// which the merge relies on.
struct welford_state {
  float n;
  float mean;
  float m2;
};

// Chan et al.'s pairwise update. Branch-free: when b is empty f is 0 and a is returned; when a is
// empty (mean 0) f is 1 and b's mean comes back exactly.
__device__ __forceinline__ welford_state welford_merge(const welford_state& a, const welford_state& b) {
  const float n = a.n + b.n;
  const float f = n > 0.0f ? b.n / n : 0.0f;
  const float d = b.mean - a.mean;
  welford_state r;
  r.n = n;
  r.mean = fmaf(d, f, a.mean);
  r.m2 = a.m2 + b.m2 + d * d * a.n * f;
  return r;
}

// Welford's single-value step with 1/n precomputed by the caller (several columns that share a
// count share the reciprocal). d * (x - new_mean) is never negative, so m2 never goes below 0.
__device__ __forceinline__ void welford_add(float x, float inv_n, float& mean, float& m2) {
  const float d = x - mean;
  mean = fmaf(d, inv_n, mean);
  m2 = fmaf(d, x - mean, m2);
}

// Lane 0 ends with the merge of all 32 lanes (other lanes hold partial merges).
__device__ __forceinline__ welford_state warp_merge_down(welford_state s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    welford_state o;
    o.n = __shfl_down_sync(norm_full_warp, s.n, offset);
    o.mean = __shfl_down_sync(norm_full_warp, s.mean, offset);
    o.m2 = __shfl_down_sync(norm_full_warp, s.m2, offset);
    s = welford_merge(s, o);
  }
  return s;
}

__device__ __forceinline__ float warp_sum_down(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(norm_full_warp, v, offset);
  return v;
}

// Block-wide merge for a 1-D block of `Threads` threads; every thread must call it. The result is
// valid in thread 0 only.
template <int Threads>
__device__ __forceinline__ welford_state block_merge(welford_state s) {
  constexpr int warps = Threads / 32;
  __shared__ welford_state per_warp[warps];
  s = warp_merge_down(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) per_warp[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    s = per_warp[0];
#pragma unroll
    for (int w = 1; w < warps; ++w) s = welford_merge(s, per_warp[w]);
  }
  return s;
}

// Two sums at once, block-wide, 1-D block of `Threads`; valid in thread 0 only.
template <int Threads>
__device__ __forceinline__ void block_sum2_to_first(float& a, float& b) {
  constexpr int warps = Threads / 32;
  __shared__ float per_warp[2][warps];
  a = warp_sum_down(a);
  b = warp_sum_down(b);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    per_warp[0][warp] = a;
    per_warp[1][warp] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    a = per_warp[0][0];
    b = per_warp[1][0];
#pragma unroll
    for (int w = 1; w < warps; ++w) {
      a += per_warp[0][w];
      b += per_warp[1][w];
    }
  }
}

// Sum over a 1-D block of `Threads` threads that every thread receives (each adds the per-warp
// sums in the same order, so all get the same bits). Every thread must call it; it may be called
// repeatedly (it synchronizes before reusing its shared memory).
template <int Threads>
__device__ __forceinline__ float block_sum_all(float v) {
  constexpr int warps = Threads / 32;
  __shared__ float per_warp[warps];
  v = warp_sum_down(v);
  __syncthreads();
  if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < warps; ++w) total += per_warp[w];
  return total;
}

// ---- groups of lanes ---------------------------------------------------------------------------
// Sum / max over aligned groups of `width` lanes of a warp (width a power of two up to 32, the
// same in every lane); every lane of the group receives the group's first lane's result, so all
// get the same bits. All 32 lanes of the warp must call.
__device__ __forceinline__ float group_sum_all(float v, int width) {
  for (int offset = width / 2; offset > 0; offset >>= 1) v += __shfl_down_sync(norm_full_warp, v, offset, width);
  return __shfl_sync(norm_full_warp, v, 0, width);
}

__device__ __forceinline__ float group_max_all(float v, int width) {
  for (int offset = width / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_down_sync(norm_full_warp, v, offset, width));
  return __shfl_sync(norm_full_warp, v, 0, width);
}

// ---- softmax statistics ----------------------------------------------------------------------
// The max of a set of values and the sum of exp(v - max) over it, mergeable (the online softmax of
// Milakov and Gimelshein): one pass over the data gives both. The empty set is {-inf, 0}. fmaxf
// skips NaN, so the max is never NaN; a NaN value makes the sum NaN.
struct max_exp_sum {
  float max;
  float sum;
};

__device__ __forceinline__ max_exp_sum max_exp_empty() { return {-INFINITY, 0.0f}; }

// exp(v - max), and 0 when max is -inf (then every value so far is -inf: nothing to add, and no
// NaN from -inf - -inf). A set whose values are all -inf therefore ends as {-inf, 0}, and a
// softmax of it divides 0 by 0: NaN, as the definition gives.
__device__ __forceinline__ float exp_below(float v, float max) { return max == -INFINITY ? 0.0f : expf(v - max); }

// Both sums rescaled to the larger max. The products are rounded before the add (no fma
// contraction), so merge(a, b) and merge(b, a) give the same bits.
__device__ __forceinline__ max_exp_sum max_exp_merge(const max_exp_sum& a, const max_exp_sum& b) {
  const float max = fmaxf(a.max, b.max);
  return {max, __fmul_rn(a.sum, exp_below(a.max, max)) + __fmul_rn(b.sum, exp_below(b.max, max))};
}

// N more values at once: one rescale of the running sum per call. Padding may be passed as -inf.
template <int N>
__device__ __forceinline__ max_exp_sum max_exp_absorb(const max_exp_sum& s, const float (&v)[N]) {
  float max = s.max;
#pragma unroll
  for (int i = 0; i < N; ++i) max = fmaxf(max, v[i]);
  float sum = __fmul_rn(s.sum, exp_below(s.max, max));
#pragma unroll
  for (int i = 0; i < N; ++i) sum += exp_below(v[i], max);
  return {max, sum};
}

// Block-wide merge for a 1-D block of `Threads` threads that every thread receives (each merges
// the per-warp results in the same order). Every thread must call it; it may be called
// repeatedly.
template <int Threads>
__device__ __forceinline__ max_exp_sum block_max_exp_all(max_exp_sum s) {
  constexpr int warps = Threads / 32;
  __shared__ max_exp_sum per_warp[warps];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    max_exp_sum o;
    o.max = __shfl_down_sync(norm_full_warp, s.max, offset);
    o.sum = __shfl_down_sync(norm_full_warp, s.sum, offset);
    s = max_exp_merge(s, o);
  }
  __syncthreads();  // the previous call's readers are done with per_warp
  if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = s;
  __syncthreads();
  s = per_warp[0];
#pragma unroll
  for (int w = 1; w < warps; ++w) s = max_exp_merge(s, per_warp[w]);
  return s;
}

// ---- second pass over partials -------------------------------------------------------------
// Partials are stored slot-minor: partial p of slot j at [p * slots + j], so that 32 adjacent
// slots of one partial are one 128-byte line. The folding kernels run (32, 32) blocks: threadIdx.x
// picks the slot, threadIdx.y strides over the partials, fold_batch loads in flight before any
// is merged; the 32 running results are then combined in threadIdx.y order. Every thread of the
// block must call these; results are valid where threadIdx.y == 0.
// Why 32 lanes and batched loads: a lane's merges form one dependent chain, and with 8 lanes over
// the 1024 partials of a ResNet-sized batch norm each lane waited on 128 L2 loads in turn
// (the fold took 39 us of a 400 us training step on the H200, ncu, 2026-12-03).
constexpr int fold_slots_per_block = 32;
constexpr int fold_lanes = 32;
constexpr int fold_batch = 4;

// Sums of two partial arrays for one slot.
__device__ __forceinline__ void fold_partial_sums(const float* a, const float* b, int parts, int64_t slots,
                                                  int64_t slot, bool active, float& sum_a, float& sum_b) {
  __shared__ float lanes[2][fold_lanes][fold_slots_per_block];
  float sa = 0.0f, sb = 0.0f;
  if (active) {
    for (int p0 = threadIdx.y; p0 < parts; p0 += fold_lanes * fold_batch) {
      float va[fold_batch], vb[fold_batch];
#pragma unroll
      for (int i = 0; i < fold_batch; ++i) {
        const int p = p0 + i * fold_lanes;
        const int64_t at = static_cast<int64_t>(p) * slots + slot;
        va[i] = p < parts ? a[at] : 0.0f;
        vb[i] = p < parts ? b[at] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < fold_batch; ++i) {
        sa += va[i];
        sb += vb[i];
      }
    }
  }
  lanes[0][threadIdx.y][threadIdx.x] = sa;
  lanes[1][threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0) {
    sa = lanes[0][0][threadIdx.x];
    sb = lanes[1][0][threadIdx.x];
#pragma unroll
    for (int l = 1; l < fold_lanes; ++l) {
      sa += lanes[0][l][threadIdx.x];
      sb += lanes[1][l][threadIdx.x];
    }
  }
  sum_a = sa;
  sum_b = sb;
}

// Merge of Welford partials for one slot: partial p covers elements [p * part_len, min(length,
// (p + 1) * part_len)) of the reduction, so its count is not stored.
__device__ __forceinline__ welford_state fold_partial_welford(const float* means, const float* m2s, int parts,
                                                              int64_t part_len, int64_t length, int64_t slots,
                                                              int64_t slot, bool active) {
  __shared__ welford_state lanes[fold_lanes][fold_slots_per_block];
  welford_state s{0.0f, 0.0f, 0.0f};
  if (active) {
    for (int p0 = threadIdx.y; p0 < parts; p0 += fold_lanes * fold_batch) {
      welford_state v[fold_batch];
#pragma unroll
      for (int i = 0; i < fold_batch; ++i) {
        const int p = p0 + i * fold_lanes;
        const int64_t first = static_cast<int64_t>(p) * part_len;
        const int64_t count = length - first < part_len ? length - first : part_len;
        const int64_t at = static_cast<int64_t>(p) * slots + slot;
        v[i] = p < parts ? welford_state{static_cast<float>(count), means[at], m2s[at]} : welford_state{0.0f, 0.0f, 0.0f};
      }
      // An empty state merges as the identity (welford_merge's n == 0 case).
#pragma unroll
      for (int i = 0; i < fold_batch; ++i) s = welford_merge(s, v[i]);
    }
  }
  lanes[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0) {
    s = lanes[0][threadIdx.x];
#pragma unroll
    for (int l = 1; l < fold_lanes; ++l) s = welford_merge(s, lanes[l][threadIdx.x]);
  }
  return s;
}

}  // namespace tessera::cuda
