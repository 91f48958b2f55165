// Host cost of one Tessera call on a tiny problem, the same problem and method as
// ../shared/anchors/cudnn_overhead.cpp measures for cuDNN's legacy API (1x8x8x8 NHWC fp16, 8
// filters 3x3, pad 1; relu on the same tensor), so that both are printed by one device run:
//   tessera-call-overhead [--backend=NAME]
// Prints find_ms, conv_fwd_host_us / conv_fwd_total_us (explicit algorithm from find), auto_algo
// and conv_fwd_auto_* (TSR_ALGO_AUTO: the warm path of the selection cache), conv_fwd_checked_*
// (explicit, pointer checks on), relu_host_us, get_ws_host_us. "host" is the time the calling
// thread spends per call with the GPU running behind (what a front end adds: validation, lookup,
// dispatch and the launch); "total" includes the synchronization.
// Runs on CUDA device 0 when present, else on the CPU (where host and total coincide).
#include <tessera/tessera.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(tsrStatus_t s, const char* what) {
  if (s == TSR_STATUS_SUCCESS) return;
  char message[512];
  tsrGetLastErrorString(message, sizeof(message));
  std::fprintf(stderr, "%s failed: %s\n", what, message);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--backend=", 10) == 0) backend = argv[i] + 10;
  int cuda = 0;
  check(tsrGetDeviceCount(TSR_DEVICE_CUDA, &cuda), "tsrGetDeviceCount");
  tsrHandle_t h = nullptr;
  check(tsrCreate(cuda > 0 ? TSR_DEVICE_CUDA : TSR_DEVICE_CPU, 0, &h), "tsrCreate");
  check(tsrSetTuningMode(h, TSR_TUNING_HEURISTIC), "tsrSetTuningMode");
  if (!backend.empty()) check(tsrSetBackendPreference(h, backend.c_str()), "tsrSetBackendPreference");
  std::printf("device %s backend %s\n", cuda > 0 ? "cuda:0" : "cpu", backend.empty() ? "(default order)" : backend.c_str());

  const int64_t xdims[4] = {1, 8, 8, 8}, wdims[4] = {8, 8, 3, 3};
  tsrTensorDescriptor_t xd, wd, yd;
  tsrCreateTensorDescriptor(&xd);
  tsrCreateTensorDescriptor(&wd);
  tsrCreateTensorDescriptor(&yd);
  check(tsrSetTensorNdDescriptorEx(xd, TSR_TENSOR_NHWC, TSR_DATA_HALF, 4, xdims), "x descriptor");
  check(tsrSetTensorNdDescriptorEx(wd, TSR_TENSOR_NHWC, TSR_DATA_HALF, 4, wdims), "w descriptor");
  check(tsrSetTensorNdDescriptorEx(yd, TSR_TENSOR_NHWC, TSR_DATA_HALF, 4, xdims), "y descriptor");
  tsrConvolutionDescriptor_t cd;
  tsrCreateConvolutionDescriptor(&cd);
  const int64_t pad[2] = {1, 1}, one[2] = {1, 1};
  check(tsrSetConvolutionNdDescriptor(cd, 2, pad, pad, one, one, TSR_CROSS_CORRELATION, TSR_DATA_FLOAT), "conv");
  check(tsrSetMathMode(h, TSR_MATH_TENSOR_OP), "tsrSetMathMode");
  void *x, *w, *y, *ws;
  const size_t ws_size = size_t(64) << 20;
  check(tsrMalloc(h, 1 << 20, &x), "malloc");
  check(tsrMalloc(h, 1 << 20, &w), "malloc");
  check(tsrMalloc(h, 1 << 20, &y), "malloc");
  check(tsrMalloc(h, ws_size, &ws), "malloc");
  std::vector<uint16_t> ones(512 * 1024, 0x3c00);  // fp16 1.0: never time zeros
  check(tsrMemcpyHostToDevice(h, x, ones.data(), 1 << 20), "upload");
  check(tsrMemcpyHostToDevice(h, w, ones.data(), 1 << 20), "upload");

  tsrAlgoPerf_t perf[16];
  for (auto& p : perf) p.struct_size = sizeof(p);
  int n = 0;
  double t0 = now_s();
  check(tsrFindConvolutionForwardAlgorithm(h, xd, x, wd, w, cd, yd, y, 16, &n, perf, ws, ws_size), "find");
  std::printf("find_ms %.3f algo %s/%s (%d candidates)\n", (now_s() - t0) * 1e3, perf[0].backend_name,
              perf[0].kernel_name, n);

  const int iters = 20000;
  auto time_calls = [&](const char* label, tsrAlgo_t algo) {
    for (int i = 0; i < 1000; ++i)
      check(tsrConvolutionForward(h, 1.0f, xd, x, wd, w, cd, algo, ws, ws_size, 0.0f, yd, y), "conv");
    check(tsrSynchronize(h), "sync");
    const double a = now_s();
    for (int i = 0; i < iters; ++i)
      check(tsrConvolutionForward(h, 1.0f, xd, x, wd, w, cd, algo, ws, ws_size, 0.0f, yd, y), "conv");
    const double b = now_s();
    check(tsrSynchronize(h), "sync");
    const double c = now_s();
    std::printf("%s_host_us %.2f %s_total_us %.2f\n", label, (b - a) / iters * 1e6, label, (c - a) / iters * 1e6);
  };
  time_calls("conv_fwd", perf[0].algo);
  // What TSR_ALGO_AUTO runs without a tuned entry: the heuristic's first choice.
  tsrAlgoPerf_t ranked[16];
  for (auto& p : ranked) p.struct_size = sizeof(p);
  int ranked_count = 0;
  check(tsrGetConvolutionForwardAlgorithm(h, xd, wd, cd, yd, 16, &ranked_count, ranked), "get algorithm");
  if (ranked_count > 0) std::printf("auto_algo %s/%s\n", ranked[0].backend_name, ranked[0].kernel_name);
  time_calls("conv_fwd_auto", TSR_ALGO_AUTO);
  // The same explicit call with the pointer checks on (tsrSetPointerChecks: one driver query per
  // tensor per call): their cost is this minus conv_fwd_host_us.
  check(tsrSetPointerChecks(h, 1), "tsrSetPointerChecks");
  time_calls("conv_fwd_checked", perf[0].algo);
  check(tsrSetPointerChecks(h, 0), "tsrSetPointerChecks");

  tsrActivationDescriptor_t ad;
  tsrCreateActivationDescriptor(&ad);
  tsrSetActivationDescriptor(ad, TSR_ACTIVATION_RELU, 0.0);
  for (int i = 0; i < 1000; ++i) check(tsrActivationForward(h, ad, TSR_ALGO_AUTO, 1.0f, xd, x, 0.0f, yd, y), "relu");
  check(tsrSynchronize(h), "sync");
  double a = now_s();
  for (int i = 0; i < iters; ++i) check(tsrActivationForward(h, ad, TSR_ALGO_AUTO, 1.0f, xd, x, 0.0f, yd, y), "relu");
  double b = now_s();
  check(tsrSynchronize(h), "sync");
  double c = now_s();
  std::printf("relu_host_us %.2f relu_total_us %.2f\n", (b - a) / iters * 1e6, (c - a) / iters * 1e6);

  size_t bytes = 0;
  a = now_s();
  for (int i = 0; i < iters; ++i)
    check(tsrGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, perf[0].algo, &bytes), "workspace");
  std::printf("get_ws_host_us %.2f\n", (now_s() - a) / iters * 1e6);

  tsrDestroyActivationDescriptor(ad);
  tsrDestroyConvolutionDescriptor(cd);
  for (void* p : {x, w, y, ws}) tsrFree(h, p);
  tsrDestroyTensorDescriptor(xd);
  tsrDestroyTensorDescriptor(wd);
  tsrDestroyTensorDescriptor(yd);
  tsrDestroy(h);
  return 0;
}
