// Tessera calls on a CUDA handle can be captured into a CUDA graph and replayed: the CUDA plugin
// neither allocates nor synchronizes inside an operation call. A chain of calls (convolution,
// then activation, then a second activation accumulating with beta = 1) is captured once after a
// warm-up call (which lets the handle's workspace pool grow outside the capture), new inputs are
// copied in, the graph is replayed twice, and the results are checked against the naive
// reference both times. A two-layer LSTM forward (fp16) is captured the same way and its replay
// must give the bits of a direct call on the same new inputs: that is the persistent forward, one
// cooperative kernel node per layer (the stepwise kernels under TESSERA_CUDA_RNN_PERSISTENT=0).
// Skips without a GPU.
//
// Built twice (tests/CMakeLists.txt): with TESSERA_APP_USES_DRIVER_API the application side
// (stream, capture, graph) speaks the driver API, so the process holds one CUDA runtime, the
// plugin's; without it the application links its own static CUDA runtime, as a framework
// would, and the process holds two. Each is its own binary so that a fault in one cannot hide
// the other.
#include "backend_fixture.hpp"
#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "reference_rnn.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera/tessera_rnn.h>

#ifdef TESSERA_APP_USES_DRIVER_API
#include "cuda_driver_api.hpp"
#else
#include <cuda_runtime_api.h>
#endif

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

// The application's side of the test: a stream and the capture/replay calls, in the driver API
// or the runtime API.
#ifdef TESSERA_APP_USES_DRIVER_API
// libcuda is opened at run time (cuda_driver_api.hpp), so that the binary starts (and skips) on
// machines without a driver, as the CI machine is.
const cuda_driver_api& driver() { return cuda_driver(); }

using app_stream = CUstream;
using app_graph = CUgraph;
using app_graph_exec = CUgraphExec;
#define ASSERT_CUDA(call)                                                        \
  do {                                                                           \
    const CUresult e_ = (call);                                                  \
    const char* text_ = nullptr;                                                 \
    driver().error_string(e_, &text_);                                           \
    ASSERT_EQ(e_, CUDA_SUCCESS) << #call << ": " << (text_ ? text_ : "?");       \
  } while (0)
#define APP_STREAM_SYNCHRONIZE driver().stream_synchronize
#define APP_BEGIN_CAPTURE(s) driver().begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)
#define APP_END_CAPTURE driver().end_capture
#define APP_GRAPH_NODE_COUNT(g, n) driver().graph_nodes(g, nullptr, n)
#define APP_GRAPH_INSTANTIATE(e, g) driver().instantiate(e, g, 0)
#define APP_GRAPH_LAUNCH driver().launch
#define APP_GRAPH_EXEC_DESTROY driver().exec_destroy
#define APP_GRAPH_DESTROY driver().graph_destroy

// The device's primary context (the one the plugin's runtime uses), current on this thread.
struct stream_owner {
  CUstream s = nullptr;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
  stream_owner() {
    const cuda_driver_api& d = driver();
    if (!d.complete() || d.init(0) != CUDA_SUCCESS || d.device_get(&dev, 0) != CUDA_SUCCESS) return;
    if (d.retain(&ctx, dev) != CUDA_SUCCESS) return;
    d.set_current(ctx);
    d.stream_create(&s, CU_STREAM_NON_BLOCKING);
  }
  ~stream_owner() {
    if (s) driver().stream_destroy(s);
    if (ctx) driver().release(dev);
  }
};
#else
using app_stream = cudaStream_t;
using app_graph = cudaGraph_t;
using app_graph_exec = cudaGraphExec_t;
#define ASSERT_CUDA(call)                                                        \
  do {                                                                           \
    const cudaError_t e_ = (call);                                               \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);       \
  } while (0)
#define APP_STREAM_SYNCHRONIZE cudaStreamSynchronize
#define APP_BEGIN_CAPTURE(s) cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)
#define APP_END_CAPTURE cudaStreamEndCapture
#define APP_GRAPH_NODE_COUNT(g, n) cudaGraphGetNodes(g, nullptr, n)
#define APP_GRAPH_INSTANTIATE(e, g) cudaGraphInstantiate(e, g, 0)
#define APP_GRAPH_LAUNCH cudaGraphLaunch
#define APP_GRAPH_EXEC_DESTROY cudaGraphExecDestroy
#define APP_GRAPH_DESTROY cudaGraphDestroy

