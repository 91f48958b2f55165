// Backward data and backward filter as the engine's product (conv_direct_engine.cuh). Both are
// gathers: every output element is summed by one thread (or lane group) over exactly the terms
// of the forward that touch it, so no atomics are needed and results are reproducible.
//
// Backward data, per group g:
//   m = input position (n, i0, i1, i2)        rows  = N * I
//   n = input channel c within the group      cols  = C / groups
//   r = (filter k within the group, tap f)    depth = K / groups * taps
//   A(m, r) = dy[n, g * K/groups + k, o] where o * stride = i + pad - f * dilation has an exact
//             solution inside dy (else 0): the outputs whose window covers i at tap f
//   B(r, c) = w[g * K/groups + k, c, f]  (f mirrored in convolution mode)
// Backward filter, per group g:
//   m = (input channel c within group, tap f) rows  = C / groups * taps
//   n = filter k within the group             cols  = K / groups
//   r = output position (n, o0, o1, o2)       depth = N * O  (split: see plan_gemm)
//   A(m, r) = x[n, g * C/groups + c, o * stride - pad + f * dilation]  (0 outside x)
//   B(r, k) = dy[n, g * K/groups + k, o]
// and the sum lands on dw[g * K/groups + k, c, f] (f mirrored in convolution mode).
#pragma once

#include "conv_direct_engine.cuh"
#include "conv_direct_geometry.cuh"
#include "element_types.cuh"

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <limits>

namespace tessera::cuda::conv_direct {

// out = alpha * acc + beta * out in fp32; out is not read when beta is 0 (it may hold NaN).
template <typename T>
__device__ __forceinline__ void blend_store(T* out, float acc, float alpha, float beta) {
  float r = alpha * acc;
  if (beta != 0.0f) r += beta * to_float(*out);
  *out = from_float<T>(r);
}

template <typename T>
struct backward_data_ops {
  using acc_type = float;
  struct row_type {
    int64_t offset;           // dy at (n, first filter of the group)
    int32_t origin[spatial];  // i + pad
  };
  struct col_type {
    int64_t offset;  // channel c in w
  };
  struct red_type {
    int64_t dy_offset;  // filter k in dy
    int64_t w_offset;   // filter k and tap f in w
    int32_t reach[spatial];  // f * dilation
  };

  int32_t groups, rows, cols, depth;
  const T* w;
  const T* dy;
  T* dx;
  float alpha;
  float beta;
  conv_geometry g;
  position_decoder positions;     // of x
  channel_tap_decoder reduction;  // (k, f)
  fast_divmod stride[spatial];

