// The device's copy ceiling and the loop shapes that reach it, measured side by side in one
// process: what the memory-bound kernels of the CUDA backend should be shaped like on this GPU.
// Every variant copies (or only reads, or only writes) the same buffers; the figure is bytes read
// plus bytes written over the median of CUDA-event times (METHOD.md: warm-up, median of many).
//   tessera-bandwidth-probe [MiB per buffer, default 1024 and 392]
// Variants:
//   memcpy                 cudaMemcpyAsync device to device (the driver's own copy)
//   grid_stride/gN/uU      N blocks per SM, a grid-stride loop, U 16-byte vectors in flight
//   chunked/tT/uU          one chunk of T*U vectors per block, many short blocks (the backend's
//                          form): T threads, U vectors per thread, loads before stores
//   chunked_stream/...     the same with streaming hints (ld.global.cs / st.global.cs)
//   read_only, write_only  one direction alone (a sum kept alive; a fill)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

template <int U>
__global__ void grid_stride_copy(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * step < n; i += U * step) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = x[i + u * step];
#pragma unroll
    for (int u = 0; u < U; ++u) y[i + u * step] = r[u];
  }
  for (; i < n; i += step) y[i] = x[i];
}

template <int U, bool Stream>
__global__ void chunked_copy(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x * U + threadIdx.x;
  uint4 r[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
    if (i < n) r[u] = Stream ? __ldcs(x + i) : x[i];
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
    if (i < n) {
      if (Stream) {
        __stcs(y + i, r[u]);
      } else {
        y[i] = r[u];
      }
    }
  }
}

template <int U>
__global__ void chunked_read(const uint4* __restrict__ x, uint4* __restrict__ sink, int64_t n) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x * U + threadIdx.x;
  uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
    if (i < n) {
      const uint4 v = x[i];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x9e3779b9u) sink[0] = make_uint4(acc, 0, 0, 0);  // keeps the loads alive
}

template <int U>
__global__ void chunked_fill(uint4* __restrict__ y, int64_t n, uint32_t value) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x * U + threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
    if (i < n) y[i] = make_uint4(value, value, value, value);
  }
}

struct result {
  std::string name;
  double ms;
  double tbps;
};

double median_ms(const std::function<void()>& launch, cudaStream_t stream) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> times;
  for (int i = 0; i < 15; ++i) {
    check(cudaEventRecord(a, stream), "record");
    launch();
    check(cudaEventRecord(b, stream), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    times.push_back(ms);
  }
  check(cudaGetLastError(), "launch");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void probe(size_t mib, int sms, cudaStream_t stream) {
  const size_t bytes = mib << 20;
  const int64_t n = static_cast<int64_t>(bytes / sizeof(uint4));
  uint4 *x = nullptr, *y = nullptr;
  check(cudaMalloc(&x, bytes), "malloc x");
  check(cudaMalloc(&y, bytes), "malloc y");
  check(cudaMemset(x, 0x5a, bytes), "memset");  // contents do not matter to a copy
  check(cudaMemset(y, 0, bytes), "memset");
  std::vector<result> results;
  auto add = [&](const std::string& name, double moved, const std::function<void()>& launch) {
    const double ms = median_ms(launch, stream);
    results.push_back({name, ms, moved / (ms * 1e-3) / 1e12});
  };
  const double copy_bytes = 2.0 * static_cast<double>(bytes);
  add("memcpy", copy_bytes, [&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream); });
  auto blocks_for = [&](int threads, int u) { return static_cast<unsigned>((n + int64_t{threads} * u - 1) / (int64_t{threads} * u)); };
  for (int g : {2, 4, 8, 16}) {
    const unsigned grid = static_cast<unsigned>(sms * g);
    add("grid_stride/g" + std::to_string(g) + "/u1", copy_bytes,
        [&] { grid_stride_copy<1><<<grid, 256, 0, stream>>>(x, y, n); });
    add("grid_stride/g" + std::to_string(g) + "/u4", copy_bytes,
        [&] { grid_stride_copy<4><<<grid, 256, 0, stream>>>(x, y, n); });
  }
  for (int threads : {128, 256, 512}) {
    const std::string t = "/t" + std::to_string(threads);
    add("chunked" + t + "/u1", copy_bytes, [&] { chunked_copy<1, false><<<blocks_for(threads, 1), threads, 0, stream>>>(x, y, n); });
    add("chunked" + t + "/u2", copy_bytes, [&] { chunked_copy<2, false><<<blocks_for(threads, 2), threads, 0, stream>>>(x, y, n); });
    add("chunked" + t + "/u4", copy_bytes, [&] { chunked_copy<4, false><<<blocks_for(threads, 4), threads, 0, stream>>>(x, y, n); });
    add("chunked" + t + "/u8", copy_bytes, [&] { chunked_copy<8, false><<<blocks_for(threads, 8), threads, 0, stream>>>(x, y, n); });
  }
  add("chunked_stream/t256/u4", copy_bytes, [&] { chunked_copy<4, true><<<blocks_for(256, 4), 256, 0, stream>>>(x, y, n); });
  add("chunked_stream/t256/u8", copy_bytes, [&] { chunked_copy<8, true><<<blocks_for(256, 8), 256, 0, stream>>>(x, y, n); });
  add("read_only/t256/u4", static_cast<double>(bytes), [&] { chunked_read<4><<<blocks_for(256, 4), 256, 0, stream>>>(x, y, n); });
  add("read_only/t256/u8", static_cast<double>(bytes), [&] { chunked_read<8><<<blocks_for(256, 8), 256, 0, stream>>>(x, y, n); });
  add("write_only/t256/u4", static_cast<double>(bytes), [&] { chunked_fill<4><<<blocks_for(256, 4), 256, 0, stream>>>(y, n, 7u); });
  for (const result& r : results) {
    std::printf("probe %5zu MiB  %-26s %8.3f ms  %6.3f TB/s\n", mib, r.name.c_str(), r.ms, r.tbps);
  }
  cudaFree(x);
  cudaFree(y);
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {1024, 392};  // the 1 GiB transform; the relu anchor's 411 MB
  for (size_t mib : sizes) probe(mib, prop.multiProcessorCount, stream);
  cudaStreamDestroy(stream);
  return 0;
}
