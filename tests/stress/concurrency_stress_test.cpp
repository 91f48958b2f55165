// Many threads at once, as a serving process calls Tessera: 16 threads with a CPU handle each,
// 4 more sharing one handle (tessera.h, "Threads": every call taking a handle may be made on a
// shared one), and a thread listing plugins and kernels throughout. They mix convolution (and
// its get/find), activation, pooling, softmax, batch norm and matmul over a few shapes, and every
// result must be bitwise equal to the same sequence run by one thread beforehand. Run under TSan
// by the TSan job (tools/run-tests.sh).
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace tessera::testing;

namespace {

using bytes = std::vector<uint8_t>;

constexpr int k_own_handle_threads = 16;
constexpr int k_shared_handle_threads = 4;
constexpr int k_rounds = 5;      // each thread runs every step of every variant this often
constexpr int k_variants = 2;    // input data sets per step

template <typename T>
void append(bytes& out, const T* data, size_t count) {
  const auto* p = reinterpret_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + count * sizeof(T));
}

void append_text(bytes& out, const std::string& s) { append(out, s.c_str(), s.size() + 1); }

// Small multiples of 1/4: exact in f32, varied enough that every output element differs.
std::vector<float> fill(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5) * 0.25f;
  return v;
}

std::string status_text(tsrStatus_t s) {
  return s == TSR_STATUS_SUCCESS ? std::string() : std::string(tsrGetErrorString(s)) + ": " + last_error();
}

// The operations and their descriptors, built once and shared by every thread (descriptors may
// be passed to concurrent calls). A step returns its output bytes, or a failure's text (which
// then differs from the reference and fails the comparison with the message in view).
class workload {
 public:
  using step = std::function<bytes(tsrHandle_t, int variant)>;

