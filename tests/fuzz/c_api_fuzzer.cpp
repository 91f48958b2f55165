// libFuzzer target: the C API driven from bytes on the CPU backend. Each input is a short
// program: a few operations, each one making its descriptors from the bytes (plausible most of the
// time, hostile some of the time), buffers sized from what the descriptors claim, calling the
// operation (and for convolution its get/find/workspace queries) and checking the library's
// promises (fuzz_session.hpp). tests/fuzz/README.md has the commands; seeds are in corpus/.
#include "fuzz_session.hpp"

#include <cstdlib>
#include <functional>

using tessera::fuzz::session;

namespace {

tsrHandle_t g_handle = nullptr;

template <typename T, tsrStatus_t (*Destroy)(T)>
struct owned {
  T raw = nullptr;
  ~owned() {
    if (raw) Destroy(raw);
  }
};

using activation_owner = owned<tsrActivationDescriptor_t, tsrDestroyActivationDescriptor>;
using convolution_owner = owned<tsrConvolutionDescriptor_t, tsrDestroyConvolutionDescriptor>;
using pooling_owner = owned<tsrPoolingDescriptor_t, tsrDestroyPoolingDescriptor>;
using lrn_owner = owned<tsrLrnDescriptor_t, tsrDestroyLrnDescriptor>;
using matmul_owner = owned<tsrMatmulDescriptor_t, tsrDestroyMatmulDescriptor>;
using op_tensor_owner = owned<tsrOpTensorDescriptor_t, tsrDestroyOpTensorDescriptor>;
using reduce_owner = owned<tsrReduceTensorDescriptor_t, tsrDestroyReduceTensorDescriptor>;

tsrActivationDescriptor_t activation(session& s, activation_owner& o) {
  s.check("tsrCreateActivationDescriptor", tsrCreateActivationDescriptor(&o.raw));
  if (s.in_range<int>(0, 15) == 0) return o.raw;  // unset: the default
  s.check("tsrSetActivationDescriptor",
          tsrSetActivationDescriptor(o.raw, s.enumerated<tsrActivationMode_t>(10), s.real(0.5)));
  return o.raw;
}

// ---- activation -------------------------------------------------------------------------------

void activation_forward(session& s) {
  activation_owner act;
  activation(s, act);
  tsrTensorDescriptor_t x = s.tensor(nullptr, s.in_range<int>(1, 5));
  std::vector<int64_t> dims = session::dims_of(x);
  tsrTensorDescriptor_t y = s.tensor(&dims);
  float alpha = s.scalar(), beta = s.scalar();
  const void* xp = s.input(x);
  void* yp = s.output(y);
  s.check("tsrActivationForward",
          tsrActivationForward(g_handle, act.raw, s.algo(), alpha, x, xp, beta, y, yp));
}

void activation_backward(session& s) {
  activation_owner act;
  activation(s, act);
  tsrTensorDescriptor_t x = s.tensor(nullptr, s.in_range<int>(1, 5));
  std::vector<int64_t> dims = session::dims_of(x);
  tsrTensorDescriptor_t y = s.tensor(&dims), dy = s.tensor(&dims), dx = s.tensor(&dims);
  float alpha = s.scalar(), beta = s.scalar();
  const void *yp = s.input(y), *dyp = s.input(dy), *xp = s.input(x);
  void* dxp = s.output(dx);
  s.check("tsrActivationBackward", tsrActivationBackward(g_handle, act.raw, s.algo(), alpha, y, yp,
                                                         dy, dyp, x, xp, beta, dx, dxp));
}

// ---- convolution ------------------------------------------------------------------------------

tsrConvolutionDescriptor_t convolution(session& s, convolution_owner& o, int spatial) {
  s.check("tsrCreateConvolutionDescriptor", tsrCreateConvolutionDescriptor(&o.raw));
  if (s.in_range<int>(0, 15) == 0) return o.raw;
  int n = s.in_range<int>(0, 15) == 0 ? s.in_range<int>(-1, 5) : spatial;
  int64_t pb[8], pa[8], st[8], di[8];
  for (int i = 0; i < 8; ++i) {
    pb[i] = s.dim(0, 2);
    pa[i] = s.coin() ? pb[i] : s.dim(0, 2);
    st[i] = s.dim(1, 2);
    di[i] = s.dim(1, 2);
  }
  s.check("tsrSetConvolutionNdDescriptor",
          tsrSetConvolutionNdDescriptor(o.raw, n, pb, pa, st, di,
                                        s.enumerated<tsrConvolutionMode_t>(2),
                                        s.coin() ? TSR_DATA_FLOAT : s.dtype()));
  if (s.in_range<int>(0, 3) == 0)
    s.check("tsrSetConvolutionGroupCount", tsrSetConvolutionGroupCount(o.raw, s.dim(1, 4)));
  return o.raw;
}

struct conv_problem {
  convolution_owner conv;
  tsrTensorDescriptor_t x, w, y;
  std::vector<int64_t> y_dims;
};

// x, w and y, with y's dims from tsrGetConvolutionForwardOutputDim most of the time.
void make_conv_problem(session& s, conv_problem& p) {
  int spatial = s.in_range<int>(1, 3);
  int rank = spatial + 2;
  tsrDataType_t type = s.in_range<int>(0, 7) == 0 ? s.dtype() : TSR_DATA_FLOAT;
  convolution(s, p.conv, spatial);
  p.x = s.tensor(nullptr, rank, type);
  p.w = s.tensor(nullptr, rank, type);
  std::vector<int64_t> out(static_cast<size_t>(rank), 1);
  tsrStatus_t st = tsrGetConvolutionForwardOutputDim(p.conv.raw, p.x, p.w, rank, out.data());
  s.check("tsrGetConvolutionForwardOutputDim", st);
  p.y_dims = st == TSR_STATUS_SUCCESS ? out : std::vector<int64_t>();
  p.y = s.tensor(p.y_dims.empty() ? nullptr : &p.y_dims, rank, type);
}

void convolution_forward(session& s) {
  conv_problem p;
  make_conv_problem(s, p);
  const void *xp = s.input(p.x), *wp = s.input(p.w);
  switch (s.in_range<int>(0, 4)) {
    case 0: {
      tsrAlgoPerf_t perf[4] = {};
      for (tsrAlgoPerf_t& q : perf) q.struct_size = s.coin() ? sizeof(q) : s.in_range<size_t>(0, 512);
      int requested = s.in_range<int>(-1, 4), returned = -7;
      s.check("tsrGetConvolutionForwardAlgorithm",
              tsrGetConvolutionForwardAlgorithm(g_handle, p.x, p.w, p.conv.raw, p.y, requested,
                                                &returned, perf));
      return;
    }
    case 1: {
      size_t bytes = 0;
      s.check("tsrGetConvolutionForwardWorkspaceSize",
              tsrGetConvolutionForwardWorkspaceSize(g_handle, p.x, p.w, p.conv.raw, p.y, s.algo(),
                                                    &bytes));
      return;
    }
    case 2: {
      tsrAlgoPerf_t perf[4] = {};
      for (tsrAlgoPerf_t& q : perf) q.struct_size = sizeof(q);
      int returned = -7;
      auto ws = s.workspace();
      const void* yp = s.input(p.y);  // find never writes y
      s.check("tsrFindConvolutionForwardAlgorithm",
              tsrFindConvolutionForwardAlgorithm(g_handle, p.x, xp, p.w, wp, p.conv.raw, p.y, yp,
                                                 s.in_range<int>(0, 4), &returned, perf, ws.first,
                                                 ws.second));
      return;
    }
    default: {
      auto ws = s.workspace();
      float alpha = s.scalar(), beta = s.scalar();
      tsrAlgo_t algo = s.algo();
      void* yp = s.output(p.y);
      s.check("tsrConvolutionForward",
              tsrConvolutionForward(g_handle, alpha, p.x, xp, p.w, wp, p.conv.raw, algo, ws.first,
                                    ws.second, beta, p.y, yp));
    }
  }
}

void convolution_backward(session& s) {
  conv_problem p;
  make_conv_problem(s, p);
  auto ws = s.workspace();
  float alpha = s.scalar(), beta = s.scalar();
  tsrAlgo_t algo = s.algo();
  switch (s.in_range<int>(0, 2)) {
    case 0: {
      const void *wp = s.input(p.w), *dyp = s.input(p.y);
      void* dxp = s.output(p.x);
      s.check("tsrConvolutionBackwardData",
              tsrConvolutionBackwardData(g_handle, alpha, p.w, wp, p.y, dyp, p.conv.raw, algo,
                                         ws.first, ws.second, beta, p.x, dxp));
      return;
    }
    case 1: {
      const void *xp = s.input(p.x), *dyp = s.input(p.y);
      void* dwp = s.output(p.w);
      s.check("tsrConvolutionBackwardFilter",
              tsrConvolutionBackwardFilter(g_handle, alpha, p.x, xp, p.y, dyp, p.conv.raw, algo,
                                           ws.first, ws.second, beta, p.w, dwp));
      return;
    }
    default: {
      std::vector<int64_t> bias_dims(p.y_dims.size(), 1);
      if (bias_dims.size() > 1) bias_dims[1] = p.y_dims[1];
      tsrTensorDescriptor_t db = s.tensor(bias_dims.empty() ? nullptr : &bias_dims);
      const void* dyp = s.input(p.y);
      void* dbp = s.output(db);
      s.check("tsrConvolutionBackwardBias",
              tsrConvolutionBackwardBias(g_handle, alpha, p.y, dyp, beta, db, dbp));
    }
  }
}

void convolution_fused(session& s) {
  conv_problem p;
  make_conv_problem(s, p);
  activation_owner act;
  activation(s, act);
  std::vector<int64_t> bias_dims(p.y_dims.size(), 1);
  if (bias_dims.size() > 1) bias_dims[1] = p.y_dims[1];
  tsrTensorDescriptor_t bias = s.tensor(bias_dims.empty() ? nullptr : &bias_dims);
  tsrTensorDescriptor_t z = s.tensor(p.y_dims.empty() ? nullptr : &p.y_dims);
  auto ws = s.workspace();
  float alpha1 = s.scalar(), alpha2 = s.scalar();
  tsrAlgo_t algo = s.algo();
  const void *xp = s.input(p.x), *wp = s.input(p.w), *zp = s.input(z), *bp = s.input(bias);
  void* yp = s.output(p.y);
  s.check("tsrConvolutionBiasActivationForward",
          tsrConvolutionBiasActivationForward(g_handle, alpha1, p.x, xp, p.w, wp, p.conv.raw, algo,
                                              ws.first, ws.second, alpha2, z, zp, bias, bp,
                                              act.raw, p.y, yp));
}

// ---- pooling, softmax, LRN --------------------------------------------------------------------

void pooling(session& s) {
  pooling_owner pool;
  s.check("tsrCreatePoolingDescriptor", tsrCreatePoolingDescriptor(&pool.raw));
  int spatial = s.in_range<int>(0, 15) == 0 ? s.in_range<int>(-1, 5) : s.in_range<int>(2, 3);
  int64_t window[8], pb[8], pa[8], stride[8];
  for (int i = 0; i < 8; ++i) {
    window[i] = s.dim(1, 3);
    pb[i] = s.dim(0, 1);
    pa[i] = s.coin() ? pb[i] : s.dim(0, 1);
    stride[i] = s.dim(1, 2);
  }
  if (s.in_range<int>(0, 15) != 0)
    s.check("tsrSetPoolingNdDescriptor",
            tsrSetPoolingNdDescriptor(pool.raw, s.enumerated<tsrPoolingMode_t>(3),
                                      s.enumerated<tsrNanPropagation_t>(2), spatial, window, pb, pa,
                                      stride));
  int rank = (spatial >= 1 && spatial <= 3 ? spatial : 2) + 2;
  tsrTensorDescriptor_t x = s.tensor(nullptr, rank);
  std::vector<int64_t> out(static_cast<size_t>(rank), 1);
  tsrStatus_t st = tsrGetPoolingNdForwardOutputDim(pool.raw, x, rank, out.data());
  s.check("tsrGetPoolingNdForwardOutputDim", st);
  tsrTensorDescriptor_t y = s.tensor(st == TSR_STATUS_SUCCESS ? &out : nullptr, rank);
  float alpha = s.scalar(), beta = s.scalar();
  tsrAlgo_t algo = s.algo();
  if (s.coin()) {
    const void* xp = s.input(x);
    void* yp = s.output(y);
    s.check("tsrPoolingForward",
            tsrPoolingForward(g_handle, pool.raw, algo, alpha, x, xp, beta, y, yp));
  } else {
    const void *yp = s.input(y), *dyp = s.input(y), *xp = s.input(x);
    void* dxp = s.output(x);
    s.check("tsrPoolingBackward", tsrPoolingBackward(g_handle, pool.raw, algo, alpha, y, yp, y,
                                                     dyp, x, xp, beta, x, dxp));
  }
}

void softmax(session& s) {
  tsrTensorDescriptor_t x = s.tensor(nullptr, s.in_range<int>(2, 5));
  std::vector<int64_t> dims = session::dims_of(x);
  tsrTensorDescriptor_t y = s.tensor(&dims);
  auto algorithm = s.enumerated<tsrSoftmaxAlgorithm_t>(3);
  auto mode = s.enumerated<tsrSoftmaxMode_t>(2);
  float alpha = s.scalar(), beta = s.scalar();
  tsrAlgo_t algo = s.algo();
  if (s.coin()) {
    const void* xp = s.input(x);
    void* yp = s.output(y);
    s.check("tsrSoftmaxForward",
            tsrSoftmaxForward(g_handle, algorithm, mode, algo, alpha, x, xp, beta, y, yp));
  } else {
    tsrTensorDescriptor_t dx = s.tensor(&dims);
    const void *yp = s.input(y), *dyp = s.input(x);
    void* dxp = s.output(dx);
    s.check("tsrSoftmaxBackward", tsrSoftmaxBackward(g_handle, algorithm, mode, algo, alpha, y, yp,
                                                     x, dyp, beta, dx, dxp));
  }
}

void lrn(session& s) {
  lrn_owner desc;
  s.check("tsrCreateLrnDescriptor", tsrCreateLrnDescriptor(&desc.raw));
  s.check("tsrSetLrnDescriptor",
          tsrSetLrnDescriptor(desc.raw, s.coin() ? 5u : s.data().ConsumeIntegral<unsigned>(),
                              s.real(1e-4), s.real(0.75), s.real(2.0)));
  tsrTensorDescriptor_t x = s.tensor(nullptr, s.in_range<int>(3, 5));
  std::vector<int64_t> dims = session::dims_of(x);
  tsrTensorDescriptor_t y = s.tensor(&dims);
  float alpha = s.scalar(), beta = s.scalar();
  tsrAlgo_t algo = s.algo();
  if (s.coin()) {
    const void* xp = s.input(x);
    void* yp = s.output(y);
    s.check("tsrLrnCrossChannelForward",
            tsrLrnCrossChannelForward(g_handle, desc.raw, algo, alpha, x, xp, beta, y, yp));
  } else {
    tsrTensorDescriptor_t dx = s.tensor(&dims);
    const void *yp = s.input(y), *dyp = s.input(y), *xp = s.input(x);
    void* dxp = s.output(dx);
    s.check("tsrLrnCrossChannelBackward", tsrLrnCrossChannelBackward(g_handle, desc.raw, algo,
                                                                     alpha, y, yp, y, dyp, x, xp,
                                                                     beta, dx, dxp));
  }
}

// ---- normalization ----------------------------------------------------------------------------

void batch_norm(session& s) {
  auto mode = s.enumerated<tsrBatchNormMode_t>(2);
  tsrTensorDescriptor_t x = s.tensor(nullptr, s.in_range<int>(2, 5));
  std::vector<int64_t> dims = session::dims_of(x);
  tsrTensorDescriptor_t y = s.tensor(&dims);
  tsrTensorDescriptor_t param = s.tensor(nullptr, 4);
  if (s.in_range<int>(0, 3) != 0)
    s.check("tsrDeriveBatchNormTensorDescriptor", tsrDeriveBatchNormTensorDescriptor(x, mode, param));
  activation_owner act;
  if (s.coin()) activation(s, act);
  auto ws = s.workspace();
  float alpha = s.scalar(), beta = s.scalar();
  double epsilon = s.real(1e-5);
  tsrAlgo_t algo = s.algo();
  const void *xp = s.input(x), *scale = s.input(param), *bias = s.input(param);
  switch (s.in_range<int>(0, 2)) {
    case 0: {
      const void *mean = s.input(param), *var = s.input(param);
      void* yp = s.output(y);
      s.check("tsrBatchNormalizationForwardInference",
              tsrBatchNormalizationForwardInference(g_handle, mode, act.raw, algo, alpha, x, xp,
                                                    param, scale, bias, mean, var, epsilon,
                                                    ws.first, ws.second, beta, y, yp));
      return;
    }
    case 1: {
      void* yp = s.output(y);
      bool running = s.coin(), saved = s.coin();
      void* rm = running ? s.output(param) : nullptr;
      void* rv = running ? s.output(param) : nullptr;
      void* sm = saved ? s.output(param) : nullptr;
      void* sv = saved ? s.output(param) : nullptr;
      s.check("tsrBatchNormalizationForwardTraining",
              tsrBatchNormalizationForwardTraining(g_handle, mode, act.raw, algo, alpha, x, xp,
                                                   param, scale, bias, s.real(0.1), epsilon,
                                                   ws.first, ws.second, beta, y, yp, rm, rv, sm,
                                                   sv));
      return;
    }
    default: {
      const void *yp = s.input(y), *dyp = s.input(y), *sm = s.input(param), *sv = s.input(param);
      void* dxp = s.output(x);
      void *dscale = s.output(param), *dbias = s.output(param);
      s.check("tsrBatchNormalizationBackward",
              tsrBatchNormalizationBackward(g_handle, mode, act.raw, algo, alpha, s.scalar(), x, xp,
                                            y, yp, y, dyp, param, scale, sm, sv, epsilon, ws.first,
                                            ws.second, beta, x, dxp, s.scalar(), dscale, dbias));
    }
  }
}

void layer_and_rms_norm(session& s) {
  int rank = s.in_range<int>(2, 5);
  tsrTensorDescriptor_t x = s.tensor(nullptr, rank);
  std::vector<int64_t> dims = session::dims_of(x);
  int axis = s.in_range<int>(0, 15) == 0 ? s.data().ConsumeIntegral<int>() : s.in_range<int>(1, rank - 1);
  std::vector<int64_t> scale_dims, stats_dims;
  for (size_t i = 0; i < dims.size(); ++i)
    (static_cast<int>(i) < axis ? stats_dims : scale_dims).push_back(dims[i]);
  tsrTensorDescriptor_t y = s.tensor(&dims);
  tsrTensorDescriptor_t scale = s.tensor(scale_dims.empty() ? nullptr : &scale_dims, 1);
  tsrTensorDescriptor_t stats = s.tensor(stats_dims.empty() ? nullptr : &stats_dims, 1);
  auto ws = s.workspace();
  double epsilon = s.real(1e-5);
  tsrAlgo_t algo = s.algo();
  const void *xp = s.input(x), *sp = s.coin() ? s.input(scale) : nullptr;
  switch (s.in_range<int>(0, 3)) {
    case 0: {
      const void* bp = s.coin() ? s.input(scale) : nullptr;
      void* yp = s.output(y);
      bool with_stats = s.coin();
      void* mean = with_stats ? s.output(stats) : nullptr;
      void* inv_std = with_stats ? s.output(stats) : nullptr;
      s.check("tsrLayerNormalizationForward",
              tsrLayerNormalizationForward(g_handle, algo, axis, epsilon, x, xp, scale, sp, bp,
                                           stats, ws.first, ws.second, y, yp, mean, inv_std));
      return;
    }
    case 1: {
      const void *dyp = s.input(y), *mean = s.input(stats), *inv_std = s.input(stats);
      void* dxp = s.output(x);
      void *dscale = s.output(scale), *dbias = s.output(scale);
      s.check("tsrLayerNormalizationBackward",
              tsrLayerNormalizationBackward(g_handle, algo, axis, epsilon, x, xp, y, dyp, scale, sp,
                                            stats, mean, inv_std, ws.first, ws.second, x, dxp,
                                            dscale, dbias));
      return;
    }
    case 2: {
      void* yp = s.output(y);
      void* inv_rms = s.coin() ? s.output(stats) : nullptr;
      s.check("tsrRmsNormalizationForward",
              tsrRmsNormalizationForward(g_handle, algo, axis, epsilon, x, xp, scale, sp, stats,
                                         ws.first, ws.second, y, yp, inv_rms));
      return;
    }
    default: {
      const void *dyp = s.input(y), *inv_rms = s.input(stats);
      void* dxp = s.output(x);
      void* dscale = s.coin() ? s.output(scale) : nullptr;
      s.check("tsrRmsNormalizationBackward",
              tsrRmsNormalizationBackward(g_handle, algo, axis, epsilon, x, xp, y, dyp, scale, sp,
                                          stats, inv_rms, ws.first, ws.second, x, dxp, dscale));
    }
  }
}

// ---- tensor ops -------------------------------------------------------------------------------

void tensor_ops(session& s) {
  tsrTensorDescriptor_t a = s.tensor(nullptr, s.in_range<int>(1, 5));
  std::vector<int64_t> dims = session::dims_of(a);
  tsrTensorDescriptor_t c = s.tensor(&dims);
  float alpha = s.scalar(), beta = s.scalar();
  switch (s.in_range<int>(0, 5)) {
    case 0: {
      const void* ap = s.input(a);
      void* cp = s.output(c);
      s.check("tsrAddTensor", tsrAddTensor(g_handle, alpha, a, ap, beta, c, cp));
      return;
    }
    case 1: {
      void* cp = s.output(c);
      s.check("tsrScaleTensor", tsrScaleTensor(g_handle, c, cp, alpha));
      return;
    }
    case 2: {
      void* cp = s.output(c);
      s.check("tsrSetTensor", tsrSetTensor(g_handle, c, cp, s.real(3.0)));
      return;
    }
    case 3: {
      const void* ap = s.input(a);
      void* cp = s.output(c);
      s.check("tsrTransformTensor", tsrTransformTensor(g_handle, alpha, a, ap, beta, c, cp));
      return;
    }
    case 4: {
      op_tensor_owner op;
      s.check("tsrCreateOpTensorDescriptor", tsrCreateOpTensorDescriptor(&op.raw));
      s.check("tsrSetOpTensorDescriptor",
              tsrSetOpTensorDescriptor(op.raw, s.enumerated<tsrOpTensorOp_t>(6),
                                       s.coin() ? TSR_DATA_FLOAT : s.dtype(),
                                       s.enumerated<tsrNanPropagation_t>(2)));
      tsrTensorDescriptor_t b = s.tensor(&dims);
      const void *ap = s.input(a), *bp = s.input(b);
      void* cp = s.output(c);
      float alpha2 = s.scalar();
      if (tessera::fuzz::verbose())
        std::fprintf(stderr, "  op_tensor alpha1 %g alpha2 %g beta %g\n", alpha, alpha2, beta);
      s.check("tsrOpTensor", tsrOpTensor(g_handle, op.raw, alpha, a, ap, alpha2, b, bp, beta, c, cp));
      return;
    }
    default: {
      reduce_owner r;
      s.check("tsrCreateReduceTensorDescriptor", tsrCreateReduceTensorDescriptor(&r.raw));
      s.check("tsrSetReduceTensorDescriptor",
              tsrSetReduceTensorDescriptor(r.raw, s.enumerated<tsrReduceTensorOp_t>(8),
                                           s.coin() ? TSR_DATA_FLOAT : s.dtype(),
                                           s.enumerated<tsrNanPropagation_t>(2),
                                           s.enumerated<tsrReduceTensorIndices_t>(2),
                                           s.enumerated<tsrIndicesType_t>(1)));
      std::vector<int64_t> reduced = dims;
      for (int64_t& d : reduced)
        if (s.coin()) d = 1;
      tsrTensorDescriptor_t rc = s.tensor(&reduced);
      size_t index_bytes = 0;
      tsrStatus_t st = tsrGetReductionIndicesSize(g_handle, r.raw, a, rc, &index_bytes);
      s.check("tsrGetReductionIndicesSize", st);
      if (st != TSR_STATUS_SUCCESS || s.in_range<int>(0, 7) == 0) index_bytes = s.in_range<size_t>(0, 256);
      void* indices = s.output_bytes(index_bytes);
      auto ws = s.workspace();
      tsrAlgo_t algo = s.algo();
      const void* ap = s.input(a);
      void* cp = s.output(rc);
      s.check("tsrReduceTensor", tsrReduceTensor(g_handle, r.raw, algo, indices, index_bytes,
                                                 ws.first, ws.second, alpha, a, ap, beta, rc, cp));
    }
  }
}

// ---- matmul -----------------------------------------------------------------------------------

void matmul(session& s) {
  matmul_owner mm;
  s.check("tsrCreateMatmulDescriptor", tsrCreateMatmulDescriptor(&mm.raw));
  activation_owner act;
  if (s.coin()) activation(s, act);
  if (s.in_range<int>(0, 15) != 0)
    s.check("tsrSetMatmulDescriptor",
            tsrSetMatmulDescriptor(mm.raw, s.coin() ? TSR_DATA_FLOAT : s.dtype(), act.raw,
                                   s.enumerated<tsrMatmulEpilogueOrder_t>(2)));
  int rank = s.in_range<int>(2, 4);
  std::vector<int64_t> batch;
  for (int i = 0; i < rank - 2; ++i) batch.push_back(s.dim(1, 3));
  int64_t m = s.dim(1, 16), n = s.dim(1, 16), k = s.dim(1, 16);
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> d = batch;
    d.push_back(r);
    d.push_back(c);
    return d;
  };
  std::vector<int64_t> ad = with(m, k), bd = with(k, n), cd = with(m, n), biasd = with(1, n);
  for (size_t i = 0; i + 2 < biasd.size(); ++i) biasd[i] = 1;
  tsrDataType_t type = s.in_range<int>(0, 5) == 0 ? s.dtype() : TSR_DATA_FLOAT;
  tsrTensorDescriptor_t a = s.tensor(&ad, rank, type), b = s.tensor(&bd, rank, type),
                        c = s.tensor(&cd, rank, type);
  tsrTensorDescriptor_t bias = s.coin() ? s.tensor(&biasd, rank, type) : nullptr;
  if (s.in_range<int>(0, 3) == 0) {
    size_t bytes = 0;
    s.check("tsrGetMatmulWorkspaceSize",
            tsrGetMatmulWorkspaceSize(g_handle, mm.raw, a, b, bias, c, s.algo(), &bytes));
    return;
  }
  auto ws = s.workspace();
  float alpha = s.scalar(), beta = s.scalar();
  tsrAlgo_t algo = s.algo();
  const void *ap = s.input(a), *bp = s.input(b), *biasp = bias ? s.input(bias) : nullptr;
  void* cp = s.output(c);
  if (tessera::fuzz::verbose())
    std::fprintf(stderr, "  matmul alpha %g beta %g algo %lld workspace %p/%zu bias %p\n", alpha, beta,
                 static_cast<long long>(algo), ws.first, ws.second, static_cast<const void*>(biasp));
  s.check("tsrMatmul", tsrMatmul(g_handle, mm.raw, algo, alpha, a, ap, b, bp, bias, biasp, beta, c,
                                 cp, ws.first, ws.second));
}

