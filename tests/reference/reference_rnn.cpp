#include "reference_rnn.hpp"

#include <cmath>

namespace tessera::reference {
namespace {

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

bool has_input_bias(int32_t m) { return m == TSRP_RNN_SINGLE_INP_BIAS || m == TSRP_RNN_DOUBLE_BIAS; }
bool has_rec_bias(int32_t m) { return m == TSRP_RNN_SINGLE_REC_BIAS || m == TSRP_RNN_DOUBLE_BIAS; }

int64_t block_size(const rnn_config& c, int pseudo_layer) {
  const int64_t g = rnn_gates(c.cell_mode), h = c.hidden_size;
  const int64_t in = rnn_layer_input_size(c, pseudo_layer / c.dirs);
  const int64_t nb = (has_input_bias(c.bias_mode) ? 1 : 0) + (has_rec_bias(c.bias_mode) ? 1 : 0);
  return g * h * in + g * h * h + nb * g * h;
}

int64_t block_offset(const rnn_config& c, int pseudo_layer) {
  int64_t o = 0;
  for (int p = 0; p < pseudo_layer; ++p) o += block_size(c, p);
  return o;
}

// What one step of one direction keeps for backpropagation.
struct step_record {
  std::vector<double> x, h_prev, c_prev;  // inputs of the step, [N][I], [N][H]
  std::vector<double> gates;              // activated gates [N][G][H]
  std::vector<double> c_new;              // LSTM [N][H]
  std::vector<double> hn;                 // GRU: Rn h + bRn [N][H]
  std::vector<double> h_new;              // [N][H]
};

struct weights_view {
  const rnn_config& c;
  const std::vector<double>& w;
  int p;
  int64_t in;
  double W(int64_t g, int64_t j, int64_t i) const { return w[rnn_matrix_offset(c, p, int(g)) + j * in + i]; }
  double R(int64_t g, int64_t j, int64_t k) const {
    return w[rnn_matrix_offset(c, p, int(rnn_gates(c.cell_mode) + g)) + j * c.hidden_size + k];
  }
  double bW(int64_t g, int64_t j) const {
    const int64_t o = rnn_bias_offset(c, p, int(g));
    return o < 0 ? 0.0 : w[o + j];
  }
  double bR(int64_t g, int64_t j) const {
    const int64_t o = rnn_bias_offset(c, p, int(rnn_gates(c.cell_mode) + g));
    return o < 0 ? 0.0 : w[o + j];
  }
};

// One direction of one layer over the sequence `in` [T][N][I]; writes its half of `out`
// [T][N][D*H] and returns the per-step records in processing order.
std::vector<step_record> run_direction(const rnn_config& c, int layer, int dir,
                                       const std::vector<double>& in, const std::vector<double>& w,
                                       const std::vector<double>& hx, const std::vector<double>& cx,
                                       std::vector<double>& out, std::vector<double>& hy,
                                       std::vector<double>& cy) {
  const int64_t T = c.seq_length, N = c.batch, H = c.hidden_size, D = c.dirs;
  const int64_t I = rnn_layer_input_size(c, layer), G = rnn_gates(c.cell_mode);
  const int p = layer * c.dirs + dir;
  const weights_view wv{c, w, p, I};
  std::vector<double> h(N * H, 0.0), cell(N * H, 0.0);
  if (!hx.empty())
    for (int64_t i = 0; i < N * H; ++i) h[i] = hx[p * N * H + i];
  if (!cx.empty())
    for (int64_t i = 0; i < N * H; ++i) cell[i] = cx[p * N * H + i];
  std::vector<step_record> steps;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = dir == 0 ? s : T - 1 - s;
    step_record r;
    r.x.assign(in.begin() + t * N * I, in.begin() + (t + 1) * N * I);
    r.h_prev = h;
    r.c_prev = cell;
    r.gates.assign(N * G * H, 0.0);
    r.c_new.assign(N * H, 0.0);
    r.hn.assign(N * H, 0.0);
    r.h_new.assign(N * H, 0.0);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t j = 0; j < H; ++j) {
        std::vector<double> wx(G), rh(G);
        for (int64_t g = 0; g < G; ++g) {
          double a = wv.bW(g, j), b = wv.bR(g, j);
          for (int64_t i = 0; i < I; ++i) a += wv.W(g, j, i) * r.x[n * I + i];
          for (int64_t k = 0; k < H; ++k) b += wv.R(g, j, k) * r.h_prev[n * H + k];
          wx[g] = a;
          rh[g] = b;
        }
        double* gate = &r.gates[(n * G) * H];
        const double hp = r.h_prev[n * H + j];
        double hnew = 0.0;
        switch (c.cell_mode) {
          case TSRP_RNN_RELU: hnew = gate[j] = std::max(0.0, wx[0] + rh[0]); break;
          case TSRP_RNN_TANH: hnew = gate[j] = std::tanh(wx[0] + rh[0]); break;
          case TSRP_RNN_LSTM: {
            const double ig = sigmoid(wx[0] + rh[0]), fg = sigmoid(wx[1] + rh[1]);
            const double gg = std::tanh(wx[2] + rh[2]), og = sigmoid(wx[3] + rh[3]);
            gate[0 * H + j] = ig;
            gate[1 * H + j] = fg;
            gate[2 * H + j] = gg;
            gate[3 * H + j] = og;
            const double cn = fg * r.c_prev[n * H + j] + ig * gg;
            r.c_new[n * H + j] = cn;
            hnew = og * std::tanh(cn);
            break;
          }
          default: {  // GRU
            const double rg = sigmoid(wx[0] + rh[0]), zg = sigmoid(wx[1] + rh[1]);
            const double ng = std::tanh(wx[2] + rg * rh[2]);
            gate[0 * H + j] = rg;
            gate[1 * H + j] = zg;
            gate[2 * H + j] = ng;
            r.hn[n * H + j] = rh[2];
            hnew = (1.0 - zg) * ng + zg * hp;
            break;
          }
        }
        r.h_new[n * H + j] = hnew;
      }
    }
    h = r.h_new;
    if (c.cell_mode == TSRP_RNN_LSTM) cell = r.c_new;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) out[(t * N + n) * D * H + dir * H + j] = h[n * H + j];
    steps.push_back(std::move(r));
  }
  for (int64_t i = 0; i < N * H; ++i) {
    hy[p * N * H + i] = h[i];
    cy[p * N * H + i] = cell[i];
  }
  return steps;
}

