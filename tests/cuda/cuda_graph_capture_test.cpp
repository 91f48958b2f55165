// Tessera calls on a CUDA handle can be captured into a CUDA graph and replayed: the CUDA plugin
// neither allocates nor synchronizes inside an operation call. A chain of calls (convolution,
// then activation, then a second activation accumulating with beta = 1) is captured once after a
// warm-up call (which lets the handle's workspace pool grow outside the capture), new inputs are
// copied in, the graph is replayed twice, and the results are checked against the naive
// reference both times. Skips without a GPU.
#include "backend_fixture.hpp"
#include "reference_activation.hpp"
#include "reference_convolution.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

#define ASSERT_CUDA(call)                                                        \
  do {                                                                           \
    const cudaError_t e_ = (call);                                               \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);       \
  } while (0)

struct stream_owner {
  cudaStream_t s = nullptr;
  stream_owner() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~stream_owner() { cudaStreamDestroy(s); }
};

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

TEST(CudaGraphCapture, captured_chain_replays_with_new_inputs) {
  int devices = 0;
  ASSERT_OK(tsrGetDeviceCount(TSR_DEVICE_CUDA, &devices));
  if (devices == 0) GTEST_SKIP() << "no CUDA device";
  tsrHandle_t h = nullptr;
  ASSERT_OK(tsrCreate(TSR_DEVICE_CUDA, 0, &h));
  stream_owner stream;
  ASSERT_NE(stream.s, nullptr);
  ASSERT_OK(tsrSetStream(h, stream.s));

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
  ASSERT_CUDA(cudaStreamSynchronize(stream.s));

  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeGlobal));
  enqueue_chain();
  ASSERT_CUDA(cudaStreamEndCapture(stream.s, &graph));
  size_t nodes = 0;
  ASSERT_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_GE(nodes, 3u) << "every call should have added at least one kernel node";
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));

  // Fresh inputs, then two replays: z accumulates 3 * relu(conv) twice on top of z0.
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, 11);
  ref::fill_integers(w, ref::fill_spec{-3, 3, 1.0}, 12);
  ref::fill_integers(z0, ref::fill_spec{-6, 6, 1.0}, 13);
  bx.upload(x);
  bw.upload(w);
  bz.upload(z0);
  ASSERT_CUDA(cudaGraphLaunch(exec, stream.s));
  ASSERT_CUDA(cudaGraphLaunch(exec, stream.s));
  ASSERT_CUDA(cudaStreamSynchronize(stream.s));

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

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  tsrSetStream(h, nullptr);
  tsrDestroy(h);
}

}  // namespace