  workload()
      : x_(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8, 12, 12}),
        w_(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {8, 8, 3, 3}),
        pooled_(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {2, 8, 6, 6}),
        conv_({1, 1}, {1, 1}, {1, 1}, {1, 1}),
        sigmoid_(TSR_ACTIVATION_SIGMOID),
        max_pool_(TSR_POOLING_MAX, {2, 2}, {0, 0}, {0, 0}, {2, 2}),
        a_(TSR_DATA_FLOAT, {2, 16, 24}, {16 * 24, 24, 1}),
        b_(TSR_DATA_FLOAT, {2, 24, 20}, {24 * 20, 20, 1}),
        c_(TSR_DATA_FLOAT, {2, 16, 20}, {16 * 20, 20, 1}) {
    tsrDeriveBatchNormTensorDescriptor(x_, TSR_BATCHNORM_SPATIAL, param_);
    const size_t n = 2 * 8 * 12 * 12;
    steps_ = {
        {"convolution_forward",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v), w = fill(8 * 8 * 9, v + 1);
           std::vector<float> y(n, 0.0f);
           tsrStatus_t s = tsrConvolutionForward(h, 1.0f, x_, x.data(), w_, w.data(), conv_,
                                                 TSR_ALGO_AUTO, nullptr, 0, 0.0f, x_, y.data());
           return result(s, y);
         }},
        {"activation_forward",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v);
           std::vector<float> y(n, 1.0f);
           tsrStatus_t s = tsrActivationForward(h, sigmoid_, TSR_ALGO_AUTO, 1.0f, x_, x.data(),
                                                0.5f, x_, y.data());
           return result(s, y);
         }},
        {"pooling_forward",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v);
           std::vector<float> y(2 * 8 * 6 * 6, 0.0f);
           tsrStatus_t s = tsrPoolingForward(h, max_pool_, TSR_ALGO_AUTO, 1.0f, x_, x.data(), 0.0f,
                                             pooled_, y.data());
           return result(s, y);
         }},
        {"softmax_forward",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v);
           std::vector<float> y(n, 0.0f);
           tsrStatus_t s = tsrSoftmaxForward(h, TSR_SOFTMAX_ACCURATE, TSR_SOFTMAX_MODE_CHANNEL,
                                             TSR_ALGO_AUTO, 1.0f, x_, x.data(), 0.0f, x_, y.data());
           return result(s, y);
         }},
        {"batch_norm_forward_training",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v), scale = fill(8, v + 2), bias = fill(8, v + 3);
           std::vector<float> y(n, 0.0f), mean(8, 0.0f), inv_var(8, 0.0f);
           tsrStatus_t s = tsrBatchNormalizationForwardTraining(
               h, TSR_BATCHNORM_SPATIAL, nullptr, TSR_ALGO_AUTO, 1.0f, x_, x.data(), param_,
               scale.data(), bias.data(), 0.0, 1e-5, nullptr, 0, 0.0f, x_, y.data(), nullptr,
               nullptr, mean.data(), inv_var.data());
           bytes out = result(s, y);
           append(out, mean.data(), mean.size());
           append(out, inv_var.data(), inv_var.size());
           return out;
         }},
        {"batch_norm_forward_inference",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v), scale = fill(8, v + 2), bias = fill(8, v + 3), mean = fill(8, v);
           std::vector<float> var(8, 0.75f), y(n, 0.0f);
           tsrStatus_t s = tsrBatchNormalizationForwardInference(
               h, TSR_BATCHNORM_SPATIAL, nullptr, TSR_ALGO_AUTO, 1.0f, x_, x.data(), param_,
               scale.data(), bias.data(), mean.data(), var.data(), 1e-5, nullptr, 0, 0.0f, x_,
               y.data());
           return result(s, y);
         }},
        {"matmul",
         [this](tsrHandle_t h, int v) {
           auto a = fill(2 * 16 * 24, v), b = fill(2 * 24 * 20, v + 5);
           std::vector<float> c(2 * 16 * 20, 0.0f);
           tsrStatus_t s = tsrMatmul(h, matmul_, TSR_ALGO_AUTO, 1.0f, a_, a.data(), b_, b.data(),
                                     nullptr, nullptr, 0.0f, c_, c.data(), nullptr, 0);
           return result(s, c);
         }},
        {"convolution_get_and_find",
         [this, n](tsrHandle_t h, int v) {
           auto x = fill(n, v), w = fill(8 * 8 * 9, v + 1);
           std::vector<float> y(n, 0.0f);
           std::vector<tsrAlgoPerf_t> got(8, tessera::make_algo_perf()), found = got;
           int got_n = 0, found_n = 0;
           tsrStatus_t s = tsrGetConvolutionForwardAlgorithm(h, x_, w_, conv_, x_, 8, &got_n, got.data());
           if (s != TSR_STATUS_SUCCESS) return result(s, y);
           s = tsrFindConvolutionForwardAlgorithm(h, x_, x.data(), w_, w.data(), conv_, x_, y.data(),
                                                  8, &found_n, found.data(), nullptr, 0);
           if (s != TSR_STATUS_SUCCESS) return result(s, y);
           // Find's order follows measured times: compare what it found, not the order.
           found.resize(static_cast<size_t>(found_n));
           std::sort(found.begin(), found.end(),
                     [](const tsrAlgoPerf_t& l, const tsrAlgoPerf_t& r) { return l.algo < r.algo; });
           bytes out;
           for (int i = 0; i < got_n; ++i) describe_perf(out, got[static_cast<size_t>(i)]);
           for (const tsrAlgoPerf_t& p : found) describe_perf(out, p);
           append(out, y.data(), y.size());  // find never writes y
           return out;
         }},
        {"plugin_and_kernel_listing", [](tsrHandle_t, int) { return listing(); }},
    };
  }

  size_t size() const { return steps_.size(); }
  const std::string& name(size_t i) const { return steps_[i].name; }
  bytes run(size_t i, tsrHandle_t h, int variant) const { return steps_[i].body(h, variant); }

  static bytes listing() {
    bytes out;
    int plugins = 0;
    if (tsrStatus_t s = tsrGetPluginCount(&plugins)) return error_bytes(s);
    for (int i = 0; i < plugins; ++i) {
      tsrPluginInfo_t p{};
      p.struct_size = sizeof(p);
      if (tsrStatus_t s = tsrGetPluginInfo(i, &p)) return error_bytes(s);
      append_text(out, std::string(p.name) + " " + p.version + " " + std::to_string(p.loaded) +
                           " " + std::to_string(p.kernel_count) + " " + p.path + " " + p.reason);
    }
    for (int op = 0; op < TSR_OP_COUNT; ++op) {
      int kernels = 0;
      if (tsrStatus_t s = tsrGetKernelCount(static_cast<tsrOperation_t>(op), &kernels))
        return error_bytes(s);
      for (int i = 0; i < kernels; ++i) {
        tsrKernelInfo_t k{};
        k.struct_size = sizeof(k);
        if (tsrStatus_t s = tsrGetKernelInfo(static_cast<tsrOperation_t>(op), i, &k))
          return error_bytes(s);
        append_text(out, std::to_string(k.algo) + " " + k.backend_name + "/" + k.kernel_name);
      }
    }
    return out;
  }

 private:
  struct named_step {
    std::string name;
    step body;
  };

  static bytes error_bytes(tsrStatus_t s) {
    bytes out;
    append_text(out, "FAILED " + status_text(s));
    return out;
  }
  static bytes result(tsrStatus_t s, const std::vector<float>& y) {
    if (s != TSR_STATUS_SUCCESS) return error_bytes(s);
    bytes out;
    append(out, y.data(), y.size());
    return out;
  }
  static void describe_perf(bytes& out, const tsrAlgoPerf_t& p) {
    append_text(out, std::to_string(p.algo) + " " + p.backend_name + "/" + p.kernel_name + " " +
                         std::to_string(p.status) + " " + std::to_string(p.workspace_size));
  }

  tessera::tensor_desc x_, w_, pooled_;
  tessera::tensor_desc param_;
  tessera::convolution_desc conv_;
  tessera::activation_desc sigmoid_;
  tessera::pooling_desc max_pool_;
  tessera::tensor_desc a_, b_, c_;
  tessera::matmul_desc matmul_;
  std::vector<named_step> steps_;
};

