// Softmax forward and backward (cudnnSoftmaxForward / cudnnSoftmaxBackward): Tessera's
// algorithms (fast, accurate, log) and modes (instance, channel) are cuDNN's, value for value.
// cuDNN takes N, C, H, W tensors: 2-D and 3-D tensors get unit dims, and tensors of more dims have
// their spatial dims merged (any spatial order is the same softmax) where the strides allow.
// The backward reads the forward output y, which is what the ABI gives it.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

struct softmax_tensors {
  tsrpTensor in, out, dy;  // forward: x -> y; backward: y, dy -> dx
};

std::string softmax_support(const tsrpSoftmaxProblem& p, bool backward, softmax_tensors* out) {
  if (p.algorithm != TSRP_SOFTMAX_FAST && p.algorithm != TSRP_SOFTMAX_ACCURATE && p.algorithm != TSRP_SOFTMAX_LOG)
    return "unknown softmax algorithm " + std::to_string(p.algorithm);
  if (p.mode != TSRP_SOFTMAX_MODE_INSTANCE && p.mode != TSRP_SOFTMAX_MODE_CHANNEL)
    return "unknown softmax mode " + std::to_string(p.mode);
  // cuDNN's backward reads y and dy through one layout.
  if (backward && !same_layout(p.y, p.dy)) return "y and dy in different layouts";
  softmax_tensors t{backward ? p.y : p.x, backward ? p.dx : p.y, p.dy};
  if (!floating(t.in.data_type)) return std::string(data_type_name(t.in.data_type)) + " softmax not supported";
  if (t.out.data_type != t.in.data_type || (backward && t.dy.data_type != t.in.data_type))
    return "all tensors must share one data type";
  const bool merged = backward ? merge_spatial_dims({&t.in, &t.out, &t.dy}, 4) : merge_spatial_dims({&t.in, &t.out}, 4);
  if (!merged) return "more than 4 dims whose spatial layout cannot be merged (cuDNN's softmax is 4-D)";
  cudnn_tensor_shape shape;
  for (const tsrpTensor* each : {&t.in, &t.out, &t.dy}) {
    if (!backward && each == &t.dy) continue;
    std::string why = cudnn_shape_of(*each, 4, &shape);
    if (!why.empty()) return why;
  }
  if (out != nullptr) *out = t;
  return {};
}

struct softmax_prepared : prepared_problem {
  tensor_descriptor in, out, dy;
};

std::unique_ptr<softmax_prepared> prepare_softmax(const tsrpSoftmaxProblem& p, bool backward) {
  softmax_tensors t{};
  const std::string why = softmax_support(p, backward, &t);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  auto prepared = std::make_unique<softmax_prepared>();
  prepared->in = make_tensor_descriptor(t.in);
  prepared->out = make_tensor_descriptor(t.out);
  if (backward) prepared->dy = make_tensor_descriptor(t.dy);
  return prepared;
}

// Tessera's enum values are cuDNN's (plugin_abi_pooling.h says so); spelled out all the same.
cudnnSoftmaxAlgorithm_t algorithm_of(int32_t a) {
  return a == TSRP_SOFTMAX_FAST ? CUDNN_SOFTMAX_FAST : a == TSRP_SOFTMAX_LOG ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
}
cudnnSoftmaxMode_t mode_of(int32_t m) {
  return m == TSRP_SOFTMAX_MODE_INSTANCE ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
}

struct softmax_forward {
  using problem_type = tsrpSoftmaxProblem;
  using args_type = tsrpSoftmaxArgs;
  using prepared_type = softmax_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return softmax_support(p, false, nullptr); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_softmax(p, false);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    check_cudnn(cudnn().cudnnSoftmaxForward(handle, algorithm_of(p.algorithm), mode_of(p.mode), &a.alpha, d.in, a.x,
                                            &a.beta, d.out, a.y),
                "cudnnSoftmaxForward");
  }
};

struct softmax_backward {
  using problem_type = tsrpSoftmaxProblem;
  using args_type = tsrpSoftmaxArgs;
  using prepared_type = softmax_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return softmax_support(p, true, nullptr); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_softmax(p, true);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.y_in, "y");
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    check_cudnn(cudnn().cudnnSoftmaxBackward(handle, algorithm_of(p.algorithm), mode_of(p.mode), &a.alpha, d.in,
                                             a.y_in, d.dy, a.dy, &a.beta, d.out, a.dx),
                "cudnnSoftmaxBackward");
  }
};

const kernel_spec forward_specs[] = {
    {"cudnn_softmax_fwd", TSRP_OP_SOFTMAX_FORWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnSoftmaxForward (fast, accurate, log)", 0},
};
const kernel_spec backward_specs[] = {
    {"cudnn_softmax_bwd", TSRP_OP_SOFTMAX_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnSoftmaxBackward (fast, accurate, log)", 0},
};

}  // namespace

void add_softmax_kernels(kernel_list& list) {
  add_kernels<softmax_forward>(list, forward_specs);
  add_kernels<softmax_backward>(list, backward_specs);
}

}  // namespace tessera::cudnn_plugin
