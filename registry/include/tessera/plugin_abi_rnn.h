/* Tessera plugin ABI 2: RNN, LSTM, GRU. Included by plugin_abi.h (a plugin includes only that).
 *
 * Operations and their structs (cuDNN's RNN API v8 is the model):
 *   TSRP_OP_RNN_FORWARD_INFERENCE  tsrpRnnProblem, tsrpRnnForwardArgs (reserve space unused)
 *   TSRP_OP_RNN_FORWARD_TRAINING   tsrpRnnProblem, tsrpRnnForwardArgs (writes the reserve space)
 *   TSRP_OP_RNN_BACKWARD_DATA      tsrpRnnProblem, tsrpRnnBackwardDataArgs (reads and writes it)
 *   TSRP_OP_RNN_BACKWARD_WEIGHTS   tsrpRnnProblem, tsrpRnnBackwardWeightsArgs (reads it)
 *
 * The reserve space carries what a training forward leaves for the backward calls; its content
 * is private to the backend whose training kernel wrote it (as cuDNN's is to cuDNN), so the three
 * calls of one training step must run on one backend. Its size is asked of the training kernel:
 * workspace_size() with problem.size_query = TSRP_RNN_QUERY_RESERVE_SPACE answers it.
 *
 * Weight space: Tessera's own packed layout, one block per pseudo layer p = layer * dirs + dir
 * (dir 0 runs left to right, dir 1 right to left), blocks in order of p, in the RNN's data type:
 *   W[g]  g = 0..G-1    input weights, H x I_layer, row-major (row = hidden unit)
 *   R[g]  g = 0..G-1    recurrent weights, H x H, row-major
 *   bW[g] g = 0..G-1    input biases, H each     (bias modes SINGLE_INP and DOUBLE)
 *   bR[g] g = 0..G-1    recurrent biases, H each (bias modes SINGLE_REC and DOUBLE)
 * with G gates in cuDNN's order: vanilla 1; LSTM i, f, g, o; GRU r, z, n (cuDNN's r, u, c).
 * I_layer is input_size for layer 0 and hidden_size * dirs above it. The "lin id" of a matrix or
 * bias is g for the input one and G + g for the recurrent one (cuDNN's linLayerID). The inline
 * functions below are the definition of this layout; host and plugins use them alike.
 *
 * Cell equations (cuDNN's; W x and R h are matrix-vector products, s = sigmoid):
 *   RELU/TANH: h' = act(W x + bW + R h + bR)
 *   LSTM:  i = s(Wi x + bWi + Ri h + bRi), f = s(..f..), g = tanh(..g..), o = s(..o..)
 *          c' = f * c + i * g,  h' = o * tanh(c')
 *   GRU:   r = s(Wr x + bWr + Rr h + bRr), z = s(Wz x + bWz + Rz h + bRz)
 *          n = tanh(Wn x + bWn + r * (Rn h + bRn)),  h' = (1 - z) * n + z * h
 *
 * Tensors (dims; strides are free, the layout is in them):
 *   x, dx: seq-major {T, N, input_size} or batch-major {N, T, input_size} (data_layout)
 *   y, dy: the same order with hidden_size * dirs channels (both directions concatenated, the
 *          left-to-right one first)
 *   h: hx, hy, dhx, dhy {layers * dirs, N, hidden_size}, row p = pseudo layer p
 *   c: cx, cy, dcx, dcy, the same dims as h (LSTM only)
 * Every sequence of the batch has length T (variable lengths are not in ABI 2).
 */
#ifndef TESSERA_PLUGIN_ABI_RNN_H
#define TESSERA_PLUGIN_ABI_RNN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Values match tsrRnnMode_t. */
typedef enum {
  TSRP_RNN_RELU = 0, /* vanilla RNN, relu activation */
  TSRP_RNN_TANH = 1, /* vanilla RNN, tanh activation */
  TSRP_RNN_LSTM = 2,
  TSRP_RNN_GRU = 3
} tsrpRnnMode_t;

/* Values match tsrRnnBiasMode_t. */
typedef enum {
  TSRP_RNN_NO_BIAS = 0,
  TSRP_RNN_SINGLE_INP_BIAS = 1, /* bW only */
  TSRP_RNN_DOUBLE_BIAS = 2,     /* bW and bR (cuDNN's default) */
  TSRP_RNN_SINGLE_REC_BIAS = 3  /* bR only */
} tsrpRnnBiasMode_t;

