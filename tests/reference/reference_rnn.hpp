// The naive RNN / LSTM / GRU, forward and backward (backpropagation through time), with cuDNN's
// equations (plugin_abi_rnn.h states them): the ground truth RNN kernels are tested against.
// Plain loops over layers, directions, time, batch and units, in double, on dense seq-major
// arrays. The weight-space layout is re-derived here from its documentation, independently of
// the inline functions in plugin_abi_rnn.h, so that a test comparing the two checks both.
#ifndef TESSERA_REFERENCE_REFERENCE_RNN_HPP
#define TESSERA_REFERENCE_REFERENCE_RNN_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <vector>

namespace tessera::reference {

struct rnn_config {
  int32_t cell_mode = TSRP_RNN_LSTM;  // tsrpRnnMode_t
  int32_t dirs = 1;
  int32_t layers = 1;
  int32_t bias_mode = TSRP_RNN_DOUBLE_BIAS;
  int64_t input_size = 1;
  int64_t hidden_size = 1;
  int64_t seq_length = 1;  // T
  int64_t batch = 1;       // N
};

int64_t rnn_gates(int32_t cell_mode);
int64_t rnn_layer_input_size(const rnn_config& c, int layer);
// The documented layout: element counts and offsets (in elements); -1 for an absent bias.
int64_t rnn_weight_count(const rnn_config& c);
int64_t rnn_matrix_offset(const rnn_config& c, int pseudo_layer, int lin_id);
int64_t rnn_bias_offset(const rnn_config& c, int pseudo_layer, int lin_id);

// Dense arrays: x [T][N][input], y [T][N][dirs * H], h and c [layers * dirs][N][H], weights in
// the weight-space layout. Empty hx / cx mean zero initial states.
struct rnn_forward_result {
  std::vector<double> y, hy, cy;
};
rnn_forward_result rnn_forward(const rnn_config& c, const std::vector<double>& x,
                               const std::vector<double>& hx, const std::vector<double>& cx,
                               const std::vector<double>& weights);

// Gradients given dy (and dhy, dcy; empty means zero): dx, dhx, dcx, and dw in the weight-space
// layout (absent biases have no slot; with double bias, bW and bR get the same gradient).
struct rnn_backward_result {
  std::vector<double> dx, dhx, dcx, dw;
};
rnn_backward_result rnn_backward(const rnn_config& c, const std::vector<double>& x,
                                 const std::vector<double>& hx, const std::vector<double>& cx,
                                 const std::vector<double>& weights, const std::vector<double>& dy,
                                 const std::vector<double>& dhy, const std::vector<double>& dcy);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_RNN_HPP
