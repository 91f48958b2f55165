// Cross-backend test of the normalization family: every batch, layer and RMS norm kernel of
// every loaded backend whose device is present, through the C API, against the naive reference
// (tests/reference/reference_{batch,layer,rms}_norm.*). Inputs are small integers (exact in every
// data type), every output is poisoned with NaN before the run (y/dx also when beta is 0, so a
// kernel that reads them fails), and shapes mix real networks (ResNet, BERT) with size-1 dims,
// primes and channel counts that are not a multiple of 8. Tolerances grow with the reduction
// length (reference_batch_norm.hpp says why).
#include "backend_fixture.hpp"
#include "reference_batch_norm.hpp"
#include "reference_layer_norm.hpp"
#include "reference_rms_norm.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/shape_inference.hpp>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class BatchNormConformance : public BackendTest {};
class LayerNormConformance : public BackendTest {};
class RmsNormConformance : public BackendTest {};

// A packed f32 vector tensor of `n` elements with the given dims (params, statistics).
tsrpTensor f32_packed(const std::vector<int64_t>& dims) {
  return ref::host_tensor::packed(TSRP_DATA_FLOAT, dims, false).desc();
}

ref::host_tensor filled(const tsrpTensor& t, int lo, int hi, uint32_t seed) {
  ref::host_tensor h(t);
  ref::fill_integers(h, ref::fill_spec{lo, hi, 1.0}, seed);
  return h;
}

ref::host_tensor poisoned(const tsrpTensor& t) {
  ref::host_tensor h(t);
  ref::fill_poison(h);
  return h;
}

// Uploads a host tensor into a fresh device buffer.
struct device_tensor {
  ref::host_tensor host;
  device_buffer buffer;
  device_tensor(tsrHandle_t h, const ref::host_tensor& t) : host(t), buffer(h, t.byte_size()) {
    buffer.upload(host);
  }
  ref::host_tensor download() {
    ref::host_tensor out(host.desc());
    buffer.download(out);
    return out;
  }
  void* p() { return buffer.p; }
};

bool declined(tsrStatus_t s, std::string* why) {
  if (TSR_STATUS_CATEGORY(s) != TSR_STATUS_NOT_SUPPORTED) return false;
  *why = last_error();
  return true;
}

void expect_close(const char* what, const ref::host_tensor& got, const ref::host_tensor& expected,
                  const ref::tolerance& tol) {
  ref::compare_result r = ref::compare(got, expected, tol);
  EXPECT_TRUE(r.ok()) << what << ": " << r.message;
}

void report(const tsrKernelInfo_t& k, tsrOperation_t op, const tally& t) {
  EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name << " declined every case, e.g.: "
                      << t.example_reason;
  std::printf("[ conform  ] %s/%s %s: %d cases ran, %d declined%s%s\n", k.backend_name,
              k.kernel_name, tsrGetOperationName(op), t.ran, t.declined, t.declined ? ", e.g. " : "",
              t.example_reason.substr(0, 160).c_str());
}

const int32_t k_dtypes[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};

// ---- batch normalization -----------------------------------------------------------------

struct bn_shape {
  const char* label;
  std::vector<int64_t> dims;
};
const bn_shape k_bn_shapes[] = {
    {"resnet_4x16x7x7", {4, 16, 7, 7}},
    {"prime_channels_3x7x5x3", {3, 7, 5, 3}},
    {"size_one_1x5x1x1", {1, 5, 1, 1}},
    {"unet3d_2x3x3x4x5", {2, 3, 3, 4, 5}},
    {"fully_connected_8x10", {8, 10}},
    {"long_reduction_2x5x32x32", {2, 5, 32, 32}},
};

// layout 0: NCHW; 1: NHWC; 2: x NCHW with y/dx NHWC (every tensor read or written staged).
struct bn_case {
  tsrpBatchNormProblem p;
  bool relu;
};