/* Values match tsrRnnDataLayout_t. */
typedef enum {
  TSRP_RNN_SEQ_MAJOR = 0,  /* x, y dims {T, N, C} */
  TSRP_RNN_BATCH_MAJOR = 1 /* x, y dims {N, T, C} */
} tsrpRnnDataLayout_t;

/* Values match tsrWgradMode_t. */
typedef enum {
  TSRP_RNN_WGRAD_ADD = 0, /* dw += gradient (cuDNN's CUDNN_WGRAD_MODE_ADD) */
  TSRP_RNN_WGRAD_SET = 1  /* dw = gradient */
} tsrpRnnWgradMode_t;

/* Which size a kernel's workspace_size() reports for an RNN problem. */
#define TSRP_RNN_QUERY_WORKSPACE 0
#define TSRP_RNN_QUERY_RESERVE_SPACE 1

/* The shape of the network: everything the weight-space layout depends on. A plain value type
 * embedded in tsrpRnnProblem; it never changes. */
typedef struct {
  int32_t cell_mode;   /* tsrpRnnMode_t */
  int32_t dirs;        /* 1: unidirectional, 2: bidirectional (outputs concatenated) */
  int32_t num_layers;  /* >= 1 */
  int32_t bias_mode;   /* tsrpRnnBiasMode_t */
  int64_t input_size;  /* channels of x */
  int64_t hidden_size; /* channels of h and c, per direction */
} tsrpRnnShape;

/* Configuration of every RNN operation. The host has checked that all tensors agree with it. */
typedef struct {
  size_t struct_size;
  tsrpRnnShape rnn;
  int32_t data_layout;      /* tsrpRnnDataLayout_t: the dim order of x and y */
  int32_t data_type;        /* tsrpDataType_t of x, y, h, c and the weight space */
  int32_t math_precision;   /* tsrpDataType_t the cell arithmetic runs in (f32, or data_type) */
  int32_t math_mode;        /* tsrpMathMode_t of the handle */
  int64_t seq_length;       /* T */
  int64_t batch_size;       /* N */
  tsrpTensor x;             /* x and dx */
  tsrpTensor y;             /* y and dy */
  tsrpTensor h;             /* hx, hy, dhx, dhy */
  tsrpTensor c;             /* cx, cy, dcx, dcy; all zero unless LSTM */
  uint64_t weight_space_bytes; /* tsrpRnnWeightSpaceElements() times the element size */
  int32_t wgrad_mode;       /* tsrpRnnWgradMode_t; backward weights only */
  int32_t size_query;       /* TSRP_RNN_QUERY_*: what workspace_size() answers (0: workspace) */
} tsrpRnnProblem;

/* Forward (inference and training). hx and cx may be NULL (zero initial state); hy and cy may
 * be NULL (final state not wanted). cx/cy are ignored unless LSTM. No alpha/beta: y, hy and cy
 * are overwritten, as cuDNN's cudnnRNNForward does. */
typedef struct {
  size_t struct_size;
  const void* x;
  const void* hx;
  const void* cx;
  const void* weights;      /* weight space, problem.weight_space_bytes */
  void* y;
  void* hy;
  void* cy;
  void* reserve_space;      /* training: written; inference: unused (may be NULL) */
  size_t reserve_space_size;
} tsrpRnnForwardArgs;

/* Backward data: dx, dhx, dcx from dy, dhy, dcy and the reserve space of the training forward.
 * dhy/dcy may be NULL (zero); dhx/dcx may be NULL (not wanted); dx is required. y, hx and cx are
 * the forward's (kernels may rely on the reserve space instead). The reserve space is also
 * written: it keeps what backward weights needs. */
typedef struct {
  size_t struct_size;
  const void* y;
  const void* dy;
  const void* hx;
  const void* cx;
  const void* dhy;
  const void* dcy;
  const void* weights;
  void* dx;
  void* dhx;
  void* dcx;
  void* reserve_space;
  size_t reserve_space_size;
} tsrpRnnBackwardDataArgs;

/* Backward weights, after backward data on the same reserve space: dweights (weight-space
 * layout, problem.weight_space_bytes) += (ADD) or = (SET) the gradient of every matrix and bias
 * present. x, hx and y are the forward's. */