struct forward_trace {
  std::vector<std::vector<double>> layer_in;                  // [L + 1]
  std::vector<std::vector<std::vector<step_record>>> steps;   // [L][D]
  rnn_forward_result result;
};

forward_trace trace_forward(const rnn_config& c, const std::vector<double>& x,
                            const std::vector<double>& hx, const std::vector<double>& cx,
                            const std::vector<double>& w) {
  forward_trace tr;
  const int64_t T = c.seq_length, N = c.batch, H = c.hidden_size, D = c.dirs;
  tr.layer_in.push_back(x);
  tr.result.hy.assign(c.layers * D * N * H, 0.0);
  tr.result.cy.assign(c.layers * D * N * H, 0.0);
  tr.steps.resize(c.layers);
  for (int l = 0; l < c.layers; ++l) {
    std::vector<double> out(T * N * D * H, 0.0);
    for (int d = 0; d < D; ++d)
      tr.steps[l].push_back(run_direction(c, l, d, tr.layer_in[l], w, hx, cx, out, tr.result.hy,
                                          tr.result.cy));
    tr.layer_in.push_back(out);
  }
  tr.result.y = tr.layer_in.back();
  return tr;
}

}  // namespace

int64_t rnn_gates(int32_t cell_mode) {
  return cell_mode == TSRP_RNN_LSTM ? 4 : cell_mode == TSRP_RNN_GRU ? 3 : 1;
}

int64_t rnn_layer_input_size(const rnn_config& c, int layer) {
  return layer == 0 ? c.input_size : c.hidden_size * c.dirs;
}

int64_t rnn_weight_count(const rnn_config& c) { return block_offset(c, c.layers * c.dirs); }

int64_t rnn_matrix_offset(const rnn_config& c, int p, int lin_id) {
  const int64_t g = rnn_gates(c.cell_mode), h = c.hidden_size;
  const int64_t in = rnn_layer_input_size(c, p / c.dirs);
  if (lin_id < g) return block_offset(c, p) + lin_id * h * in;
  return block_offset(c, p) + g * h * in + (lin_id - g) * h * h;
}

int64_t rnn_bias_offset(const rnn_config& c, int p, int lin_id) {
  const int64_t g = rnn_gates(c.cell_mode), h = c.hidden_size;
  const int64_t in = rnn_layer_input_size(c, p / c.dirs);
  const int64_t start = block_offset(c, p) + g * h * in + g * h * h;
  if (lin_id < g) return has_input_bias(c.bias_mode) ? start + lin_id * h : -1;
  if (!has_rec_bias(c.bias_mode)) return -1;
  return start + (has_input_bias(c.bias_mode) ? g * h : 0) + (lin_id - g) * h;
}

rnn_forward_result rnn_forward(const rnn_config& c, const std::vector<double>& x,
                               const std::vector<double>& hx, const std::vector<double>& cx,
                               const std::vector<double>& w) {
  return trace_forward(c, x, hx, cx, w).result;
}

