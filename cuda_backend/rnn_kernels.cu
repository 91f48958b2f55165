// Kernels "rnn_fwd_inference_stepwise_gemm", "rnn_fwd_training_stepwise_gemm",
// "rnn_bwd_data_stepwise_gemm" and "rnn_bwd_weights_gemm": vanilla relu/tanh, LSTM and GRU, 1 or
// 2 directions, any layers, every bias mode, seq- or batch-major x/y of any strides, fp32, fp16
// and bf16. cuDNN's plan, on the plugin's GEMM engine (gemm_engine.hpp):
//  - forward, per layer: the input projection of every step and both directions as one batched
//    GEMM ((T*N) x I times I x G*H, fp32 out); then per step one recurrent GEMM (N x H times
//    H x G*H, both directions batched) and one fused cell kernel (rnn_cell_kernels.cuh) that adds
//    the biases, applies the gate math and writes the state, the layer output (y itself for the
//    last layer) and, for training, the activated gates into the reserve space;
//  - backward data, per layer from the top: per step (in reverse) one fused cell-gradient kernel
//    and one GEMM for dh_{t-1} = dgates x R; then dx = dgates x W over all steps, the directions
//    added in a fixed order. The pre-activation gradients stay in the reserve space;
//  - backward weights: dW = dgates^T x X and dR = dgates^T x H_{t-1} as GEMMs with the whole
//    sequence as the reduction (so no per-step accumulation at all), bias gradients by a
//    fixed-order column sum; ADD is the GEMM's beta = 1.
// Gate math, cell state and every accumulation are fp32; what the GEMMs read (the hidden state,
// gate gradients) is rounded to the storage type, as cuDNN's tensor-op path does. No allocation or
// synchronisation: buffers come from the workspace and the reserve space (rnn_space_layout.hpp).
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "gemm_engine.hpp"
#include "host_log.hpp"
#include "launch_overrides.hpp"
#include "rnn_cell_kernels.cuh"
#include "rnn_data_movement.cuh"
#include "rnn_persistent.hpp"
#include "rnn_space_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace tessera::cuda {
namespace rnn {
namespace {

enum class rnn_op { forward_inference, forward_training, backward_data, backward_weights };

bool is_training(rnn_op op) { return op != rnn_op::forward_inference; }

// ---- GEMM descriptions ----

gemm_operand operand(const void* data, int32_t type, int64_t row, int64_t col, int64_t batch) {
  gemm_operand o;
  o.data = data;
  o.data_type = type;
  o.row_stride = row;
  o.col_stride = col;
  o.batch_stride = batch;
  return o;
}

gemm_output output(void* data, int32_t type, int64_t row, int64_t col, int64_t batch) {
  gemm_output o;
  o.data = data;
  o.data_type = type;
  o.row_stride = row;
  o.col_stride = col;
  o.batch_stride = batch;
  return o;
}

gemm_problem gemm_of(int64_t m, int64_t n, int64_t k, int64_t batch, const gemm_operand& a,
                     const gemm_operand& b, const gemm_output& c, float beta, bool tf32) {
  gemm_problem g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.a = a;
  g.b = b;
  g.c = c;
  g.alpha = 1.0f;
  g.beta = beta;
  g.allow_tf32 = tf32;
  return g;
}

bool allows_tf32(const tsrpRnnProblem& p) { return p.math_mode == TSRP_MATH_ALLOW_TF32; }

// The forward's recurrent GEMM in k-slices: default_recurrent_slices (rnn_space_layout.hpp), or
// TESSERA_CUDA_RNN_RECURRENT_SPLIT=n slices (n dividing H, one direction) to measure others. The
// rule is planned for the H200's 132 SMs whatever the device, so that the workspace does not depend
// on it. Read once, so that the workspace query and the run agree.
int64_t recurrent_split(const rnn_geometry& g) {
  static const int wanted = launch_override("TESSERA_CUDA_RNN_RECURRENT_SPLIT", 0, 0, 64);
  if (wanted == 0) return default_recurrent_slices(g, 132);
  return recurrent_slices(g, wanted);
}

// Backward data's step GEMM (dgates x R: N x H outputs, k over G*H) in k-slices:
// default_backward_slices (rnn_space_layout.hpp; planned for the H200's 132 SMs whatever the
// device, so that the workspace does not depend on it), or TESSERA_CUDA_RNN_BACKWARD_SPLIT=n (n
// dividing G*H, one direction; 1: unsplit) to measure others. Why: at the anchor LSTM's sizes that
// GEMM has 16 tiles of 64 x 64 walking k = 4096 each, on 16 of 132 SMs. Each slice lands in its
// own [D][N][H] block and the next step's cell kernel adds them in slice order (deterministic).
// Read once, so that the workspace query and the run agree.
int64_t backward_split(const rnn_geometry& g) {
  static const int wanted = launch_override("TESSERA_CUDA_RNN_BACKWARD_SPLIT", 0, 0, 64);
  if (wanted == 0) return default_backward_slices(g, 132);
  return backward_slices(g, wanted);
}

// Elements between the two directions' pseudo layers of `layer` (also a harmless positive
// batch stride when there is one direction).
int64_t direction_stride(const tsrpRnnProblem& p, int layer) {
  return tsrpRnnPseudoLayerElements(&p.rnn, layer * p.rnn.dirs);
}

// The GEMMs an operation launches, as the engine will see them but for the data pointers: the
// engine is asked up front so that an unsupported case is declined rather than failed midway.
std::string gemm_support(const tsrpRnnProblem& p, rnn_op op) {
  alignas(256) static const unsigned char placeholder[256] = {};
  const void* any = placeholder;
  void* any_out = const_cast<unsigned char*>(placeholder);  // never written: only described
  const rnn_geometry g = geometry_of(p);
  const int32_t dt = p.data_type;
  const bool tf32 = allows_tf32(p);
  const int64_t TN = g.T * g.N, pdir = direction_stride(p, 0);
  struct named {
    const char* what;
    gemm_problem problem;
  };
  named checks[2] = {};
  int count = 0;
  if (op == rnn_op::backward_data) {
    checks[count++] = {"the input gradient (dgates x W)",
                       gemm_of(TN, g.I0, g.GH, 1, operand(any, dt, g.GH, 1, 0), operand(any, dt, g.I0, 1, 0),
                               output(any_out, TSRP_DATA_FLOAT, g.I0, 1, 0), 1.0f, tf32)};
    checks[count++] = {"the recurrent step gradient (dgates x R)",
                       gemm_of(g.N, g.H, g.GH, g.D, operand(any, dt, g.GH, 1, TN * g.GH),
                               operand(any, dt, g.H, 1, pdir), output(any_out, TSRP_DATA_FLOAT, g.H, 1, g.N * g.H),
                               1.0f, tf32)};
  } else if (op == rnn_op::backward_weights) {
    checks[count++] = {"the weight gradient (dgates^T x X)",
                       gemm_of(g.GH, g.I0, TN, g.D, operand(any, dt, 1, g.GH, TN * g.GH),
                               operand(any, dt, g.I0, 1, 0), output(any_out, dt, g.I0, 1, pdir), 1.0f, tf32)};
    checks[count++] = {"the recurrent weight gradient (dgates^T x H)",
                       gemm_of(g.GH, g.H, TN, g.D, operand(any, dt, 1, g.GH, TN * g.GH),
                               operand(any, dt, g.H, 1, (g.T + 2) * g.N * g.H), output(any_out, dt, g.H, 1, pdir),
                               1.0f, tf32)};
  } else {
    checks[count++] = {"the input projection (X x W^T)",
                       gemm_of(TN, g.GH, g.I0, g.D, operand(any, dt, g.I0, 1, 0), operand(any, dt, 1, g.I0, pdir),
                               output(any_out, TSRP_DATA_FLOAT, g.GH, 1, TN * g.GH), 0.0f, tf32)};
    checks[count++] = {"the recurrent step (h x R^T)",
                       gemm_of(g.N, g.GH, g.H, g.D, operand(any, dt, g.H, 1, g.N * g.H), operand(any, dt, 1, g.H, pdir),
                               output(any_out, TSRP_DATA_FLOAT, g.GH, 1, g.N * g.GH), 0.0f, tf32)};
  }
  for (int i = 0; i < count; ++i) {
    if (const char* why = gemm_unsupported_reason(checks[i].problem))
      return std::string("the GEMM engine cannot run ") + checks[i].what + ": " + why;
  }
  return {};
}

bool has_dims(const tsrpTensor& t, int64_t a, int64_t b, int64_t c) {
  return t.ndims == 3 && t.dims[0] == a && t.dims[1] == b && t.dims[2] == c;
}

std::string problem_support(const tsrpRnnProblem& p, rnn_op op) {
  const tsrpRnnShape& s = p.rnn;
  if (tsrpRnnGateCount(s.cell_mode) == 0) return "unknown RNN cell mode " + std::to_string(s.cell_mode);
  if (s.dirs != 1 && s.dirs != 2) return "dirs is " + std::to_string(s.dirs) + ", expected 1 or 2";
  if (s.num_layers < 1 || s.input_size < 1 || s.hidden_size < 1 || p.seq_length < 1 || p.batch_size < 1)
    return "num_layers, input_size, hidden_size, seq_length and batch_size must all be at least 1";
  if (s.bias_mode < TSRP_RNN_NO_BIAS || s.bias_mode > TSRP_RNN_SINGLE_REC_BIAS)
    return "unknown bias mode " + std::to_string(s.bias_mode);
  if (p.data_layout != TSRP_RNN_SEQ_MAJOR && p.data_layout != TSRP_RNN_BATCH_MAJOR)
    return "unknown data layout " + std::to_string(p.data_layout);
  if (!is_floating_storage(p.data_type))
    return std::string("data type ") + data_type_name(p.data_type) + ": the CUDA RNN takes float, half and bfloat16";
  if (p.math_precision != TSRP_DATA_FLOAT && p.math_precision != p.data_type)
    return std::string("math precision ") + data_type_name(p.math_precision) + " with " +
           data_type_name(p.data_type) + " data (expected float or the data type)";
  const bool seq = p.data_layout == TSRP_RNN_SEQ_MAJOR;
  const int64_t T = p.seq_length, N = p.batch_size, H = s.hidden_size, LD = int64_t{s.num_layers} * s.dirs;
  const bool lstm = s.cell_mode == TSRP_RNN_LSTM;
  struct expected {
    const tsrpTensor* t;
    const char* name;
    int64_t a, b, c;
  };
  const expected tensors[] = {{&p.x, "x", seq ? T : N, seq ? N : T, s.input_size},
                              {&p.y, "y", seq ? T : N, seq ? N : T, H * s.dirs},
                              {&p.h, "h", LD, N, H},
                              {&p.c, "c", LD, N, H}};
  for (const expected& e : tensors) {
    if (e.t == &p.c && !lstm) continue;
    if (!has_dims(*e.t, e.a, e.b, e.c))
      return std::string("tensor ") + e.name + " does not have the dims {" + std::to_string(e.a) + ", " +
             std::to_string(e.b) + ", " + std::to_string(e.c) + "} the RNN implies";
    if (e.t->data_type != p.data_type)
      return std::string("tensor ") + e.name + " is " + data_type_name(e.t->data_type) + ", the RNN " +
             data_type_name(p.data_type);
  }
  const uint64_t w_bytes = static_cast<uint64_t>(tsrpRnnWeightSpaceElements(&s)) * storage_size(p.data_type);
  if (p.weight_space_bytes < w_bytes)
    return "weight_space_bytes is " + std::to_string(p.weight_space_bytes) + ", the layout needs " +
           std::to_string(w_bytes);
  if (int64_t{s.dirs} * N * H >= (int64_t{1} << 31))
    return "dirs * batch_size * hidden_size is " + std::to_string(int64_t{s.dirs} * N * H) +
           ": the cell kernels index hidden units in 32 bits";
  return gemm_support(p, op);
}

// The persistent kernels (rnn_persistent.cu, rnn_persistent_backward.cu): registered by default
// since the GPU runs of 2026-12-05 (RNN conformance, graph capture, memcheck and racecheck clean;
// the anchor LSTM's inference 4.0 ms against 5.45 stepwise and 4.97 for cuDNN in the same process
// on an H100, 4.3 against 5.4 on the H200); TESSERA_CUDA_RNN_PERSISTENT=0 unlists them. Their plan
// depends on the problem alone (planned for the H200), so the workspace query and the run agree;
// the run falls back to the stepwise kernels, in the same workspace, where the device cannot hold
// the plan's grid.
// 2 is for testing only: the kernels are registered but every layer takes the path of a refused
// cooperative launch (stepwise on the two-slot state), which a healthy device never shows.
int persistent_switch() {
  static const int value = launch_override("TESSERA_CUDA_RNN_PERSISTENT", 1, 0, 2);
  return value;
}

bool persistent_switched_on() { return persistent_switch() != 0; }

// Warps a block of the persistent kernels, per pass. Measured on the H200 (2026-12-05, ~12:05 UTC;
// one device call, one bench process per block size, the 2-layer H 1024 T 128 N 64 fp16 problems,
// tools/gpu/device_run.sh variant rnn_warps): 16 warps took the forward from 4.025 to 3.708 ms
// (LSTM inference), 4.128 to 3.807 (LSTM training forward), 3.799 to 3.459 and 3.893 to 3.52
// (GRU), where the 8-warp form is latency-bound on 2 warps a scheduler; backward data under 16
// lost (GRU training backward 9.97 -> 11.91 ms, LSTM about even), so it keeps 8. The H100 agreed
// (12:20 UTC: the mixed default within 1 % of the best of all-8, all-16 and itself on all six
// problems, the fastest on both backward ones).
// TESSERA_CUDA_RNN_PERSISTENT_WARPS=8 or 16 sets both passes; read once. Which plan a call takes
// depends only on the problem's sizes and the device, so the workspace (which no plan changes)
// and the run agree.
int forced_persistent_warps() {
  static const int forced =
      launch_override("TESSERA_CUDA_RNN_PERSISTENT_WARPS", 0, persistent_warps, persistent_max_warps);
  return forced == persistent_warps || forced == persistent_max_warps ? forced : 0;
}

// The plan a call runs (choose_persistent_plan, rnn_persistent_layout.hpp); `fits_device` asks the
// device whether it holds a plan's grid.
template <typename FitsDevice>
persistent_plan persistent_plan_for(const rnn_geometry& g, persistent_pass pass, FitsDevice&& fits_device) {
  return choose_persistent_plan(pass, g.D, static_cast<int32_t>(g.G), static_cast<int32_t>(g.H),
                                static_cast<int32_t>(g.N), g.es, forced_persistent_warps(), fits_device);
}

// The plan as the planning model sees it (the registry's support and estimates: no device query).
persistent_plan persistent_plan_for(const rnn_geometry& g, persistent_pass pass = persistent_pass::forward) {
  return persistent_plan_for(g, pass, [](const persistent_plan&) { return true; });
}

std::string persistent_support(const tsrpRnnProblem& p, rnn_op op) {
  std::string why = problem_support(p, op);
  if (!why.empty()) return why;
  if (p.data_type != TSRP_DATA_HALF && p.data_type != TSRP_DATA_BFLOAT16)
    return std::string("data type ") + data_type_name(p.data_type) + ": the persistent " +
           (op == rnn_op::backward_data ? "backward data" : "forward") +
           " multiplies on the fp16/bf16 tensor cores (the stepwise kernels take it)";
  const bool backward = op == rnn_op::backward_data;
  const persistent_plan plan =
      persistent_plan_for(geometry_of(p), backward ? persistent_pass::backward_data : persistent_pass::forward);
  if (!plan.fits)
    return std::string(backward ? "the persistent backward data" : "the persistent forward") +
           " has no plan for these sizes: " + plan.why_not;
  return {};
}

size_t rnn_space_bytes(const tsrpRnnProblem& p, rnn_op op, bool persistent = false) {
  const rnn_geometry g = geometry_of(p);
  if (p.size_query == TSRP_RNN_QUERY_RESERVE_SPACE) return is_training(op) ? reserve_layout_of(g).bytes : 0;
  switch (op) {
    case rnn_op::forward_inference:
      return forward_workspace_of(p, g, false, recurrent_split(g), persistent ? 2 : 1).bytes;
    case rnn_op::forward_training: return forward_workspace_of(p, g, true, recurrent_split(g)).bytes;
    case rnn_op::backward_data: return backward_data_workspace_of(g, backward_split(g)).bytes;
    default: return backward_weights_workspace_of(p, g).bytes;
  }
}

void require_reserve(const tsrpRnnProblem& p, const void* reserve, size_t size) {
  const size_t needed = reserve_layout_of(geometry_of(p)).bytes;
  if (reserve == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, "reserve_space is null");
  if (size < needed)
    throw status_error(TSRP_STATUS_BAD_PARAM, "reserve_space_size " + std::to_string(size) +
                                                  " is smaller than the " + std::to_string(needed) + " it needs");
}

strides3 strides_of(const tsrpTensor& t) { return {t.strides[0], t.strides[1], t.strides[2]}; }

// ---- the GEMM sequences ----

template <typename T>
class rnn_runner {
 public:
  rnn_runner(const cuda_context& ctx, const tsrpRnnProblem& p)
      : ctx_(ctx), p_(p), g_(geometry_of(p)), dt_(p.data_type), tf32_(allows_tf32(p)) {}