struct stream_owner {
  cudaStream_t s = nullptr;
  stream_owner() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~stream_owner() { cudaStreamDestroy(s); }
};
#endif

struct act_desc_owner {
  tsrActivationDescriptor_t d = nullptr;
  act_desc_owner(tsrActivationMode_t mode, double coef) {
    tsrCreateActivationDescriptor(&d);
    tsrSetActivationDescriptor(d, mode, coef);
  }
  ~act_desc_owner() { tsrDestroyActivationDescriptor(d); }
};

struct conv_desc_owner {
  tsrConvolutionDescriptor_t d = nullptr;
  explicit conv_desc_owner(const tsrpConvolutionProblem& p) {
    tsrCreateConvolutionDescriptor(&d);
    tsrSetConvolutionNdDescriptor(d, p.spatial_dims, p.pad_before, p.pad_after, p.stride, p.dilation,
                                  TSR_CROSS_CORRELATION, TSR_DATA_FLOAT);
  }
  ~conv_desc_owner() { tsrDestroyConvolutionDescriptor(d); }
};

// Declared before the buffers: they free through the handle, so it must outlive them (freeing
// through a destroyed handle is the caller's use-after-free, which compute-sanitizer caught here).
struct handle_owner {
  tsrHandle_t h = nullptr;
  ~handle_owner() {
    if (h) tsrDestroy(h);
  }
};

// A handle on device 0 using the application's stream; skips without a GPU.
class CudaGraphCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    // Unbuffered, so that the log shows how far a crashing run got.
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    int devices = 0;
    ASSERT_OK(tsrGetDeviceCount(TSR_DEVICE_CUDA, &devices));
    if (devices == 0) GTEST_SKIP() << "no CUDA device";
    stream_.emplace();
    ASSERT_OK(tsrCreate(TSR_DEVICE_CUDA, 0, &owner_.h));
    ASSERT_NE(stream_->s, nullptr);
    ASSERT_OK(tsrSetStream(owner_.h, stream_->s));
  }
  app_stream stream() const { return stream_->s; }
  tsrHandle_t handle() const { return owner_.h; }

 private:
  // Destroyed in reverse, after the test body's buffers: the handle, then the stream it used.
  std::optional<stream_owner> stream_;
  handle_owner owner_;
};

