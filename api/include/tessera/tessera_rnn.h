/* Tessera C API: RNN, LSTM, GRU. Included by tessera.h; include that.
 *
 * cuDNN's RNN API v8 is the model (cudnnRNNForward, cudnnRNNBackwardData_v8,
 * cudnnRNNBackwardWeights_v8, cudnnGetRNNWeightSpaceSize, cudnnGetRNNWeightParams,
 * cudnnGetRNNTempSpaceSizes), with these differences:
 *  - every sequence of a batch has the same length T (no per-sequence lengths yet);
 *  - x and y are plain 3-D tensor descriptors whose dim order is the RNN descriptor's data
 *    layout: seq-major {T, N, C} or batch-major {N, T, C}; strides are free;
 *  - the weight space has Tessera's documented packed layout (plugin_abi_rnn.h says it in full):
 *    per pseudo layer (layer * dirs + dir), the input matrices of every gate, then the recurrent
 *    ones, then the input biases, then the recurrent biases, gates in cuDNN's order (LSTM i, f,
 *    g, o; GRU r, z, n). tsrGetRnnWeightParams says where each one sits, as a byte offset.
 *  - no projection (LSTM's proj_size), no clipping, no dropout between layers.
 * The equations are cuDNN's (GRU with the reset gate applied after the recurrent product, which
 * is cuDNN's GRU and oneDNN's "linear before reset" GRU).
 */
#ifndef TESSERA_TESSERA_RNN_H
#define TESSERA_TESSERA_RNN_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TSR_RNN_RELU = 0, /* h' = relu(W x + bW + R h + bR) */
  TSR_RNN_TANH = 1, /* h' = tanh(W x + bW + R h + bR) */
  TSR_LSTM = 2,     /* gates i, f, g, o */
  TSR_GRU = 3, /* gates r, z, n */
  TSR_ENUM_RANGE(TSR_RNN_MODE)
} tsrRnnMode_t;

typedef enum {
  TSR_RNN_UNIDIRECTIONAL = 0,
  TSR_RNN_BIDIRECTIONAL = 1,
  TSR_ENUM_RANGE(TSR_RNN_DIRECTION_MODE)
} tsrRnnDirectionMode_t;

typedef enum {
  TSR_RNN_NO_BIAS = 0,
  TSR_RNN_SINGLE_INP_BIAS = 1,
  TSR_RNN_DOUBLE_BIAS = 2, /* cuDNN's default: bW and bR per gate */
  TSR_RNN_SINGLE_REC_BIAS = 3,
  TSR_ENUM_RANGE(TSR_RNN_BIAS_MODE)
} tsrRnnBiasMode_t;

typedef enum {
  TSR_RNN_SEQ_MAJOR = 0,  /* x, y dims {T, N, C} */
  TSR_RNN_BATCH_MAJOR = 1, /* x, y dims {N, T, C} */
  TSR_ENUM_RANGE(TSR_RNN_DATA_LAYOUT)
} tsrRnnDataLayout_t;

typedef enum {
  TSR_RNN_FWD_INFERENCE = 0,
  TSR_RNN_FWD_TRAINING = 1,
  TSR_ENUM_RANGE(TSR_RNN_FORWARD_MODE)
} tsrRnnForwardMode_t;

typedef enum {
  TSR_WGRAD_MODE_ADD = 0, /* dweight_space += gradient (cuDNN's only mode) */
  TSR_WGRAD_MODE_SET = 1, /* dweight_space = gradient */
  TSR_ENUM_RANGE(TSR_WGRAD_MODE)
} tsrWgradMode_t;

/* Returned by tsrGetRnnWeightParams for a bias the bias mode does not have. */
#define TSR_RNN_NO_OFFSET ((size_t)-1)

typedef struct tsrRnnStruct* tsrRnnDescriptor_t;