  // `persistent`: the kernel is the persistent forward (its workspace layout); each layer then runs
  // as one persistent launch if the device can hold the grid, else stepwise in the same workspace.
  void forward(const tsrpRnnForwardArgs& a, void* workspace, bool training, bool persistent = false) const {
    const rnn_geometry& g = g_;
    const int64_t steps = g.T, N = g.N, H = g.H, GH = g.GH, D = g.D;
    const int64_t slices = recurrent_split(g);
    const forward_workspace wl = forward_workspace_of(p_, g, training, slices, persistent && !training ? 2 : 1);
    persistent_plan plan;
    bool one_launch = false;
    if constexpr (!std::is_same_v<T, float>) {
      if (persistent) {
        const auto fits_device = [&](const persistent_plan& q) {
          return persistent_forward_fits_device<T>(ctx_, q, g.cell);
        };
        plan = persistent_plan_for(g, persistent_pass::forward, fits_device);
        one_launch = plan.fits && fits_device(plan);
        if (!one_launch)
          log_message(TSRP_LOG_WARN, "rnn_fwd_*_persistent: the device cannot hold the plan's grid resident at "
                                     "once; running the stepwise kernels instead");
      }
    }
    const reserve_layout rl = training ? reserve_layout_of(g) : reserve_layout{};
    char* ws = aligned_base(static_cast<char*>(workspace));
    char* rs = training ? aligned_base(static_cast<char*>(a.reserve_space)) : nullptr;
    float* gx = at<float>(ws, wl.gx);
    float* gh = at<float>(ws, wl.gh);
    const T* w = static_cast<const T*>(a.weights);
    matrix x = x_matrix(a.x, wl.x_stage == no_region ? nullptr : at<T>(ws, wl.x_stage));
    const tnc_strides ys = tnc_of(p_.y, p_.data_layout);
    for (int l = 0; l < g.L; ++l) {
      const int p0 = l * g.D;
      const int64_t I = g.layer_input(l), pdir = direction_stride(p_, l);
      forward_step<T> st{};
      st.D = g.D;
      st.N = static_cast<int32_t>(N);
      st.H = static_cast<int32_t>(H);
      st.steps = steps;
      st.gx = gx;
      st.gx_dir = steps * N * GH;
      st.bw = bias(w, p0, 0);
      st.br = bias(w, p0, static_cast<int32_t>(g.G));
      st.bias_dir = pdir;
      if (training) {
        const layer_reserve& lr = rl.layers[static_cast<size_t>(l)];
        st.hs = at<T>(rs, lr.hs);
        st.hs_dir = (steps + 1) * N * H;
        st.hs_slot = N * H;
        st.cs = g.lstm ? at<float>(rs, lr.cs) : nullptr;
        st.cs_dir = (steps + 1) * N * H;
        st.cs_slot = N * H;
        st.saved = at<float>(rs, lr.saved);
        st.saved_dir = steps * N * g.S * H;
        st.slot_mask = -1;
      } else {
        // Stepwise: one state updated in place (the step's GEMM has read it before the cell
        // kernel writes). Persistent: two slots in turn.
        st.hs = at<T>(ws, wl.hs);
        st.hs_dir = one_launch ? 2 * N * H : N * H;
        st.hs_slot = one_launch ? N * H : 0;
        st.slot_mask = one_launch ? 1 : 0;
        st.cs = g.lstm ? at<float>(ws, wl.cs) : nullptr;
        st.cs_dir = N * H;
        st.cs_slot = 0;
      }
      const bool last = l + 1 == g.L;
      if (last) {
        st.out = static_cast<T*>(a.y);
        st.out_t = ys.t;
        st.out_n = ys.n;
        st.out_c = ys.c;
      } else {
        st.out = training ? at<T>(rs, rl.layers[static_cast<size_t>(l)].out) : at<T>(ws, wl.out[l % 2]);
        st.out_t = N * D * H;
        st.out_n = D * H;
        st.out_c = 1;
      }

      // Initial states into the slots step 0 reads (slot 0 of direction 0, slot T of direction 1).
      const strides3 initial{st.hs_dir + (steps & st.slot_mask) * st.hs_slot, H, 1};
      copy_3d<T, T>(ctx_, row_of(static_cast<const T*>(a.hx), p_.h, p0), strides_of(p_.h), st.hs, initial, D, N, H);
      if (g.lstm) {
        const strides3 initial_c{st.cs_dir + (steps & st.slot_mask) * st.cs_slot, H, 1};
        copy_3d<T, float>(ctx_, row_of(static_cast<const T*>(a.cx), p_.c, p0), strides_of(p_.c), st.cs, initial_c,
                          D, N, H);
      }

      launch_gemm(gemm_of(steps * N, GH, I, D, operand(x.data, dt_, x.row, x.col, 0),
                          operand(w + matrix_offset(p0, 0), dt_, 1, I, pdir),
                          output(gx, TSRP_DATA_FLOAT, GH, 1, steps * N * GH), 0.0f, tf32_),
                  ctx_.stream());
      if (one_launch) {
        st.hy = row_of(static_cast<T*>(a.hy), p_.h, p0);
        st.hy_p = p_.h.strides[0];
        st.hy_n = p_.h.strides[1];
        st.hy_c = p_.h.strides[2];
        st.cy = g.lstm ? row_of(static_cast<T*>(a.cy), p_.c, p0) : nullptr;
        st.cy_p = p_.c.strides[0];
        st.cy_n = p_.c.strides[1];
        st.cy_c = p_.c.strides[2];
        bool launched = false;
        if constexpr (!std::is_same_v<T, float>)
          if (persistent_switch() != 2)
            launched = launch_persistent_forward<T>(ctx_, plan, g.cell, st, w + matrix_offset(p0, static_cast<int32_t>(g.G)),
                                                  pdir, a.hx != nullptr);
        if (launched) {
          x = matrix{st.out, D * H, 1};
          continue;
        }
        // The device refused the resident grid at launch (e.g. fewer SMs under MPS than the
        // occupancy query saw): this layer runs stepwise, on the same two-slot state layout.
        log_message(TSRP_LOG_WARN, "rnn_fwd_*_persistent: the cooperative launch was refused; this layer runs "
                                   "the stepwise kernels");
      }
      const gemm_operand recurrent_weights = operand(w + matrix_offset(p0, static_cast<int32_t>(g.G)), dt_, 1, H, pdir);
      for (int64_t s = 0; s < steps; ++s) {
        // Without hx the first step's R h is zero: no GEMM, the cell kernel reads no gh.
        const bool recurrent = s > 0 || a.hx != nullptr;
        if (recurrent && slices > 1) {
          // One direction: the batch dim walks the k-slices of h and R, each into its own block.
          const int64_t k = H / slices;
          gemm_operand weight_slices = recurrent_weights;
          weight_slices.batch_stride = k;  // slice b: rows b*k.. of R (k runs with stride 1)
          launch_gemm(gemm_of(N, GH, k, slices, operand(st.hs + (s & st.slot_mask) * st.hs_slot, dt_, H, 1, k), weight_slices,
                              output(gh, TSRP_DATA_FLOAT, GH, 1, N * GH), 0.0f, tf32_),
                      ctx_.stream());
        } else if (recurrent) {
          // Direction 0 reads slot s, direction 1 slot T - s (rnn_space_layout.hpp; both masked
          // as the cell kernel masks them).
          const int64_t slot0 = s & st.slot_mask, slot1 = (steps - s) & st.slot_mask;
          launch_gemm(gemm_of(N, GH, H, D,
                              operand(st.hs + slot0 * st.hs_slot, dt_, H, 1, st.hs_dir + (slot1 - slot0) * st.hs_slot),
                              recurrent_weights, output(gh, TSRP_DATA_FLOAT, GH, 1, N * GH), 0.0f, tf32_),
                      ctx_.stream());
        }
        st.s = s;
        st.gh = recurrent ? gh : nullptr;
        st.gh_slices = static_cast<int32_t>(slices);
        st.gh_slice = D * N * GH;
        const bool final_step = s + 1 == steps;
        st.hy = final_step ? row_of(static_cast<T*>(a.hy), p_.h, p0) : nullptr;
        st.hy_p = p_.h.strides[0];
        st.hy_n = p_.h.strides[1];
        st.hy_c = p_.h.strides[2];
        st.cy = final_step && g.lstm ? row_of(static_cast<T*>(a.cy), p_.c, p0) : nullptr;
        st.cy_p = p_.c.strides[0];
        st.cy_n = p_.c.strides[1];
        st.cy_c = p_.c.strides[2];
        launch_cell_forward(ctx_, g.cell, st);
      }
      x = matrix{st.out, D * H, 1};
    }
  }