rnn_backward_result rnn_backward(const rnn_config& c, const std::vector<double>& x,
                                 const std::vector<double>& hx, const std::vector<double>& cx,
                                 const std::vector<double>& w, const std::vector<double>& dy,
                                 const std::vector<double>& dhy, const std::vector<double>& dcy) {
  const forward_trace tr = trace_forward(c, x, hx, cx, w);
  const int64_t T = c.seq_length, N = c.batch, H = c.hidden_size, D = c.dirs;
  const int64_t G = rnn_gates(c.cell_mode);
  rnn_backward_result out;
  out.dw.assign(rnn_weight_count(c), 0.0);
  out.dhx.assign(c.layers * D * N * H, 0.0);
  out.dcx.assign(c.layers * D * N * H, 0.0);
  std::vector<double> dout = dy;  // gradient of the current layer's output
  for (int l = c.layers - 1; l >= 0; --l) {
    const int64_t I = rnn_layer_input_size(c, l);
    std::vector<double> din(T * N * I, 0.0);
    for (int d = 0; d < D; ++d) {
      const int p = l * c.dirs + d;
      const weights_view wv{c, w, p, I};
      auto dW = [&](int64_t g, int64_t j, int64_t i) -> double& {
        return out.dw[rnn_matrix_offset(c, p, int(g)) + j * I + i];
      };
      auto dR = [&](int64_t g, int64_t j, int64_t k) -> double& {
        return out.dw[rnn_matrix_offset(c, p, int(G + g)) + j * H + k];
      };
      auto add_bias = [&](int64_t lin, int64_t j, double v) {
        const int64_t o = rnn_bias_offset(c, p, int(lin));
        if (o >= 0) out.dw[o + j] += v;
      };
      std::vector<double> dh(N * H, 0.0), dc(N * H, 0.0);
      if (!dhy.empty())
        for (int64_t i = 0; i < N * H; ++i) dh[i] = dhy[p * N * H + i];
      if (!dcy.empty() && c.cell_mode == TSRP_RNN_LSTM)
        for (int64_t i = 0; i < N * H; ++i) dc[i] = dcy[p * N * H + i];
      const std::vector<step_record>& steps = tr.steps[l][d];
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        const step_record& r = steps[s];
        std::vector<double> dh_prev(N * H, 0.0), dc_prev(N * H, 0.0);
        // da: gradient of each gate's input pre-activation (W x + bW side); dhr: of R h + bR side.
        std::vector<double> da(N * G * H, 0.0), dhr(N * G * H, 0.0);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t j = 0; j < H; ++j) {
            const double g_dh = dh[n * H + j] + dout[(t * N + n) * D * H + d * H + j];
            const double* gate = &r.gates[n * G * H];
            double* a = &da[n * G * H];
            double* b = &dhr[n * G * H];
            switch (c.cell_mode) {
              case TSRP_RNN_RELU: a[j] = b[j] = gate[j] > 0.0 ? g_dh : 0.0; break;
              case TSRP_RNN_TANH: a[j] = b[j] = g_dh * (1.0 - gate[j] * gate[j]); break;
              case TSRP_RNN_LSTM: {
                const double ig = gate[j], fg = gate[H + j], gg = gate[2 * H + j], og = gate[3 * H + j];
                const double tc = std::tanh(r.c_new[n * H + j]);
                const double dct = dc[n * H + j] + g_dh * og * (1.0 - tc * tc);
                a[j] = dct * gg * ig * (1.0 - ig);
                a[H + j] = dct * r.c_prev[n * H + j] * fg * (1.0 - fg);
                a[2 * H + j] = dct * ig * (1.0 - gg * gg);
                a[3 * H + j] = g_dh * tc * og * (1.0 - og);
                for (int64_t g = 0; g < 4; ++g) b[g * H + j] = a[g * H + j];
                dc_prev[n * H + j] = dct * fg;
                break;
              }
              default: {  // GRU
                const double rg = gate[j], zg = gate[H + j], ng = gate[2 * H + j];
                const double hp = r.h_prev[n * H + j];
                const double dan = g_dh * (1.0 - zg) * (1.0 - ng * ng);
                const double dz = g_dh * (hp - ng);
                const double dr = dan * r.hn[n * H + j];
                a[j] = b[j] = dr * rg * (1.0 - rg);
                a[H + j] = b[H + j] = dz * zg * (1.0 - zg);
                a[2 * H + j] = dan;
                b[2 * H + j] = dan * rg;
                dh_prev[n * H + j] += g_dh * zg;
                break;
              }
            }
          }
        for (int64_t n = 0; n < N; ++n)
          for (int64_t g = 0; g < G; ++g)
            for (int64_t j = 0; j < H; ++j) {
              const double a = da[(n * G + g) * H + j], b = dhr[(n * G + g) * H + j];
              for (int64_t i = 0; i < I; ++i) {
                dW(g, j, i) += a * r.x[n * I + i];
                din[(t * N + n) * I + i] += wv.W(g, j, i) * a;
              }
              for (int64_t k = 0; k < H; ++k) {
                dR(g, j, k) += b * r.h_prev[n * H + k];
                dh_prev[n * H + k] += wv.R(g, j, k) * b;
              }
              add_bias(g, j, a);
              add_bias(G + g, j, b);
            }
        dh = dh_prev;
        dc = dc_prev;
      }
      for (int64_t i = 0; i < N * H; ++i) {
        out.dhx[p * N * H + i] = dh[i];
        out.dcx[p * N * H + i] = dc[i];
      }
    }
    dout = din;
  }
  out.dx = dout;
  return out;
}

}  // namespace tessera::reference