bn_case make_bn_case(const bn_shape& s, int32_t dt, int layout, int mode, bool relu) {
  bn_case c{};
  c.relu = relu;
  tsrpBatchNormProblem& p = c.p;
  p.struct_size = sizeof(p);
  p.mode = mode;
  p.activation = relu ? TSRP_ACTIVATION_RELU : TSRP_ACTIVATION_IDENTITY;
  p.epsilon = 1e-5;
  p.exponential_average_factor = 0.25;
  p.x = ref::host_tensor::packed(dt, s.dims, layout == 1).desc();
  p.y = ref::host_tensor::packed(dt, s.dims, layout >= 1).desc();
  p.dy = p.x;
  p.dx = p.y;
  std::vector<int64_t> pd(s.dims.size(), 1);
  pd[1] = s.dims[1];
  if (mode == TSRP_BATCH_NORM_PER_ACTIVATION)
    for (size_t i = 2; i < s.dims.size(); ++i) pd[i] = s.dims[i];
  p.param = f32_packed(pd);
  return c;
}

tsrActivationDescriptor_t make_act(bool relu) {
  if (!relu) return nullptr;
  tsrActivationDescriptor_t a = nullptr;
  tsrCreateActivationDescriptor(&a);
  tsrSetActivationDescriptor(a, TSR_ACTIVATION_RELU, 0.0);
  return a;
}

bool run_bn_training(tsrHandle_t h, const tsrKernelInfo_t& k, const bn_case& c, float alpha,
                     float beta, uint32_t seed, std::string* why) {
  const tsrpBatchNormProblem& p = c.p;
  const auto mode = static_cast<tsrBatchNormMode_t>(p.mode);
  desc_owner xd(p.x), yd(p.y), pd(p.param);
  // The derive helper must agree with the test's parameter layout.
  desc_owner derived(p.param);
  EXPECT_OK(tsrDeriveBatchNormTensorDescriptor(xd, mode, derived));
  tsrActivationDescriptor_t act = make_act(c.relu);
  size_t ws = 0;
  tsrStatus_t s = tsrGetBatchNormalizationForwardTrainingWorkspaceSize(h, mode, act, xd, yd, derived, k.algo, &ws);
  if (declined(s, why)) return tsrDestroyActivationDescriptor(act), false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), y0 = filled(p.y, -3, 3, seed + 1);
  ref::host_tensor scale = filled(p.param, -2, 2, seed + 2), bias = filled(p.param, -3, 3, seed + 3);
  ref::host_tensor rm = filled(p.param, -2, 2, seed + 4), rv = filled(p.param, 1, 4, seed + 5);
  device_tensor dx_(h, x), dy_(h, beta == 0.0f ? poisoned(p.y) : y0), dscale(h, scale), dbias(h, bias),
      drm(h, rm), drv(h, rv), dsm(h, poisoned(p.param)), dsv(h, poisoned(p.param));
  device_buffer dws(h, ws);
  s = tsrBatchNormalizationForwardTraining(h, mode, act, k.algo, alpha, xd, dx_.p(), pd, dscale.p(),
                                           dbias.p(), p.exponential_average_factor, p.epsilon, dws.p,
                                           ws, beta, yd, dy_.p(), drm.p(), drv.p(), dsm.p(), dsv.p());
  tsrDestroyActivationDescriptor(act);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor ey = y0, erm = rm, erv = rv, esm(p.param), esv(p.param);
  std::string error;
  EXPECT_TRUE(ref::batch_norm_forward_training(p, x.data(), scale.data(), bias.data(), alpha, beta,
                                               ey.data(), erm.data(), erv.data(), esm.data(),
                                               esv.data(), &error))
      << error;
  ey.round_to_data_type();
  const int64_t length = ref::batch_norm_reduction_length(p);
  expect_close("y", dy_.download(), ey, ref::norm_data_tolerance(p.y.data_type, length));
  expect_close("save_mean", dsm.download(), esm, ref::norm_stat_tolerance(length));
  expect_close("save_inv_variance", dsv.download(), esv, ref::norm_stat_tolerance(length));
  expect_close("running_mean", drm.download(), erm, ref::norm_stat_tolerance(length));
  expect_close("running_variance", drv.download(), erv, ref::norm_stat_tolerance(length));
  return true;
}

