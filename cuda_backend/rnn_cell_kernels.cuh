// The elementwise half of one RNN time step, fused into one kernel per direction pair: forward
// takes the step's input projection (W x, from one GEMM over the whole sequence) and recurrent
// product (R h, from the step's GEMM), adds the biases, applies the gate math of the cell and
// writes the new state, the layer output and, for training, what backward needs; backward turns
// the incoming gradient into the pre-activation gradients (the operands of the backward GEMMs)
// and the state gradients. All arithmetic is fp32 whatever the storage type; each hidden unit is
// one thread with a fixed order of operations, so results are bitwise reproducible.
//
// Index conventions (slots, time order) are those of rnn_space_layout.hpp. The equations are
// cuDNN's (plugin_abi_rnn.h); the GRU is the linear-before-reset one.
#pragma once

#include "activation_functions.cuh"
#include "cuda_context.hpp"
#include "cuda_errors.hpp"
#include "element_types.cuh"

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::rnn {

constexpr int cell_threads = 256;

template <int Cell>
constexpr int gates_of() {
  return Cell == TSRP_RNN_LSTM ? 4 : Cell == TSRP_RNN_GRU ? 3 : 1;
}

// One step, both directions: thread i is hidden unit j of batch row n of direction d.
template <typename T>
struct forward_step {
  int32_t D, N, H;  // D*N*H < 2^31 (checked by support())
  int64_t steps, s; // sequence length T, processing step
  const float* gx;  // [D][T][N][G*H]
  int64_t gx_dir;
  const float* gh;  // [slices][D][N][G*H]; null: h_prev is zero (no hx, first step)
  int32_t gh_slices;  // k-slices of the recurrent GEMM, added in slice order (1: one product)
  int64_t gh_slice;   // elements between slices
  const T* bw;      // input biases of gate 0, direction 0 (null: none); gate g at +g*H
  const T* br;      // recurrent biases, likewise
  int64_t bias_dir; // elements between the pseudo layers of the two directions
  T* hs;            // state slots (rnn_space_layout.hpp)
  int64_t hs_dir, hs_slot;
  float* cs;        // LSTM cell state slots, fp32
  int64_t cs_dir, cs_slot;
  // Slot numbers are masked with this: -1 every time its own slot (training), 1 two slots used in
  // turn (the persistent inference forward, whose blocks read h_{t-1} while others write h_t), 0
  // one slot (the stepwise inference forward, whose slot strides are 0 anyway).
  int64_t slot_mask;
  float* saved;     // training: [D][T][N][S*H]; null for inference
  int64_t saved_dir;
  T* out;           // layer output at (t, n, d*H + j): y itself for the last layer
  int64_t out_t, out_n, out_c;
  T* hy;            // final step only (else null): row d of this layer's hy, then n, j
  int64_t hy_p, hy_n, hy_c;
  T* cy;            // LSTM, final step only
  int64_t cy_p, cy_n, cy_c;
};

// The cell of hidden unit j of batch row n of direction d at processing step s, given its
// recurrent products rh (R h_{t-1} without the recurrent bias; zeros when h_{t-1} is zero). Shared
// by the stepwise cell kernel and the persistent forward (rnn_persistent.cu), which owns each unit
// in one thread for the whole sequence. hy and cy are written only when final_step.
template <typename T, int Cell>
__device__ __forceinline__ void forward_unit(const forward_step<T>& p, int32_t d, int32_t n, int32_t j, int64_t s,
                                             float (&rh)[gates_of<Cell>()], bool final_step) {
  constexpr int G = gates_of<Cell>();
  const int64_t t = d == 0 ? s : p.steps - 1 - s;
  const int64_t H = p.H, GH = G * H;
  const int64_t row = t * p.N + n;
  const float* gx = p.gx + d * p.gx_dir + row * GH + j;
  float wx[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    wx[g] = gx[g * H];
    if (p.bw != nullptr) wx[g] += to_float(p.bw[d * p.bias_dir + g * H + j]);
    if (p.br != nullptr) rh[g] += to_float(p.br[d * p.bias_dir + g * H + j]);
  }
  const int64_t unit = int64_t{n} * H + j;
  const int64_t prev_slot = (t + d) & p.slot_mask, next_slot = (t + 1 - d) & p.slot_mask;
  float* saved = p.saved;
  if (saved != nullptr) saved += d * p.saved_dir + row * (GH + (Cell == TSRP_RNN_GRU ? H : 0)) + j;
  float h;
  if constexpr (Cell == TSRP_RNN_RELU || Cell == TSRP_RNN_TANH) {
    const float a = wx[0] + rh[0];
    h = Cell == TSRP_RNN_RELU ? (a > 0.0f ? a : 0.0f) : tanhf(a);
    if (saved != nullptr) saved[0] = h;
  } else if constexpr (Cell == TSRP_RNN_LSTM) {
    const float ig = sigmoid(wx[0] + rh[0]), fg = sigmoid(wx[1] + rh[1]);
    const float gg = tanhf(wx[2] + rh[2]), og = sigmoid(wx[3] + rh[3]);
    float* cell = p.cs + d * p.cs_dir + unit;
    const float c = fg * cell[prev_slot * p.cs_slot] + ig * gg;
    cell[next_slot * p.cs_slot] = c;
    h = og * tanhf(c);
    if (saved != nullptr) {
      saved[0] = ig;
      saved[H] = fg;
      saved[2 * H] = gg;
      saved[3 * H] = og;
    }
    if (final_step && p.cy != nullptr) p.cy[d * p.cy_p + n * p.cy_n + j * p.cy_c] = from_float<T>(c);
  } else {
    static_assert(Cell == TSRP_RNN_GRU, "unknown RNN cell");
    const float r = sigmoid(wx[0] + rh[0]), z = sigmoid(wx[1] + rh[1]);
    const float nn = tanhf(wx[2] + r * rh[2]);
    const float h_prev = to_float(p.hs[d * p.hs_dir + prev_slot * p.hs_slot + unit]);
    h = (1.0f - z) * nn + z * h_prev;
    if (saved != nullptr) {
      saved[0] = r;
      saved[H] = z;
      saved[2 * H] = nn;
      saved[3 * H] = rh[2];
    }
  }
  // The state the next GEMM reads is rounded to the storage type; y, hy and cy are rounded
  // once from the fp32 value.
  p.hs[d * p.hs_dir + next_slot * p.hs_slot + unit] = from_float<T>(h);
  p.out[t * p.out_t + n * p.out_n + (int64_t{d} * H + j) * p.out_c] = from_float<T>(h);
  if (final_step && p.hy != nullptr) p.hy[d * p.hy_p + n * p.hy_n + j * p.hy_c] = from_float<T>(h);
}

template <typename T, int Cell>
__global__ void __launch_bounds__(cell_threads) rnn_cell_forward(forward_step<T> p) {
  constexpr int G = gates_of<Cell>();
  const int32_t units = p.D * p.N * p.H;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t index = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; index < units; index += stride) {
    const int32_t i = static_cast<int32_t>(index);
    const int32_t j = i % p.H;
    const int32_t n = (i / p.H) % p.N;
    const int32_t d = i / (p.H * p.N);
    const float* gh = p.gh != nullptr ? p.gh + (int64_t{d} * p.N + n) * int64_t{G} * p.H + j : nullptr;
    float rh[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      rh[g] = gh != nullptr ? gh[g * int64_t{p.H}] : 0.0f;
      if (gh != nullptr)
        for (int32_t k = 1; k < p.gh_slices; ++k) rh[g] += gh[k * p.gh_slice + g * int64_t{p.H}];
    }
    // hy and cy are set only for the final step (the host passes null otherwise).
    forward_unit<T, Cell>(p, d, n, j, p.s, rh, true);
  }
}

