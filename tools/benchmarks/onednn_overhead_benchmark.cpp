// What the oneDNN plugin adds over calling oneDNN directly, on ResNet-50's convolution layers at
// minibatch 1 and 32 (issue: at most 3 %), and what one API call costs on the host beyond the
// kernel (issue: at most 2 microseconds).
//
// Both sides run the same oneDNN primitive: forward_inference, convolution_direct, f32, NHWC
// activations and weights at the user's exact strides, user scratchpad (the plugin's plan for
// alpha = 1, beta = 0 on this layout). The ratio is Tessera's time over oneDNN's.
//
//   tessera_overhead_benchmark --benchmark_filter=conv --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <tessera/tessera.hpp>

#include <cstring>
#include <random>
#include <new>
#include <vector>

namespace {

// Every buffer of both sides starts on a 64-byte line, as oneDNN's own allocations do, so that
// neither side of a comparison gains or loses from where the heap put it.
template <typename T>
struct line_aligned_allocator {
  using value_type = T;
  line_aligned_allocator() = default;
  template <typename U>
  line_aligned_allocator(const line_aligned_allocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const line_aligned_allocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const line_aligned_allocator<U>&) const noexcept { return false; }
};
template <typename T>
using aligned_vector = std::vector<T, line_aligned_allocator<T>>;

struct layer {
  int h, c, k, r, s, pad;
};
// (input H = W, C in, C out, kernel, stride, pad): ResNet-50's distinct layers.
const layer k_layers[] = {{224, 3, 64, 7, 2, 3},   {56, 64, 64, 1, 1, 0},    {56, 64, 64, 3, 1, 1},
                          {56, 64, 256, 1, 1, 0},  {56, 256, 64, 1, 1, 0},   {56, 256, 128, 1, 1, 0},
                          {56, 128, 128, 3, 2, 1}, {28, 128, 512, 1, 1, 0},  {56, 256, 512, 1, 2, 0},
                          {28, 512, 128, 1, 1, 0}, {28, 128, 128, 3, 1, 1},  {28, 512, 256, 1, 1, 0},
                          {28, 256, 256, 3, 2, 1}, {14, 256, 1024, 1, 1, 0}, {28, 512, 1024, 1, 2, 0},
                          {14, 1024, 256, 1, 1, 0}, {14, 256, 256, 3, 1, 1}, {14, 1024, 512, 1, 1, 0},
                          {14, 512, 512, 3, 2, 1}, {7, 512, 2048, 1, 1, 0},  {14, 1024, 2048, 1, 2, 0},
                          {7, 2048, 512, 1, 1, 0}, {7, 512, 512, 3, 1, 1}};

int out_size(const layer& l) { return (l.h + 2 * l.pad - l.r) / l.s + 1; }

aligned_vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  aligned_vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

double layer_flops(const layer& l, int mb) {
  int p = out_size(l);
  return 2.0 * mb * l.k * p * p * l.c * l.r * l.r;
}

// Direct oneDNN as a careful user would call it on the same NHWC data: weights in the layout
// oneDNN prefers (format `any`), reordered from the user's OHWI copy on every call
// (reorder_weights_once = 0: the same work the plugin does, as weights may change between
// calls) or once up front (= 1: an inference user's best case). A primitive created on the
// user's OHWI weights directly would often get oneDNN's reference code (seen: ref:any for
// 3x3), which would flatter Tessera.
void conv_onednn_direct(benchmark::State& state) {
  const layer& l = k_layers[state.range(0)];
  const int mb = static_cast<int>(state.range(1));
  const bool reorder_once = state.range(2) != 0;
  const int p = out_size(l);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  dnnl::memory::desc src({mb, l.c, l.h, l.h}, dt::f32, tag::nhwc);
  dnnl::memory::desc user_wei({l.k, l.c, l.r, l.r}, dt::f32, tag::ohwi);
  dnnl::memory::desc any_wei({l.k, l.c, l.r, l.r}, dt::f32, tag::any);
  dnnl::memory::desc dst({mb, l.k, p, p}, dt::f32, tag::nhwc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(
      eng, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, any_wei,
      dst, {l.s, l.s}, {0, 0}, {l.pad, l.pad}, {l.pad, l.pad}, attr);
  dnnl::convolution_forward conv(pd);
  aligned_vector<float> x = random_values(src.get_size() / 4, 1), w = random_values(user_wei.get_size() / 4, 2);
  aligned_vector<float> y(dst.get_size() / 4), w_prim(pd.weights_desc().get_size() / 4);
  aligned_vector<uint8_t> scratch(pd.scratchpad_desc().get_size() + 64);
  dnnl::memory xm(src, eng, x.data()), uwm(user_wei, eng, w.data()), ym(dst, eng, y.data());
  dnnl::memory wm(pd.weights_desc(), eng, w_prim.data());
  dnnl::memory sm(pd.scratchpad_desc(), eng, scratch.data());
  const bool needs_reorder = pd.weights_desc() != user_wei;
  dnnl::reorder to_prim = needs_reorder ? dnnl::reorder(uwm, wm) : dnnl::reorder();
  if (needs_reorder) to_prim.execute(strm, uwm, wm);
  dnnl::memory& weights = needs_reorder ? wm : uwm;
  for (auto _ : state) {
    if (needs_reorder && !reorder_once) to_prim.execute(strm, uwm, wm);
    conv.execute(strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, ym},
                        {DNNL_ARG_SCRATCHPAD, sm}});
    strm.wait();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(layer_flops(l, mb) * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
  state.SetLabel(pd.impl_info_str());
}

// constant_weights = 1: the caller's promise (tsrSetConstantWeights) lets the plugin keep the
// reordered filter, the fair match for a direct user who reorders constant weights once.
void conv_tessera(benchmark::State& state) {
  const layer& l = k_layers[state.range(0)];
  const int mb = static_cast<int>(state.range(1));
  const int p = out_size(l);
  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("onednn");
  if (state.range(2) != 0 && tsrSetConstantWeights(h, 1) != TSR_STATUS_SUCCESS) {
    state.SkipWithError("tsrSetConstantWeights failed");
    return;
  }
  tessera::tensor_desc xd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {mb, l.c, l.h, l.h});
  tessera::tensor_desc wd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {l.k, l.c, l.r, l.r});
  tessera::tensor_desc yd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {mb, l.k, p, p});
  tessera::convolution_desc cd({l.pad, l.pad}, {l.pad, l.pad}, {l.s, l.s}, {1, 1});
  tsrAlgo_t algo = tessera::algo_by_name(TSR_OP_CONVOLUTION_FORWARD, "onednn/conv_fwd");
  size_t ws_bytes = tessera::convolution_forward_workspace_size(h, xd, wd, cd, yd, algo);
  aligned_vector<float> x = random_values(xd.size_in_bytes() / 4, 1), w = random_values(wd.size_in_bytes() / 4, 2);
  aligned_vector<float> y(yd.size_in_bytes() / 4);
  aligned_vector<uint8_t> ws(ws_bytes + 64);
  for (auto _ : state)
    tessera::convolution_forward(h, 1.0f, xd, x.data(), wd, w.data(), cd, algo, ws.data(), ws_bytes,
                                 0.0f, yd, y.data());
  state.counters["GFLOP/s"] = benchmark::Counter(layer_flops(l, mb) * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void layer_args(benchmark::internal::Benchmark* b) {
  for (int constant : {0, 1})
    for (int mb : {1, 32})
      for (int i = 0; i < static_cast<int>(sizeof(k_layers) / sizeof(k_layers[0])); ++i)
        b->Args({i, mb, constant});
  b->ArgNames({"layer", "mb", "constant_weights"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
void direct_layer_args(benchmark::internal::Benchmark* b) {
  for (int once : {0, 1})
    for (int mb : {1, 32})
      for (int i = 0; i < static_cast<int>(sizeof(k_layers) / sizeof(k_layers[0])); ++i)
        b->Args({i, mb, once});
  b->ArgNames({"layer", "mb", "reorder_weights_once"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(conv_onednn_direct)->Apply(direct_layer_args);
BENCHMARK(conv_tessera)->Apply(layer_args);

// ---- per-call host cost ------------------------------------------------------------------
// A tiny problem, where the kernel's own work is negligible: relu on 8 elements, the same
// oneDNN eltwise primitive called directly and through Tessera; the difference is what the API
// (validation, lookup, dispatch) adds per call.
void call_relu_onednn_direct(benchmark::State& state) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  dnnl::memory::desc md({1, 8, 1, 1}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::eltwise_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::eltwise_relu, md, md, 0.0f, 0.0f, attr);
  dnnl::eltwise_forward relu(pd);
  aligned_vector<float> x(8, -1.0f), y(8);
  aligned_vector<uint8_t> scratch(pd.scratchpad_desc().get_size() + 64);
  dnnl::memory xm(md, eng, x.data()), ym(md, eng, y.data()), sm(pd.scratchpad_desc(), eng, scratch.data());
  for (auto _ : state) {
    relu.execute(strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, sm}});
    strm.wait();
  }
}

void call_relu_tessera(benchmark::State& state) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::tensor_desc xd(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 8, 1, 1});
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  tsrAlgo_t algo = state.range(0) ? tessera::algo_by_name(TSR_OP_ACTIVATION_FORWARD, "onednn/eltwise_fwd")
                                  : TSR_ALGO_AUTO;
  h.set_backend_preference("onednn");
  aligned_vector<float> x(8, -1.0f), y(8);
  for (auto _ : state)
    tessera::activation_forward(h, relu, algo, 1.0f, xd, x.data(), 0.0f, xd, y.data());
}

void call_conv_tessera_small(benchmark::State& state) {
  // cudnn_overhead.cpp's problem: 1x8x8x8 NHWC, 3x3, pad 1 (there in fp16 on the GPU).
  // constant_weights = 1 is the like-for-like comparison with call_conv_onednn_small, whose
  // filter sits in oneDNN's blocked layout up front; with 0 every call reorders the filter.
  tessera::handle h(TSR_DEVICE_CPU, 0);
  if (state.range(0) != 0) tsrSetConstantWeights(h, 1);
  tessera::tensor_desc xd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {1, 8, 8, 8});
  tessera::tensor_desc wd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {8, 8, 3, 3});
  tessera::convolution_desc cd({1, 1}, {1, 1}, {1, 1}, {1, 1});
  h.set_backend_preference("onednn");
  tsrAlgo_t algo = tessera::algo_by_name(TSR_OP_CONVOLUTION_FORWARD, "onednn/conv_fwd");
  size_t ws_bytes = tessera::convolution_forward_workspace_size(h, xd, wd, cd, xd, algo);
  aligned_vector<float> x(512, 1.0f), w(576, 1.0f), y(512);
  aligned_vector<uint8_t> ws(ws_bytes + 64);
  for (auto _ : state)
    tessera::convolution_forward(h, 1.0f, xd, x.data(), wd, w.data(), cd, algo, ws.data(), ws_bytes,
                                 0.0f, xd, y.data());
}