bool run_bn_inference(tsrHandle_t h, const tsrKernelInfo_t& k, const bn_case& c, float alpha,
                      float beta, uint32_t seed, std::string* why) {
  const tsrpBatchNormProblem& p = c.p;
  const auto mode = static_cast<tsrBatchNormMode_t>(p.mode);
  desc_owner xd(p.x), yd(p.y), pd(p.param);
  tsrActivationDescriptor_t act = make_act(c.relu);
  size_t ws = 0;
  tsrStatus_t s = tsrGetBatchNormalizationForwardInferenceWorkspaceSize(h, mode, act, xd, yd, pd, k.algo, &ws);
  if (declined(s, why)) return tsrDestroyActivationDescriptor(act), false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), y0 = filled(p.y, -3, 3, seed + 1);
  ref::host_tensor scale = filled(p.param, -2, 2, seed + 2), bias = filled(p.param, -3, 3, seed + 3);
  ref::host_tensor mean = filled(p.param, -2, 2, seed + 4), var = filled(p.param, 1, 4, seed + 5);
  device_tensor dx_(h, x), dy_(h, beta == 0.0f ? poisoned(p.y) : y0), dscale(h, scale), dbias(h, bias),
      dm(h, mean), dv(h, var);
  device_buffer dws(h, ws);
  s = tsrBatchNormalizationForwardInference(h, mode, act, k.algo, alpha, xd, dx_.p(), pd, dscale.p(),
                                            dbias.p(), dm.p(), dv.p(), p.epsilon, dws.p, ws, beta, yd,
                                            dy_.p());
  tsrDestroyActivationDescriptor(act);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor ey = y0;
  std::string error;
  EXPECT_TRUE(ref::batch_norm_forward_inference(p, x.data(), scale.data(), bias.data(), mean.data(),
                                                var.data(), alpha, beta, ey.data(), &error))
      << error;
  ey.round_to_data_type();
  expect_close("y", dy_.download(), ey, ref::norm_data_tolerance(p.y.data_type, 1));
  return true;
}

struct bn_backward_scalars {
  float alpha, beta, alpha_param, beta_param;
};

bool run_bn_backward(tsrHandle_t h, const tsrKernelInfo_t& k, const bn_case& c,
                     const bn_backward_scalars& sc, uint32_t seed, std::string* why) {
  const tsrpBatchNormProblem& p = c.p;
  const auto mode = static_cast<tsrBatchNormMode_t>(p.mode);
  desc_owner xd(p.x), yd(p.x), dyd(p.dy), dxd(p.dx), pd(p.param);
  tsrActivationDescriptor_t act = make_act(c.relu);
  size_t ws = 0;
  tsrStatus_t s = tsrGetBatchNormalizationBackwardWorkspaceSize(h, mode, act, xd, c.relu ? yd.d : nullptr,
                                                                dyd, dxd, pd, k.algo, &ws);
  if (declined(s, why)) return tsrDestroyActivationDescriptor(act), false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), dy = filled(p.dy, -3, 3, seed + 1);
  ref::host_tensor y = filled(p.x, -2, 2, seed + 2);  // only its sign matters (relu mask)
  ref::host_tensor dx0 = filled(p.dx, -3, 3, seed + 3);
  ref::host_tensor scale = filled(p.param, -2, 2, seed + 4);
  ref::host_tensor ds0 = filled(p.param, -3, 3, seed + 5), db0 = filled(p.param, -3, 3, seed + 6);
  // Saved statistics as training would give them (from the reference, rounded to f32).
  ref::host_tensor sm(p.param), sv(p.param), scratch_y(p.x);
  ref::host_tensor zero_bias(p.param);
  std::string error;
  EXPECT_TRUE(ref::batch_norm_forward_training(p, x.data(), scale.data(), zero_bias.data(), 1, 0,
                                               scratch_y.data(), nullptr, nullptr, sm.data(), sv.data(),
                                               &error))
      << error;
  device_tensor bx(h, x), by(h, y), bdy(h, dy), bdx(h, sc.beta == 0 ? poisoned(p.dx) : dx0),
      bscale(h, scale), bsm(h, sm), bsv(h, sv), bds(h, sc.beta_param == 0 ? poisoned(p.param) : ds0),
      bdb(h, sc.beta_param == 0 ? poisoned(p.param) : db0);
  device_buffer dws(h, ws);
  s = tsrBatchNormalizationBackward(h, mode, act, k.algo, sc.alpha, sc.alpha_param, xd, bx.p(),
                                    c.relu ? yd.d : nullptr, c.relu ? by.p() : nullptr, dyd, bdy.p(),
                                    pd, bscale.p(), bsm.p(), bsv.p(), p.epsilon, dws.p, ws, sc.beta,
                                    dxd, bdx.p(), sc.beta_param, bds.p(), bdb.p());
  tsrDestroyActivationDescriptor(act);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor edx = dx0, eds = ds0, edb = db0;
  EXPECT_TRUE(ref::batch_norm_backward(p, x.data(), y.data(), dy.data(), scale.data(), sm.data(),
                                       sv.data(), sc.alpha, sc.beta, sc.alpha_param, sc.beta_param,
                                       edx.data(), eds.data(), edb.data(), &error))
      << error;
  edx.round_to_data_type();
  const int64_t length = ref::batch_norm_reduction_length(p);
  expect_close("dx", bdx.download(), edx, ref::norm_data_tolerance(p.dx.data_type, length));
  expect_close("dscale", bds.download(), eds, ref::norm_param_grad_tolerance(length));
  expect_close("dbias", bdb.download(), edb, ref::norm_param_grad_tolerance(length));
  return true;
}

