// The geometry every direct convolution kernel of this family shares: the problem widened to three
// spatial dims, index decoders that turn a linear GEMM index into tensor coordinates, and the
// host-side checks that say which problems fit the 32-bit index arithmetic.
//
// Widening: a problem of lower rank gets leading spatial dims of size 1 (stride 0, pad 0, conv
// stride 1, dilation 1), so one code path serves 1-D, 2-D and 3-D. Index 0 is depth, 1 height,
// 2 width. (conv_fwd_direct.cu carries the same idea in its own conv_geometry; the two could share
// this header.)
#pragma once

#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace tessera::cuda::conv_direct {

constexpr int spatial = TSRP_MAX_SPATIAL_DIMS;

// Quotient and remainder by a divisor fixed at launch: a multiply-high and a shift instead of
// the ~20-instruction integer division, because the decoders below run once per loaded element.
// Granlund-Montgomery with p = 31 + ceil(log2 d) and m = ceil(2^p / d): for dividends in
// [0, 2^31) the error n * (m d - 2^p) / (d 2^p) stays below 1/d, so the floor is exact.
class fast_divmod {
 public:
  fast_divmod() = default;
  // Divisors below 1 are treated as 1 (only empty problems have them, and those never launch).
  explicit fast_divmod(int64_t divisor) {
    divisor_ = divisor < 1 ? 1 : static_cast<int32_t>(divisor);
    if (divisor_ == 1) return;
    int log2 = 0;
    while ((int64_t{1} << log2) < divisor_) ++log2;
    const int p = 31 + log2;
    multiplier_ = static_cast<uint32_t>(((uint64_t{1} << p) + static_cast<uint64_t>(divisor_) - 1) /
                                        static_cast<uint64_t>(divisor_));
    shift_ = static_cast<uint32_t>(p - 32);
  }
  // n must be in [0, 2^31).
  __device__ __forceinline__ void divmod(int32_t n, int32_t& quotient, int32_t& remainder) const {
    const int32_t q =
        divisor_ == 1 ? n
                      : static_cast<int32_t>(__umulhi(static_cast<uint32_t>(n), multiplier_) >> shift_);
    remainder = n - q * divisor_;
    quotient = q;
  }
  __host__ __device__ int32_t divisor() const { return divisor_; }

 private:
  int32_t divisor_ = 1;
  uint32_t multiplier_ = 0;
  uint32_t shift_ = 0;
};

// A linear index over (n, p0, p1, p2) with p2 fastest: output positions of the forward and of
// backward filter's reduction, input positions of backward data.
struct position_decoder {
  fast_divmod extent[spatial];
  __device__ __forceinline__ void decode(int32_t index, int32_t& n, int32_t (&p)[spatial]) const {
    int32_t rest = index;
    extent[2].divmod(rest, rest, p[2]);
    extent[1].divmod(rest, rest, p[1]);
    extent[0].divmod(rest, n, p[0]);
  }
};

inline position_decoder make_position_decoder(const int32_t (&extent)[spatial]) {
  position_decoder d;
  for (int s = 0; s < spatial; ++s) d.extent[s] = fast_divmod(extent[s]);
  return d;
}

// A linear index over (channel, f0, f1, f2): the reduction of forward and backward data, the
// rows of backward filter. Which digit is fastest follows the layout (channels fastest for
// channels-last tensors) so that neighbouring indices are neighbours in memory.
struct channel_tap_decoder {
  fast_divmod channels;
  fast_divmod taps[spatial];
  bool channel_fastest;
  __device__ __forceinline__ void decode(int32_t index, int32_t& channel, int32_t (&f)[spatial]) const {
    int32_t rest = index;
    if (channel_fastest) {  // ((f0 * F1 + f1) * F2 + f2) * C + c
      channels.divmod(rest, rest, channel);
      taps[2].divmod(rest, rest, f[2]);
      taps[1].divmod(rest, f[0], f[1]);
    } else {  // ((c * F0 + f0) * F1 + f1) * F2 + f2
      taps[2].divmod(rest, rest, f[2]);
      taps[1].divmod(rest, rest, f[1]);
      taps[0].divmod(rest, channel, f[0]);
    }
  }
};

