// RNN, LSTM and GRU through cuDNN's RNN API v8 (cudnnRNNForward, cudnnRNNBackwardData_v8,
// cudnnRNNBackwardWeights_v8) with CUDNN_RNN_ALGO_STANDARD. Tessera's RNN problem is modelled on
// this API (cells, gate order, bias modes, lin ids, concatenated bidirectional outputs, h rows by
// pseudo layer), so it maps directly, with two differences handled here:
//
//  - The weight space. Tessera fixes its layout (plugin_abi_rnn.h); cuDNN's is its own, asked of
//    cudnnGetRNNWeightParams. Both are probed per problem: when every matrix and bias sits at the
//    same byte offset with the same row-major H x I shape, Tessera's buffer is given to cuDNN as
//    it is. Otherwise the kernel translates: it copies each matrix and bias into a cuDNN-layout
//    buffer in the workspace (cuMemcpyDtoDAsync on the handle's stream) before forward and
//    backward data, and back out of it after backward weights (which, for WGRAD ADD, is filled
//    from the caller's gradient first). A cuDNN matrix that is not row-major H x I is declined
//    rather than copied wrongly.
//  - cuDNN wants the sequence lengths on the device as well; they are written into the workspace
//    (cuMemsetD32Async, every length is T) at each call, so nothing is allocated.
//
// Declined: strided x, y, h or c (cuDNN's RNN data descriptors describe packed tensors), sizes
// beyond int. cuDNN itself refuses what its RNN does not support (e.g. a data type or math
// precision), asked through cudnnSetRNNDescriptor_v8 and cudnnGetRNNTempSpaceSizes.
// Determinism is not claimed: cuDNN's reproducibility notes have said that RNN results depend on
// library-internal GEMM buffer choices.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::cudnn_plugin {
namespace {

enum class rnn_step { inference, training, backward_data, backward_weights };

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

bool packed_row_major(const tsrpTensor& t) {
  int64_t expect = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    if (t.dims[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.dims[i];
  }
  return true;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

std::string rnn_support(const tsrpRnnProblem& p) {
  const tsrpRnnShape& s = p.rnn;
  if (s.cell_mode < TSRP_RNN_RELU || s.cell_mode > TSRP_RNN_GRU) return "unknown cell mode " + std::to_string(s.cell_mode);
  if (s.dirs != 1 && s.dirs != 2) return "dirs must be 1 or 2";
  if (s.bias_mode < TSRP_RNN_NO_BIAS || s.bias_mode > TSRP_RNN_SINGLE_REC_BIAS)
    return "unknown bias mode " + std::to_string(s.bias_mode);
  if (s.num_layers < 1 || !fits_int(s.input_size) || !fits_int(s.hidden_size) || !fits_int(p.seq_length) ||
      !fits_int(p.batch_size) || s.input_size < 1 || s.hidden_size < 1 || p.seq_length < 1 || p.batch_size < 1)
    return "RNN sizes out of cuDNN's int range";
  if (!floating(p.data_type)) return std::string(data_type_name(p.data_type)) + " RNN not supported";
  if (p.math_precision != TSRP_DATA_FLOAT && p.math_precision != p.data_type)
    return std::string("math precision ") + data_type_name(p.math_precision) + " with " + data_type_name(p.data_type) + " data";
  if (p.data_layout != TSRP_RNN_SEQ_MAJOR && p.data_layout != TSRP_RNN_BATCH_MAJOR) return "unknown data layout";
  const bool lstm = s.cell_mode == TSRP_RNN_LSTM;
  for (const tsrpTensor* t : {&p.x, &p.y, &p.h, &p.c}) {
    if (t == &p.c && !lstm) continue;
    if (t->ndims != 3) return "RNN tensors must have 3 dims";
    if (!packed_row_major(*t)) return "strided RNN tensors (cuDNN's RNN data descriptors are packed)";
    if (t->data_type != p.data_type) return "all RNN tensors must have the RNN's data type";
  }
  return {};
}

// One contiguous piece of the weight space and where it is in each layout.
struct weight_piece {
  size_t tessera_offset;
  size_t cudnn_offset;
  size_t bytes;
};

struct rnn_prepared : prepared_problem {
  rnn_descriptor rnn;
  rnn_data_descriptor x, y;
  tensor_descriptor h;  // also c's (same dims, packed)
  size_t cudnn_weight_bytes = 0;
  bool translate = false;           // weights through a cuDNN-layout copy in the workspace
  std::vector<weight_piece> pieces;  // the copies, when translating
  size_t weights_offset = 0;        // workspace: [sequence lengths][cuDNN-layout weights][cuDNN's]
  size_t cudnn_workspace_offset = 0;
  size_t cudnn_workspace_bytes = 0;
  size_t reserve_bytes = 0;
  int32_t batch = 0;
  int32_t seq_length = 0;
};

// True when cuDNN's matrix descriptor is a packed row-major rows x cols matrix (unit dims, which
// cuDNN adds to make it 3-D, are ignored wherever they are).
bool row_major_matrix(cudnnTensorDescriptor_t m, int64_t rows, int64_t cols) {
  cudnnDataType_t type;
  int nd = 0, dims[8] = {}, strides[8] = {};
  check_cudnn(cudnn().cudnnGetTensorNdDescriptor(m, 8, &type, &nd, dims, strides), "cudnnGetTensorNdDescriptor");
  std::vector<std::pair<int64_t, int64_t>> theirs;  // (dim, stride) of the dims above 1
  for (int i = 0; i < nd && i < 8; ++i)
    if (dims[i] != 1) theirs.emplace_back(dims[i], strides[i]);
  std::vector<std::pair<int64_t, int64_t>> ours;
  if (rows != 1) ours.emplace_back(rows, cols);
  if (cols != 1) ours.emplace_back(cols, 1);
  return theirs == ours;
}

// Where cuDNN keeps each matrix and bias, against Tessera's layout. Throws NOT_SUPPORTED for a
// matrix that is not row-major H x I (a copy could not fix that).
void map_weight_space(cudnnHandle_t handle, const tsrpRnnProblem& p, rnn_prepared& d) {
  const tsrpRnnShape& s = p.rnn;
  const size_t es = element_size(p.data_type);
  const int32_t gates = tsrpRnnGateCount(s.cell_mode);
  // cuDNN adds offsets to this base and never dereferences it here.
  char* const base = reinterpret_cast<char*>(uintptr_t{1} << 40);
  std::vector<weight_piece> pieces;
  bool same = d.cudnn_weight_bytes == p.weight_space_bytes;
  tensor_descriptor m = new_tensor_descriptor(), b = new_tensor_descriptor();
  for (int32_t pseudo = 0; pseudo < s.num_layers * s.dirs; ++pseudo) {
    for (int32_t lin = 0; lin < 2 * gates; ++lin) {
      void* matrix = nullptr;
      void* bias = nullptr;
      check_cudnn(cudnn().cudnnGetRNNWeightParams(handle, d.rnn, pseudo, d.cudnn_weight_bytes, base, lin, m, &matrix, b,
                                                  &bias),
                  "cudnnGetRNNWeightParams");
      const int64_t rows = s.hidden_size;
      const int64_t cols = lin < gates ? tsrpRnnLayerInputSize(&s, pseudo / s.dirs) : s.hidden_size;
      if (matrix == nullptr) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, "cuDNN reports no matrix for lin id " + std::to_string(lin));
      if (!row_major_matrix(m, rows, cols))
        throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, "cuDNN's weight matrix for lin id " + std::to_string(lin) +
                                                          " is not row-major " + std::to_string(rows) + " x " +
                                                          std::to_string(cols) + "; Tessera's layout cannot be mapped");
      const size_t tessera = static_cast<size_t>(tsrpRnnMatrixOffset(&s, pseudo, lin)) * es;
      const size_t theirs = static_cast<size_t>(static_cast<char*>(matrix) - base);
      pieces.push_back({tessera, theirs, static_cast<size_t>(rows * cols) * es});
      same = same && tessera == theirs;
      const int64_t tessera_bias = tsrpRnnBiasOffset(&s, pseudo, lin);
      if ((tessera_bias >= 0) != (bias != nullptr))
        throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, "cuDNN and Tessera disagree on which biases exist");
      if (bias != nullptr) {
        const size_t bias_theirs = static_cast<size_t>(static_cast<char*>(bias) - base);
        pieces.push_back({static_cast<size_t>(tessera_bias) * es, bias_theirs, static_cast<size_t>(rows) * es});
        same = same && static_cast<size_t>(tessera_bias) * es == bias_theirs;
      }
    }
  }
  d.translate = !same;
  if (!d.translate) return;
  // Fewer, longer copies: merge pieces contiguous in both layouts.
  std::sort(pieces.begin(), pieces.end(),
            [](const weight_piece& a, const weight_piece& c) { return a.tessera_offset < c.tessera_offset; });
  for (const weight_piece& piece : pieces) {
    if (!d.pieces.empty()) {
      weight_piece& last = d.pieces.back();
      if (last.tessera_offset + last.bytes == piece.tessera_offset && last.cudnn_offset + last.bytes == piece.cudnn_offset) {
        last.bytes += piece.bytes;
        continue;
      }
    }
    d.pieces.push_back(piece);
  }
}