enum class bn_which { training, inference, backward };

void bn_sweep(tsrHandle_t h, const std::string& backend, bn_which which) {
  const tsrOperation_t op = which == bn_which::training    ? TSR_OP_BATCH_NORM_FORWARD_TRAINING
                            : which == bn_which::inference ? TSR_OP_BATCH_NORM_FORWARD_INFERENCE
                                                           : TSR_OP_BATCH_NORM_BACKWARD;
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  const bn_backward_scalars scalars[] = {{1, 0, 1, 0}, {0.5f, 2, 2, 0.5f}};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 300;
    for (const bn_shape& s : k_bn_shapes)
      for (int32_t dt : k_dtypes)
        for (int layout : {0, 1, 2})
          for (int mode : {TSRP_BATCH_NORM_SPATIAL, TSRP_BATCH_NORM_PER_ACTIVATION})
            for (const bn_backward_scalars& sc : scalars)
              for (bool relu : {false, true}) {
                // A fused relu once per shape, type and mode is enough to prove the fusion.
                if (relu && (layout != 0 || sc.alpha != 1)) continue;
                if (s.dims.size() == 2 && layout != 0) continue;  // 2-D: one layout
                SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label +
                             " dt=" + tessera::common::data_type_name(dt) + " layout=" +
                             std::to_string(layout) + " mode=" + std::to_string(mode) +
                             " alpha=" + std::to_string(sc.alpha) + " beta=" + std::to_string(sc.beta) +
                             (relu ? " relu" : ""));
                bn_case c = make_bn_case(s, dt, layout, mode, relu);
                std::string why;
                bool ran = which == bn_which::training ? run_bn_training(h, k, c, sc.alpha, sc.beta, seed, &why)
                           : which == bn_which::inference ? run_bn_inference(h, k, c, sc.alpha, sc.beta, seed, &why)
                                                          : run_bn_backward(h, k, c, sc, seed, &why);
                seed += 10;
                if (ran) {
                  ++t.ran;
                } else {
                  ++t.declined;
                  if (t.example_reason.empty()) t.example_reason = why;
                }
              }
    report(k, op, t);
  }
}

TEST_P(BatchNormConformance, forward_training_matches_the_reference) {
  bn_sweep(h_, GetParam().name, bn_which::training);
}
TEST_P(BatchNormConformance, forward_inference_matches_the_reference) {
  bn_sweep(h_, GetParam().name, bn_which::inference);
}
TEST_P(BatchNormConformance, backward_matches_the_reference) {
  bn_sweep(h_, GetParam().name, bn_which::backward);
}

// ---- layer and RMS normalization ---------------------------------------------------------

