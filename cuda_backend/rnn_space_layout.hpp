// Where the CUDA RNN kernels keep their buffers: the shape facts every RNN kernel derives from a
// tsrpRnnProblem, the layout of the reserve space (private to these kernels: the training forward
// writes it, backward data reads it and adds the gate gradients, backward weights reads it), and
// the workspace of each operation. Host only; offsets are bytes from a 256-byte-aligned base.
//
// Index conventions shared with rnn_cell_kernels.cuh:
//  - s is the processing step (0..T-1); direction d runs time t = s (d = 0) or T-1-s (d = 1).
//  - Hidden states hs[d][slot][n][j] (storage type): the state before time t is slot t + d, the
//    state after it slot t + 1 - d, so slot 0 of d = 0 and slot T of d = 1 hold hx. With a slot
//    stride of N*H (training) the rows that multiply R in backward weights, h_prev(t) for
//    t = 0..T-1, are one contiguous (T*N) x H matrix starting at slot d; with a slot stride of 0
//    (stepwise inference) every step updates one [N][H] buffer in place. The persistent inference
//    forward uses two slots in turn (slot numbers masked with 1: forward_step::slot_mask). The LSTM
//    cell state cs (fp32) uses the same slots (in place for every inference).
//  - Per-time tensors (input projections, saved gates, gate gradients) are [d][t][n][...] in time
//    order, so the whole sequence of a direction is one GEMM operand.
#pragma once

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::cuda::rnn {

constexpr size_t space_alignment = 256;

inline size_t storage_size(int32_t data_type) { return data_type == TSRP_DATA_FLOAT ? 4 : 2; }

// The sizes every RNN kernel works with.
struct rnn_geometry {
  int32_t cell = 0;
  int L = 0, D = 0;
  int64_t G = 0;  // gates
  int64_t S = 0;  // fp32 values saved per hidden unit and step: the gates, and the GRU's Rn h + bRn
  int64_t H = 0, T = 0, N = 0, I0 = 0, GH = 0;
  size_t es = 0;  // bytes of the storage type
  bool lstm = false, gru = false;
  int64_t layer_input(int layer) const { return layer == 0 ? I0 : H * D; }
};

inline rnn_geometry geometry_of(const tsrpRnnProblem& p) {
  rnn_geometry g;
  g.cell = p.rnn.cell_mode;
  g.L = p.rnn.num_layers;
  g.D = p.rnn.dirs;
  g.G = tsrpRnnGateCount(p.rnn.cell_mode);
  g.lstm = p.rnn.cell_mode == TSRP_RNN_LSTM;
  g.gru = p.rnn.cell_mode == TSRP_RNN_GRU;
  g.S = g.G + (g.gru ? 1 : 0);
  g.H = p.rnn.hidden_size;
  g.T = p.seq_length;
  g.N = p.batch_size;
  g.I0 = p.rnn.input_size;
  g.GH = g.G * g.H;
  g.es = storage_size(p.data_type);
  return g;
}

// x and y strides in {T, N, C} order whatever the data layout.
struct tnc_strides {
  int64_t t = 0, n = 0, c = 0;
};

inline tnc_strides tnc_of(const tsrpTensor& t, int32_t data_layout) {
  if (data_layout == TSRP_RNN_BATCH_MAJOR) return {t.strides[1], t.strides[0], t.strides[2]};
  return {t.strides[0], t.strides[1], t.strides[2]};
}

// x read in place as the (T*N) x I matrix of the input projection (row t*N + n) needs unit channel
// stride and one row stride for all rows; row_stride is that stride, or 0 when x must be staged.
inline int64_t direct_x_row_stride(const tsrpRnnProblem& p) {
  const tnc_strides s = tnc_of(p.x, p.data_layout);
  const int64_t T = p.seq_length, N = p.batch_size, I = p.rnn.input_size;
  if (s.c != 1 && I != 1) return 0;
  int64_t row = 0;
  if (T * N == 1) {
    row = I;  // a single row: its stride is never used
  } else if (N == 1) {
    row = s.t;
  } else if (T == 1 || s.t == N * s.n) {
    row = s.n;
  }
  return row >= I ? row : 0;  // also refuses zero, negative and overlapping rows
}

// Offsets handed out in order, each aligned; the total includes the slack that aligning the base
// pointer may cost.
class space_builder {
 public:
  size_t take(size_t bytes) {
    const size_t offset = (used_ + space_alignment - 1) / space_alignment * space_alignment;
    used_ = offset + bytes;
    return offset;
  }
  size_t total() const { return used_ == 0 ? 0 : used_ + space_alignment; }

 private:
  size_t used_ = 0;
};

template <typename P>
P* aligned_base(P* pointer) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  return reinterpret_cast<P*>((address + space_alignment - 1) / space_alignment * space_alignment);
}