  // `persistent`: the kernel is the persistent backward data; each layer's recurrent part then runs
  // as one persistent launch if the device holds the grid, else stepwise (the same workspace).
  void backward_data(const tsrpRnnBackwardDataArgs& a, void* workspace, bool persistent = false) const {
    const rnn_geometry& g = g_;
    const int64_t steps = g.T, N = g.N, H = g.H, GH = g.GH, D = g.D;
    persistent_plan plan;
    bool one_launch = false;
    if constexpr (!std::is_same_v<T, float>) {
      if (persistent) {
        const auto fits_device = [&](const persistent_plan& q) {
          return persistent_backward_fits_device<T>(ctx_, q, g.cell);
        };
        plan = persistent_plan_for(g, persistent_pass::backward_data, fits_device);
        one_launch = plan.fits && fits_device(plan);
        if (!one_launch)
          log_message(TSRP_LOG_WARN, "rnn_bwd_data_persistent: the device cannot hold the plan's grid resident at "
                                     "once; running the stepwise kernels instead");
      }
    }
    const int64_t slices = backward_split(g);
    const backward_data_workspace wl = backward_data_workspace_of(g, slices);
    const reserve_layout rl = reserve_layout_of(g);
    char* ws = aligned_base(static_cast<char*>(workspace));
    float* parts = slices > 1 ? at<float>(ws, wl.parts) : nullptr;
    char* rs = aligned_base(static_cast<char*>(a.reserve_space));
    float* grad[2] = {at<float>(ws, wl.grad[0]), at<float>(ws, wl.grad[1])};
    float* dh = at<float>(ws, wl.dh);
    float* dc = at<float>(ws, wl.dc);
    const T* w = static_cast<const T*>(a.weights);
    const tnc_strides ys = tnc_of(p_.y, p_.data_layout);
    copy_3d<T, float>(ctx_, static_cast<const T*>(a.dy), {ys.t, ys.n, ys.c}, grad[0], {N * D * H, D * H, 1}, steps, N,
                      D * H);
    int current = 0;  // grad[current] holds the gradient of this layer's output
    for (int l = g.L - 1; l >= 0; --l) {
      const int p0 = l * g.D;
      const int64_t I = g.layer_input(l), pdir = direction_stride(p_, l);
      const layer_reserve& lr = rl.layers[static_cast<size_t>(l)];
      float* din = grad[current ^ 1];
      T* da = at<T>(rs, lr.da);
      T* dhr = at<T>(rs, lr.dhr);
      const strides3 state{N * H, H, 1};
      copy_3d<T, float>(ctx_, row_of(static_cast<const T*>(a.dhy), p_.h, p0), strides_of(p_.h), dh, state, D, N, H);
      if (g.lstm)
        copy_3d<T, float>(ctx_, row_of(static_cast<const T*>(a.dcy), p_.c, p0), strides_of(p_.c), dc, state, D, N, H);

      backward_step<T> st{};
      st.D = g.D;
      st.N = static_cast<int32_t>(N);
      st.H = static_cast<int32_t>(H);
      st.steps = steps;
      st.dh = dh;
      st.dc = dc;
      st.dout = grad[current];
      st.saved = at<float>(rs, lr.saved);
      st.saved_dir = steps * N * g.S * H;
      st.cs = g.lstm ? at<float>(rs, lr.cs) : nullptr;
      st.cs_dir = (steps + 1) * N * H;
      st.cs_slot = N * H;
      st.hs = at<T>(rs, lr.hs);
      st.hs_dir = (steps + 1) * N * H;
      st.hs_slot = N * H;
      st.da = da;
      st.dhr = dhr;
      st.grad_dir = steps * N * GH;
      st.part_slices = static_cast<int32_t>(slices);
      st.part_stride = D * N * H;
      st.zero_dh = slices > 1 ? 1 : 0;
      bool launched = false;
      if constexpr (!std::is_same_v<T, float>)
        if (one_launch && persistent_switch() != 2)
          launched = launch_persistent_backward<T>(ctx_, plan, g.cell, st,
                                                   w + matrix_offset(p0, static_cast<int32_t>(g.G)), pdir,
                                                   a.dhx != nullptr);
      if (one_launch && !launched)
        log_message(TSRP_LOG_WARN, "rnn_bwd_data_persistent: the cooperative launch was refused; this layer runs "
                                   "the stepwise kernels");
      const gemm_operand recurrent_weights = operand(w + matrix_offset(p0, static_cast<int32_t>(g.G)), dt_, H, 1, pdir);
      bool parts_hold_product = false;  // the previous step's GEMM went to the k-slices
      const int64_t last_step = launched ? -1 : steps - 1;  // none left when the persistent kernel ran
      for (int64_t s = last_step; s >= 0; --s) {
        st.s = s;
        st.parts = parts_hold_product ? parts : nullptr;
        launch_cell_backward(ctx_, g.cell, st);
        parts_hold_product = false;
        if (s > 0 && slices > 1) {
          // One direction: the batch dim walks the k-slices of dgates and R (rows b*k.. of R),
          // each into its own block of parts; dh (the GRU's z * g_dh, else zeroed by the cell
          // kernel) is added by the next cell kernel.
          const int64_t k = GH / slices;
          gemm_operand weight_slices = recurrent_weights;
          weight_slices.batch_stride = k * H;
          launch_gemm(gemm_of(N, H, k, slices, operand(dhr + s * N * GH, dt_, GH, 1, k), weight_slices,
                              output(parts, TSRP_DATA_FLOAT, H, 1, N * H), 0.0f, tf32_),
                      ctx_.stream());
          parts_hold_product = true;
        } else if (s > 0 || a.dhx != nullptr) {
          // dL/dh of the state before this step; the very first state's is only wanted as dhx.
          // Direction 0 is at time s, direction 1 at time T-1-s.
          launch_gemm(gemm_of(N, H, GH, D, operand(dhr + s * N * GH, dt_, GH, 1, (2 * steps - 1 - 2 * s) * N * GH),
                              recurrent_weights, output(dh, TSRP_DATA_FLOAT, H, 1, N * H), g.gru ? 1.0f : 0.0f,
                              tf32_),
                      ctx_.stream());
        }
      }
      // Both directions feed the same input gradient: added in direction order.
      for (int d = 0; d < g.D; ++d) {
        launch_gemm(gemm_of(steps * N, I, GH, 1, operand(da + d * steps * N * GH, dt_, GH, 1, 0),
                            operand(w + matrix_offset(p0 + d, 0), dt_, I, 1, 0), output(din, TSRP_DATA_FLOAT, I, 1, 0),
                            d == 0 ? 0.0f : 1.0f, tf32_),
                    ctx_.stream());
      }
      if (a.dhx != nullptr)
        copy_3d<float, T>(ctx_, dh, state, row_of(static_cast<T*>(a.dhx), p_.h, p0), strides_of(p_.h), D, N, H);
      if (g.lstm && a.dcx != nullptr)
        copy_3d<float, T>(ctx_, dc, state, row_of(static_cast<T*>(a.dcx), p_.c, p0), strides_of(p_.c), D, N, H);
      current ^= 1;
    }
    const tnc_strides xs = tnc_of(p_.x, p_.data_layout);
    copy_3d<float, T>(ctx_, grad[current], {N * g.I0, g.I0, 1}, static_cast<T*>(a.dx), {xs.t, xs.n, xs.c}, steps, N,
                      g.I0);
  }

