// Kernels "rnn_fwd_inference", "rnn_fwd_training", "rnn_bwd_data", "rnn_bwd_weights" on oneDNN's
// vanilla_rnn, lstm and lbr_gru primitives.
//
// Shape of a plan (one per problem and purpose, inference or training):
//  - one oneDNN primitive per layer (L = 1 each, directions unidirectional_left2right or
//    bidirectional_concat), so that layer 0 may have input_size != hidden_size, which oneDNN's
//    stacked primitive does not allow; the layers are chained through dense tnc buffers;
//  - Tessera's packed weight space (plugin_abi_rnn.h) is reordered into oneDNN's ldigo, one
//    matrix at a time (the GRU's gates are permuted on the way: cuDNN's r, z, n are oneDNN's
//    u, r, o order as 1, 0, 2), then into the primitive's preferred (packed) layout; biases are
//    summed into oneDNN's single bias per gate (bW + bR), except the GRU's n gate, whose
//    recurrent bias sits inside r * (Rn h + bRn): that is oneDNN's fourth lbr_gru bias. cuDNN's
//    GRU *is* oneDNN's linear-before-reset GRU (n = tanh(Wn x + bWn + r * (Rn h + bRn))).
//  - every user tensor is staged through a dense buffer by a reorder (which also converts f16 to
//    f32 and applies the batch-major permutation): simple, and cheap next to the cell GEMMs.
//  - compute type: f32; bf16 where oneDNN implements the whole plan in bf16 (avx512_bf16), else
//    f32; f16 always through f32 (oneDNN 3.2 has no f16 RNN on CPUs without AVX512-FP16). The
//    LSTM cell state and every gradient (data, states, weights) are f32 whatever the compute
//    type: oneDNN's bf16 backward accepts only that, and f32 loses nothing. A training plan is
//    one compute type for forward and backward, since they share oneDNN's workspace.
// Training: the reserve space holds a header, each layer's oneDNN workspace, the input and output
// of every layer and every initial/final state (so backward needs nothing from the caller but
// the gradients and weights), and, after backward data, oneDNN's weight gradients (oneDNN computes
// data and weight gradients in one primitive; backward weights then adds them into dw). All
// scratch comes from the workspace; nothing is allocated while running.
#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"
#include "onednn_memory_desc.hpp"
#include "onednn_primitive_cache.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_workspace.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::onednn {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

enum class rnn_op { forward_inference, forward_training, backward_data, backward_weights };

const char* op_kernel_name(rnn_op op) {
  switch (op) {
    case rnn_op::forward_inference: return "rnn_fwd_inference";
    case rnn_op::forward_training: return "rnn_fwd_training";
    case rnn_op::backward_data: return "rnn_bwd_data";
    default: return "rnn_bwd_weights";
  }
}

size_t dt_size(dt t) { return t == dt::f32 ? 4 : 2; }

const char* dt_name(dt t) { return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : "f16"; }

std::string check_problem(const tsrpRnnProblem& p) {
  const tsrpRnnShape& s = p.rnn;
  if (tsrpRnnGateCount(s.cell_mode) == 0) return "unknown RNN cell mode " + std::to_string(s.cell_mode);
  if (s.dirs != 1 && s.dirs != 2) return "dirs is " + std::to_string(s.dirs) + ", expected 1 or 2";
  if (s.num_layers < 1 || s.input_size < 1 || s.hidden_size < 1 || p.seq_length < 1 ||
      p.batch_size < 1)
    return "layers, input_size, hidden_size, T and N must all be at least 1";
  if (s.bias_mode < TSRP_RNN_NO_BIAS || s.bias_mode > TSRP_RNN_SINGLE_REC_BIAS)
    return "unknown bias mode " + std::to_string(s.bias_mode);
  if (p.data_layout != TSRP_RNN_SEQ_MAJOR && p.data_layout != TSRP_RNN_BATCH_MAJOR)
    return "unknown data layout " + std::to_string(p.data_layout);
  if (!is_floating_data_type(p.data_type))
    return std::string(data_type_name(p.data_type)) + " RNN: the oneDNN RNN supports f32, f16 and bf16";
  if (p.math_precision != TSRP_DATA_FLOAT && p.math_precision != p.data_type)
    return std::string("math precision ") + data_type_name(p.math_precision) + " with " +
           data_type_name(p.data_type) + " data";
  const bool lstm = s.cell_mode == TSRP_RNN_LSTM;
  const std::pair<const tsrpTensor*, const char*> tensors[] = {
      {&p.x, "x"}, {&p.y, "y"}, {&p.h, "h"}, {&p.c, "c"}};
  for (const auto& [t, name] : tensors) {
    if (t == &p.c && !lstm) continue;
    std::string reason = check_tensor(*t, name);
    if (!reason.empty()) return reason;
    if (t->ndims != 3) return std::string("tensor ") + name + " is not 3-D";
    if (t->data_type != p.data_type) return std::string("tensor ") + name + " has another data type";
  }
  const bool seq = p.data_layout == TSRP_RNN_SEQ_MAJOR;
  const int64_t T = p.seq_length, N = p.batch_size, H = s.hidden_size;
  const auto is = [](const tsrpTensor& t, int64_t a, int64_t b, int64_t c) {
    return t.dims[0] == a && t.dims[1] == b && t.dims[2] == c;
  };
  if (!is(p.x, seq ? T : N, seq ? N : T, s.input_size)) return "x does not match T, N, input_size";
  if (!is(p.y, seq ? T : N, seq ? N : T, H * s.dirs)) return "y does not match T, N, hidden * dirs";
  if (!is(p.h, int64_t{s.num_layers} * s.dirs, N, H)) return "h does not match layers * dirs, N, hidden";
  if (lstm && !is(p.c, int64_t{s.num_layers} * s.dirs, N, H)) return "c does not match h";
  const size_t w_bytes = static_cast<size_t>(tsrpRnnWeightSpaceElements(&s)) *
                         dt_size(*to_dnnl_data_type(p.data_type));
  if (p.weight_space_bytes < w_bytes)
    return "weight space of " + std::to_string(p.weight_space_bytes) + " bytes, expected " +
           std::to_string(w_bytes);
  return {};
}

