// The forward convolution as the engine's product (conv_direct_engine.cuh), with the epilogue
// left to the kernel: conv_fwd_tiled (alpha/beta blend, int8 output scales) and
// conv_bias_act_fwd_tiled (bias, residual, activation) differ only there.
//   m = output position (n, o0, o1, o2)       rows  = N * O
//   n = output channel k within the group     cols  = K / groups
//   r = (input channel c within group, tap f) depth = C / groups * taps
//   A(m, r) = x[n, g * C/groups + c, o * stride - pad + f * dilation]  (0 outside x: padding)
//   B(r, k) = w[g * K/groups + k, c, f]  (f mirrored in convolution mode)
// An epilogue has  void apply(int32_t n, int32_t k, const int32_t (&o)[3], acc_type acc) const
// with k the channel in all of y (not within the group).
#pragma once

#include "conv_direct_engine.cuh"
#include "conv_direct_geometry.cuh"

#include <cstdint>

namespace tessera::cuda::conv_direct {

template <typename TIn, typename Epilogue>
struct forward_ops {
  using acc_type = typename accumulator_of<TIn>::type;
  struct row_type {
    int64_t offset;             // x at (n, first channel of the group)
    int32_t origin[spatial];    // input coordinate of tap 0
  };
  struct col_type {
    int64_t offset;  // w at filter k
  };
  struct red_type {
    int64_t x_offset;  // channel c in x
    int64_t w_offset;  // channel c and tap f in w
    int32_t reach[spatial];  // f * dilation
  };

  int32_t groups, rows, cols, depth;
  const TIn* x;
  const TIn* w;
  conv_geometry g;
  position_decoder positions;      // of y
  channel_tap_decoder reduction;   // (c, f)
  Epilogue epilogue;

  __device__ __forceinline__ row_type row(int32_t group, int32_t m) const {
    int32_t n, o[spatial];
    positions.decode(m, n, o);
    row_type r;
    r.offset = n * g.x_strides[0] + static_cast<int64_t>(group) * g.group_channels * g.x_strides[1];
#pragma unroll
    for (int s = 0; s < spatial; ++s) r.origin[s] = o[s] * g.stride[s] - g.pad[s];
    return r;
  }
  __device__ __forceinline__ col_type col(int32_t group, int32_t k) const {
    return {(static_cast<int64_t>(group) * g.group_filters + k) * g.w_strides[0]};
  }
  __device__ __forceinline__ red_type red(int32_t, int32_t r) const {
    int32_t c, f[spatial];
    reduction.decode(r, c, f);
    red_type t;
    t.x_offset = c * g.x_strides[1];
    t.w_offset = c * g.w_strides[1] + g.filter_tap_offset(f);
#pragma unroll
    for (int s = 0; s < spatial; ++s) t.reach[s] = f[s] * g.dilation[s];
    return t;
  }
  __device__ __forceinline__ acc_type load_a(const row_type& row, const red_type& red) const {
    int64_t offset = row.offset + red.x_offset;
#pragma unroll
    for (int s = 0; s < spatial; ++s) {
      const int32_t i = row.origin[s] + red.reach[s];
      // One unsigned compare covers both i < 0 and i >= in.
      if (static_cast<uint32_t>(i) >= static_cast<uint32_t>(g.in[s])) return acc_type(0);
      offset += i * g.x_strides[2 + s];
    }
    return widen(x[offset]);
  }
  __device__ __forceinline__ acc_type load_b(const red_type& red, const col_type& col) const {
    return widen(w[col.offset + red.w_offset]);
  }
  __device__ __forceinline__ void store(int32_t group, int32_t m, int32_t k, acc_type acc) const {
    int32_t n, o[spatial];
    positions.decode(m, n, o);
    epilogue.apply(n, group * g.group_filters + k, o, acc);
  }
};

// What the host decides once per problem: the plan and the layout hints.
struct forward_launch {
  gemm_plan plan;
  tile_flags flags;
  bool m_fastest;
  bool channel_fastest;
};

// `Problem` is tsrpConvolutionProblem or tsrpConvolutionBiasActivationProblem.
template <typename Problem>
forward_launch plan_forward(const Problem& p) {
  const conv_geometry g = make_geometry(p);
  forward_launch l;
  const int64_t rows = static_cast<int64_t>(g.batch) * g.out[0] * g.out[1] * g.out[2];
  l.plan = plan_gemm(g.groups, rows, g.group_filters, static_cast<int64_t>(g.group_channels) * g.taps(), false);
  l.channel_fastest = channels_last(p.x);
  l.flags.a_rows_fast = !l.channel_fastest;
  const int64_t w_filter_step = p.w.dims[0] > 1 ? (p.w.strides[0] < 0 ? -p.w.strides[0] : p.w.strides[0])
                                                : std::numeric_limits<int64_t>::max();
  l.flags.b_cols_fast = w_filter_step < (l.channel_fastest ? channel_step(p.w) : spatial_step(p.w));
  l.m_fastest = !channels_last(p.y);
  return l;
}

template <typename TIn, typename Epilogue, typename Problem>
forward_ops<TIn, Epilogue> make_forward_ops(const Problem& p, const forward_launch& l, const void* x, const void* w,
                                            const Epilogue& epilogue) {
  forward_ops<TIn, Epilogue> ops;
  ops.g = make_geometry(p);
  ops.groups = ops.g.groups;
  ops.rows = ops.g.batch * ops.g.out[0] * ops.g.out[1] * ops.g.out[2];
  ops.cols = ops.g.group_filters;
  ops.depth = ops.g.group_channels * ops.g.taps();
  ops.x = static_cast<const TIn*>(x);
  ops.w = static_cast<const TIn*>(w);
  ops.positions = make_position_decoder(ops.g.out);
  ops.reduction = make_channel_tap_decoder(ops.g.group_channels, ops.g, l.channel_fastest);
  ops.epilogue = epilogue;
  return ops;
}

}  // namespace tessera::cuda::conv_direct