void call_workspace_query_tessera(benchmark::State& state) {
  tessera::handle h(TSR_DEVICE_CPU, 0);
  tessera::tensor_desc xd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {1, 8, 8, 8});
  tessera::tensor_desc wd(TSR_TENSOR_NHWC, TSR_DATA_FLOAT, {8, 8, 3, 3});
  tessera::convolution_desc cd({1, 1}, {1, 1}, {1, 1}, {1, 1});
  size_t bytes = 0;
  for (auto _ : state) tsrGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, xd, TSR_ALGO_AUTO, &bytes);
  benchmark::DoNotOptimize(bytes);
}

void call_conv_onednn_small(benchmark::State& state) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  dnnl::memory::desc md({1, 8, 8, 8}, dnnl::memory::data_type::f32, tag::nhwc);
  // The plugin's plan for this problem (ONEDNN_VERBOSE): brgconv on Acdb16a weights.
  dnnl::memory::desc wmd({8, 8, 3, 3}, dnnl::memory::data_type::f32, tag::Acdb16a);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::convolution_direct, md, wmd, md,
                                               {1, 1}, {0, 0}, {1, 1}, {1, 1}, attr);
  dnnl::convolution_forward conv(pd);
  // Acdb16a pads the 8 output channels to 16: the filter buffer is wmd's size (1152 floats), not
  // 8*8*3*3. Sized 576, oneDNN read heap garbage past its end, and the call took 4 to 31 us
  // depending on what it found there (denormals, presumably). Only the time is measured here.
  aligned_vector<float> x(512, 1.0f), w(wmd.get_size() / sizeof(float), 1.0f), y(512);
  aligned_vector<uint8_t> scratch(pd.scratchpad_desc().get_size() + 64);
  dnnl::memory xm(md, eng, x.data()), wm(wmd, eng, w.data()), ym(md, eng, y.data());
  dnnl::memory sm(pd.scratchpad_desc(), eng, scratch.data());
  for (auto _ : state) {
    conv.execute(strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym},
                        {DNNL_ARG_SCRATCHPAD, sm}});
    strm.wait();
  }
}

BENCHMARK(call_relu_onednn_direct)->Unit(benchmark::kMicrosecond);
BENCHMARK(call_relu_tessera)->Arg(0)->Arg(1)->ArgName("explicit_algo")->Unit(benchmark::kMicrosecond);
BENCHMARK(call_conv_onednn_small)->Unit(benchmark::kMicrosecond);
BENCHMARK(call_conv_tessera_small)->ArgName("constant_weights")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(call_workspace_query_tessera)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