cache_key problem_key(const tsrpRnnProblem& p, bool training) {
  cache_key key(training ? "rnn_training" : "rnn_inference");
  const tsrpRnnShape& s = p.rnn;
  key.add(int64_t{s.cell_mode}).add(int64_t{s.dirs}).add(int64_t{s.num_layers});
  key.add(int64_t{s.bias_mode}).add(s.input_size).add(s.hidden_size);
  key.add(int64_t{p.data_layout}).add(int64_t{p.data_type}).add(int64_t{p.math_precision});
  key.add(int64_t{p.math_mode}).add(p.seq_length).add(p.batch_size);
  key.add(p.x).add(p.y).add(p.h);
  if (s.cell_mode == TSRP_RNN_LSTM) key.add(p.c);
  return key;
}

// A buffer of a plan: in the workspace or in the reserve space, at an offset from the aligned base.
struct region {
  bool in_reserve = false;
  size_t offset = 0;
  size_t bytes = 0;
};

struct buffers {
  void* workspace;
  void* reserve;
  void* at(const region& r) const { return workspace_at(r.in_reserve ? reserve : workspace, r.offset); }
};

// Allocates regions in two layouts.
struct allocator {
  workspace_layout ws, rs;
  region take(bool in_reserve, size_t bytes) {
    region r;
    r.in_reserve = in_reserve;
    r.bytes = bytes;
    r.offset = (in_reserve ? rs : ws).reserve(bytes);
    return r;
  }
};

constexpr uint64_t reserve_magic = 0x31304e4e52525354ull;  // "TSRRNN01"
enum : uint64_t { stage_forward = 1, stage_backward_data = 2 };
struct reserve_header {
  uint64_t magic;
  uint64_t fingerprint;  // hash of the plan's key: the reserve belongs to this problem
  uint64_t stage;        // stage_* last completed
};

struct layer_plan {
  int64_t in_size = 0;
  dnnl::primitive_desc fwd_pd, bwd_pd;
  dnnl::primitive fwd, bwd;
  dnnl::memory::desc wl_plain, wi_plain, bias_plain;  // ldigo (compute type), ldgo f32
  dnnl::memory::desc diff_wl, diff_wi, diff_bias;    // ldigo / ldgo f32 (training)
  std::optional<reorder_step> wl_pack_fwd, wi_pack_fwd, wl_pack_bwd, wi_pack_bwd;
  // User matrix/bias (one gate, one direction) <-> one gate of the plain oneDNN layouts.
  std::optional<reorder_step> w_in, r_in, bias_in;                  // bias_in sums
  std::optional<reorder_step> dw_add, dw_set, dr_add, dr_set, db_add, db_set;
  dnnl::memory::desc user_w_view, user_r_view, user_b_view;  // one gate in the weight space
  dnnl::memory::desc plain_w_gate, plain_r_gate, plain_b_gate, diff_w_gate, diff_r_gate, diff_b_gate;
  region ws;  // oneDNN workspace (reserve)
  region src_iter, src_iter_c, dst_iter, dst_iter_c;  // states
  region wl_plain_buf, wi_plain_buf, bias_buf, wl_packed_buf, wi_packed_buf;
  region diff_wl_buf, diff_wi_buf, diff_bias_buf;  // reserve
  region diff_dst_iter, diff_dst_iter_c, diff_src_iter, diff_src_iter_c;
};

struct rnn_plan final : cached_entry {
  bool training = false;
  dt compute = dt::f32;
  dt user = dt::f32;
  std::vector<layer_plan> layers;
  std::vector<region> states;  // layer inputs/outputs, L + 1 dense tnc buffers
  std::vector<region> diffs;   // their gradients (backward)
  region header, scratchpad;
  dnnl::memory::desc user_x, user_y, user_h_slice, user_c_slice;  // oneDNN views of user tensors
  int64_t h_layer_stride = 0, c_layer_stride = 0;                  // elements between layers
  std::optional<reorder_step> x_in, y_out, h_in, h_out, c_in, c_out, dy_in, dx_out, dh_in, dh_out;
  size_t workspace_bytes = 0, reserve_bytes = 0;
  uint64_t fingerprint = 0;
  std::string description;
};

// The x or y tensor as oneDNN's {T, N, C}: a batch-major tensor is the same memory with the
// first two strides swapped.
dnnl::memory::desc tnc_view(const tsrpTensor& t, int32_t layout, dt type) {
  const bool seq = layout == TSRP_RNN_SEQ_MAJOR;
  const dims d = seq ? dims{t.dims[0], t.dims[1], t.dims[2]} : dims{t.dims[1], t.dims[0], t.dims[2]};
  const dims s = seq ? dims{t.strides[0], t.strides[1], t.strides[2]}
                     : dims{t.strides[1], t.strides[0], t.strides[2]};
  return dnnl::memory::desc(d, type, s);
}

// One layer of h or c ({D, N, H} rows of the {L*D, N, H} tensor) as oneDNN's {1, D, N, H}.
dnnl::memory::desc iter_view(const tsrpTensor& t, int64_t dirs, dt type) {
  return dnnl::memory::desc({1, dirs, t.dims[1], t.dims[2]}, type,
                            {dirs * t.strides[0], t.strides[0], t.strides[1], t.strides[2]});
}

// cuDNN's gate g is oneDNN's gate gate_map(g): only the GRU's differ (r, z, n vs u, r, o).
int64_t onednn_gate(int32_t cell_mode, int64_t g) {
  if (cell_mode != TSRP_RNN_GRU) return g;
  return g == 0 ? 1 : g == 1 ? 0 : 2;
}

struct cell_descs {
  dnnl::memory::desc src_layer, src_iter, src_iter_c, wl, wi, bias, dst_layer, dst_iter, dst_iter_c;
  dnnl::memory::desc diff_src_layer, diff_src_iter, diff_src_iter_c, diff_wl, diff_wi, diff_bias,
      diff_dst_layer, diff_dst_iter, diff_dst_iter_c;
};