// Every (step, variant) pair's output, in a fixed order.
using results = std::vector<bytes>;

size_t slot(size_t step, int variant) { return step * k_variants + static_cast<size_t>(variant); }

// One thread's share: every step and variant, k_rounds times, starting at a different step per
// thread so that different operations overlap. Each round's result must equal the reference.
void run_thread(const workload& work, tsrHandle_t h, int thread_index, const results& reference,
                std::vector<std::string>& mismatches) {
  const size_t total = work.size() * k_variants;
  for (int round = 0; round < k_rounds; ++round)
    for (size_t i = 0; i < total; ++i) {
      size_t k = (i + static_cast<size_t>(thread_index) * 3) % total;
      size_t step = k / k_variants;
      int variant = static_cast<int>(k % k_variants);
      bytes got = work.run(step, h, variant);
      if (got != reference[slot(step, variant)])
        mismatches.push_back("thread " + std::to_string(thread_index) + " round " +
                             std::to_string(round) + ": " + work.name(step) + " variant " +
                             std::to_string(variant) + " differs from the single-thread run" +
                             (got.size() > 7 && std::memcmp(got.data(), "FAILED ", 7) == 0
                                  ? std::string(" (") + reinterpret_cast<const char*>(got.data()) + ")"
                                  : std::string()));
    }
}

}  // namespace

TEST(ConcurrencyStress, sixteen_own_handles_and_a_shared_one_match_the_single_thread_run) {
  if (!backend_loaded("onednn")) GTEST_SKIP() << "oneDNN plugin not built";
  workload work;

  // The reference: one thread, one handle, every step and variant once, in order.
  results reference(work.size() * k_variants);
  {
    tessera::handle h(TSR_DEVICE_CPU, 0);
    for (size_t step = 0; step < work.size(); ++step)
      for (int variant = 0; variant < k_variants; ++variant) {
        bytes out = work.run(step, h, variant);
        ASSERT_FALSE(out.size() > 7 && std::memcmp(out.data(), "FAILED ", 7) == 0)
            << work.name(step) << ": " << reinterpret_cast<const char*>(out.data());
        reference[slot(step, variant)] = std::move(out);
      }
  }

  std::vector<std::vector<std::string>> mismatches(k_own_handle_threads + k_shared_handle_threads + 1);
  tessera::handle shared(TSR_DEVICE_CPU, 0);
  std::atomic<bool> workers_done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < k_own_handle_threads; ++t)
    threads.emplace_back([&, t] {
      tsrHandle_t own = nullptr;
      if (tsrCreate(TSR_DEVICE_CPU, 0, &own) != TSR_STATUS_SUCCESS) {
        mismatches[t].push_back("thread " + std::to_string(t) + ": tsrCreate: " + last_error());
        return;
      }
      run_thread(work, own, t, reference, mismatches[t]);
      tsrDestroy(own);
    });
  for (int t = 0; t < k_shared_handle_threads; ++t) {
    int index = k_own_handle_threads + t;
    threads.emplace_back([&, index] {
      // Settings changed on the shared handle while the others run on it (to the values they
      // already had: the results must not change, and the calls must not race).
      if (tsrStatus_t s = tsrSetBackendPreference(shared, "onednn"))
        mismatches[index].push_back("tsrSetBackendPreference: " + status_text(s));
      if (tsrStatus_t s = tsrSetWorkspaceLimit(shared, size_t(1) << 30))
        mismatches[index].push_back("tsrSetWorkspaceLimit: " + status_text(s));
      run_thread(work, shared, index, reference, mismatches[index]);
    });
  }
  // Listing throughout, while handles are made and destroyed.
  const bytes listed = workload::listing();
  std::thread lister([&] {
    int rounds = 0;
    while (!workers_done || rounds < 10) {
      if (workload::listing() != listed)
        mismatches.back().push_back("the plugin and kernel listing changed while threads ran");
      ++rounds;
    }
  });
  for (std::thread& t : threads) t.join();
  workers_done = true;
  lister.join();

  size_t failures = 0;
  for (const auto& list : mismatches)
    for (const std::string& m : list) {
      if (++failures <= 20) ADD_FAILURE() << m;
    }
  EXPECT_EQ(failures, 0u);
}

TEST(ConcurrencyStress, handles_created_and_destroyed_on_many_threads_at_once) {
  // Creation and destruction touch the registry (plugin contexts) from every thread.
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 8; ++i) {
        tsrHandle_t h = nullptr;
        if (tsrCreate(TSR_DEVICE_CPU, 0, &h) != TSR_STATUS_SUCCESS) {
          ++failures;
          continue;
        }
        void* p = nullptr;
        if (tsrMalloc(h, 4096, &p) != TSR_STATUS_SUCCESS || tsrFree(h, p) != TSR_STATUS_SUCCESS)
          ++failures;
        if (tsrDestroy(h) != TSR_STATUS_SUCCESS) ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}
