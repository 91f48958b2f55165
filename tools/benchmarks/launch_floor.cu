// The floor under every GPU call: the host time of a bare kernel launch on this machine, with a
// small and with a large parameter block (a convolution kernel's parameters run to hundreds of
// bytes, and the launch copies them), and of cudaMemsetAsync. tessera-call-overhead's
// conv_fwd_host_us minus launch_*_host_us is what Tessera adds beyond the launch itself.
//   tessera-launch-floor        prints launch_small_host_us, launch_1k_host_us, memset_async_host_us
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

struct small_params {
  float* out;
  int n;
};
struct large_params {
  float* out;
  long long words[127];  // 1 KiB in all
};

__global__ void touch_small(small_params p) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && p.n < 0) p.out[0] = 1.0f;
}
__global__ void touch_large(large_params p) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && p.words[126] < 0) p.out[0] = 1.0f;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

template <typename Launch>
double host_us(Launch&& launch, cudaStream_t stream) {
  const int iters = 20000;
  for (int i = 0; i < 1000; ++i) launch();
  check(cudaStreamSynchronize(stream), "sync");
  const double a = now_s();
  for (int i = 0; i < iters; ++i) launch();
  const double b = now_s();
  check(cudaStreamSynchronize(stream), "sync");
  return (b - a) / iters * 1e6;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  float* out = nullptr;
  check(cudaMalloc(&out, 1 << 20), "malloc");
  small_params sp{out, 1};
  large_params lp{};
  lp.out = out;
  const double small = host_us([&] { touch_small<<<1, 32, 0, stream>>>(sp); }, stream);
  const double large = host_us([&] { touch_large<<<1, 32, 0, stream>>>(lp); }, stream);
  const double memset = host_us([&] { (void)cudaMemsetAsync(out, 0, 1024, stream); }, stream);
  check(cudaGetLastError(), "launch");
  std::printf("launch_small_host_us %.2f launch_1k_host_us %.2f memset_async_host_us %.2f\n", small, large, memset);
  cudaFree(out);
  cudaStreamDestroy(stream);
  return 0;
}