// The convolution, widened to three spatial dims. Strides are element strides by dim: [0] N (or
// K for w), [1] C (or C/groups for w), [2..4] depth, height, width.
struct conv_geometry {
  int32_t batch;
  int32_t groups;
  int32_t group_channels;  // C / groups
  int32_t group_filters;   // K / groups
  int32_t in[spatial];
  int32_t out[spatial];
  int32_t filter[spatial];
  int32_t pad[spatial];
  int32_t stride[spatial];
  int32_t dilation[spatial];
  int64_t x_strides[2 + spatial];
  int64_t w_strides[2 + spatial];
  int64_t y_strides[2 + spatial];
  bool flip;  // TSRP_CONVOLUTION: the filter is applied mirrored in every spatial dim

  __host__ __device__ int32_t taps() const { return filter[0] * filter[1] * filter[2]; }
  // The filter element that tap f multiplies.
  __device__ __forceinline__ int64_t filter_tap_offset(const int32_t (&f)[spatial]) const {
    int64_t offset = 0;
#pragma unroll
    for (int s = 0; s < spatial; ++s) offset += (flip ? filter[s] - 1 - f[s] : f[s]) * w_strides[2 + s];
    return offset;
  }
};

// ---- host side ---------------------------------------------------------------------------------

constexpr int64_t index_limit = std::numeric_limits<int32_t>::max() - (int64_t{1} << 16);

// The fields both tsrpConvolutionProblem and tsrpConvolutionBiasActivationProblem have.
template <typename Problem>
std::string geometry_support(const Problem& p) {
  if (p.spatial_dims < 1 || p.spatial_dims > spatial) {
    return "spatial_dims " + std::to_string(p.spatial_dims) + " (1 to 3 supported)";
  }
  const int32_t rank = p.spatial_dims + 2;
  const std::pair<const tsrpTensor*, const char*> tensors[] = {{&p.x, "x"}, {&p.w, "w"}, {&p.y, "y"}};
  for (const auto& [t, name] : tensors) {
    if (t->ndims != rank) {
      return std::string("tensor ") + name + " has " + std::to_string(t->ndims) + " dims, expected " +
             std::to_string(rank) + " for " + std::to_string(p.spatial_dims) + " spatial dims";
    }
    for (int d = 0; d < rank; ++d) {
      if (t->dims[d] < 0) return std::string("tensor ") + name + " has a negative dim";
      if (t->dims[d] > index_limit) return std::string("tensor ") + name + " dim " + std::to_string(d) + " exceeds 2^31";
    }
  }
  if (p.mode != TSRP_CROSS_CORRELATION && p.mode != TSRP_CONVOLUTION) {
    return "convolution mode " + std::to_string(p.mode) + " is neither cross-correlation nor convolution";
  }
  if (p.groups < 1 || p.groups > 65535) return "groups " + std::to_string(p.groups) + " (1 to 65535 supported)";
  if (p.x.dims[1] != p.w.dims[1] * p.groups) {
    return "x has " + std::to_string(p.x.dims[1]) + " channels, expected w's " + std::to_string(p.w.dims[1]) +
           " times groups " + std::to_string(p.groups);
  }
  if (p.w.dims[0] % p.groups != 0) {
    return "w's K " + std::to_string(p.w.dims[0]) + " is not a multiple of groups " + std::to_string(p.groups);
  }
  if (p.y.dims[0] != p.x.dims[0] || p.y.dims[1] != p.w.dims[0]) return "y must be N x K x ... (N of x, K of w)";
  int64_t in_positions = p.x.dims[0], out_positions = p.x.dims[0], taps = 1;
  for (int s = 0; s < p.spatial_dims; ++s) {
    if (p.stride[s] < 1) return "stride[" + std::to_string(s) + "] " + std::to_string(p.stride[s]) + " is below 1";
    if (p.dilation[s] < 1) {
      return "dilation[" + std::to_string(s) + "] " + std::to_string(p.dilation[s]) + " is below 1 (1 means none)";
    }
    // Coordinates are int32: input coordinates, padded, and the reach of the last tap.
    const int64_t reach = (p.y.dims[2 + s] + 1) * p.stride[s] + (p.w.dims[2 + s] + 1) * p.dilation[s];
    const int64_t pad = p.pad_before[s] < 0 ? -p.pad_before[s] : p.pad_before[s];
    if (reach + pad + p.x.dims[2 + s] > index_limit) {
      return "spatial dim " + std::to_string(s) + " reaches beyond 32-bit coordinates";
    }
    in_positions *= p.x.dims[2 + s];
    out_positions *= p.y.dims[2 + s];
    taps *= p.w.dims[2 + s];
  }
  if (in_positions > index_limit || out_positions > index_limit) {
    return "more than 2^31 positions (batch times spatial size) in x or y";
  }
  if (taps * p.w.dims[1] > index_limit || taps * (p.w.dims[0] / p.groups) > index_limit) {
    return "filter reduction longer than 2^31";
  }
  if (element_count(p.y) > index_limit || element_count(p.x) > index_limit || element_count(p.w) > index_limit) {
    return "a tensor with more than 2^31 elements";
  }
  return {};
}