struct ln_shape {
  const char* label;
  std::vector<int64_t> dims;
  int axis;
};
const ln_shape k_ln_shapes[] = {
    {"rows_4x16", {4, 16}, 1},
    {"chw_2x3x5x7_axis1", {2, 3, 5, 7}, 1},
    {"last_dim_2x3x5x7_axis3", {2, 3, 5, 7}, 3},
    {"size_one_1x1", {1, 1}, 1},
    {"prime_3x13x11", {3, 13, 11}, 2},
    {"bert_2x7x768", {2, 7, 768}, 2},
    // Enough rows that each warp of the CUDA warp-per-row forward walks several (its next-row
    // copies then run).
    {"rows_300x1024", {300, 1024}, 1},
};

// layout 0: row-major; 1: x channels-last (not row-major); 2: x row-major, output channels-last.
std::pair<tsrpTensor, tsrpTensor> ln_tensors(const ln_shape& s, int32_t dt, int layout) {
  return {ref::host_tensor::packed(dt, s.dims, layout == 1).desc(),
          ref::host_tensor::packed(dt, s.dims, layout >= 1).desc()};
}
tsrpTensor scale_tensor(const ln_shape& s) {
  return f32_packed(std::vector<int64_t>(s.dims.begin() + s.axis, s.dims.end()));
}
tsrpTensor stats_tensor(const ln_shape& s) {
  return f32_packed(std::vector<int64_t>(s.dims.begin(), s.dims.begin() + s.axis));
}
int64_t inner_of(const ln_shape& s) {
  int64_t n = 1;
  for (size_t i = static_cast<size_t>(s.axis); i < s.dims.size(); ++i) n *= s.dims[i];
  return n;
}

// options: bit 0 scale, bit 1 bias (forward) / dbias (backward), bit 2 statistics (forward) /
// dscale (backward).
bool run_ln_forward(tsrHandle_t h, const tsrKernelInfo_t& k, const ln_shape& sh, int32_t dt,
                    int layout, int options, uint32_t seed, std::string* why) {
  tsrpLayerNormProblem p{};
  p.struct_size = sizeof(p);
  p.begin_norm_axis = sh.axis;
  p.epsilon = 1e-5;
  std::tie(p.x, p.y) = ln_tensors(sh, dt, layout);
  p.scale = scale_tensor(sh);
  p.stats = stats_tensor(sh);
  const bool use_scale = options & 1, use_bias = options & 2, use_stats = options & 4;
  desc_owner xd(p.x), yd(p.y), sd(p.scale), td(p.stats);
  size_t ws = 0;
  tsrStatus_t s = tsrGetLayerNormalizationForwardWorkspaceSize(h, sh.axis, xd, sd, td, yd, k.algo, &ws);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), scale = filled(p.scale, -2, 2, seed + 1),
                   bias = filled(p.scale, -3, 3, seed + 2);
  device_tensor bx(h, x), by(h, poisoned(p.y)), bs(h, scale), bb(h, bias), bm(h, poisoned(p.stats)),
      bi(h, poisoned(p.stats));
  device_buffer dws(h, ws);
  s = tsrLayerNormalizationForward(h, k.algo, sh.axis, p.epsilon, xd, bx.p(), sd,
                                   use_scale ? bs.p() : nullptr, use_bias ? bb.p() : nullptr, td,
                                   dws.p, ws, yd, by.p(), use_stats ? bm.p() : nullptr,
                                   use_stats ? bi.p() : nullptr);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor ey(p.y), em(p.stats), ei(p.stats);
  std::string error;
  EXPECT_TRUE(ref::layer_norm_forward(p, x.data(), use_scale ? scale.data() : nullptr,
                                      use_bias ? bias.data() : nullptr, ey.data(), em.data(), ei.data(),
                                      &error))
      << error;
  ey.round_to_data_type();
  const int64_t length = inner_of(sh);
  expect_close("y", by.download(), ey, ref::norm_data_tolerance(dt, length));
  if (use_stats) {
    expect_close("mean", bm.download(), em, ref::norm_stat_tolerance(length));
    expect_close("inv_std", bi.download(), ei, ref::norm_stat_tolerance(length));
  }
  return true;
}