// The forward primitive descriptor, and the backward one when `backward` (throws dnnl::error
// when oneDNN has no implementation).
void make_pds(const dnnl::engine& engine, int32_t cell_mode, bool training, bool backward,
              dnnl::rnn_direction dir, const cell_descs& d, layer_plan& lp) {
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  const auto prop = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
  switch (cell_mode) {
    case TSRP_RNN_RELU:
    case TSRP_RNN_TANH: {
      const auto act = cell_mode == TSRP_RNN_RELU ? dnnl::algorithm::eltwise_relu
                                                  : dnnl::algorithm::eltwise_tanh;
      dnnl::vanilla_rnn_forward::primitive_desc f(engine, prop, act, dir, d.src_layer, d.src_iter,
                                                  d.wl, d.wi, d.bias, d.dst_layer, d.dst_iter, attr);
      lp.fwd_pd = f;
      if (backward)
        lp.bwd_pd = dnnl::vanilla_rnn_backward::primitive_desc(
            engine, dnnl::prop_kind::backward, act, dir, d.src_layer, d.src_iter, d.wl, d.wi,
            d.bias, d.dst_layer, d.dst_iter, d.diff_src_layer, d.diff_src_iter, d.diff_wl,
            d.diff_wi, d.diff_bias, d.diff_dst_layer, d.diff_dst_iter, f, attr);
      return;
    }
    case TSRP_RNN_LSTM: {
      dnnl::lstm_forward::primitive_desc f(engine, prop, dir, d.src_layer, d.src_iter,
                                           d.src_iter_c, d.wl, d.wi, d.bias, d.dst_layer,
                                           d.dst_iter, d.dst_iter_c, attr);
      lp.fwd_pd = f;
      if (backward)
        lp.bwd_pd = dnnl::lstm_backward::primitive_desc(
            engine, dnnl::prop_kind::backward, dir, d.src_layer, d.src_iter, d.src_iter_c, d.wl,
            d.wi, d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c, d.diff_src_layer,
            d.diff_src_iter, d.diff_src_iter_c, d.diff_wl, d.diff_wi, d.diff_bias,
            d.diff_dst_layer, d.diff_dst_iter, d.diff_dst_iter_c, f, attr);
      return;
    }
    default: {
      dnnl::lbr_gru_forward::primitive_desc f(engine, prop, dir, d.src_layer, d.src_iter, d.wl,
                                              d.wi, d.bias, d.dst_layer, d.dst_iter, attr);
      lp.fwd_pd = f;
      if (backward)
        lp.bwd_pd = dnnl::lbr_gru_backward::primitive_desc(
            engine, dnnl::prop_kind::backward, dir, d.src_layer, d.src_iter, d.wl, d.wi, d.bias,
            d.dst_layer, d.dst_iter, d.diff_src_layer, d.diff_src_iter, d.diff_wl, d.diff_wi,
            d.diff_bias, d.diff_dst_layer, d.diff_dst_iter, f, attr);
      return;
    }
  }
}

dnnl::memory::desc arg_md(const dnnl::primitive_desc& pd, int arg) {
  return pd.query_md(dnnl::query::exec_arg_md, arg);
}

