// RNN forward (inference and training), backward data, backward weights, and the temp-space
// query: validation, problem building, dispatch. The descriptor and weight space are in
// rnn_weights_api.cpp.
#include "dispatch.hpp"
#include "error_state.hpp"
#include "rnn_descriptor.hpp"
#include "validation.hpp"

#include <tessera_common/shape_inference.hpp>

#include <algorithm>

using namespace tessera::api;

namespace {

// A packed (row-major) tensor of `dims` in `dtype`.
tsrpTensor packed_tensor(int32_t dtype, int64_t d0, int64_t d1, int64_t d2) {
  tsrpTensor t{};
  t.data_type = dtype;
  t.ndims = 3;
  t.dims[0] = d0;
  t.dims[1] = d1;
  t.dims[2] = d2;
  tessera::common::packed_strides(3, t.dims, false, t.strides);
  return t;
}

std::string dim_order(const tsrRnnStruct& rnn) {
  return rnn.data_layout == TSR_RNN_SEQ_MAJOR ? "{T, N, C} (seq-major)" : "{N, T, C} (batch-major)";
}

// x_desc decides T and N; the other tensors must agree (NULL ones are built packed, for the
// temp-space query). c_desc is read for LSTM only.
tsrStatus_t build_problem(const char* fn, const tsrContext& handle, const tsrRnnStruct& rnn,
                          tsrTensorDescriptor_t x_desc, tsrTensorDescriptor_t y_desc,
                          tsrTensorDescriptor_t h_desc, tsrTensorDescriptor_t c_desc,
                          bool only_x, tsrpRnnProblem* problem) {
  if (tsrStatus_t s = check_tensor(fn, "x_desc", x_desc)) return s;
  const tsrpTensor& x = x_desc->tensor;
  const bool lstm = rnn.shape.cell_mode == TSR_LSTM;
  if (x.ndims != 3)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": x_desc has " + std::to_string(x.ndims) + " dims (" +
                    dims_string(x) + "), expected 3: " + dim_order(rnn));
  if (x.data_type != rnn.data_type)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": x_desc has data type " + data_type_name(x.data_type) +
                    ", expected the RNN's " + data_type_name(rnn.data_type));
  if (x.dims[2] != rnn.shape.input_size)
    return fail(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                std::string(fn) + ": x_desc has dims " + dims_string(x) + ", expected " +
                    std::to_string(rnn.shape.input_size) + " (input_size) as the last dim");
  const bool seq_major = rnn.data_layout == TSR_RNN_SEQ_MAJOR;
  const int64_t T = seq_major ? x.dims[0] : x.dims[1];
  const int64_t N = seq_major ? x.dims[1] : x.dims[0];
  const int64_t H = rnn.shape.hidden_size, D = rnn.shape.dirs;
  const tsrpTensor y_expected =
      packed_tensor(rnn.data_type, seq_major ? T : N, seq_major ? N : T, H * D);
  const tsrpTensor h_expected = packed_tensor(rnn.data_type, rnn.shape.num_layers * D, N, H);
  tsrpTensor y = y_expected, h = h_expected, c{};
  if (lstm) c = h_expected;
  if (!only_x) {
    if (tsrStatus_t s = check_tensor(fn, "y_desc", y_desc)) return s;
    if (tsrStatus_t s = check_tensor(fn, "h_desc", h_desc)) return s;
    if (tsrStatus_t s = check_same_shape(fn, "the RNN's output {T, N, hidden_size * dirs} in x_desc's order",
                                         y_expected, "y_desc", y_desc->tensor))
      return s;
    if (tsrStatus_t s = check_same_shape(fn, "the RNN's state {layers * dirs, N, hidden_size}",
                                         h_expected, "h_desc", h_desc->tensor))
      return s;
    y = y_desc->tensor;
    h = h_desc->tensor;
    if (lstm) {
      if (!c_desc)
        return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    std::string(fn) + ": c_desc is NULL (an LSTM needs the cell state)");
      if (tsrStatus_t s = check_tensor(fn, "c_desc", c_desc)) return s;
      if (tsrStatus_t s = check_same_shape(fn, "the RNN's state {layers * dirs, N, hidden_size}",
                                           h_expected, "c_desc", c_desc->tensor))
        return s;
      c = c_desc->tensor;
    }
  }
  *problem = tsrpRnnProblem{};
  problem->struct_size = sizeof(*problem);
  problem->rnn = rnn.shape;
  problem->data_layout = rnn.data_layout;
  problem->data_type = rnn.data_type;
  problem->math_precision = rnn.math_precision;
  problem->math_mode = handle.math_mode;
  problem->seq_length = T;
  problem->batch_size = N;
  problem->x = x;
  problem->y = y;
  problem->h = h;
  problem->c = c;
  size_t w_bytes = 0;
  rnn_weight_space_bytes(rnn, &w_bytes);
  problem->weight_space_bytes = w_bytes;
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_weight_space(const char* fn, const char* pointer_name, const void* w,
                               const char* size_name, size_t size, const tsrpRnnProblem& p) {
  if (tsrStatus_t s = check_not_null(fn, pointer_name, w)) return s;
  if (size < p.weight_space_bytes)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": " + size_name + " is " + std::to_string(size) +
                    ", expected at least " + std::to_string(p.weight_space_bytes) +
                    " (tsrGetRnnWeightSpaceSize)");
  return TSR_STATUS_SUCCESS;
}