TSR_API tsrStatus_t tsrCreateRnnDescriptor(tsrRnnDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyRnnDescriptor(tsrRnnDescriptor_t desc);

/* data_type (x, y, h, c and weights): FLOAT, HALF or BFLOAT16. math_precision: FLOAT, or
 * data_type itself. input_size, hidden_size >= 1; num_layers >= 1.
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_OUT_OF_RANGE naming the argument and value. */
TSR_API tsrStatus_t tsrSetRnnDescriptor(tsrRnnDescriptor_t desc, tsrRnnMode_t cell_mode,
                                        tsrRnnBiasMode_t bias_mode,
                                        tsrRnnDirectionMode_t direction,
                                        tsrRnnDataLayout_t data_layout, tsrDataType_t data_type,
                                        tsrDataType_t math_precision, int64_t input_size,
                                        int64_t hidden_size, int num_layers);

/* Reads a set descriptor back (any output may be NULL). Errors: BAD_PARAM_NOT_INITIALIZED. */
TSR_API tsrStatus_t tsrGetRnnDescriptor(tsrRnnDescriptor_t desc, tsrRnnMode_t* cell_mode,
                                        tsrRnnBiasMode_t* bias_mode,
                                        tsrRnnDirectionMode_t* direction,
                                        tsrRnnDataLayout_t* data_layout, tsrDataType_t* data_type,
                                        tsrDataType_t* math_precision, int64_t* input_size,
                                        int64_t* hidden_size, int* num_layers);

/* Bytes of the weight space (and of its gradient). Errors: BAD_PARAM_*. */
TSR_API tsrStatus_t tsrGetRnnWeightSpaceSize(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                             size_t* bytes);

/* Where matrix and bias `lin_id` of `pseudo_layer` (layer * dirs + dir) sit in the weight space.
 * lin_id: 0..G-1 the input matrix/bias of gate lin_id, G..2G-1 the recurrent ones (G = 1, 4, 3
 * for vanilla, LSTM, GRU). m_desc receives {H, I} (input; I = input_size for layer 0, else
 * hidden_size * dirs) or {H, H} (recurrent), row-major, and m_offset its byte offset; b_desc
 * receives {H} and b_offset its byte offset, or b_offset = TSR_RNN_NO_OFFSET (b_desc untouched)
 * when the bias mode has no such bias. Any of the four outputs may be NULL.
 * Errors: BAD_PARAM_OUT_OF_RANGE (pseudo_layer, lin_id), BAD_PARAM_*. */
TSR_API tsrStatus_t tsrGetRnnWeightParams(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                          int pseudo_layer, int lin_id,
                                          tsrTensorDescriptor_t m_desc, size_t* m_offset,
                                          tsrTensorDescriptor_t b_desc, size_t* b_offset);

/* Workspace and reserve space for x_desc's T and N: the workspace covers the forward of `mode`
 * and, for training, backward data and weights too, on the kernels the handle would choose; the
 * reserve space is 0 for inference. Either output may be NULL.
 * Errors: BAD_PARAM_* (x_desc must match the descriptor), NOT_SUPPORTED_NO_KERNEL. */
TSR_API tsrStatus_t tsrGetRnnTempSpaceSizes(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                            tsrRnnForwardMode_t mode,
                                            tsrTensorDescriptor_t x_desc, size_t* workspace_size,
                                            size_t* reserve_space_size);

/* Forward over the whole sequence and every layer. x_desc {T, N, input_size} (or {N, T, ..}
 * batch-major), y_desc the same with hidden_size * dirs channels, h_desc {layers * dirs, N,
 * hidden_size} for hx and hy, c_desc the same for cx and cy (LSTM only; NULL otherwise). hx/cx
 * may be NULL (zero initial state), hy/cy NULL (not written). y, hy, cy are overwritten (no
 * alpha/beta, as cuDNN). Training also writes the reserve space (size from
 * tsrGetRnnTempSpaceSizes) for the backward calls; inference ignores it (may be NULL). A NULL
 * workspace of size 0 uses the handle's pool.
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL,
 * NOT_SUPPORTED_NO_KERNEL with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrRnnForward(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                  tsrRnnForwardMode_t fwd_mode, tsrAlgo_t algo,
                                  tsrTensorDescriptor_t x_desc, const void* x,
                                  tsrTensorDescriptor_t h_desc, const void* hx,
                                  tsrTensorDescriptor_t c_desc, const void* cx,
                                  const void* weight_space, size_t weight_space_size,
                                  void* workspace, size_t workspace_size,
                                  tsrTensorDescriptor_t y_desc, void* y, void* hy, void* cy,
                                  void* reserve_space, size_t reserve_space_size);

/* dx (and dhx, dcx unless NULL) from dy (and dhy, dcy; NULL means zero), after a training
 * forward that wrote reserve_space. y, hx, cx are that forward's. Also records in the reserve
 * space what tsrRnnBackwardWeights needs. dx overwritten. Errors: as tsrRnnForward. */
TSR_API tsrStatus_t tsrRnnBackwardData(tsrHandle_t handle, tsrRnnDescriptor_t rnn, tsrAlgo_t algo,
                                       tsrTensorDescriptor_t y_desc, const void* y,
                                       const void* dy, tsrTensorDescriptor_t h_desc,
                                       const void* hx, const void* dhy,
                                       tsrTensorDescriptor_t c_desc, const void* cx,
                                       const void* dcy, const void* weight_space,
                                       size_t weight_space_size, void* workspace,
                                       size_t workspace_size, tsrTensorDescriptor_t x_desc,
                                       void* dx, void* dhx, void* dcx, void* reserve_space,
                                       size_t reserve_space_size);

/* dweight_space += (TSR_WGRAD_MODE_ADD) or = (SET) the gradient of every weight and bias, after
 * tsrRnnBackwardData on the same reserve space. x, hx, y are the forward's.
 * Errors: as tsrRnnForward. */
TSR_API tsrStatus_t tsrRnnBackwardWeights(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                          tsrAlgo_t algo, tsrWgradMode_t wgrad_mode,
                                          tsrTensorDescriptor_t x_desc, const void* x,
                                          tsrTensorDescriptor_t h_desc, const void* hx,
                                          tsrTensorDescriptor_t y_desc, const void* y,
                                          void* workspace, size_t workspace_size,
                                          const void* reserve_space, size_t reserve_space_size,
                                          void* dweight_space, size_t dweight_space_size);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_RNN_H */