// Builds every primitive descriptor of the plan in `compute` (throws dnnl::error when oneDNN
// lacks one). Primitives are created by instantiate().
std::shared_ptr<rnn_plan> try_plan(const dnnl::engine& engine, const tsrpRnnProblem& p,
                                   bool training, dt compute, const std::string& key) {
  auto plan = std::make_shared<rnn_plan>();
  const tsrpRnnShape& s = p.rnn;
  const bool lstm = s.cell_mode == TSRP_RNN_LSTM;
  const bool lbr = s.cell_mode == TSRP_RNN_GRU;
  const int64_t T = p.seq_length, N = p.batch_size, H = s.hidden_size, D = s.dirs;
  const int64_t G = tsrpRnnGateCount(s.cell_mode), Gb = lbr ? G + 1 : G;
  const int L = s.num_layers;
  plan->training = training;
  plan->compute = compute;
  plan->user = *to_dnnl_data_type(p.data_type);
  plan->fingerprint = std::hash<std::string>()(key);
  const dt user = plan->user;
  const size_t cs = dt_size(compute);
  const auto dir = D == 2 ? dnnl::rnn_direction::bidirectional_concat
                          : dnnl::rnn_direction::unidirectional_left2right;
  allocator a;
  if (training) plan->header = a.take(true, sizeof(reserve_header));
  size_t scratchpad = 0;
  const auto note_scratchpad = [&](const dnnl::primitive_desc_base& pd) {
    scratchpad = std::max(scratchpad, scratchpad_bytes(pd));
  };
  const auto step = [&](std::optional<reorder_step>& into, const dnnl::memory::desc& src,
                        const dnnl::memory::desc& dst, float beta) {
    into = make_reorder_step(engine, src, dst, 1.0f, beta);
    note_scratchpad(into->pd);
  };

  // Layer inputs and outputs (state storage: the reserve when training, else the workspace).
  for (int l = 0; l <= L; ++l) {
    const int64_t width = l == 0 ? s.input_size : D * H;
    plan->states.push_back(a.take(training, static_cast<size_t>(T * N * width) * cs));
    if (training) plan->diffs.push_back(a.take(false, static_cast<size_t>(T * N * width) * 4));
  }
  // Hidden states in the compute type; the LSTM cell state and every gradient in f32 (what
  // oneDNN's bf16 RNN wants, and no loss for f32).
  const dnnl::memory::desc iter_md({1, D, N, H}, compute, tag::ldnc);
  const dnnl::memory::desc iter_f32_md({1, D, N, H}, dt::f32, tag::ldnc);
  const size_t iter_bytes = iter_md.get_size(), iter_f32_bytes = iter_f32_md.get_size();

  plan->layers.resize(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    layer_plan& lp = plan->layers[static_cast<size_t>(l)];
    const int64_t I = tsrpRnnLayerInputSize(&s, l);
    lp.in_size = I;
    cell_descs d;
    d.src_layer = dnnl::memory::desc({T, N, I}, compute, tag::tnc);
    d.dst_layer = dnnl::memory::desc({T, N, D * H}, compute, tag::tnc);
    d.src_iter = d.dst_iter = iter_md;
    if (lstm) d.src_iter_c = d.dst_iter_c = iter_f32_md;
    d.wl = dnnl::memory::desc({1, D, I, G, H}, compute, tag::any);
    d.wi = dnnl::memory::desc({1, D, H, G, H}, compute, tag::any);
    d.bias = dnnl::memory::desc({1, D, Gb, H}, dt::f32, tag::ldgo);
    if (training) {
      d.diff_src_layer = dnnl::memory::desc({T, N, I}, dt::f32, tag::tnc);
      d.diff_dst_layer = dnnl::memory::desc({T, N, D * H}, dt::f32, tag::tnc);
      d.diff_src_iter = d.diff_dst_iter = iter_f32_md;
      if (lstm) d.diff_src_iter_c = d.diff_dst_iter_c = iter_f32_md;
      d.diff_wl = dnnl::memory::desc({1, D, I, G, H}, dt::f32, tag::ldigo);
      d.diff_wi = dnnl::memory::desc({1, D, H, G, H}, dt::f32, tag::ldigo);
      d.diff_bias = dnnl::memory::desc({1, D, Gb, H}, dt::f32, tag::ldgo);
    }
    make_pds(engine, s.cell_mode, training, training, dir, d, lp);
    note_scratchpad(lp.fwd_pd);
    if (training) note_scratchpad(lp.bwd_pd);
    if (arg_md(lp.fwd_pd, DNNL_ARG_BIAS) != d.bias ||
        (training && arg_md(lp.bwd_pd, DNNL_ARG_BIAS) != d.bias))
      throw dnnl::error(dnnl_unimplemented, "the RNN primitive wants a bias layout other than ldgo");

    // Weights: user gate -> plain ldigo gate -> the primitive's layout.
    lp.wl_plain = dnnl::memory::desc({1, D, I, G, H}, compute, tag::ldigo);
    lp.wi_plain = dnnl::memory::desc({1, D, H, G, H}, compute, tag::ldigo);
    lp.bias_plain = d.bias;
    lp.wl_plain_buf = a.take(false, lp.wl_plain.get_size());
    lp.wi_plain_buf = a.take(false, lp.wi_plain.get_size());
    lp.bias_buf = a.take(false, lp.bias_plain.get_size());
    size_t wl_packed = 0, wi_packed = 0;
    const auto pack = [&](const dnnl::primitive_desc& pd, std::optional<reorder_step>& wl_step,
                          std::optional<reorder_step>& wi_step) {
      const dnnl::memory::desc wl = arg_md(pd, DNNL_ARG_WEIGHTS_LAYER), wi = arg_md(pd, DNNL_ARG_WEIGHTS_ITER);
      if (wl != lp.wl_plain) {
        step(wl_step, lp.wl_plain, wl, 0.0f);
        wl_packed = std::max(wl_packed, wl.get_size());
      }
      if (wi != lp.wi_plain) {
        step(wi_step, lp.wi_plain, wi, 0.0f);
        wi_packed = std::max(wi_packed, wi.get_size());
      }
    };
    pack(lp.fwd_pd, lp.wl_pack_fwd, lp.wi_pack_fwd);
    if (training) pack(lp.bwd_pd, lp.wl_pack_bwd, lp.wi_pack_bwd);
    if (wl_packed) lp.wl_packed_buf = a.take(false, wl_packed);
    if (wi_packed) lp.wi_packed_buf = a.take(false, wi_packed);

    // One gate of one direction, in the weight space (row-major H x I: element (i, o) at o * I + i)
    // and in oneDNN's plain layouts; the same descs serve every gate and direction, at offsets.
    lp.user_w_view = dnnl::memory::desc({1, 1, I, 1, H}, user, {I * H, I * H, 1, I * H, I});
    lp.user_r_view = dnnl::memory::desc({1, 1, H, 1, H}, user, {H * H, H * H, 1, H * H, H});
    lp.user_b_view = dnnl::memory::desc({1, 1, 1, H}, user, {H, H, H, 1});
    const auto gate_of = [&](int64_t in, dt type) {
      return dnnl::memory::desc({1, 1, in, 1, H}, type, {D * in * G * H, in * G * H, G * H, H, 1});
    };
    lp.plain_w_gate = gate_of(I, compute);
    lp.plain_r_gate = gate_of(H, compute);
    lp.plain_b_gate = dnnl::memory::desc({1, 1, 1, H}, dt::f32, {D * Gb * H, Gb * H, H, 1});
    step(lp.w_in, lp.user_w_view, lp.plain_w_gate, 0.0f);
    step(lp.r_in, lp.user_r_view, lp.plain_r_gate, 0.0f);
    step(lp.bias_in, lp.user_b_view, lp.plain_b_gate, 1.0f);

    if (training) {
      lp.ws = a.take(true, lp.fwd_pd.workspace_desc().get_size());
      lp.diff_wl = d.diff_wl;
      lp.diff_wi = d.diff_wi;
      lp.diff_bias = d.diff_bias;
      lp.diff_wl_buf = a.take(true, d.diff_wl.get_size());
      lp.diff_wi_buf = a.take(true, d.diff_wi.get_size());
      lp.diff_bias_buf = a.take(true, d.diff_bias.get_size());
      lp.diff_w_gate = gate_of(I, dt::f32);
      lp.diff_r_gate = gate_of(H, dt::f32);
      lp.diff_b_gate = lp.plain_b_gate;
      step(lp.dw_add, lp.diff_w_gate, lp.user_w_view, 1.0f);
      step(lp.dw_set, lp.diff_w_gate, lp.user_w_view, 0.0f);
      step(lp.dr_add, lp.diff_r_gate, lp.user_r_view, 1.0f);
      step(lp.dr_set, lp.diff_r_gate, lp.user_r_view, 0.0f);
      step(lp.db_add, lp.diff_b_gate, lp.user_b_view, 1.0f);
      step(lp.db_set, lp.diff_b_gate, lp.user_b_view, 0.0f);
      lp.diff_dst_iter = a.take(false, iter_f32_bytes);
      lp.diff_src_iter = a.take(false, iter_f32_bytes);
      if (lstm) {
        lp.diff_dst_iter_c = a.take(false, iter_f32_bytes);
        lp.diff_src_iter_c = a.take(false, iter_f32_bytes);
      }
    }
    lp.src_iter = a.take(training, iter_bytes);
    lp.dst_iter = a.take(training, iter_bytes);
    if (lstm) {
      lp.src_iter_c = a.take(training, iter_f32_bytes);
      lp.dst_iter_c = a.take(training, iter_f32_bytes);
    }
  }

  // User tensors <-> dense buffers.
  plan->user_x = tnc_view(p.x, p.data_layout, user);
  plan->user_y = tnc_view(p.y, p.data_layout, user);
  plan->user_h_slice = iter_view(p.h, D, user);
  plan->h_layer_stride = D * p.h.strides[0];
  const dnnl::memory::desc x_dense({T, N, s.input_size}, compute, tag::tnc);
  const dnnl::memory::desc y_dense({T, N, D * H}, compute, tag::tnc);
  step(plan->x_in, plan->user_x, x_dense, 0.0f);
  step(plan->y_out, y_dense, plan->user_y, 0.0f);
  step(plan->h_in, plan->user_h_slice, iter_md, 0.0f);
  step(plan->h_out, iter_md, plan->user_h_slice, 0.0f);
  if (lstm) {
    plan->user_c_slice = iter_view(p.c, D, user);
    plan->c_layer_stride = D * p.c.strides[0];
    step(plan->c_in, plan->user_c_slice, iter_f32_md, 0.0f);
    step(plan->c_out, iter_f32_md, plan->user_c_slice, 0.0f);
  }
  if (training) {
    step(plan->dy_in, plan->user_y, dnnl::memory::desc({T, N, D * H}, dt::f32, tag::tnc), 0.0f);
    step(plan->dx_out, dnnl::memory::desc({T, N, s.input_size}, dt::f32, tag::tnc), plan->user_x, 0.0f);
    step(plan->dh_in, plan->user_h_slice, iter_f32_md, 0.0f);
    step(plan->dh_out, iter_f32_md, plan->user_h_slice, 0.0f);
  }
  plan->scratchpad = a.take(false, scratchpad);
  plan->workspace_bytes = a.ws.required_bytes();
  plan->reserve_bytes = training ? a.rs.required_bytes() : 0;

  const layer_plan& first = plan->layers.front();
  plan->description = std::string("fwd=") + first.fwd_pd.impl_info_str() +
                      (training ? std::string(" bwd=") + first.bwd_pd.impl_info_str() : "") +
                      " (data " + data_type_name(p.data_type) + ", compute " + dt_name(compute) +
                      ", " + std::to_string(L) + " layer primitive(s))" +
                      " weights_reorder=" + first.w_in->pd.impl_info_str() +
                      " workspace=" + std::to_string(plan->workspace_bytes) +
                      " reserve=" + std::to_string(plan->reserve_bytes);
  return plan;
}