  void backward_weights(const tsrpRnnBackwardWeightsArgs& a, void* workspace) const {
    const rnn_geometry& g = g_;
    const int64_t steps = g.T, N = g.N, H = g.H, GH = g.GH, D = g.D, TN = steps * N;
    const backward_weights_workspace wl = backward_weights_workspace_of(p_, g);
    const reserve_layout rl = reserve_layout_of(g);
    char* ws = aligned_base(static_cast<char*>(workspace));
    const char* rs = aligned_base(static_cast<const char*>(a.reserve_space));
    T* dw = static_cast<T*>(a.dweights);
    const bool add = p_.wgrad_mode != TSRP_RNN_WGRAD_SET;
    const float beta = add ? 1.0f : 0.0f;
    matrix x = x_matrix(a.x, wl.x_stage == no_region ? nullptr : at<T>(ws, wl.x_stage));
    for (int l = 0; l < g.L; ++l) {
      const int p0 = l * g.D;
      const int64_t I = g.layer_input(l), pdir = direction_stride(p_, l);
      const layer_reserve& lr = rl.layers[static_cast<size_t>(l)];
      const T* da = at<const T>(rs, lr.da);
      const T* dhr = at<const T>(rs, lr.dhr);
      launch_gemm(gemm_of(GH, I, TN, D, operand(da, dt_, 1, GH, TN * GH), operand(x.data, dt_, x.row, x.col, 0),
                          output(dw + matrix_offset(p0, 0), dt_, I, 1, pdir), beta, tf32_),
                  ctx_.stream());
      // H_{t-1} of direction d for t = 0..T-1 is one matrix starting at slot d.
      launch_gemm(gemm_of(GH, H, TN, D, operand(dhr, dt_, 1, GH, TN * GH),
                          operand(at<const T>(rs, lr.hs), dt_, H, 1, (steps + 2) * N * H),
                          output(dw + matrix_offset(p0, static_cast<int32_t>(g.G)), dt_, H, 1, pdir), beta, tf32_),
                  ctx_.stream());
      T* bw = bias_out(dw, p0, 0);
      T* br = bias_out(dw, p0, static_cast<int32_t>(g.G));
      if (g.gru) {
        // The n gate's recurrent bias sits inside r * (Rn h + bRn): its gradient differs.
        if (bw != nullptr) bias_gradient<T>(ctx_, da, TN, GH, TN * GH, g.D, bw, nullptr, pdir, add);
        if (br != nullptr) bias_gradient<T>(ctx_, dhr, TN, GH, TN * GH, g.D, br, nullptr, pdir, add);
      } else if (bw != nullptr || br != nullptr) {
        bias_gradient<T>(ctx_, da, TN, GH, TN * GH, g.D, bw != nullptr ? bw : br, bw != nullptr ? br : nullptr, pdir,
                         add);
      }
      if (l + 1 < g.L) x = matrix{at<const T>(rs, lr.out), D * H, 1};
    }
  }