// One backward step, both directions (processing step s, run from T-1 down to 0).
template <typename T>
struct backward_step {
  int32_t D, N, H;
  int64_t steps, s;  // sequence length T, processing step
  float* dh;            // [D][N][H]: in, dL/dh_t from later steps; out, the GRU's z * g_dh (the
                        // rest of dL/dh_{t-1} is added by the step's GEMM), untouched otherwise
                        // (0 when zero_dh: the step's GEMM then writes its k-slices to parts)
  const float* parts;   // null, or the previous step's GEMM in k-slices: [slices][D][N][H] fp32,
                        // added to dh in slice order
  int32_t part_slices;
  int64_t part_stride;  // elements between slices
  int32_t zero_dh;
  float* dc;            // [D][N][H] LSTM: in dL/dc_t, out dL/dc_{t-1}
  const float* dout;    // [T][N][D*H] gradient of the layer output
  const float* saved;   // [D][T][N][S*H]
  int64_t saved_dir;
  const float* cs;      // LSTM cell state slots
  int64_t cs_dir, cs_slot;
  const T* hs;          // GRU: state slots
  int64_t hs_dir, hs_slot;
  T* da;                // [D][T][N][G*H] input-side pre-activation gradients
  T* dhr;               // GRU: recurrent-side ones (the n gate differs); else equal to da
  int64_t grad_dir;
};