TEST_F(CudaGraphCapture, captured_chain_replays_with_new_inputs) {
  tsrHandle_t h = handle();

  // conv: 2x8x12x12 (*) 16x8x3x3, pad 1 -> 2x16x12x12; then y2 = relu(y1); z = 3 * y2 + z.
  tsrpConvolutionProblem p{};
  p.struct_size = sizeof(p);
  p.spatial_dims = 2;
  p.groups = 1;
  p.mode = TSRP_CROSS_CORRELATION;
  p.compute_type = TSRP_DATA_FLOAT;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    p.stride[i] = p.dilation[i] = 1;
    p.pad_before[i] = p.pad_after[i] = i < 2 ? 1 : 0;
  }
  p.x = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 8, 12, 12}, false).desc();
  p.w = ref::host_tensor::packed(TSRP_DATA_FLOAT, {16, 8, 3, 3}, false).desc();
  p.y = ref::host_tensor::packed(TSRP_DATA_FLOAT, {2, 16, 12, 12}, false).desc();
  desc_owner xd(p.x), wd(p.w), yd(p.y);
  conv_desc_owner cd(p);
  act_desc_owner relu(TSR_ACTIVATION_RELU, 0.0), identity(TSR_ACTIVATION_IDENTITY, 0.0);

  ref::host_tensor x(p.x), w(p.w), z0(p.y);
  device_buffer bx(h, x.byte_size()), bw(h, w.byte_size()), by1(h, x.byte_size() * 2),
      by2(h, z0.byte_size()), bz(h, z0.byte_size());
  ASSERT_TRUE(bx.p && bw.p && by1.p && by2.p && bz.p);
  size_t ws_size = 0;
  ASSERT_OK(tsrGetConvolutionForwardWorkspaceSize(h, xd, wd, cd.d, yd, TSR_ALGO_AUTO, &ws_size));
  device_buffer ws(h, ws_size);

  auto enqueue_chain = [&] {
    ASSERT_OK(tsrConvolutionForward(h, 1.0f, xd, bx.p, wd, bw.p, cd.d, TSR_ALGO_AUTO, ws.p, ws_size, 0.0f,
                                    yd, by1.p));
    ASSERT_OK(tsrActivationForward(h, relu.d, TSR_ALGO_AUTO, 1.0f, yd, by1.p, 0.0f, yd, by2.p));
    ASSERT_OK(tsrActivationForward(h, identity.d, TSR_ALGO_AUTO, 3.0f, yd, by2.p, 1.0f, yd, bz.p));
  };
  // Warm-up outside the capture: kernel selection is memoised and any pool growth happens here.
  ref::fill_integers(x, ref::fill_spec{-3, 3, 1.0}, 1);
  ref::fill_integers(w, ref::fill_spec{-2, 2, 1.0}, 2);
  ref::fill_integers(z0, ref::fill_spec{-5, 5, 1.0}, 3);
  bx.upload(x);
  bw.upload(w);
  bz.upload(z0);
  enqueue_chain();
  ASSERT_CUDA(APP_STREAM_SYNCHRONIZE(stream()));
  std::printf("warm-up chain ran\n");

  app_graph graph = nullptr;
  ASSERT_CUDA(APP_BEGIN_CAPTURE(stream()));
  enqueue_chain();
  ASSERT_CUDA(APP_END_CAPTURE(stream(), &graph));
  size_t nodes = 0;
  ASSERT_CUDA(APP_GRAPH_NODE_COUNT(graph, &nodes));
  EXPECT_GE(nodes, 3u) << "every call should have added at least one kernel node";
  app_graph_exec exec = nullptr;
  ASSERT_CUDA(APP_GRAPH_INSTANTIATE(&exec, graph));
  std::printf("captured %zu nodes\n", nodes);

  // Fresh inputs, then two replays: z accumulates 3 * relu(conv) twice on top of z0.
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, 11);
  ref::fill_integers(w, ref::fill_spec{-3, 3, 1.0}, 12);
  ref::fill_integers(z0, ref::fill_spec{-6, 6, 1.0}, 13);
  bx.upload(x);
  bw.upload(w);
  bz.upload(z0);
  ASSERT_CUDA(APP_GRAPH_LAUNCH(exec, stream()));
  ASSERT_CUDA(APP_GRAPH_LAUNCH(exec, stream()));
  ASSERT_CUDA(APP_STREAM_SYNCHRONIZE(stream()));
  std::printf("replayed twice\n");

  ref::host_tensor conv(p.y);
  std::string error;
  ASSERT_TRUE(ref::convolution_forward(p, x.data(), w.data(), 1.0, 0.0, conv.data(), &error)) << error;
  ref::host_tensor expected = z0;
  for (int64_t i = 0; i < expected.extent(); ++i) {
    const float r = conv.data()[i] > 0.0f ? conv.data()[i] : 0.0f;
    expected.data()[i] = expected.data()[i] + 2.0f * 3.0f * r;
  }
  ref::host_tensor got(p.y);
  bz.download(got);
  const ref::compare_result r = ref::compare(got, expected, ref::tolerance{0.0, 0.0});
  EXPECT_TRUE(r.ok()) << r.message;

  APP_GRAPH_EXEC_DESTROY(exec);
  APP_GRAPH_DESTROY(graph);
}

struct rnn_desc_owner {
  tsrRnnDescriptor_t d = nullptr;
  rnn_desc_owner() { tsrCreateRnnDescriptor(&d); }
  ~rnn_desc_owner() { tsrDestroyRnnDescriptor(d); }
};

