// Index arithmetic for the strided (any-layout) normalization kernels: a divider that replaces
// 64-bit division, which sm_90 emulates in dozens of instructions, by a multiply-high and a shift
// (Granlund-Montgomery, as in PyTorch's IntDivider) whenever the dividend fits in 31 bits, and a
// walker that turns a row-major linear index over a tensor's dims into element offsets of several
// tensors that share those dims but not their strides.
#pragma once

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::cuda {

struct index_divider {
  int64_t divisor;
  uint32_t magic;
  uint32_t shift;
  int32_t wide;  // the divisor does not fit the 31-bit path: always divide in 64 bits

  __device__ __forceinline__ int64_t quotient(int64_t n) const {
    if (!wide && n >= 0 && n <= INT32_MAX) {
      const uint32_t u = static_cast<uint32_t>(n);
      // u < 2^31 and hi <= u, so the sum cannot wrap.
      const uint32_t hi = __umulhi(u, magic);
      return static_cast<int64_t>((hi + u) >> shift);
    }
    return n / divisor;
  }
};

inline index_divider make_index_divider(int64_t divisor) {
  index_divider d{};
  d.divisor = divisor < 1 ? 1 : divisor;
  if (d.divisor > INT32_MAX) {
    d.wide = 1;
    return d;
  }
  uint32_t shift = 0;
  while ((uint64_t{1} << shift) < static_cast<uint64_t>(d.divisor)) ++shift;
  const uint64_t magic = ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - static_cast<uint64_t>(d.divisor))) /
                             static_cast<uint64_t>(d.divisor) +
                         1;
  d.magic = static_cast<uint32_t>(magic);
  d.shift = shift;
  d.wide = 0;
  return d;
}

// Row-major walk over up to TSRP_MAX_DIMS dims (the last fastest) with the strides of `Slots`
// tensors. The loops are fully unrolled and guarded so the arrays are only ever indexed by
// constants and stay in parameter space.
template <int Slots>
struct dim_walker {
  int32_t ndims;
  index_divider dims[TSRP_MAX_DIMS];
  int64_t strides[Slots][TSRP_MAX_DIMS];

  __device__ __forceinline__ void offsets(int64_t linear, int64_t (&out)[Slots]) const {
#pragma unroll
    for (int s = 0; s < Slots; ++s) out[s] = 0;
    int64_t rest = linear;
#pragma unroll
    for (int d = TSRP_MAX_DIMS - 1; d >= 0; --d) {
      if (d < ndims) {
        const int64_t q = dims[d].quotient(rest);
        const int64_t coordinate = rest - q * dims[d].divisor;
        rest = q;
#pragma unroll
        for (int s = 0; s < Slots; ++s) out[s] += coordinate * strides[s][d];
      }
    }
  }
};

// A walker over dims [first, last) of `tensors` (null entries get zero strides). Size-1 dims are
// dropped and neighbours that are contiguous in every tensor are merged, so a packed tensor walks
// as one dim whatever its rank.
template <int Slots>
dim_walker<Slots> make_dim_walker(const tsrpTensor& shape, int first, int last, const tsrpTensor* const (&tensors)[Slots]) {
  dim_walker<Slots> w{};
  int64_t dims[TSRP_MAX_DIMS] = {};
  int64_t strides[Slots][TSRP_MAX_DIMS] = {};
  int n = 0;
  for (int d = first; d < last; ++d) {
    if (shape.dims[d] == 1) continue;
    if (n > 0) {
      bool mergeable = true;
      for (int s = 0; s < Slots; ++s) {
        const int64_t inner = tensors[s] ? tensors[s]->strides[d] : 0;
        if (strides[s][n - 1] != inner * shape.dims[d]) mergeable = false;
      }
      if (mergeable) {
        dims[n - 1] *= shape.dims[d];
        for (int s = 0; s < Slots; ++s) strides[s][n - 1] = tensors[s] ? tensors[s]->strides[d] : 0;
        continue;
      }
    }
    dims[n] = shape.dims[d];
    for (int s = 0; s < Slots; ++s) strides[s][n] = tensors[s] ? tensors[s]->strides[d] : 0;
    ++n;
  }
  w.ndims = n;
  for (int d = 0; d < TSRP_MAX_DIMS; ++d) {
    w.dims[d] = make_index_divider(d < n ? dims[d] : 1);
    for (int s = 0; s < Slots; ++s) w.strides[s][d] = d < n ? strides[s][d] : 0;
  }
  return w;
}

}  // namespace tessera::cuda