// The cell gradient of hidden unit j of batch row n of direction d at processing step s, given
// dh_later (dL/dh_t from the later steps and the next layer's state, without this step's output
// gradient): writes the pre-activation gradients and the LSTM's dL/dc_{t-1}, and returns what the
// cell itself adds to dL/dh_{t-1} (the GRU's z * g_dh; 0 for the others). Shared by the stepwise
// cell kernel and the persistent backward (rnn_persistent_backward.cu).
template <typename T, int Cell>
__device__ __forceinline__ float backward_unit(const backward_step<T>& p, int32_t d, int32_t n, int32_t j, int64_t s,
                                               float dh_later) {
  constexpr int G = gates_of<Cell>();
  const int64_t t = d == 0 ? s : p.steps - 1 - s;
  const int64_t H = p.H, GH = G * H;
  const int64_t row = t * p.N + n;
  const int64_t state = (int64_t{d} * p.N + n) * H + j;
  const float g_dh = dh_later + p.dout[row * p.D * H + d * H + j];
  const float* sv = p.saved + d * p.saved_dir + row * (GH + (Cell == TSRP_RNN_GRU ? H : 0)) + j;
  const int64_t o = d * p.grad_dir + row * GH + j;
  if constexpr (Cell == TSRP_RNN_RELU) {
    p.da[o] = from_float<T>(sv[0] > 0.0f ? g_dh : 0.0f);
    return 0.0f;
  } else if constexpr (Cell == TSRP_RNN_TANH) {
    p.da[o] = from_float<T>(g_dh * (1.0f - sv[0] * sv[0]));
    return 0.0f;
  } else if constexpr (Cell == TSRP_RNN_LSTM) {
    const float ig = sv[0], fg = sv[H], gg = sv[2 * H], og = sv[3 * H];
    const float* cell = p.cs + d * p.cs_dir + int64_t{n} * H + j;
    const float c_prev = cell[(t + d) * p.cs_slot], c_new = cell[(t + 1 - d) * p.cs_slot];
    const float tc = tanhf(c_new);
    const float dct = p.dc[state] + g_dh * og * (1.0f - tc * tc);
    p.da[o] = from_float<T>(dct * gg * ig * (1.0f - ig));
    p.da[o + H] = from_float<T>(dct * c_prev * fg * (1.0f - fg));
    p.da[o + 2 * H] = from_float<T>(dct * ig * (1.0f - gg * gg));
    p.da[o + 3 * H] = from_float<T>(g_dh * tc * og * (1.0f - og));
    p.dc[state] = dct * fg;
    return 0.0f;
  } else {
    static_assert(Cell == TSRP_RNN_GRU, "unknown RNN cell");
    const float r = sv[0], z = sv[H], nn = sv[2 * H], hn = sv[3 * H];
    const float h_prev = to_float(p.hs[d * p.hs_dir + (t + d) * p.hs_slot + int64_t{n} * H + j]);
    const float dan = g_dh * (1.0f - z) * (1.0f - nn * nn);
    const float dr = dan * hn * r * (1.0f - r);
    const float dz = g_dh * (h_prev - nn) * z * (1.0f - z);
    p.da[o] = p.dhr[o] = from_float<T>(dr);
    p.da[o + H] = p.dhr[o + H] = from_float<T>(dz);
    p.da[o + 2 * H] = from_float<T>(dan);
    p.dhr[o + 2 * H] = from_float<T>(dan * r);
    return g_dh * z;
  }
}

