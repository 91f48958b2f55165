// RNN descriptor and weight space: tsr{Create,Destroy,Set,Get}RnnDescriptor,
// tsrGetRnnWeightSpaceSize, tsrGetRnnWeightParams. The layout itself is defined once, by the
// inline functions of plugin_abi_rnn.h, so the host and every plugin agree on it.
#include "error_state.hpp"
#include "handle.hpp"
#include "rnn_descriptor.hpp"
#include "validation.hpp"

#include <tessera_common/shape_inference.hpp>

#include <limits>

using namespace tessera::api;

namespace tessera::api {

tsrStatus_t check_rnn(const char* fn, tsrRnnDescriptor_t rnn) {
  if (!rnn) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": rnn is NULL");
  if (!rnn->is_set)
    return fail(TSR_STATUS_BAD_PARAM_NOT_INITIALIZED,
                std::string(fn) + ": rnn was created but never set (call tsrSetRnnDescriptor)");
  return TSR_STATUS_SUCCESS;
}

bool rnn_weight_space_bytes(const tsrRnnStruct& rnn, size_t* bytes) {
  const int64_t elements = tsrpRnnWeightSpaceElements(&rnn.shape);
  const size_t size = tessera::common::data_type_size(rnn.data_type);
  if (elements < 0 || static_cast<uint64_t>(elements) > std::numeric_limits<size_t>::max() / size)
    return false;
  *bytes = static_cast<size_t>(elements) * size;
  return true;
}

const char* rnn_mode_name(int32_t cell_mode) {
  switch (cell_mode) {
    case TSR_RNN_RELU: return "rnn_relu";
    case TSR_RNN_TANH: return "rnn_tanh";
    case TSR_LSTM: return "lstm";
    case TSR_GRU: return "gru";
    default: return "unknown";
  }
}

}  // namespace tessera::api