std::unique_ptr<rnn_prepared> prepare_rnn(cudnnHandle_t handle, const tsrpRnnProblem& p, rnn_step step) {
  const std::string why = rnn_support(p);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  const tsrpRnnShape& s = p.rnn;
  auto d = std::make_unique<rnn_prepared>();
  cudnnDataType_t type = CUDNN_DATA_FLOAT, precision = CUDNN_DATA_FLOAT;
  (void)cudnn_data_type(p.data_type, &type);
  (void)cudnn_data_type(p.math_precision, &precision);
  d->batch = static_cast<int32_t>(p.batch_size);
  d->seq_length = static_cast<int32_t>(p.seq_length);

  // Tessera's cell, bias-mode values are cuDNN's (plugin_abi_rnn.h).
  d->rnn = new_rnn_descriptor();
  check_cudnn(cudnn().cudnnSetRNNDescriptor_v8(
                  d->rnn, CUDNN_RNN_ALGO_STANDARD, static_cast<cudnnRNNMode_t>(s.cell_mode),
                  static_cast<cudnnRNNBiasMode_t>(s.bias_mode), s.dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                  CUDNN_LINEAR_INPUT, type, precision, cudnn_math_type(p.data_type, p.math_mode),
                  static_cast<int32_t>(s.input_size), static_cast<int32_t>(s.hidden_size),
                  static_cast<int32_t>(s.hidden_size), s.num_layers, nullptr, CUDNN_RNN_PADDED_IO_ENABLED),
              "cudnnSetRNNDescriptor_v8");

  // Every sequence is T long, so the unpacked layouts are Tessera's packed tensors as they are.
  const cudnnRNNDataLayout_t layout = p.data_layout == TSRP_RNN_BATCH_MAJOR ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
                                                                            : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
  const std::vector<int> lengths(static_cast<size_t>(d->batch), d->seq_length);
  d->x = new_rnn_data_descriptor();
  check_cudnn(cudnn().cudnnSetRNNDataDescriptor(d->x, type, layout, d->seq_length, d->batch,
                                                static_cast<int>(s.input_size), lengths.data(), nullptr),
              "cudnnSetRNNDataDescriptor (x)");
  d->y = new_rnn_data_descriptor();
  check_cudnn(cudnn().cudnnSetRNNDataDescriptor(d->y, type, layout, d->seq_length, d->batch,
                                                static_cast<int>(s.hidden_size * s.dirs), lengths.data(), nullptr),
              "cudnnSetRNNDataDescriptor (y)");
  d->h = make_tensor_descriptor(p.h, 3);

  check_cudnn(cudnn().cudnnGetRNNWeightSpaceSize(handle, d->rnn, &d->cudnn_weight_bytes), "cudnnGetRNNWeightSpaceSize");
  map_weight_space(handle, p, *d);

  const cudnnForwardMode_t mode = step == rnn_step::inference ? CUDNN_FWD_MODE_INFERENCE : CUDNN_FWD_MODE_TRAINING;
  check_cudnn(cudnn().cudnnGetRNNTempSpaceSizes(handle, d->rnn, mode, d->x, &d->cudnn_workspace_bytes, &d->reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
  d->weights_offset = align_up(static_cast<size_t>(d->batch) * sizeof(int32_t));
  d->cudnn_workspace_offset = d->weights_offset + (d->translate ? align_up(d->cudnn_weight_bytes) : 0);
  const size_t workspace = d->cudnn_workspace_offset + d->cudnn_workspace_bytes;
  d->workspace_bytes = p.size_query == TSRP_RNN_QUERY_RESERVE_SPACE ? d->reserve_bytes : workspace;
  return d;
}

void check_driver(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = "CUresult";
  throw plugin_error(TSRP_STATUS_EXECUTION_FAILED, std::string(what) + ": " + name + " (" +
                                                       std::to_string(static_cast<int>(result)) + ")");
}

CUstream stream_of(cudnnHandle_t handle) {
  cudaStream_t stream = nullptr;
  check_cudnn(cudnn().cudnnGetStream(handle, &stream), "cudnnGetStream");
  return reinterpret_cast<CUstream>(stream);
}

CUdeviceptr device_address(const void* pointer, size_t offset = 0) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer) + offset);
}