template <typename Problem>
conv_geometry make_geometry(const Problem& p) {
  conv_geometry g{};
  g.batch = static_cast<int32_t>(p.x.dims[0]);
  g.groups = static_cast<int32_t>(p.groups);
  g.group_channels = static_cast<int32_t>(p.w.dims[1]);
  g.group_filters = static_cast<int32_t>(p.w.dims[0] / p.groups);
  g.flip = p.mode == TSRP_CONVOLUTION;
  for (int d = 0; d < 2; ++d) {
    g.x_strides[d] = p.x.strides[d];
    g.w_strides[d] = p.w.strides[d];
    g.y_strides[d] = p.y.strides[d];
  }
  const int lead = spatial - p.spatial_dims;
  for (int s = 0; s < spatial; ++s) {
    if (s < lead) {
      g.in[s] = g.out[s] = g.filter[s] = 1;
      g.pad[s] = 0;
      g.stride[s] = g.dilation[s] = 1;
      g.x_strides[2 + s] = g.w_strides[2 + s] = g.y_strides[2 + s] = 0;
    } else {
      const int from = s - lead;
      g.in[s] = static_cast<int32_t>(p.x.dims[2 + from]);
      g.out[s] = static_cast<int32_t>(p.y.dims[2 + from]);
      g.filter[s] = static_cast<int32_t>(p.w.dims[2 + from]);
      g.pad[s] = static_cast<int32_t>(p.pad_before[from]);
      g.stride[s] = static_cast<int32_t>(p.stride[from]);
      g.dilation[s] = static_cast<int32_t>(p.dilation[from]);
      g.x_strides[2 + s] = p.x.strides[2 + from];
      g.w_strides[2 + s] = p.w.strides[2 + from];
      g.y_strides[2 + s] = p.y.strides[2 + from];
    }
  }
  return g;
}

// A tensor's strides widened like conv_geometry's: [0] N, [1] C, [2..4] depth, height, width, with 0
// for the spatial dims a lower-rank problem lacks (their coordinate is always 0).
inline void widen_strides(const tsrpTensor& t, int32_t spatial_dims, int64_t (&out)[2 + spatial]) {
  out[0] = t.strides[0];
  out[1] = t.strides[1];
  const int lead = spatial - spatial_dims;
  for (int s = 0; s < spatial; ++s) out[2 + s] = s < lead ? 0 : t.strides[2 + s - lead];
}

// Element offset of (n, c, p) in a tensor with widened strides.
__device__ __forceinline__ int64_t widened_offset(const int64_t (&strides)[2 + spatial], int32_t n, int32_t c,
                                                  const int32_t (&p)[spatial]) {
  return n * strides[0] + c * strides[1] + p[0] * strides[2] + p[1] * strides[3] + p[2] * strides[4];
}

// Layout hints. They only steer which index runs fastest across threads (coalescing); results do
// not depend on them beyond the summation order, which they fix per problem.

// The smallest stride among a tensor's spatial dims longer than 1; INT64_MAX when there is none.
inline int64_t spatial_step(const tsrpTensor& t) {
  int64_t step = std::numeric_limits<int64_t>::max();
  for (int d = 2; d < t.ndims; ++d) {
    const int64_t s = t.strides[d] < 0 ? -t.strides[d] : t.strides[d];
    if (t.dims[d] > 1 && s < step) step = s;
  }
  return step;
}

inline int64_t channel_step(const tsrpTensor& t) {
  const int64_t s = t.strides[1] < 0 ? -t.strides[1] : t.strides[1];
  return t.dims[1] > 1 ? s : std::numeric_limits<int64_t>::max();
}

// Channels vary faster in memory than positions (NHWC-like).
inline bool channels_last(const tsrpTensor& t) { return channel_step(t) < spatial_step(t); }

inline channel_tap_decoder make_channel_tap_decoder(int32_t channels, const conv_geometry& g, bool channel_fastest) {
  channel_tap_decoder d;
  d.channels = fast_divmod(channels);
  for (int s = 0; s < spatial; ++s) d.taps[s] = fast_divmod(g.filter[s]);
  d.channel_fastest = channel_fastest;
  return d;
}

}  // namespace tessera::cuda::conv_direct