std::shared_ptr<rnn_plan> choose_plan(const dnnl::engine& engine, const tsrpRnnProblem& p,
                                      bool training) {
  const std::string key = problem_key(p, training).str();
  const dt io = *to_dnnl_data_type(p.data_type);
  // bf16 (and f16 where a CPU has it) natively first, f32 otherwise; an f32 math precision
  // with bf16 data still runs bf16 GEMMs with f32 accumulation, as cuDNN's tensor-op path does.
  std::vector<dt> candidates;
  if (io != dt::f32) candidates.push_back(io);
  candidates.push_back(dt::f32);
  std::string last_error;
  for (dt c : candidates) {
    try {
      return try_plan(engine, p, training, c, key);
    } catch (const dnnl::error&) {
      last_error = current_exception_text();
    }
  }
  throw plugin_error(TSRP_STATUS_NOT_SUPPORTED,
                     std::string("oneDNN has no ") + data_type_name(p.data_type) +
                         " RNN for this problem (last attempt: " + last_error + ")");
}

void instantiate(rnn_plan& plan) {
  annotate("oneDNN RNN primitive creation", [&] {
    for (layer_plan& lp : plan.layers) {
      lp.fwd = dnnl::primitive(lp.fwd_pd);
      if (plan.training) lp.bwd = dnnl::primitive(lp.bwd_pd);
      for (auto* s : {&lp.wl_pack_fwd, &lp.wi_pack_fwd, &lp.wl_pack_bwd, &lp.wi_pack_bwd, &lp.w_in,
                      &lp.r_in, &lp.bias_in, &lp.dw_add, &lp.dw_set, &lp.dr_add, &lp.dr_set,
                      &lp.db_add, &lp.db_set})
        if (*s) (*s)->instantiate();
    }
    for (auto* s : {&plan.x_in, &plan.y_out, &plan.h_in, &plan.h_out, &plan.c_in, &plan.c_out,
                    &plan.dy_in, &plan.dx_out, &plan.dh_in, &plan.dh_out})
      if (*s) (*s)->instantiate();
  });
}

struct rnn_query final : cached_entry {
  std::string reason;
  size_t workspace_bytes = 0, reserve_bytes = 0;
};

std::shared_ptr<const rnn_query> query(const tsrpRnnProblem& p, bool training) {
  static shared_cache answers;
  return answers.get_or_create<rnn_query>(problem_key(p, training).str(), [&] {
    auto q = std::make_shared<rnn_query>();
    q->reason = check_problem(p);
    if (!q->reason.empty()) return q;
    try {
      auto plan = choose_plan(query_engine(), p, training);
      q->workspace_bytes = plan->workspace_bytes;
      q->reserve_bytes = plan->reserve_bytes;
    } catch (const plugin_error& e) {
      if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
      q->reason = e.what();
    }
    return q;
  });
}

bool is_training(rnn_op op) { return op != rnn_op::forward_inference; }

int can_implement_op(rnn_op op, const void* problem, char* reason, size_t reason_size) {
  try {
    tsrpRnnProblem p;
    if (!read_struct(problem, p)) {
      write_message(reason, reason_size, "null or truncated RNN problem");
      return 0;
    }
    auto q = query(p, is_training(op));
    if (!q->reason.empty()) {
      write_message(reason, reason_size, q->reason);
      return 0;
    }
    return 1;
  } catch (...) {
    status_from_current_exception("oneDNN RNN query", reason, reason_size);
    return 0;
  }
}

tsrpStatus_t workspace_size_op(rnn_op op, const void* problem, size_t* bytes) {
  char message[512];
  const tsrpStatus_t status = guard("oneDNN RNN workspace query", message, sizeof message, [&] {
    tsrpRnnProblem p;
    if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param("rnn workspace_size: null argument");
    auto q = query(p, is_training(op));
    if (!q->reason.empty()) throw_not_supported(q->reason);
    if (p.size_query == TSRP_RNN_QUERY_RESERVE_SPACE)
      *bytes = op == rnn_op::forward_training ? q->reserve_bytes : 0;
    else
      *bytes = q->workspace_bytes;  // one training plan serves all three training-side kernels
    return TSRP_STATUS_SUCCESS;
  });
  if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
  return status;
}

// ---- execution ---------------------------------------------------------------------------

struct runner {
  const rnn_plan& plan;
  const tsrpRnnProblem& p;
  dnnl::engine& engine;
  dnnl::stream& stream;
  buffers buf;