// The per-call part of the workspace: the device copy of the sequence lengths.
const int32_t* write_sequence_lengths(const rnn_prepared& d, CUstream stream, void* workspace) {
  check_driver(driver().cuMemsetD32Async(device_address(workspace), static_cast<unsigned>(d.seq_length),
                                         static_cast<size_t>(d.batch), stream),
               "cuMemsetD32Async (sequence lengths)");
  return static_cast<const int32_t*>(workspace);
}

enum class copy_direction { into_cudnn_layout, out_of_cudnn_layout };

void copy_weights(const rnn_prepared& d, CUstream stream, const void* tessera, void* buffer, copy_direction direction) {
  for (const weight_piece& piece : d.pieces) {
    const CUdeviceptr ours = device_address(tessera, piece.tessera_offset);
    const CUdeviceptr theirs = device_address(buffer, piece.cudnn_offset);
    const bool in = direction == copy_direction::into_cudnn_layout;
    check_driver(driver().cuMemcpyDtoDAsync(in ? theirs : ours, in ? ours : theirs, piece.bytes, stream),
                 "cuMemcpyDtoDAsync (weight space translation)");
  }
}

template <rnn_step Step>
struct rnn_kernel {
  using problem_type = tsrpRnnProblem;
  using args_type = std::conditional_t<Step == rnn_step::inference || Step == rnn_step::training, tsrpRnnForwardArgs,
                                       std::conditional_t<Step == rnn_step::backward_data, tsrpRnnBackwardDataArgs,
                                                          tsrpRnnBackwardWeightsArgs>>;
  using prepared_type = rnn_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return rnn_support(p); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t handle, const problem_type& p, const kernel_spec&) {
    return prepare_rnn(handle, p, Step);
  }

  static void require_reserve(const prepared_type& d, const void* reserve, size_t size) {
    require_pointer(reserve, "reserve_space");
    if (size < d.reserve_bytes)
      throw plugin_error(TSRP_STATUS_BAD_PARAM, "reserve space of " + std::to_string(size) + " bytes is smaller than the " +
                                                    std::to_string(d.reserve_bytes) + " cuDNN needs");
  }

  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void* workspace, size_t) {
    const bool lstm = p.rnn.cell_mode == TSRP_RNN_LSTM;
    char* ws = static_cast<char*>(workspace);
    void* cudnn_workspace = d.cudnn_workspace_bytes > 0 ? ws + d.cudnn_workspace_offset : nullptr;
    void* weight_buffer = ws + d.weights_offset;
    const CUstream stream = stream_of(handle);
    const int32_t* lengths = write_sequence_lengths(d, stream, workspace);
    if constexpr (Step == rnn_step::inference || Step == rnn_step::training) {
      require_pointer(a.x, "x");
      require_pointer(a.y, "y");
      require_pointer(a.weights, "weights");
      const bool training = Step == rnn_step::training;
      if (training) require_reserve(d, a.reserve_space, a.reserve_space_size);
      const void* weights = a.weights;
      if (d.translate) {
        copy_weights(d, stream, a.weights, weight_buffer, copy_direction::into_cudnn_layout);
        weights = weight_buffer;
      }
      check_cudnn(cudnn().cudnnRNNForward(handle, d.rnn, training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                          lengths, d.x, a.x, d.y, a.y, d.h, a.hx, a.hy, d.h, lstm ? a.cx : nullptr,
                                          lstm ? a.cy : nullptr, d.cudnn_weight_bytes, weights, d.cudnn_workspace_bytes,
                                          cudnn_workspace, training ? d.reserve_bytes : 0,
                                          training ? a.reserve_space : nullptr),
                  "cudnnRNNForward");
    } else if constexpr (Step == rnn_step::backward_data) {
      require_pointer(a.y, "y");
      require_pointer(a.dy, "dy");
      require_pointer(a.dx, "dx");
      require_pointer(a.weights, "weights");
      require_reserve(d, a.reserve_space, a.reserve_space_size);
      const void* weights = a.weights;
      if (d.translate) {
        copy_weights(d, stream, a.weights, weight_buffer, copy_direction::into_cudnn_layout);
        weights = weight_buffer;
      }
      check_cudnn(cudnn().cudnnRNNBackwardData_v8(handle, d.rnn, lengths, d.y, a.y, a.dy, d.x, a.dx, d.h, a.hx, a.dhy,
                                                  a.dhx, d.h, lstm ? a.cx : nullptr, lstm ? a.dcy : nullptr,
                                                  lstm ? a.dcx : nullptr, d.cudnn_weight_bytes, weights,
                                                  d.cudnn_workspace_bytes, cudnn_workspace, d.reserve_bytes,
                                                  a.reserve_space),
                  "cudnnRNNBackwardData_v8");
    } else {
      require_pointer(a.x, "x");
      require_pointer(a.y, "y");
      require_pointer(a.dweights, "dweights");
      require_reserve(d, a.reserve_space, a.reserve_space_size);
      const bool add = p.wgrad_mode == TSRP_RNN_WGRAD_ADD;
      void* dweights = a.dweights;
      if (d.translate) {
        if (add) copy_weights(d, stream, a.dweights, weight_buffer, copy_direction::into_cudnn_layout);
        dweights = weight_buffer;
      }
      check_cudnn(cudnn().cudnnRNNBackwardWeights_v8(handle, d.rnn, add ? CUDNN_WGRAD_MODE_ADD : CUDNN_WGRAD_MODE_SET,
                                                     lengths, d.x, a.x, d.h, a.hx, d.y, a.y, d.cudnn_weight_bytes,
                                                     dweights, d.cudnn_workspace_bytes, cudnn_workspace,
                                                     d.reserve_bytes, const_cast<void*>(a.reserve_space)),
                  "cudnnRNNBackwardWeights_v8");
      if (d.translate) copy_weights(d, stream, a.dweights, weight_buffer, copy_direction::out_of_cudnn_layout);
    }
  }
};