// ---- reserve space (training) ----

struct layer_reserve {
  size_t hs = 0;     // [D][T+1][N][H] storage type
  size_t cs = 0;     // [D][T+1][N][H] fp32 (LSTM)
  size_t saved = 0;  // [D][T][N][S*H] fp32 activated gates (+ GRU Rn h + bRn)
  size_t out = 0;    // [T][N][D*H] storage type: this layer's output, the next one's input
  size_t da = 0;     // [D][T][N][G*H] storage type: gradients of the input-side pre-activations
  size_t dhr = 0;    // same, of the recurrent side (GRU only; for the others it is da)
};

struct reserve_layout {
  std::vector<layer_reserve> layers;
  size_t bytes = 0;
};

inline reserve_layout reserve_layout_of(const rnn_geometry& g) {
  reserve_layout r;
  space_builder b;
  const size_t units = static_cast<size_t>(g.D * g.N * g.H);
  const size_t slots = static_cast<size_t>(g.T + 1), steps = static_cast<size_t>(g.T);
  for (int l = 0; l < g.L; ++l) {
    layer_reserve lr;
    lr.hs = b.take(units * slots * g.es);
    if (g.lstm) lr.cs = b.take(units * slots * 4);
    lr.saved = b.take(units * steps * static_cast<size_t>(g.S) * 4);
    if (l + 1 < g.L) lr.out = b.take(units * steps * g.es);
    lr.da = b.take(units * steps * static_cast<size_t>(g.G) * g.es);
    lr.dhr = g.gru ? b.take(units * steps * static_cast<size_t>(g.G) * g.es) : lr.da;
    r.layers.push_back(lr);
  }
  r.bytes = b.total();
  return r;
}

// ---- workspaces ----

constexpr size_t no_region = static_cast<size_t>(-1);

struct forward_workspace {
  size_t gx = 0;                 // [D][T][N][G*H] fp32 input projections of one layer
  size_t gh = 0;                 // [slices][D][N][G*H] fp32 recurrent products of one step
  size_t x_stage = no_region;    // [T][N][I0] storage type, when x cannot be read in place
  size_t hs = 0, cs = 0;         // inference: [D][state_slots][N][H] states, [D][N][H] cell states
  size_t out[2] = {0, 0};        // inference: ping-pong layer outputs [T][N][D*H]
  size_t bytes = 0;
};

// The two step GEMMs of an RNN (the forward's R h, backward data's dgates R) may run their k in
// slices: each slice's product lands in its own block of the workspace and the next kernel adds the
// slices in slice order, so the result is deterministic for a given split. Slices take the GEMM's
// batch dim, which two directions already use: one direction only.

// `wanted` slices of a step GEMM's reduction of length k: 1, or `wanted` when it divides k and
// there is one direction.
inline int64_t step_gemm_slices(const rnn_geometry& g, int64_t k, int64_t wanted) {
  if (wanted <= 1 || g.D != 1 || k % wanted != 0) return 1;
  return wanted;
}

// The default split of a step GEMM of N x `columns` outputs over a reduction of length k: the most
// power-of-two slices that keep its 64x64 output tiles times the slices within two per SM, each
// slice at least 256 long; 1 wherever the GEMM already fills the GPU or k is short.
inline int64_t default_step_gemm_slices(const rnn_geometry& g, int64_t columns, int64_t k, int sms) {
  if (g.D != 1) return 1;
  const int64_t tiles = ((g.N + 63) / 64) * ((columns + 63) / 64);
  int64_t slices = 1;
  while (tiles * slices * 2 <= int64_t{2} * sms && k % (slices * 2) == 0 && k / (slices * 2) >= 256) slices *= 2;
  return slices;
}

// k-slices of the forward's recurrent GEMM (R h over H; its products land in gh's [N][G*H] blocks).
inline int64_t recurrent_slices(const rnn_geometry& g, int64_t wanted) { return step_gemm_slices(g, g.H, wanted); }