TEST_F(CudaGraphCapture, captured_lstm_forward_replays_bit_for_bit) {
  tsrHandle_t h = handle();

  // 2 layers, input 24, hidden 64, 6 steps, batch 20, fp16 seq-major, hx and cx given.
  ref::rnn_config cfg;
  cfg.cell_mode = TSRP_RNN_LSTM;
  cfg.layers = 2;
  cfg.input_size = 24;
  cfg.hidden_size = 64;
  cfg.seq_length = 6;
  cfg.batch = 20;
  rnn_desc_owner rnn;
  ASSERT_OK(tsrSetRnnDescriptor(rnn.d, TSR_LSTM, TSR_RNN_DOUBLE_BIAS, TSR_RNN_UNIDIRECTIONAL, TSR_RNN_SEQ_MAJOR,
                                TSR_DATA_HALF, TSR_DATA_FLOAT, cfg.input_size, cfg.hidden_size, cfg.layers));
  const tsrpTensor xt = ref::host_tensor::packed(TSRP_DATA_HALF, {cfg.seq_length, cfg.batch, cfg.input_size}, false).desc();
  const tsrpTensor yt = ref::host_tensor::packed(TSRP_DATA_HALF, {cfg.seq_length, cfg.batch, cfg.hidden_size}, false).desc();
  const tsrpTensor ht = ref::host_tensor::packed(TSRP_DATA_HALF, {cfg.layers, cfg.batch, cfg.hidden_size}, false).desc();
  const tsrpTensor wt = ref::host_tensor::packed(TSRP_DATA_HALF, {ref::rnn_weight_count(cfg)}, false).desc();
  desc_owner xd(xt), yd(yt), hd(ht);
  size_t w_bytes = 0, ws_bytes = 0, rs_bytes = 0;
  ASSERT_OK(tsrGetRnnWeightSpaceSize(h, rnn.d, &w_bytes));
  ASSERT_OK(tsrGetRnnTempSpaceSizes(h, rnn.d, TSR_RNN_FWD_INFERENCE, xd, &ws_bytes, &rs_bytes));
  ref::host_tensor x(xt), hx(ht), cx(ht), w(wt);
  auto fill = [](ref::host_tensor& t, int range, double step, uint32_t seed) {
    ref::fill_integers(t, ref::fill_spec{-range, range, 1.0}, seed);
    for (int64_t i = 0; i < t.extent(); ++i) t.data()[i] = static_cast<float>(t.data()[i] * step);
    t.round_to_data_type();
  };
  fill(x, 8, 0.125, 21);
  fill(hx, 4, 0.125, 22);
  fill(cx, 4, 0.125, 23);
  fill(w, 8, 0.0625, 24);
  device_buffer bx(h, x.byte_size()), bhx(h, hx.byte_size()), bcx(h, cx.byte_size()), bw(h, w_bytes),
      by(h, ref::host_tensor(yt).byte_size()), bws(h, ws_bytes);
  ASSERT_TRUE(bx.p && bhx.p && bcx.p && bw.p && by.p && bws.p);
  bx.upload(x);
  bhx.upload(hx);
  bcx.upload(cx);
  bw.upload(w);
  auto forward = [&] {
    ASSERT_OK(tsrRnnForward(h, rnn.d, TSR_RNN_FWD_INFERENCE, TSR_ALGO_AUTO, xd, bx.p, hd, bhx.p, hd, bcx.p, bw.p,
                            w_bytes, bws.p, ws_bytes, yd, by.p, nullptr, nullptr, nullptr, 0));
  };
  forward();  // warm-up: kernel selection outside the capture
  ASSERT_CUDA(APP_STREAM_SYNCHRONIZE(stream()));
  char kernel[256] = {0};
  ASSERT_OK(tsrGetLastKernelName(h, kernel, sizeof(kernel)));
  std::printf("LSTM forward ran %s\n", kernel);

  app_graph graph = nullptr;
  ASSERT_CUDA(APP_BEGIN_CAPTURE(stream()));
  forward();
  ASSERT_CUDA(APP_END_CAPTURE(stream(), &graph));
  app_graph_exec exec = nullptr;
  ASSERT_CUDA(APP_GRAPH_INSTANTIATE(&exec, graph));

  // New inputs; the replay's y against a direct call's on the same inputs.
  fill(x, 8, 0.125, 31);
  fill(hx, 4, 0.125, 32);
  bx.upload(x);
  bhx.upload(hx);
  ref::host_tensor replayed(yt), direct(yt);
  ref::fill_poison(replayed);
  by.upload(replayed);
  ASSERT_CUDA(APP_GRAPH_LAUNCH(exec, stream()));
  ASSERT_CUDA(APP_STREAM_SYNCHRONIZE(stream()));
  by.download(replayed);
  ref::fill_poison(direct);
  by.upload(direct);
  forward();
  ASSERT_CUDA(APP_STREAM_SYNCHRONIZE(stream()));
  by.download(direct);
  const ref::compare_result r = ref::compare(replayed, direct, ref::tolerance{0.0, 0.0});
  EXPECT_TRUE(r.ok()) << r.message;

  APP_GRAPH_EXEC_DESTROY(exec);
  APP_GRAPH_DESTROY(graph);
}

}  // namespace