tsrStatus_t check_workspace(const char* fn, const void* workspace, size_t size) {
  if (size > 0 && !workspace)
    return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER,
                std::string(fn) + ": workspace is NULL but workspace_size is " + std::to_string(size));
  return TSR_STATUS_SUCCESS;
}

// The reserve space the training kernel the handle would choose needs for this problem.
tsrStatus_t reserve_bytes(tsrContext& h, const char* fn, const tsrpRnnProblem& p, size_t* bytes) {
  tsrpRnnProblem q = p;
  q.size_query = TSRP_RNN_QUERY_RESERVE_SPACE;
  return query_workspace(h, fn, TSR_OP_RNN_FORWARD_TRAINING, &q, TSR_ALGO_AUTO, bytes);
}

tsrStatus_t check_reserve(tsrContext& h, const char* fn, const void* reserve, size_t size,
                          const tsrpRnnProblem& p) {
  if (tsrStatus_t s = check_not_null(fn, "reserve_space", reserve)) return s;
  size_t needed = 0;
  if (tsrStatus_t s = reserve_bytes(h, fn, p, &needed)) return s;
  if (size < needed)
    return fail(TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL,
                std::string(fn) + ": reserve_space_size is " + std::to_string(size) +
                    ", expected at least " + std::to_string(needed) + " (tsrGetRnnTempSpaceSizes)");
  return TSR_STATUS_SUCCESS;
}

// benchdnn's RNN descriptor language: l<layers>t<T>mb<N>sic<H>slc<C>dhc<H>dic<H>.
call_description describe(const void* problem, const tsrContext&, const std::string&) {
  const auto& p = *static_cast<const tsrpRnnProblem*>(problem);
  call_description d;
  d.descriptor = std::string("alg=") + rnn_mode_name(p.rnn.cell_mode) +
                 (p.rnn.dirs == 2 ? " dir=bidirectional_concat " : " dir=left2right ") +
                 tessera::common::data_type_name(p.data_type) + " l" +
                 std::to_string(p.rnn.num_layers) + "t" + std::to_string(p.seq_length) + "mb" +
                 std::to_string(p.batch_size) + "sic" + std::to_string(p.rnn.hidden_size) + "slc" +
                 std::to_string(p.rnn.input_size) + "dhc" + std::to_string(p.rnn.hidden_size) +
                 "dic" + std::to_string(p.rnn.hidden_size);
  return d;
}

tsrStatus_t run(tsrContext& h, const char* fn, int op, const tsrpRnnProblem& problem,
                const void* args, tsrAlgo_t algo, void* workspace, size_t workspace_size) {
  operation_call call;
  call.function = fn;
  call.op = op;
  call.problem = &problem;
  call.args = args;
  call.algo = algo;
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  call.describe = describe;
  return dispatch(h, call);
}

}  // namespace