bool run_ln_backward(tsrHandle_t h, const tsrKernelInfo_t& k, const ln_shape& sh, int32_t dt,
                     int layout, int options, uint32_t seed, std::string* why) {
  tsrpLayerNormProblem p{};
  p.struct_size = sizeof(p);
  p.begin_norm_axis = sh.axis;
  p.epsilon = 1e-5;
  std::tie(p.dy, p.dx) = ln_tensors(sh, dt, layout);
  p.x = p.dy;
  p.y = p.dy;
  p.scale = scale_tensor(sh);
  p.stats = stats_tensor(sh);
  const bool use_scale = options & 1, want_dbias = options & 2, want_dscale = (options & 4) && use_scale;
  desc_owner xd(p.x), dyd(p.dy), dxd(p.dx), sd(p.scale), td(p.stats);
  size_t ws = 0;
  tsrStatus_t s = tsrGetLayerNormalizationBackwardWorkspaceSize(h, sh.axis, xd, dyd, sd, td, dxd, k.algo, &ws);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), dy = filled(p.dy, -3, 3, seed + 1),
                   scale = filled(p.scale, -2, 2, seed + 2);
  ref::host_tensor sm(p.stats), si(p.stats), scratch(p.x);
  std::string error;
  EXPECT_TRUE(ref::layer_norm_forward(p, x.data(), nullptr, nullptr, scratch.data(), sm.data(), si.data(), &error));
  device_tensor bx(h, x), bdy(h, dy), bs(h, scale), bm(h, sm), bi(h, si), bdx(h, poisoned(p.dx)),
      bds(h, poisoned(p.scale)), bdb(h, poisoned(p.scale));
  device_buffer dws(h, ws);
  s = tsrLayerNormalizationBackward(h, k.algo, sh.axis, p.epsilon, xd, bx.p(), dyd, bdy.p(), sd,
                                    use_scale ? bs.p() : nullptr, td, bm.p(), bi.p(), dws.p, ws, dxd,
                                    bdx.p(), want_dscale ? bds.p() : nullptr, want_dbias ? bdb.p() : nullptr);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor edx(p.dx), eds(p.scale), edb(p.scale);
  EXPECT_TRUE(ref::layer_norm_backward(p, x.data(), dy.data(), use_scale ? scale.data() : nullptr,
                                       sm.data(), si.data(), edx.data(), eds.data(), edb.data(), &error))
      << error;
  edx.round_to_data_type();
  const int64_t length = inner_of(sh);
  const int64_t rows = ref::host_tensor(p.stats).element_count();
  expect_close("dx", bdx.download(), edx, ref::norm_data_tolerance(dt, length));
  if (want_dscale) expect_close("dscale", bds.download(), eds, ref::norm_param_grad_tolerance(rows));
  if (want_dbias) expect_close("dbias", bdb.download(), edb, ref::norm_param_grad_tolerance(rows));
  return true;
}