 private:
  struct matrix {
    const T* data;
    int64_t row, col;
  };

  template <typename U, typename B>
  static U* at(B* base, size_t offset) {
    return reinterpret_cast<U*>(base + offset);
  }

  // Row `first` of an h/c tensor, or null.
  template <typename P>
  static P* row_of(P* tensor, const tsrpTensor& t, int first) {
    return tensor == nullptr ? nullptr : tensor + first * t.strides[0];
  }

  int64_t matrix_offset(int pseudo_layer, int32_t lin_id) const {
    return tsrpRnnMatrixOffset(&p_.rnn, pseudo_layer, lin_id);
  }

  const T* bias(const T* weights, int pseudo_layer, int32_t lin_id) const {
    const int64_t o = tsrpRnnBiasOffset(&p_.rnn, pseudo_layer, lin_id);
    return o < 0 ? nullptr : weights + o;
  }

  T* bias_out(T* weights, int pseudo_layer, int32_t lin_id) const {
    const int64_t o = tsrpRnnBiasOffset(&p_.rnn, pseudo_layer, lin_id);
    return o < 0 ? nullptr : weights + o;
  }

  // x as the (T*N) x I0 matrix of the input projection: in place when its strides allow,
  // otherwise copied densely into `stage` first.
  matrix x_matrix(const void* x, T* stage) const {
    const int64_t row = direct_x_row_stride(p_);
    if (row != 0) return {static_cast<const T*>(x), row, 1};
    const tnc_strides s = tnc_of(p_.x, p_.data_layout);
    copy_3d<T, T>(ctx_, static_cast<const T*>(x), {s.t, s.n, s.c}, stage, {g_.N * g_.I0, g_.I0, 1}, g_.T, g_.N,
                  g_.I0);
    return {stage, g_.I0, 1};
  }

