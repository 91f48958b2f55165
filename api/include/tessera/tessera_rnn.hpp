// C++ wrapper of tessera_rnn.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_RNN_HPP
#define TESSERA_TESSERA_RNN_HPP

#include <tessera/tessera.hpp>

namespace tessera {

class rnn_desc : public detail::owner<tsrRnnDescriptor_t, tsrDestroyRnnDescriptor> {
 public:
  rnn_desc(tsrRnnMode_t cell_mode, tsrRnnDirectionMode_t direction, int64_t input_size,
           int64_t hidden_size, int num_layers, tsrDataType_t data_type = TSR_DATA_FLOAT,
           tsrRnnDataLayout_t data_layout = TSR_RNN_SEQ_MAJOR,
           tsrRnnBiasMode_t bias_mode = TSR_RNN_DOUBLE_BIAS,
           tsrDataType_t math_precision = TSR_DATA_FLOAT) {
    check(tsrCreateRnnDescriptor(&raw_));
    check(tsrSetRnnDescriptor(raw_, cell_mode, bias_mode, direction, data_layout, data_type,
                              math_precision, input_size, hidden_size, num_layers));
  }
};

// Where one matrix and its bias sit in the weight space (byte offsets; bias_offset is
// TSR_RNN_NO_OFFSET when the bias mode has no such bias, and `bias` is then unset).
struct rnn_weight_param {
  tensor_desc matrix;
  size_t matrix_offset = 0;
  tensor_desc bias;
  size_t bias_offset = 0;
};

inline size_t rnn_weight_space_size(const handle& h, const rnn_desc& rnn) {
  size_t b = 0;
  check(tsrGetRnnWeightSpaceSize(h, rnn, &b));
  return b;
}

inline rnn_weight_param rnn_weight_params(const handle& h, const rnn_desc& rnn, int pseudo_layer,
                                          int lin_id) {
  rnn_weight_param p;
  check(tsrGetRnnWeightParams(h, rnn, pseudo_layer, lin_id, p.matrix, &p.matrix_offset, p.bias,
                              &p.bias_offset));
  return p;
}

struct rnn_temp_space {
  size_t workspace = 0;
  size_t reserve_space = 0;
};

inline rnn_temp_space rnn_temp_space_sizes(const handle& h, const rnn_desc& rnn,
                                           tsrRnnForwardMode_t mode, const tensor_desc& x) {
  rnn_temp_space s;
  check(tsrGetRnnTempSpaceSizes(h, rnn, mode, x, &s.workspace, &s.reserve_space));
  return s;
}

// c_desc may be a null descriptor (tsrTensorDescriptor_t{}) except for LSTM.
inline void rnn_forward(const handle& h, const rnn_desc& rnn, tsrRnnForwardMode_t mode,
                        tsrAlgo_t algo, tsrTensorDescriptor_t x_desc, const void* x,
                        tsrTensorDescriptor_t h_desc, const void* hx,
                        tsrTensorDescriptor_t c_desc, const void* cx, const void* weights,
                        size_t weights_size, void* workspace, size_t workspace_size,
                        tsrTensorDescriptor_t y_desc, void* y, void* hy, void* cy, void* reserve,
                        size_t reserve_size) {
  check(tsrRnnForward(h, rnn, mode, algo, x_desc, x, h_desc, hx, c_desc, cx, weights,
                      weights_size, workspace, workspace_size, y_desc, y, hy, cy, reserve,
                      reserve_size));
}

inline void rnn_backward_data(const handle& h, const rnn_desc& rnn, tsrAlgo_t algo,
                              tsrTensorDescriptor_t y_desc, const void* y, const void* dy,
                              tsrTensorDescriptor_t h_desc, const void* hx, const void* dhy,
                              tsrTensorDescriptor_t c_desc, const void* cx, const void* dcy,
                              const void* weights, size_t weights_size, void* workspace,
                              size_t workspace_size, tsrTensorDescriptor_t x_desc, void* dx,
                              void* dhx, void* dcx, void* reserve, size_t reserve_size) {
  check(tsrRnnBackwardData(h, rnn, algo, y_desc, y, dy, h_desc, hx, dhy, c_desc, cx, dcy, weights,
                           weights_size, workspace, workspace_size, x_desc, dx, dhx, dcx, reserve,
                           reserve_size));
}

inline void rnn_backward_weights(const handle& h, const rnn_desc& rnn, tsrAlgo_t algo,
                                 tsrWgradMode_t mode, tsrTensorDescriptor_t x_desc, const void* x,
                                 tsrTensorDescriptor_t h_desc, const void* hx,
                                 tsrTensorDescriptor_t y_desc, const void* y, void* workspace,
                                 size_t workspace_size, const void* reserve, size_t reserve_size,
                                 void* dweights, size_t dweights_size) {
  check(tsrRnnBackwardWeights(h, rnn, algo, mode, x_desc, x, h_desc, hx, y_desc, y, workspace,
                              workspace_size, reserve, reserve_size, dweights, dweights_size));
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_RNN_HPP