// ---- listing and queries without a handle ------------------------------------------------------

void listing(session& s) {
  switch (s.in_range<int>(0, 3)) {
    case 0: {
      auto* info = s.output_struct<tsrPluginInfo_t>(s.coin() ? sizeof(tsrPluginInfo_t)
                                                             : s.in_range<size_t>(0, 1024));
      s.check("tsrGetPluginInfo", tsrGetPluginInfo(s.in_range<int>(-2, 6), info));
      return;
    }
    case 1: {
      auto* info = s.output_struct<tsrKernelInfo_t>(s.coin() ? sizeof(tsrKernelInfo_t)
                                                             : s.in_range<size_t>(0, 1024));
      s.check("tsrGetKernelInfo", tsrGetKernelInfo(s.enumerated<tsrOperation_t>(TSR_OP_COUNT),
                                                   s.in_range<int>(-2, 40), info));
      return;
    }
    case 2: {
      std::string name = s.data().ConsumeRandomLengthString(64);
      auto* algo = static_cast<tsrAlgo_t*>(s.output_bytes(sizeof(tsrAlgo_t)));
      s.check("tsrGetAlgoByName",
              tsrGetAlgoByName(s.enumerated<tsrOperation_t>(TSR_OP_COUNT), name.c_str(), algo));
      return;
    }
    default: {
      // Reading a descriptor back with any max_dims.
      tsrTensorDescriptor_t d = s.tensor(nullptr, s.in_range<int>(1, 8));
      int max_dims = s.in_range<int>(-1, TSR_MAX_DIMS);
      size_t n = static_cast<size_t>(std::max(max_dims, 1));
      auto* dims = static_cast<int64_t*>(s.output_bytes(n * sizeof(int64_t)));
      auto* strides = static_cast<int64_t*>(s.output_bytes(n * sizeof(int64_t)));
      auto* type = static_cast<tsrDataType_t*>(s.output_bytes(sizeof(tsrDataType_t)));
      auto* nb = static_cast<int*>(s.output_bytes(sizeof(int)));
      s.check("tsrGetTensorNdDescriptor",
              tsrGetTensorNdDescriptor(d, max_dims, type, nb, dims, strides));
    }
  }
}