  void* scratch() const { return buf.at(plan.scratchpad); }
  dnnl::memory mem(const dnnl::memory::desc& md, void* ptr) const { return dnnl::memory(md, engine, ptr); }
  dnnl::memory mem(const dnnl::memory::desc& md, const region& r) const { return mem(md, buf.at(r)); }
  void reorder(const reorder_step& s, void* src, void* dst) const {
    s.execute(stream, mem(s.pd.src_desc(), src), mem(s.pd.dst_desc(), dst), scratch());
  }
  static void* offset(const void* base, int64_t elements, size_t element_size) {
    return static_cast<char*>(const_cast<void*>(base)) + elements * static_cast<int64_t>(element_size);
  }
  void zero(const region& r) const { std::memset(buf.at(r), 0, r.bytes); }

  // Tessera weight space -> plain ldigo / ldgo -> the primitive's layouts.
  void load_weights(const void* weights, bool backward) const {
    const tsrpRnnShape& s = p.rnn;
    const int64_t G = tsrpRnnGateCount(s.cell_mode), H = s.hidden_size;
    const bool lbr = s.cell_mode == TSRP_RNN_GRU;
    const int64_t Gb = lbr ? G + 1 : G;
    const size_t us = dt_size(plan.user), cs = dt_size(plan.compute);
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      const layer_plan& lp = plan.layers[l];
      const int64_t I = lp.in_size;
      zero(lp.bias_buf);  // biases are summed into it; absent ones stay 0
      for (int64_t d = 0; d < s.dirs; ++d) {
        const int32_t pl = static_cast<int32_t>(static_cast<int64_t>(l) * s.dirs + d);
        for (int64_t g = 0; g < G; ++g) {
          const int64_t og = onednn_gate(s.cell_mode, g);
          reorder(*lp.w_in, offset(weights, tsrpRnnMatrixOffset(&s, pl, static_cast<int32_t>(g)), us),
                  offset(buf.at(lp.wl_plain_buf), d * I * G * H + og * H, cs));
          reorder(*lp.r_in, offset(weights, tsrpRnnMatrixOffset(&s, pl, static_cast<int32_t>(G + g)), us),
                  offset(buf.at(lp.wi_plain_buf), d * H * G * H + og * H, cs));
          const int64_t bw = tsrpRnnBiasOffset(&s, pl, static_cast<int32_t>(g));
          const int64_t br = tsrpRnnBiasOffset(&s, pl, static_cast<int32_t>(G + g));
          // The GRU's recurrent n bias is oneDNN's extra lbr_gru bias (gate index 3).
          const int64_t og_rec = lbr && g == 2 ? 3 : og;
          if (bw >= 0)
            reorder(*lp.bias_in, offset(weights, bw, us), offset(buf.at(lp.bias_buf), (d * Gb + og) * H, 4));
          if (br >= 0)
            reorder(*lp.bias_in, offset(weights, br, us),
                    offset(buf.at(lp.bias_buf), (d * Gb + og_rec) * H, 4));
        }
      }
      const auto& wl_pack = backward ? lp.wl_pack_bwd : lp.wl_pack_fwd;
      const auto& wi_pack = backward ? lp.wi_pack_bwd : lp.wi_pack_fwd;
      if (wl_pack) reorder(*wl_pack, buf.at(lp.wl_plain_buf), buf.at(lp.wl_packed_buf));
      if (wi_pack) reorder(*wi_pack, buf.at(lp.wi_plain_buf), buf.at(lp.wi_packed_buf));
    }
  }

  dnnl::memory weights_layer(const layer_plan& lp, bool backward) const {
    const auto& pack = backward ? lp.wl_pack_bwd : lp.wl_pack_fwd;
    return pack ? mem(pack->pd.dst_desc(), lp.wl_packed_buf) : mem(lp.wl_plain, lp.wl_plain_buf);
  }
  dnnl::memory weights_iter(const layer_plan& lp, bool backward) const {
    const auto& pack = backward ? lp.wi_pack_bwd : lp.wi_pack_fwd;
    return pack ? mem(pack->pd.dst_desc(), lp.wi_packed_buf) : mem(lp.wi_plain, lp.wi_plain_buf);
  }

  // Per layer: the user's h/c rows (or zeros) into a dense state buffer, or back.
  void state_in(const std::optional<reorder_step>& s, const void* user, int64_t layer_stride,
                size_t layer, const region& r) const {
    if (user == nullptr) return zero(r);
    reorder(*s, offset(user, static_cast<int64_t>(layer) * layer_stride, dt_size(plan.user)), buf.at(r));
  }
  void state_out(const std::optional<reorder_step>& s, const region& r, void* user,
                 int64_t layer_stride, size_t layer) const {
    if (user == nullptr) return;
    reorder(*s, buf.at(r), offset(user, static_cast<int64_t>(layer) * layer_stride, dt_size(plan.user)));
  }

  std::unordered_map<int, dnnl::memory> common_args(const layer_plan& lp, size_t l, bool backward,
                                                    const dnnl::primitive_desc& pd) const {
    const bool lstm = p.rnn.cell_mode == TSRP_RNN_LSTM;
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC_LAYER, mem(arg_md(pd, DNNL_ARG_SRC_LAYER), plan.states[l])},
        {DNNL_ARG_SRC_ITER, mem(arg_md(pd, DNNL_ARG_SRC_ITER), lp.src_iter)},
        {DNNL_ARG_WEIGHTS_LAYER, weights_layer(lp, backward)},
        {DNNL_ARG_WEIGHTS_ITER, weights_iter(lp, backward)},
        {DNNL_ARG_BIAS, mem(lp.bias_plain, lp.bias_buf)},
        {DNNL_ARG_DST_LAYER, mem(arg_md(pd, DNNL_ARG_DST_LAYER), plan.states[l + 1])},
        {DNNL_ARG_DST_ITER, mem(arg_md(pd, DNNL_ARG_DST_ITER), lp.dst_iter)}};
    if (lstm) {
      args.emplace(DNNL_ARG_SRC_ITER_C, mem(arg_md(pd, DNNL_ARG_SRC_ITER_C), lp.src_iter_c));
      args.emplace(DNNL_ARG_DST_ITER_C, mem(arg_md(pd, DNNL_ARG_DST_ITER_C), lp.dst_iter_c));
    }
    if (plan.training) args.emplace(DNNL_ARG_WORKSPACE, mem(lp.fwd_pd.workspace_desc(), lp.ws));
    if (scratchpad_bytes(pd) > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, mem(pd.scratchpad_desc(), scratch()));
    return args;
  }

  void forward(const tsrpRnnForwardArgs& a) const {
    const bool lstm = p.rnn.cell_mode == TSRP_RNN_LSTM;
    load_weights(a.weights, false);
    reorder(*plan.x_in, const_cast<void*>(a.x), buf.at(plan.states[0]));
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      const layer_plan& lp = plan.layers[l];
      state_in(plan.h_in, a.hx, plan.h_layer_stride, l, lp.src_iter);
      if (lstm) state_in(plan.c_in, a.cx, plan.c_layer_stride, l, lp.src_iter_c);
      lp.fwd.execute(stream, common_args(lp, l, false, lp.fwd_pd));
    }
    reorder(*plan.y_out, buf.at(plan.states.back()), a.y);
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      state_out(plan.h_out, plan.layers[l].dst_iter, a.hy, plan.h_layer_stride, l);
      if (lstm) state_out(plan.c_out, plan.layers[l].dst_iter_c, a.cy, plan.c_layer_stride, l);
    }
    stream.wait();
  }

  void backward_data(const tsrpRnnBackwardDataArgs& a) const {
    const bool lstm = p.rnn.cell_mode == TSRP_RNN_LSTM;
    load_weights(a.weights, true);
    reorder(*plan.dy_in, const_cast<void*>(a.dy), buf.at(plan.diffs.back()));
    for (size_t i = plan.layers.size(); i-- > 0;) {
      const layer_plan& lp = plan.layers[i];
      // oneDNN adds weight gradients into diff_weights: start them at 0.
      zero(lp.diff_wl_buf);
      zero(lp.diff_wi_buf);
      zero(lp.diff_bias_buf);
      state_in(plan.dh_in, a.dhy, plan.h_layer_stride, i, lp.diff_dst_iter);
      if (lstm) state_in(plan.c_in, a.dcy, plan.c_layer_stride, i, lp.diff_dst_iter_c);
      const dnnl::primitive_desc& pd = lp.bwd_pd;
      auto args = common_args(lp, i, true, pd);
      args.emplace(DNNL_ARG_DIFF_SRC_LAYER, mem(arg_md(pd, DNNL_ARG_DIFF_SRC_LAYER), plan.diffs[i]));
      args.emplace(DNNL_ARG_DIFF_DST_LAYER, mem(arg_md(pd, DNNL_ARG_DIFF_DST_LAYER), plan.diffs[i + 1]));
      args.emplace(DNNL_ARG_DIFF_SRC_ITER, mem(arg_md(pd, DNNL_ARG_DIFF_SRC_ITER), lp.diff_src_iter));
      args.emplace(DNNL_ARG_DIFF_DST_ITER, mem(arg_md(pd, DNNL_ARG_DIFF_DST_ITER), lp.diff_dst_iter));
      if (lstm) {
        args.emplace(DNNL_ARG_DIFF_SRC_ITER_C, mem(arg_md(pd, DNNL_ARG_DIFF_SRC_ITER_C), lp.diff_src_iter_c));
        args.emplace(DNNL_ARG_DIFF_DST_ITER_C, mem(arg_md(pd, DNNL_ARG_DIFF_DST_ITER_C), lp.diff_dst_iter_c));
      }
      args.emplace(DNNL_ARG_DIFF_WEIGHTS_LAYER, mem(lp.diff_wl, lp.diff_wl_buf));
      args.emplace(DNNL_ARG_DIFF_WEIGHTS_ITER, mem(lp.diff_wi, lp.diff_wi_buf));
      args.emplace(DNNL_ARG_DIFF_BIAS, mem(lp.diff_bias, lp.diff_bias_buf));
      lp.bwd.execute(stream, args);
      state_out(plan.dh_out, lp.diff_src_iter, a.dhx, plan.h_layer_stride, i);
      if (lstm) state_out(plan.c_out, lp.diff_src_iter_c, a.dcx, plan.c_layer_stride, i);
    }
    reorder(*plan.dx_out, buf.at(plan.diffs.front()), a.dx);
    stream.wait();
  }

  // The weight gradients backward data left in the reserve space, into the weight-space layout.
  void backward_weights(const tsrpRnnBackwardWeightsArgs& a) const {
    const tsrpRnnShape& s = p.rnn;
    const bool add = p.wgrad_mode != TSRP_RNN_WGRAD_SET;
    const int64_t G = tsrpRnnGateCount(s.cell_mode), H = s.hidden_size;
    const bool lbr = s.cell_mode == TSRP_RNN_GRU;
    const int64_t Gb = lbr ? G + 1 : G;
    const size_t us = dt_size(plan.user);
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      const layer_plan& lp = plan.layers[l];
      const int64_t I = lp.in_size;
      const reorder_step& dw = add ? *lp.dw_add : *lp.dw_set;
      const reorder_step& dr = add ? *lp.dr_add : *lp.dr_set;
      const reorder_step& db = add ? *lp.db_add : *lp.db_set;
      for (int64_t d = 0; d < s.dirs; ++d) {
        const int32_t pl = static_cast<int32_t>(static_cast<int64_t>(l) * s.dirs + d);
        for (int64_t g = 0; g < G; ++g) {
          const int64_t og = onednn_gate(s.cell_mode, g);
          reorder(dw, offset(buf.at(lp.diff_wl_buf), d * I * G * H + og * H, 4),
                  offset(a.dweights, tsrpRnnMatrixOffset(&s, pl, static_cast<int32_t>(g)), us));
          reorder(dr, offset(buf.at(lp.diff_wi_buf), d * H * G * H + og * H, 4),
                  offset(a.dweights, tsrpRnnMatrixOffset(&s, pl, static_cast<int32_t>(G + g)), us));
          // A summed bias has one gradient, which both bW and bR receive.
          const int64_t bw = tsrpRnnBiasOffset(&s, pl, static_cast<int32_t>(g));
          const int64_t br = tsrpRnnBiasOffset(&s, pl, static_cast<int32_t>(G + g));
          const int64_t og_rec = lbr && g == 2 ? 3 : og;
          if (bw >= 0)
            reorder(db, offset(buf.at(lp.diff_bias_buf), (d * Gb + og) * H, 4), offset(a.dweights, bw, us));
          if (br >= 0)
            reorder(db, offset(buf.at(lp.diff_bias_buf), (d * Gb + og_rec) * H, 4),
                    offset(a.dweights, br, us));
        }
      }
    }
    stream.wait();
  }
};