template <typename T, int Cell>
__global__ void __launch_bounds__(cell_threads) rnn_cell_backward(backward_step<T> p) {
  const int32_t units = p.D * p.N * p.H;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t index = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; index < units; index += stride) {
    const int32_t i = static_cast<int32_t>(index);
    const int32_t j = i % p.H;
    const int32_t n = (i / p.H) % p.N;
    const int32_t d = i / (p.H * p.N);
    const int64_t state = (int64_t{d} * p.N + n) * p.H + j;
    float dh_later = p.dh[state];
    if (p.parts != nullptr)
      for (int32_t b = 0; b < p.part_slices; ++b) dh_later += p.parts[b * p.part_stride + state];
    const float own = backward_unit<T, Cell>(p, d, n, j, p.s, dh_later);
    // The GRU's part of dL/dh_{t-1}, to which the step's GEMM adds; the others' GEMM overwrites dh,
    // or (zero_dh) writes k-slices that the next step adds to dh.
    if (Cell == TSRP_RNN_GRU || p.zero_dh) p.dh[state] = own;
  }
}

// The cell mode is a template parameter so each kernel body is branch-free; these pick it.
template <typename T>
void launch_cell_forward(const cuda_context& ctx, int32_t cell, const forward_step<T>& step) {
  const unsigned int blocks = ctx.grid_stride_blocks(int64_t{step.D} * step.N * step.H, cell_threads);
  switch (cell) {
    case TSRP_RNN_RELU: rnn_cell_forward<T, TSRP_RNN_RELU><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_TANH: rnn_cell_forward<T, TSRP_RNN_TANH><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_LSTM: rnn_cell_forward<T, TSRP_RNN_LSTM><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_GRU: rnn_cell_forward<T, TSRP_RNN_GRU><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    default: throw status_error(TSRP_STATUS_INTERNAL_ERROR, "unknown RNN cell mode " + std::to_string(cell));
  }
}

template <typename T>
void launch_cell_backward(const cuda_context& ctx, int32_t cell, const backward_step<T>& step) {
  const unsigned int blocks = ctx.grid_stride_blocks(int64_t{step.D} * step.N * step.H, cell_threads);
  switch (cell) {
    case TSRP_RNN_RELU: rnn_cell_backward<T, TSRP_RNN_RELU><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_TANH: rnn_cell_backward<T, TSRP_RNN_TANH><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_LSTM: rnn_cell_backward<T, TSRP_RNN_LSTM><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    case TSRP_RNN_GRU: rnn_cell_backward<T, TSRP_RNN_GRU><<<blocks, cell_threads, 0, ctx.stream()>>>(step); break;
    default: throw status_error(TSRP_STATUS_INTERNAL_ERROR, "unknown RNN cell mode " + std::to_string(cell));
  }
}

}  // namespace tessera::cuda::rnn
