// A custom kernel: clipped ReLU forward (min(max(x, 0), clip)) in fp32 on packed tensors, with
// alpha/beta blending. Everything else it declines, so Tessera's own kernels serve the rest.
#include <tessera/plugin_sdk.hpp>

#include <algorithm>

namespace {

struct clipped_relu_f32 {
  static constexpr const char* name = "clipped_relu_f32";
  static constexpr tsrpOperation_t operation = TSRP_OP_ACTIVATION_FORWARD;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = "example plugin: exact fp32, packed tensors only";
  using problem_type = tsrpActivationProblem;
  using args_type = tsrpActivationArgs;

  static std::string can_implement(const problem_type& p) {
    if (p.mode != TSRP_ACTIVATION_CLIPPED_RELU) return "runs clipped relu only";
    if (p.x.data_type != TSRP_DATA_FLOAT || p.y.data_type != TSRP_DATA_FLOAT) return "fp32 only";
    if (!tessera::sdk::is_packed_row_major(p.x) || !tessera::sdk::is_packed_row_major(p.y))
      return "packed row-major tensors only";
    return {};
  }

  static void run(void*, const problem_type& p, const args_type& a, void*, size_t) {
    const int64_t n = tessera::sdk::element_count(p.x);
    const float* x = static_cast<const float*>(a.x);
    float* y = static_cast<float*>(a.y);
    const float clip = static_cast<float>(p.coef);
    for (int64_t i = 0; i < n; ++i) {
      float v = a.alpha * std::min(std::max(x[i], 0.0f), clip);
      y[i] = a.beta != 0.0f ? v + a.beta * y[i] : v;  // beta 0: y is not read
    }
  }
};

}  // namespace

TESSERA_PLUGIN("example", "1.0.0", TSRP_DEVICE_CPU, clipped_relu_f32)