typedef struct {
  size_t struct_size;
  const void* x;
  const void* hx;
  const void* y;
  void* dweights;
  const void* reserve_space;
  size_t reserve_space_size;
} tsrpRnnBackwardWeightsArgs;

/* ---- the weight-space layout (element counts and offsets in elements) ---- */

/* Gates per cell: 1, 1, 4, 3; 0 for an unknown mode. */
static inline int32_t tsrpRnnGateCount(int32_t cell_mode) {
  switch (cell_mode) {
    case TSRP_RNN_RELU:
    case TSRP_RNN_TANH: return 1;
    case TSRP_RNN_LSTM: return 4;
    case TSRP_RNN_GRU: return 3;
    default: return 0;
  }
}

static inline int tsrpRnnHasInputBias(int32_t bias_mode) {
  return bias_mode == TSRP_RNN_SINGLE_INP_BIAS || bias_mode == TSRP_RNN_DOUBLE_BIAS;
}
static inline int tsrpRnnHasRecurrentBias(int32_t bias_mode) {
  return bias_mode == TSRP_RNN_SINGLE_REC_BIAS || bias_mode == TSRP_RNN_DOUBLE_BIAS;
}

/* I_layer: the input channels of `layer`. */
static inline int64_t tsrpRnnLayerInputSize(const tsrpRnnShape* s, int32_t layer) {
  return layer == 0 ? s->input_size : s->hidden_size * s->dirs;
}

/* Elements of one pseudo layer's block. */
static inline int64_t tsrpRnnPseudoLayerElements(const tsrpRnnShape* s, int32_t pseudo_layer) {
  const int64_t g = tsrpRnnGateCount(s->cell_mode), h = s->hidden_size;
  const int64_t in = tsrpRnnLayerInputSize(s, pseudo_layer / s->dirs);
  const int64_t biases = tsrpRnnHasInputBias(s->bias_mode) + tsrpRnnHasRecurrentBias(s->bias_mode);
  return g * h * in + g * h * h + biases * g * h;
}

static inline int64_t tsrpRnnPseudoLayerOffset(const tsrpRnnShape* s, int32_t pseudo_layer) {
  int64_t offset = 0;
  for (int32_t p = 0; p < pseudo_layer; ++p) offset += tsrpRnnPseudoLayerElements(s, p);
  return offset;
}

static inline int64_t tsrpRnnWeightSpaceElements(const tsrpRnnShape* s) {
  return tsrpRnnPseudoLayerOffset(s, s->num_layers * s->dirs);
}

/* Matrix lin_id (0..2G-1) of a pseudo layer: its first element; rows have
 * tsrpRnnLayerInputSize() (input matrices) or hidden_size (recurrent ones) elements. */
static inline int64_t tsrpRnnMatrixOffset(const tsrpRnnShape* s, int32_t pseudo_layer,
                                          int32_t lin_id) {
  const int64_t g = tsrpRnnGateCount(s->cell_mode), h = s->hidden_size;
  const int64_t in = tsrpRnnLayerInputSize(s, pseudo_layer / s->dirs);
  const int64_t base = tsrpRnnPseudoLayerOffset(s, pseudo_layer);
  return lin_id < g ? base + lin_id * h * in : base + g * h * in + (lin_id - g) * h * h;
}

/* Bias lin_id of a pseudo layer: its first element, or -1 when the bias mode has no such bias. */
static inline int64_t tsrpRnnBiasOffset(const tsrpRnnShape* s, int32_t pseudo_layer,
                                        int32_t lin_id) {
  const int64_t g = tsrpRnnGateCount(s->cell_mode), h = s->hidden_size;
  const int64_t in = tsrpRnnLayerInputSize(s, pseudo_layer / s->dirs);
  const int64_t biases = tsrpRnnPseudoLayerOffset(s, pseudo_layer) + g * h * in + g * h * h;
  const int has_input = tsrpRnnHasInputBias(s->bias_mode);
  if (lin_id < g) return has_input ? biases + lin_id * h : -1;
  if (!tsrpRnnHasRecurrentBias(s->bias_mode)) return -1;
  return biases + (has_input ? g * h : 0) + (lin_id - g) * h;
}

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_RNN_H */