const kernel_spec inference_specs[] = {
    {"cudnn_rnn_fwd_inference", TSRP_OP_RNN_FORWARD_INFERENCE, 0,
     "cuDNN cudnnRNNForward, ALGO_STANDARD; packed tensors only", CUDNN_RNN_ALGO_STANDARD},
};
const kernel_spec training_specs[] = {
    {"cudnn_rnn_fwd_training", TSRP_OP_RNN_FORWARD_TRAINING, 0,
     "cuDNN cudnnRNNForward (training), ALGO_STANDARD; cuDNN's reserve space", CUDNN_RNN_ALGO_STANDARD},
};
const kernel_spec backward_data_specs[] = {
    {"cudnn_rnn_bwd_data", TSRP_OP_RNN_BACKWARD_DATA, 0,
     "cuDNN cudnnRNNBackwardData_v8, ALGO_STANDARD", CUDNN_RNN_ALGO_STANDARD},
};
const kernel_spec backward_weights_specs[] = {
    {"cudnn_rnn_bwd_weights", TSRP_OP_RNN_BACKWARD_WEIGHTS, 0,
     "cuDNN cudnnRNNBackwardWeights_v8, ALGO_STANDARD", CUDNN_RNN_ALGO_STANDARD},
};

}  // namespace

void add_rnn_kernels(kernel_list& list) {
  add_kernels<rnn_kernel<rnn_step::inference>>(list, inference_specs);
  add_kernels<rnn_kernel<rnn_step::training>>(list, training_specs);
  add_kernels<rnn_kernel<rnn_step::backward_data>>(list, backward_data_specs);
  add_kernels<rnn_kernel<rnn_step::backward_weights>>(list, backward_weights_specs);
}

}  // namespace tessera::cudnn_plugin