  __device__ __forceinline__ row_type row(int32_t group, int32_t m) const {
    int32_t n, i[spatial];
    positions.decode(m, n, i);
    row_type r;
    r.offset = n * g.y_strides[0] + static_cast<int64_t>(group) * g.group_filters * g.y_strides[1];
#pragma unroll
    for (int s = 0; s < spatial; ++s) r.origin[s] = i[s] + g.pad[s];
    return r;
  }
  __device__ __forceinline__ col_type col(int32_t, int32_t c) const { return {c * g.w_strides[1]}; }
  __device__ __forceinline__ red_type red(int32_t group, int32_t r) const {
    int32_t k, f[spatial];
    reduction.decode(r, k, f);
    red_type t;
    t.dy_offset = k * g.y_strides[1];
    t.w_offset = (static_cast<int64_t>(group) * g.group_filters + k) * g.w_strides[0] + g.filter_tap_offset(f);
#pragma unroll
    for (int s = 0; s < spatial; ++s) t.reach[s] = f[s] * g.dilation[s];
    return t;
  }
  __device__ __forceinline__ float load_a(const row_type& row, const red_type& red) const {
    int64_t offset = row.offset + red.dy_offset;
#pragma unroll
    for (int s = 0; s < spatial; ++s) {
      const int32_t scaled = row.origin[s] - red.reach[s];  // o * stride
      if (scaled < 0) return 0.0f;
      int32_t o, rest;
      stride[s].divmod(scaled, o, rest);
      if (rest != 0 || o >= g.out[s]) return 0.0f;
      offset += o * g.y_strides[2 + s];
    }
    return widen(dy[offset]);
  }
  __device__ __forceinline__ float load_b(const red_type& red, const col_type& col) const {
    return widen(w[red.w_offset + col.offset]);
  }
  __device__ __forceinline__ void store(int32_t group, int32_t m, int32_t c, float acc) const {
    int32_t n, i[spatial];
    positions.decode(m, n, i);
    const int64_t offset = n * g.x_strides[0] + (static_cast<int64_t>(group) * g.group_channels + c) * g.x_strides[1] +
                           i[0] * g.x_strides[2] + i[1] * g.x_strides[3] + i[2] * g.x_strides[4];
    blend_store(dx + offset, acc, alpha, beta);
  }
};

template <typename T>
struct backward_filter_ops {
  using acc_type = float;
  struct row_type {
    int64_t offset;          // x at channel g * C/groups + c
    int32_t reach[spatial];  // f * dilation
  };
  struct col_type {
    int64_t offset;  // dy at filter g * K/groups + k
  };
  struct red_type {
    int64_t x_offset;         // image n in x
    int64_t dy_offset;        // (n, o) in dy
    int32_t origin[spatial];  // o * stride - pad
  };

  int32_t groups, rows, cols, depth;
  const T* x;
  const T* dy;
  T* dw;
  float alpha;
  float beta;
  conv_geometry g;
  channel_tap_decoder filter_index;  // (c, f)
  position_decoder positions;        // of y