// options: bit 0 saved inv_rms (forward writes it, backward reads it), bit 1 dscale.
bool run_rms(tsrHandle_t h, bool backward, const tsrKernelInfo_t& k, const ln_shape& sh, int32_t dt,
             int layout, int options, uint32_t seed, std::string* why) {
  tsrpRmsNormProblem p{};
  p.struct_size = sizeof(p);
  p.begin_norm_axis = sh.axis;
  p.epsilon = 1e-5;
  std::tie(p.x, p.y) = ln_tensors(sh, dt, layout);
  p.dy = p.x;
  p.dx = p.y;
  p.scale = scale_tensor(sh);
  p.stats = stats_tensor(sh);
  const bool saved = options & 1, want_dscale = options & 2;
  desc_owner xd(p.x), yd(p.y), sd(p.scale), td(p.stats);
  size_t ws = 0;
  tsrStatus_t s = backward ? tsrGetRmsNormalizationBackwardWorkspaceSize(h, sh.axis, xd, xd, sd, yd, k.algo, &ws)
                           : tsrGetRmsNormalizationForwardWorkspaceSize(h, sh.axis, xd, sd, yd, k.algo, &ws);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  ref::host_tensor x = filled(p.x, -4, 4, seed), dy = filled(p.x, -3, 3, seed + 1),
                   scale = filled(p.scale, -2, 2, seed + 2);
  ref::host_tensor inv(p.stats), scratch(p.y);
  std::string error;
  EXPECT_TRUE(ref::rms_norm_forward(p, x.data(), scale.data(), scratch.data(), inv.data(), &error));
  device_tensor bx(h, x), bdy(h, dy), bs(h, scale), bout(h, poisoned(p.y)),
      binv(h, backward ? inv : poisoned(p.stats)), bds(h, poisoned(p.scale));
  device_buffer dws(h, ws);
  s = backward ? tsrRmsNormalizationBackward(h, k.algo, sh.axis, p.epsilon, xd, bx.p(), xd, bdy.p(), sd,
                                             bs.p(), saved ? td.d : nullptr, saved ? binv.p() : nullptr,
                                             dws.p, ws, yd, bout.p(), want_dscale ? bds.p() : nullptr)
               : tsrRmsNormalizationForward(h, k.algo, sh.axis, p.epsilon, xd, bx.p(), sd, bs.p(),
                                            saved ? td.d : nullptr, dws.p, ws, yd, bout.p(),
                                            saved ? binv.p() : nullptr);
  if (declined(s, why)) return false;
  EXPECT_OK(s);
  const int64_t length = inner_of(sh);
  ref::host_tensor eout(p.y), eds(p.scale);
  if (backward) {
    EXPECT_TRUE(ref::rms_norm_backward(p, x.data(), dy.data(), scale.data(), saved ? inv.data() : nullptr,
                                       eout.data(), eds.data(), &error))
        << error;
  } else {
    EXPECT_TRUE(ref::rms_norm_forward(p, x.data(), scale.data(), eout.data(), nullptr, &error)) << error;
  }
  eout.round_to_data_type();
  expect_close(backward ? "dx" : "y", bout.download(), eout, ref::norm_data_tolerance(dt, length));
  if (!backward && saved) expect_close("inv_rms", binv.download(), inv, ref::norm_stat_tolerance(length));
  if (backward && want_dscale)
    expect_close("dscale", bds.download(), eds,
                 ref::norm_param_grad_tolerance(ref::host_tensor(p.stats).element_count()));
  return true;
}

template <class Run>
void ln_sweep(tsrHandle_t /*h: the runners carry it*/, const std::string& backend, tsrOperation_t op, int option_count, Run run) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 700;
    for (const ln_shape& s : k_ln_shapes)
      for (int32_t dt : k_dtypes)
        for (int layout : {0, 1, 2})
          for (int options = 0; options < option_count; ++options) {
            // Every option on row-major data, the full set of options elsewhere.
            if (layout != 0 && options != option_count - 1) continue;
            SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label + " dt=" +
                         tessera::common::data_type_name(dt) + " layout=" + std::to_string(layout) +
                         " options=" + std::to_string(options));
            std::string why;
            bool ran = run(k, s, dt, layout, options, seed, &why);
            seed += 10;
            if (ran) {
              ++t.ran;
            } else {
              ++t.declined;
              if (t.example_reason.empty()) t.example_reason = why;
            }
          }
    report(k, op, t);
  }
}

TEST_P(LayerNormConformance, forward_matches_the_reference) {
  ln_sweep(h_, GetParam().name, TSR_OP_LAYER_NORM_FORWARD, 8, [&](auto&&... a) { return run_ln_forward(h_, a...); });
}
TEST_P(LayerNormConformance, backward_matches_the_reference) {
  ln_sweep(h_, GetParam().name, TSR_OP_LAYER_NORM_BACKWARD, 8, [&](auto&&... a) { return run_ln_backward(h_, a...); });
}
TEST_P(RmsNormConformance, forward_matches_the_reference) {
  ln_sweep(h_, GetParam().name, TSR_OP_RMS_NORM_FORWARD, 2,
           [&](auto&&... a) { return run_rms(h_, false, a...); });
}
TEST_P(RmsNormConformance, backward_matches_the_reference) {
  ln_sweep(h_, GetParam().name, TSR_OP_RMS_NORM_BACKWARD, 4,
           [&](auto&&... a) { return run_rms(h_, true, a...); });
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, BatchNormConformance, ::testing::ValuesIn(loaded_backends()),
                         backend_param_name);
INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, LayerNormConformance, ::testing::ValuesIn(loaded_backends()),
                         backend_param_name);
INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, RmsNormConformance, ::testing::ValuesIn(loaded_backends()),
                         backend_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchNormConformance);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LayerNormConformance);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RmsNormConformance);

}  // namespace