  const cuda_context& ctx_;
  const tsrpRnnProblem& p_;
  rnn_geometry g_;
  int32_t dt_;
  bool tf32_;
};

template <typename F>
void with_runner(const cuda_context& ctx, const tsrpRnnProblem& p, F&& f) {
  dispatch_storage_type(p.data_type, [&](auto zero) {
    using T = decltype(zero);
    f(rnn_runner<T>(ctx, p));
  });
}

#define TSR_CUDA_RNN_NOTES                                                                               \
  "cuDNN's plan on the plugin's GEMM engine: one GEMM for every step's input projection, then per "    \
  "step one recurrent GEMM (directions batched) and one fused cell kernel; backward weights as "       \
  "GEMMs over the whole sequence. Gate math, LSTM cell state and accumulation in fp32; the hidden "    \
  "state and gate gradients the GEMMs read are rounded to the data type between steps (f16/bf16). "    \
  "Fixed sequence length. Deterministic (fixed-order reductions, no atomics) given a deterministic "  \
  "GEMM engine."

#define TSR_CUDA_RNN_PERSISTENT_NOTES                                                                    \
  "Each layer's recurrent steps in one cooperative launch: every block keeps its hidden units' part "   \
  "of R in shared memory for the whole sequence and multiplies the step's h (forward) or gate "         \
  "gradients (backward data) on the tensor cores (fp32 accumulators), one grid-wide barrier per "      \
  "step; the GEMMs over the whole sequence are the stepwise kernels', and so is the cell math. "        \
  "f16/bf16. Falls back to the stepwise kernels where the device cannot hold the grid resident. "      \
  "Deterministic (fixed-order sums, no atomics)."

// A rough figure for ranking (the registry prefers an estimate over none): the plan's step cycles
// at 1.7 GHz plus ~2 us of barrier and cell per step, for every step of every layer.
double persistent_estimate_us(const tsrpRnnProblem& p, persistent_pass pass = persistent_pass::forward) {
  const rnn_geometry g = geometry_of(p);
  const persistent_plan plan = persistent_plan_for(g, pass);
  return double(g.L) * double(g.T) * (plan.step_cycles / 1700.0 + 2.0);
}

// The forward kernels: inference or training, stepwise or persistent (one template, so that the
// four share their checks and differ only where they must).
template <bool Training, bool Persistent>
struct forward_traits {
  using problem_type = tsrpRnnProblem;
  using args_type = tsrpRnnForwardArgs;
  static constexpr rnn_op op = Training ? rnn_op::forward_training : rnn_op::forward_inference;
  static constexpr const char* name =
      Persistent ? (Training ? "rnn_fwd_training_persistent" : "rnn_fwd_inference_persistent")
                 : (Training ? "rnn_fwd_training_stepwise_gemm" : "rnn_fwd_inference_stepwise_gemm");
  static constexpr int32_t operation = Training ? TSRP_OP_RNN_FORWARD_TRAINING : TSRP_OP_RNN_FORWARD_INFERENCE;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = Persistent ? TSR_CUDA_RNN_PERSISTENT_NOTES : TSR_CUDA_RNN_NOTES;
  static std::string support(const problem_type& p) {
    return Persistent ? persistent_support(p, op) : problem_support(p, op);
  }
  static size_t workspace(const problem_type& p) { return rnn_space_bytes(p, op, Persistent); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    require_pointer(a.x, 1, "x");
    require_pointer(a.y, 1, "y");
    require_pointer(a.weights, 1, "weights");
    if (Training) require_reserve(p, a.reserve_space, a.reserve_space_size);
    with_runner(ctx, p, [&](const auto& r) { r.forward(a, workspace, Training, Persistent); });
  }
};

// The persistent ones carry an estimate, so that the registry ranks them before the stepwise ones
// (which have none) wherever they can run.
template <bool Training>
struct persistent_forward_traits : forward_traits<Training, true> {
  static double estimate_us(const tsrpRnnProblem& p) { return persistent_estimate_us(p); }
};

template <bool Persistent>
struct backward_data_traits {
  using problem_type = tsrpRnnProblem;
  using args_type = tsrpRnnBackwardDataArgs;
  static constexpr const char* name = Persistent ? "rnn_bwd_data_persistent" : "rnn_bwd_data_stepwise_gemm";
  static constexpr int32_t operation = TSRP_OP_RNN_BACKWARD_DATA;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = Persistent ? TSR_CUDA_RNN_PERSISTENT_NOTES : TSR_CUDA_RNN_NOTES;
  static std::string support(const problem_type& p) {
    return Persistent ? persistent_support(p, rnn_op::backward_data) : problem_support(p, rnn_op::backward_data);
  }
  static size_t workspace(const problem_type& p) { return rnn_space_bytes(p, rnn_op::backward_data); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    require_pointer(a.dy, 1, "dy");
    require_pointer(a.dx, 1, "dx");
    require_pointer(a.weights, 1, "weights");
    require_reserve(p, a.reserve_space, a.reserve_space_size);
    with_runner(ctx, p, [&](const auto& r) { r.backward_data(a, workspace, Persistent); });
  }
};

struct persistent_backward_data_traits : backward_data_traits<true> {
  static double estimate_us(const tsrpRnnProblem& p) { return persistent_estimate_us(p, persistent_pass::backward_data); }
};

struct backward_weights_traits {
  using problem_type = tsrpRnnProblem;
  using args_type = tsrpRnnBackwardWeightsArgs;
  static constexpr const char* name = "rnn_bwd_weights_gemm";
  static constexpr int32_t operation = TSRP_OP_RNN_BACKWARD_WEIGHTS;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = TSR_CUDA_RNN_NOTES;
  static std::string support(const problem_type& p) { return problem_support(p, rnn_op::backward_weights); }
  static size_t workspace(const problem_type& p) { return rnn_space_bytes(p, rnn_op::backward_weights); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    require_pointer(a.x, 1, "x");
    require_pointer(a.dweights, 1, "dweights");
    require_reserve(p, a.reserve_space, a.reserve_space_size);
    with_runner(ctx, p, [&](const auto& r) { r.backward_weights(a, workspace); });
  }
};

}  // namespace
}  // namespace rnn

void add_rnn_kernels(kernel_list& out) {
  if (rnn::persistent_switched_on()) {
    out.push_back(make_kernel<rnn::persistent_forward_traits<false>>());
    out.push_back(make_kernel<rnn::persistent_forward_traits<true>>());
    out.push_back(make_kernel<rnn::persistent_backward_data_traits>());
  }
  out.push_back(make_kernel<rnn::forward_traits<false, false>>());
  out.push_back(make_kernel<rnn::forward_traits<true, false>>());
  out.push_back(make_kernel<rnn::backward_data_traits<false>>());
  out.push_back(make_kernel<rnn::backward_weights_traits>());
}

}  // namespace tessera::cuda