extern "C" {

TSR_API tsrStatus_t tsrCreateRnnDescriptor(tsrRnnDescriptor_t* desc) {
  return guarded("tsrCreateRnnDescriptor", [&] {
    if (tsrStatus_t s = check_not_null("tsrCreateRnnDescriptor", "desc", desc)) return s;
    *desc = new tsrRnnStruct();
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrDestroyRnnDescriptor(tsrRnnDescriptor_t desc) {
  delete desc;
  return TSR_STATUS_SUCCESS;
}

TSR_API tsrStatus_t tsrSetRnnDescriptor(tsrRnnDescriptor_t desc, tsrRnnMode_t cell_mode,
                                        tsrRnnBiasMode_t bias_mode,
                                        tsrRnnDirectionMode_t direction,
                                        tsrRnnDataLayout_t data_layout, tsrDataType_t data_type,
                                        tsrDataType_t math_precision, int64_t input_size,
                                        int64_t hidden_size, int num_layers) {
  const char* fn = "tsrSetRnnDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "desc", desc)) return s;
    auto out_of_range = [&](const std::string& what) {
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": " + what);
    };
    if (cell_mode < TSR_RNN_RELU || cell_mode > TSR_GRU)
      return out_of_range("cell_mode " + std::to_string(cell_mode) + " is not a tsrRnnMode_t");
    if (bias_mode < TSR_RNN_NO_BIAS || bias_mode > TSR_RNN_SINGLE_REC_BIAS)
      return out_of_range("bias_mode " + std::to_string(bias_mode) + " is not a tsrRnnBiasMode_t");
    if (direction != TSR_RNN_UNIDIRECTIONAL && direction != TSR_RNN_BIDIRECTIONAL)
      return out_of_range("direction " + std::to_string(direction) +
                          " is not a tsrRnnDirectionMode_t");
    if (data_layout != TSR_RNN_SEQ_MAJOR && data_layout != TSR_RNN_BATCH_MAJOR)
      return out_of_range("data_layout " + std::to_string(data_layout) +
                          " is not a tsrRnnDataLayout_t");
    if (data_type != TSR_DATA_FLOAT && data_type != TSR_DATA_HALF && data_type != TSR_DATA_BFLOAT16)
      return out_of_range(std::string("data_type is ") + data_type_name(data_type) +
                          ", expected f32, f16 or bf16");
    if (math_precision != TSR_DATA_FLOAT && math_precision != data_type)
      return out_of_range(std::string("math_precision is ") + data_type_name(math_precision) +
                          ", expected f32 or the data type (" + data_type_name(data_type) + ")");
    if (input_size < 1)
      return out_of_range("input_size is " + std::to_string(input_size) + ", expected 1 or more");
    if (hidden_size < 1)
      return out_of_range("hidden_size is " + std::to_string(hidden_size) + ", expected 1 or more");
    if (num_layers < 1)
      return out_of_range("num_layers is " + std::to_string(num_layers) + ", expected 1 or more");
    // The weight count is a sum of products of these; keep each product far from overflow.
    const int64_t limit = int64_t{1} << 24;
    if (input_size > limit || hidden_size > limit || num_layers > 4096)
      return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                  std::string(fn) + ": input_size " + std::to_string(input_size) +
                      ", hidden_size " + std::to_string(hidden_size) + " or num_layers " +
                      std::to_string(num_layers) + " is too large (limits 2^24, 2^24, 4096)");
    tsrRnnStruct r;
    r.shape.cell_mode = cell_mode;
    r.shape.dirs = direction == TSR_RNN_BIDIRECTIONAL ? 2 : 1;
    r.shape.num_layers = num_layers;
    r.shape.bias_mode = bias_mode;
    r.shape.input_size = input_size;
    r.shape.hidden_size = hidden_size;
    r.data_layout = data_layout;
    r.data_type = data_type;
    r.math_precision = math_precision;
    r.is_set = true;
    size_t bytes = 0;
    if (!rnn_weight_space_bytes(r, &bytes))
      return fail(TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW,
                  std::string(fn) + ": the weight space size overflows");
    *desc = r;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetRnnDescriptor(tsrRnnDescriptor_t desc, tsrRnnMode_t* cell_mode,
                                        tsrRnnBiasMode_t* bias_mode,
                                        tsrRnnDirectionMode_t* direction,
                                        tsrRnnDataLayout_t* data_layout, tsrDataType_t* data_type,
                                        tsrDataType_t* math_precision, int64_t* input_size,
                                        int64_t* hidden_size, int* num_layers) {
  const char* fn = "tsrGetRnnDescriptor";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_rnn(fn, desc)) return s;
    if (cell_mode) *cell_mode = static_cast<tsrRnnMode_t>(desc->shape.cell_mode);
    if (bias_mode) *bias_mode = static_cast<tsrRnnBiasMode_t>(desc->shape.bias_mode);
    if (direction)
      *direction = desc->shape.dirs == 2 ? TSR_RNN_BIDIRECTIONAL : TSR_RNN_UNIDIRECTIONAL;
    if (data_layout) *data_layout = desc->data_layout;
    if (data_type) *data_type = desc->data_type;
    if (math_precision) *math_precision = desc->math_precision;
    if (input_size) *input_size = desc->shape.input_size;
    if (hidden_size) *hidden_size = desc->shape.hidden_size;
    if (num_layers) *num_layers = desc->shape.num_layers;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetRnnWeightSpaceSize(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                             size_t* bytes) {
  const char* fn = "tsrGetRnnWeightSpaceSize";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    if (tsrStatus_t s = check_not_null(fn, "bytes", bytes)) return s;
    size_t b = 0;
    rnn_weight_space_bytes(*rnn, &b);  // checked when the descriptor was set
    *bytes = b;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetRnnWeightParams(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                          int pseudo_layer, int lin_id,
                                          tsrTensorDescriptor_t m_desc, size_t* m_offset,
                                          tsrTensorDescriptor_t b_desc, size_t* b_offset) {
  const char* fn = "tsrGetRnnWeightParams";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    const tsrpRnnShape& shape = rnn->shape;
    const int pseudo_layers = shape.num_layers * shape.dirs;
    const int gates = tsrpRnnGateCount(shape.cell_mode);
    if (pseudo_layer < 0 || pseudo_layer >= pseudo_layers)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": pseudo_layer is " + std::to_string(pseudo_layer) +
                      ", expected 0 to " + std::to_string(pseudo_layers - 1) +
                      " (layer * dirs + dir)");
    if (lin_id < 0 || lin_id >= 2 * gates)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": lin_id is " + std::to_string(lin_id) + ", expected 0 to " +
                      std::to_string(2 * gates - 1) + " for " + rnn_mode_name(shape.cell_mode) +
                      " (0.." + std::to_string(gates - 1) + " input, " + std::to_string(gates) +
                      ".." + std::to_string(2 * gates - 1) + " recurrent)");
    const size_t element = tessera::common::data_type_size(rnn->data_type);
    const int64_t rows = shape.hidden_size;
    const int64_t cols = lin_id < gates ? tsrpRnnLayerInputSize(&shape, pseudo_layer / shape.dirs)
                                        : shape.hidden_size;
    const int64_t bias = tsrpRnnBiasOffset(&shape, pseudo_layer, lin_id);
    // All outputs are computed before any is written: a failure leaves them untouched.
    if (m_desc) {
      const int64_t dims[2] = {rows, cols}, strides[2] = {cols, 1};
      if (tsrStatus_t s = tsrSetTensorNdDescriptor(m_desc, rnn->data_type, 2, dims, strides)) return s;
    }
    if (b_desc && bias >= 0) {
      const int64_t dims[1] = {rows}, strides[1] = {1};
      if (tsrStatus_t s = tsrSetTensorNdDescriptor(b_desc, rnn->data_type, 1, dims, strides)) return s;
    }
    if (m_offset)
      *m_offset = static_cast<size_t>(tsrpRnnMatrixOffset(&shape, pseudo_layer, lin_id)) * element;
    if (b_offset) *b_offset = bias >= 0 ? static_cast<size_t>(bias) * element : TSR_RNN_NO_OFFSET;
    return TSR_STATUS_SUCCESS;
  });
}

}  // extern "C"
