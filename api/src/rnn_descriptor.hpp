// What tsrRnnDescriptor_t points to, and the checks and problem building shared by the RNN entry
// points (rnn_weights_api.cpp: descriptor and weight space; rnn_api.cpp: temp sizes and calls).
#pragma once

#include "descriptors.hpp"

#include <string>

struct tsrRnnStruct {
  bool is_set = false;
  tsrpRnnShape shape{};  // cell mode, dirs, layers, bias mode, input and hidden size
  tsrRnnDataLayout_t data_layout = TSR_RNN_SEQ_MAJOR;
  tsrDataType_t data_type = TSR_DATA_FLOAT;
  tsrDataType_t math_precision = TSR_DATA_FLOAT;
};

namespace tessera::api {

// The descriptor exists and was set.
tsrStatus_t check_rnn(const char* function, tsrRnnDescriptor_t rnn);

// Weight-space bytes of a set descriptor; false when the count overflows size_t.
bool rnn_weight_space_bytes(const tsrRnnStruct& rnn, size_t* bytes);

// "lstm", "gru", ...
const char* rnn_mode_name(int32_t cell_mode);

}  // namespace tessera::api