const reserve_header& header_of(const buffers& b, const rnn_plan& plan) {
  return *static_cast<const reserve_header*>(b.at(plan.header));
}

void check_reserve(const buffers& b, const rnn_plan& plan, uint64_t stage, const char* before) {
  const reserve_header& h = header_of(b, plan);
  if (h.magic != reserve_magic || h.fingerprint != plan.fingerprint)
    throw_bad_param("the reserve space was not written by onednn/rnn_fwd_training for this problem "
                    "(run the training forward first, with the same descriptors)");
  if (h.stage < stage) throw_bad_param(std::string("the reserve space is not ready: ") + before);
}

tsrpStatus_t run_op(rnn_op op, void* handle, const void* problem, const void* args,
                    void* workspace, size_t workspace_bytes, char* message, size_t message_size) {
  const char* name = op_kernel_name(op);
  return guard("oneDNN RNN", message, message_size, [&] {
    tsrpRnnProblem p;
    if (handle == nullptr) throw_bad_param(std::string(name) + ": null context");
    if (!read_struct(problem, p)) throw_bad_param(std::string(name) + ": null or truncated problem");
    std::string reason = check_problem(p);
    if (!reason.empty()) throw_not_supported(std::string(name) + " cannot run this problem: " + reason);
    tsrpRnnForwardArgs fa{};
    tsrpRnnBackwardDataArgs da{};
    tsrpRnnBackwardWeightsArgs wa{};
    void* reserve = nullptr;
    size_t reserve_size = 0;
    bool ok = false;
    switch (op) {
      case rnn_op::forward_inference:
      case rnn_op::forward_training:
        ok = read_struct(args, fa) && fa.x && fa.y && fa.weights;
        reserve = fa.reserve_space;
        reserve_size = fa.reserve_space_size;
        break;
      case rnn_op::backward_data:
        ok = read_struct(args, da) && da.dy && da.dx && da.weights;
        reserve = da.reserve_space;
        reserve_size = da.reserve_space_size;
        break;
      case rnn_op::backward_weights:
        ok = read_struct(args, wa) && wa.dweights;
        reserve = const_cast<void*>(wa.reserve_space);
        reserve_size = wa.reserve_space_size;
        break;
    }
    if (!ok) throw_bad_param(std::string(name) + ": null or truncated arguments");

    context& ctx = as_context(handle);
    const bool training = is_training(op);
    auto plan = ctx.cache().get_or_create<rnn_plan>(problem_key(p, training).str(), [&] {
      auto made = choose_plan(ctx.engine(), p, training);
      instantiate(*made);
      log_message(TSRP_LOG_DEBUG, std::string("rnn plan: ") + made->description);
      return made;
    });
    if (plan->workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
      throw_bad_param(std::string(name) + " needs a workspace of " +
                      std::to_string(plan->workspace_bytes) + " bytes (see workspace_size), got " +
                      std::to_string(workspace_bytes));
    if (training && (reserve == nullptr || reserve_size < plan->reserve_bytes))
      throw_bad_param(std::string(name) + " needs a reserve space of " +
                      std::to_string(plan->reserve_bytes) + " bytes, got " + std::to_string(reserve_size));
    const buffers b{workspace, reserve};
    const runner r{*plan, p, ctx.engine(), ctx.stream(), b};
    if (op == rnn_op::backward_data) check_reserve(b, *plan, stage_forward, "run the training forward first");
    if (op == rnn_op::backward_weights)
      check_reserve(b, *plan, stage_backward_data, "run tsrRnnBackwardData first");
    annotate("oneDNN RNN execution", [&] {
      switch (op) {
        case rnn_op::forward_inference:
        case rnn_op::forward_training: r.forward(fa); break;
        case rnn_op::backward_data: r.backward_data(da); break;
        case rnn_op::backward_weights: r.backward_weights(wa); break;
      }
    });
    if (op == rnn_op::forward_training || op == rnn_op::backward_data) {
      auto* h = static_cast<reserve_header*>(b.at(plan->header));
      h->magic = reserve_magic;
      h->fingerprint = plan->fingerprint;
      h->stage = op == rnn_op::forward_training ? stage_forward : stage_backward_data;
    }
    return TSRP_STATUS_SUCCESS;
  });
}

template <rnn_op Op>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
  return can_implement_op(Op, problem, reason, reason_size);
}
template <rnn_op Op>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
  return workspace_size_op(Op, problem, bytes);
}
template <rnn_op Op>
tsrpStatus_t run(void*, void* handle, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) {
  return run_op(Op, handle, problem, args, workspace, workspace_bytes, message, message_size);
}