  __device__ __forceinline__ row_type row(int32_t group, int32_t m) const {
    int32_t c, f[spatial];
    filter_index.decode(m, c, f);
    row_type r;
    r.offset = (static_cast<int64_t>(group) * g.group_channels + c) * g.x_strides[1];
#pragma unroll
    for (int s = 0; s < spatial; ++s) r.reach[s] = f[s] * g.dilation[s];
    return r;
  }
  __device__ __forceinline__ col_type col(int32_t group, int32_t k) const {
    return {(static_cast<int64_t>(group) * g.group_filters + k) * g.y_strides[1]};
  }
  __device__ __forceinline__ red_type red(int32_t, int32_t r) const {
    int32_t n, o[spatial];
    positions.decode(r, n, o);
    red_type t;
    t.x_offset = n * g.x_strides[0];
    t.dy_offset = n * g.y_strides[0] + o[0] * g.y_strides[2] + o[1] * g.y_strides[3] + o[2] * g.y_strides[4];
#pragma unroll
    for (int s = 0; s < spatial; ++s) t.origin[s] = o[s] * g.stride[s] - g.pad[s];
    return t;
  }
  __device__ __forceinline__ float load_a(const row_type& row, const red_type& red) const {
    int64_t offset = row.offset + red.x_offset;
#pragma unroll
    for (int s = 0; s < spatial; ++s) {
      const int32_t i = red.origin[s] + row.reach[s];
      if (static_cast<uint32_t>(i) >= static_cast<uint32_t>(g.in[s])) return 0.0f;
      offset += i * g.x_strides[2 + s];
    }
    return widen(x[offset]);
  }
  __device__ __forceinline__ float load_b(const red_type& red, const col_type& col) const {
    return widen(dy[col.offset + red.dy_offset]);
  }
  __device__ __forceinline__ void store(int32_t group, int32_t m, int32_t k, float acc) const {
    int32_t c, f[spatial];
    filter_index.decode(m, c, f);
    const int64_t offset =
        (static_cast<int64_t>(group) * g.group_filters + k) * g.w_strides[0] + c * g.w_strides[1] + g.filter_tap_offset(f);
    blend_store(dw + offset, acc, alpha, beta);
  }
};

// ---- host side ---------------------------------------------------------------------------------

struct backward_launch {
  gemm_plan plan;
  tile_flags flags;
  bool m_fastest;
  bool channel_fastest;
};

inline int64_t filter_step(const tsrpTensor& w) {
  return w.dims[0] > 1 ? (w.strides[0] < 0 ? -w.strides[0] : w.strides[0]) : std::numeric_limits<int64_t>::max();
}

inline backward_launch plan_backward_data(const tsrpConvolutionProblem& p) {
  const conv_geometry g = make_geometry(p);
  backward_launch l;
  const int64_t rows = static_cast<int64_t>(g.batch) * g.in[0] * g.in[1] * g.in[2];
  l.plan = plan_gemm(g.groups, rows, g.group_channels, static_cast<int64_t>(g.group_filters) * g.taps(), false);
  l.channel_fastest = channels_last(p.y);
  l.flags.a_rows_fast = !l.channel_fastest;
  l.flags.b_cols_fast = channel_step(p.w) < (l.channel_fastest ? filter_step(p.w) : spatial_step(p.w));
  l.m_fastest = !channels_last(p.x);
  return l;
}

inline backward_launch plan_backward_filter(const tsrpConvolutionProblem& p) {
  const conv_geometry g = make_geometry(p);
  backward_launch l;
  const int64_t depth = static_cast<int64_t>(g.batch) * g.out[0] * g.out[1] * g.out[2];
  l.plan = plan_gemm(g.groups, static_cast<int64_t>(g.group_channels) * g.taps(), g.group_filters, depth, true);
  l.channel_fastest = channels_last(p.x);
  l.flags.a_rows_fast = (l.channel_fastest ? channel_step(p.x) : spatial_step(p.x)) <= spatial_step(p.x);
  l.flags.b_cols_fast = channels_last(p.y);
  l.m_fastest = (l.channel_fastest ? channel_step(p.w) : spatial_step(p.w)) < filter_step(p.w);
  return l;
}

template <typename T>
backward_data_ops<T> make_backward_data_ops(const tsrpConvolutionProblem& p, const backward_launch& l, const void* w,
                                            const void* dy, void* dx, float alpha, float beta) {
  backward_data_ops<T> ops;
  ops.g = make_geometry(p);
  ops.groups = ops.g.groups;
  ops.rows = ops.g.batch * ops.g.in[0] * ops.g.in[1] * ops.g.in[2];
  ops.cols = ops.g.group_channels;
  ops.depth = ops.g.group_filters * ops.g.taps();
  ops.w = static_cast<const T*>(w);
  ops.dy = static_cast<const T*>(dy);
  ops.dx = static_cast<T*>(dx);
  ops.alpha = alpha;
  ops.beta = beta;
  ops.positions = make_position_decoder(ops.g.in);
  ops.reduction = make_channel_tap_decoder(ops.g.group_filters, ops.g, l.channel_fastest);
  for (int s = 0; s < spatial; ++s) ops.stride[s] = fast_divmod(ops.g.stride[s]);
  return ops;
}

template <typename T>
backward_filter_ops<T> make_backward_filter_ops(const tsrpConvolutionProblem& p, const backward_launch& l,
                                                const void* x, const void* dy, void* dw, float alpha, float beta) {
  backward_filter_ops<T> ops;
  ops.g = make_geometry(p);
  ops.groups = ops.g.groups;
  ops.rows = ops.g.group_channels * ops.g.taps();
  ops.cols = ops.g.group_filters;
  ops.depth = ops.g.batch * ops.g.out[0] * ops.g.out[1] * ops.g.out[2];
  ops.x = static_cast<const T*>(x);
  ops.dy = static_cast<const T*>(dy);
  ops.dw = static_cast<T*>(dw);
  ops.alpha = alpha;
  ops.beta = beta;
  ops.filter_index = make_channel_tap_decoder(ops.g.group_channels, ops.g, l.channel_fastest);
  ops.positions = make_position_decoder(ops.g.out);
  return ops;
}

}  // namespace tessera::cuda::conv_direct