extern "C" {

TSR_API tsrStatus_t tsrGetRnnTempSpaceSizes(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                            tsrRnnForwardMode_t mode,
                                            tsrTensorDescriptor_t x_desc, size_t* workspace_size,
                                            size_t* reserve_space_size) {
  const char* fn = "tsrGetRnnTempSpaceSizes";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    if (mode != TSR_RNN_FWD_INFERENCE && mode != TSR_RNN_FWD_TRAINING)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": mode " + std::to_string(mode) + " is not a tsrRnnForwardMode_t");
    tsrpRnnProblem p;
    if (tsrStatus_t s = build_problem(fn, *handle, *rnn, x_desc, nullptr, nullptr, nullptr, true, &p))
      return s;
    const bool training = mode == TSR_RNN_FWD_TRAINING;
    size_t ws = 0, reserve = 0;
    const int forward = training ? TSR_OP_RNN_FORWARD_TRAINING : TSR_OP_RNN_FORWARD_INFERENCE;
    if (tsrStatus_t s = query_workspace(*handle, fn, forward, &p, TSR_ALGO_AUTO, &ws)) return s;
    if (training) {
      if (tsrStatus_t s = reserve_bytes(*handle, fn, p, &reserve)) return s;
      // Backward kernels are optional for a backend: their workspace counts where they exist.
      for (int op : {TSR_OP_RNN_BACKWARD_DATA, TSR_OP_RNN_BACKWARD_WEIGHTS}) {
        size_t b = 0;
        if (query_workspace(*handle, fn, op, &p, TSR_ALGO_AUTO, &b) == TSR_STATUS_SUCCESS)
          ws = std::max(ws, b);
      }
      clear_error();
    }
    if (workspace_size) *workspace_size = ws;
    if (reserve_space_size) *reserve_space_size = reserve;
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrRnnForward(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                  tsrRnnForwardMode_t fwd_mode, tsrAlgo_t algo,
                                  tsrTensorDescriptor_t x_desc, const void* x,
                                  tsrTensorDescriptor_t h_desc, const void* hx,
                                  tsrTensorDescriptor_t c_desc, const void* cx,
                                  const void* weight_space, size_t weight_space_size,
                                  void* workspace, size_t workspace_size,
                                  tsrTensorDescriptor_t y_desc, void* y, void* hy, void* cy,
                                  void* reserve_space, size_t reserve_space_size) {
  const char* fn = "tsrRnnForward";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    if (fwd_mode != TSR_RNN_FWD_INFERENCE && fwd_mode != TSR_RNN_FWD_TRAINING)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": fwd_mode " + std::to_string(fwd_mode) +
                      " is not a tsrRnnForwardMode_t");
    tsrpRnnProblem p;
    if (tsrStatus_t s = build_problem(fn, *handle, *rnn, x_desc, y_desc, h_desc, c_desc, false, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_weight_space(fn, "weight_space", weight_space, "weight_space_size",
                                           weight_space_size, p))
      return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    const bool training = fwd_mode == TSR_RNN_FWD_TRAINING;
    if (training)
      if (tsrStatus_t s = check_reserve(*handle, fn, reserve_space, reserve_space_size, p)) return s;
    const bool lstm = rnn->shape.cell_mode == TSR_LSTM;
    tsrpRnnForwardArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.hx = hx;
    a.cx = lstm ? cx : nullptr;
    a.weights = weight_space;
    a.y = y;
    a.hy = hy;
    a.cy = lstm ? cy : nullptr;
    a.reserve_space = training ? reserve_space : nullptr;
    a.reserve_space_size = training ? reserve_space_size : 0;
    return run(*handle, fn, training ? TSR_OP_RNN_FORWARD_TRAINING : TSR_OP_RNN_FORWARD_INFERENCE,
               p, &a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrRnnBackwardData(tsrHandle_t handle, tsrRnnDescriptor_t rnn, tsrAlgo_t algo,
                                       tsrTensorDescriptor_t y_desc, const void* y,
                                       const void* dy, tsrTensorDescriptor_t h_desc,
                                       const void* hx, const void* dhy,
                                       tsrTensorDescriptor_t c_desc, const void* cx,
                                       const void* dcy, const void* weight_space,
                                       size_t weight_space_size, void* workspace,
                                       size_t workspace_size, tsrTensorDescriptor_t x_desc,
                                       void* dx, void* dhx, void* dcx, void* reserve_space,
                                       size_t reserve_space_size) {
  const char* fn = "tsrRnnBackwardData";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    tsrpRnnProblem p;
    if (tsrStatus_t s = build_problem(fn, *handle, *rnn, x_desc, y_desc, h_desc, c_desc, false, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dy", dy)) return s;
    if (tsrStatus_t s = check_not_null(fn, "dx", dx)) return s;
    if (tsrStatus_t s = check_weight_space(fn, "weight_space", weight_space, "weight_space_size",
                                           weight_space_size, p))
      return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    if (tsrStatus_t s = check_reserve(*handle, fn, reserve_space, reserve_space_size, p)) return s;
    const bool lstm = rnn->shape.cell_mode == TSR_LSTM;
    tsrpRnnBackwardDataArgs a{};
    a.struct_size = sizeof(a);
    a.y = y;
    a.dy = dy;
    a.hx = hx;
    a.cx = lstm ? cx : nullptr;
    a.dhy = dhy;
    a.dcy = lstm ? dcy : nullptr;
    a.weights = weight_space;
    a.dx = dx;
    a.dhx = dhx;
    a.dcx = lstm ? dcx : nullptr;
    a.reserve_space = reserve_space;
    a.reserve_space_size = reserve_space_size;
    return run(*handle, fn, TSR_OP_RNN_BACKWARD_DATA, p, &a, algo, workspace, workspace_size);
  });
}

TSR_API tsrStatus_t tsrRnnBackwardWeights(tsrHandle_t handle, tsrRnnDescriptor_t rnn,
                                          tsrAlgo_t algo, tsrWgradMode_t wgrad_mode,
                                          tsrTensorDescriptor_t x_desc, const void* x,
                                          tsrTensorDescriptor_t h_desc, const void* hx,
                                          tsrTensorDescriptor_t y_desc, const void* y,
                                          void* workspace, size_t workspace_size,
                                          const void* reserve_space, size_t reserve_space_size,
                                          void* dweight_space, size_t dweight_space_size) {
  const char* fn = "tsrRnnBackwardWeights";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_handle(fn, handle)) return s;
    if (tsrStatus_t s = check_rnn(fn, rnn)) return s;
    if (wgrad_mode != TSR_WGRAD_MODE_ADD && wgrad_mode != TSR_WGRAD_MODE_SET)
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": wgrad_mode " + std::to_string(wgrad_mode) +
                      " is not a tsrWgradMode_t");
    // The cell state is not an argument here (as in cuDNN): the LSTM shape check uses h_desc.
    tsrpRnnProblem p;
    if (tsrStatus_t s = build_problem(fn, *handle, *rnn, x_desc, y_desc, h_desc, h_desc, false, &p))
      return s;
    if (tsrStatus_t s = check_not_null(fn, "x", x)) return s;
    if (tsrStatus_t s = check_not_null(fn, "y", y)) return s;
    if (tsrStatus_t s = check_weight_space(fn, "dweight_space", dweight_space,
                                           "dweight_space_size", dweight_space_size, p))
      return s;
    if (tsrStatus_t s = check_workspace(fn, workspace, workspace_size)) return s;
    if (tsrStatus_t s = check_reserve(*handle, fn, reserve_space, reserve_space_size, p)) return s;
    p.wgrad_mode = wgrad_mode;
    tsrpRnnBackwardWeightsArgs a{};
    a.struct_size = sizeof(a);
    a.x = x;
    a.hx = hx;
    a.y = y;
    a.dweights = dweight_space;
    a.reserve_space = reserve_space;
    a.reserve_space_size = reserve_space_size;
    return run(*handle, fn, TSR_OP_RNN_BACKWARD_WEIGHTS, p, &a, algo, workspace, workspace_size);
  });
}

}  // extern "C"