const std::function<void(session&)> k_operations[] = {
    activation_forward, activation_backward, convolution_forward, convolution_backward,
    convolution_fused,  pooling,             softmax,             lrn,
    batch_norm,         layer_and_rms_norm,  tensor_ops,          matmul,
    listing,
};
constexpr int k_operation_count = sizeof(k_operations) / sizeof(k_operations[0]);

void print_stats() {
  const auto& st = tessera::fuzz::stats();
  std::fprintf(stderr, "tessera-fuzz: %ld calls, %ld succeeded, %ld failed while running\n",
               st.calls, st.succeeded, st.execution_failed);
  for (const std::string& m : st.execution_failures) std::fprintf(stderr, "  failed while running: %s\n", m.c_str());
}

}  // namespace

// A machine with 4 GiB per allocation: a larger request fails (NULL) instead of aborting, so that
// the library's out-of-memory handling is what gets exercised. ASAN_OPTIONS adds to these.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=4096";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Refusals are expected by the thousand; the log would drown libFuzzer's output.
  setenv("TESSERA_LOG_LEVEL", "off", 0);
  if (tsrCreate(TSR_DEVICE_CPU, 0, &g_handle) != TSR_STATUS_SUCCESS) {
    std::fprintf(stderr, "tessera-fuzz: no CPU handle: %s\n", tessera::fuzz::last_message().c_str());
    std::abort();
  }
  // The pool grows to the largest workspace asked; keep one input's memory bounded.
  tsrSetWorkspaceLimit(g_handle, size_t(64) << 20);
  std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  session s(provider);
  int operations = s.in_range<int>(1, 3);
  for (int i = 0; i < operations && (i == 0 || s.more()); ++i)
    k_operations[s.in_range<int>(0, k_operation_count - 1)](s);
  return 0;
}