// The forward's default split. Why: one step's GEMM at N = 64, H = 1024 is only 64 tiles walking
// all of H; on the H200 (2026-12-05, the anchor LSTM, 2 layers, H 1024, T 128, N 64, fp16) 1 slice
// took 7.24 ms, 2 5.98, 4 5.60, 8 7.50: the rule picks 4.
inline int64_t default_recurrent_slices(const rnn_geometry& g, int sms) {
  return default_step_gemm_slices(g, g.GH, g.H, sms);
}

// `slices`: recurrent_slices() of the run (gh holds one [D][N][G*H] block per slice).
// `state_slots`: inference hidden-state slots per direction, 1 for the stepwise kernels (updated in
// place), 2 for the persistent forward (used in turn, rnn_persistent.cu).
inline forward_workspace forward_workspace_of(const tsrpRnnProblem& p, const rnn_geometry& g,
                                              bool training, int64_t slices = 1, int64_t state_slots = 1) {
  forward_workspace w;
  space_builder b;
  const size_t dn = static_cast<size_t>(g.D * g.N), tn = static_cast<size_t>(g.T * g.N);
  w.gx = b.take(dn * static_cast<size_t>(g.T * g.GH) * 4);
  w.gh = b.take(static_cast<size_t>(slices) * dn * static_cast<size_t>(g.GH) * 4);
  if (direct_x_row_stride(p) == 0) w.x_stage = b.take(tn * static_cast<size_t>(g.I0) * g.es);
  if (!training) {
    w.hs = b.take(static_cast<size_t>(state_slots) * dn * static_cast<size_t>(g.H) * g.es);
    if (g.lstm) w.cs = b.take(dn * static_cast<size_t>(g.H) * 4);
    for (int i = 0; i < 2 && i + 1 < g.L; ++i)
      w.out[i] = b.take(tn * static_cast<size_t>(g.D * g.H) * g.es);
  }
  w.bytes = b.total();
  return w;
}

struct backward_data_workspace {
  size_t grad[2] = {0, 0};  // ping-pong [T][N][max(I0, D*H)] fp32 layer output/input gradients
  size_t dh = 0, dc = 0;    // [D][N][H] fp32 running state gradients
  size_t parts = no_region; // [slices][D][N][H] fp32: the step GEMM's k-slices, when split
  size_t bytes = 0;
};

// k-slices of backward data's step GEMM (dgates x R: N x H outputs, k over G*H).
inline int64_t backward_slices(const rnn_geometry& g, int64_t wanted) { return step_gemm_slices(g, g.GH, wanted); }

// Backward data's default split. On the H200 (2026-12-05, 2-layer fp16 LSTM / GRU, H 1024, T 128,
// N 64, training backward) 1 slice took 22.1 / 19.5 ms, 4 13.6 / 12.1, 8 12.0 / 11.0, 16 11.9 /
// 11.0: the rule picks 16 there.
inline int64_t default_backward_slices(const rnn_geometry& g, int sms) {
  return default_step_gemm_slices(g, g.H, g.GH, sms);
}

// `slices`: backward_slices() of the run.
inline backward_data_workspace backward_data_workspace_of(const rnn_geometry& g, int64_t slices = 1) {
  backward_data_workspace w;
  space_builder b;
  const int64_t widest = g.I0 > g.D * g.H ? g.I0 : g.D * g.H;
  const size_t grad = static_cast<size_t>(g.T * g.N * widest) * 4;
  w.grad[0] = b.take(grad);
  w.grad[1] = b.take(grad);
  w.dh = b.take(static_cast<size_t>(g.D * g.N * g.H) * 4);
  w.dc = b.take(static_cast<size_t>(g.D * g.N * g.H) * 4);
  if (slices > 1) w.parts = b.take(static_cast<size_t>(slices * g.D * g.N * g.H) * 4);
  w.bytes = b.total();
  return w;
}

struct backward_weights_workspace {
  size_t x_stage = no_region;
  size_t bytes = 0;
};

inline backward_weights_workspace backward_weights_workspace_of(const tsrpRnnProblem& p,
                                                                const rnn_geometry& g) {
  backward_weights_workspace w;
  space_builder b;
  if (direct_x_row_stride(p) == 0) w.x_stage = b.take(static_cast<size_t>(g.T * g.N * g.I0) * g.es);
  w.bytes = b.total();
  return w;
}

}  // namespace tessera::cuda::rnn