#define TSR_RNN_NOTES                                                                            \
  "oneDNN vanilla_rnn / lstm / lbr_gru (cuDNN's GRU is oneDNN's linear-before-reset GRU), one "   \
  "primitive per layer; weights reordered from Tessera's packed layout into the workspace each "  \
  "call. Fixed sequence length. f32; bf16 natively where oneDNN implements it (states rounded to " \
  "bf16 between steps), else through f32; f16 through f32 (converted in the workspace, rounded "  \
  "once on output). Deterministic for a given machine and thread count."

template <rnn_op Op>
tsrpKernel make_kernel(int32_t operation) {
  return tsrpKernel{sizeof(tsrpKernel), op_kernel_name(Op), operation, TSRP_KERNEL_DETERMINISTIC,
                    TSR_RNN_NOTES, nullptr, can_implement<Op>, workspace_size<Op>, run<Op>, nullptr /* estimate_us */};
}

const tsrpKernel g_forward_inference =
    make_kernel<rnn_op::forward_inference>(TSRP_OP_RNN_FORWARD_INFERENCE);
const tsrpKernel g_forward_training =
    make_kernel<rnn_op::forward_training>(TSRP_OP_RNN_FORWARD_TRAINING);
const tsrpKernel g_backward_data = make_kernel<rnn_op::backward_data>(TSRP_OP_RNN_BACKWARD_DATA);
const tsrpKernel g_backward_weights =
    make_kernel<rnn_op::backward_weights>(TSRP_OP_RNN_BACKWARD_WEIGHTS);

}  // namespace

const tsrpKernel& rnn_forward_inference_kernel() noexcept { return g_forward_inference; }
const tsrpKernel& rnn_forward_training_kernel() noexcept { return g_forward_training; }
const tsrpKernel& rnn_backward_data_kernel() noexcept { return g_backward_data; }
const tsrpKernel& rnn_backward_weights_kernel() noexcept { return g_backward_weights; }

}  // namespace tessera::onednn
