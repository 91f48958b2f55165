// Activation forward and backward (cudnnActivationForward / cudnnActivationBackward).
//
// Modes: relu, sigmoid, tanh, clipped relu (coef = ceiling), elu (coef = alpha) and swish
// (coef = beta, cudnnSetActivationDescriptorSwishBeta) map one to one; identity runs as
// cudnnTransformTensor (y = alpha x + beta y), which is what it is. Leaky relu and both GELUs have
// no legacy cuDNN mode and are declined (cuDNN has them only as graph-API pointwise nodes).
//
// Backward: cuDNN derives the gradient from y, the forward output. Tessera defines it from x
// (y_in is only a hint for kernels that want it), so the kernel recomputes y = act(x) into its
// workspace first, in dy's layout (cuDNN reads y and dy through one layout, and x and dx through
// another, so x and dx must share theirs): exact whatever the caller passes as y_in, at the
// price of one more pass. For
// f16/bf16 the smooth modes (sigmoid, tanh, elu, swish) are declined: a derivative taken from a y
// rounded to 11 or 8 bits (sigmoid' = y (1 - y) near y = 1) loses most of its digits.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

const char* mode_name(int32_t mode) {
  switch (mode) {
    case TSRP_ACTIVATION_IDENTITY: return "identity";
    case TSRP_ACTIVATION_RELU: return "relu";
    case TSRP_ACTIVATION_SIGMOID: return "sigmoid";
    case TSRP_ACTIVATION_TANH: return "tanh";
    case TSRP_ACTIVATION_LEAKY_RELU: return "leaky relu";
    case TSRP_ACTIVATION_CLIPPED_RELU: return "clipped relu";
    case TSRP_ACTIVATION_ELU: return "elu";
    case TSRP_ACTIVATION_GELU_ERF: return "gelu (erf)";
    case TSRP_ACTIVATION_GELU_TANH: return "gelu (tanh)";
    case TSRP_ACTIVATION_SWISH: return "swish";
  }
  return "unknown";
}

bool smooth(int32_t mode) {
  return mode == TSRP_ACTIVATION_SIGMOID || mode == TSRP_ACTIVATION_TANH || mode == TSRP_ACTIVATION_ELU ||
         mode == TSRP_ACTIVATION_SWISH;
}

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

// The problem with its tensors brought to at most 5 dims (cuDNN's activations take 4-D and 5-D).
struct activation_tensors {
  tsrpTensor x, y, dy, dx;
};

std::string activation_support(const tsrpActivationProblem& p, bool backward, activation_tensors* out) {
  switch (p.mode) {
    case TSRP_ACTIVATION_LEAKY_RELU:
    case TSRP_ACTIVATION_GELU_ERF:
    case TSRP_ACTIVATION_GELU_TANH:
      return std::string(mode_name(p.mode)) + " has no cuDNN legacy activation mode";
    case TSRP_ACTIVATION_IDENTITY:
    case TSRP_ACTIVATION_RELU:
    case TSRP_ACTIVATION_SIGMOID:
    case TSRP_ACTIVATION_TANH:
    case TSRP_ACTIVATION_CLIPPED_RELU:
    case TSRP_ACTIVATION_ELU:
    case TSRP_ACTIVATION_SWISH: break;
    default: return "unknown activation mode " + std::to_string(p.mode);
  }
  const int32_t dt = p.x.data_type;
  if (!floating(dt)) return std::string(data_type_name(dt)) + " activation not supported";
  if (p.y.data_type != dt || (backward && (p.dy.data_type != dt || p.dx.data_type != dt)))
    return "all tensors must share one data type";
  if (backward && dt != TSRP_DATA_FLOAT && smooth(p.mode))
    return std::string(mode_name(p.mode)) + " backward in " + data_type_name(dt) +
           ": cuDNN derives it from a rounded y, too inexact";
  if (backward && !same_layout(p.x, p.dx)) return "x and dx in different layouts (cuDNN's backward reads one)";
  activation_tensors t{p.x, p.y, p.dy, p.dx};
  const bool merged = backward ? merge_spatial_dims({&t.x, &t.y, &t.dy, &t.dx}, 5) : merge_spatial_dims({&t.x, &t.y}, 5);
  if (!merged) return "more than 5 dims whose layout cannot be merged (cuDNN takes 4-D and 5-D)";
  cudnn_tensor_shape shape;
  for (const tsrpTensor* each : {&t.x, &t.y, &t.dy, &t.dx}) {
    if (!backward && (each == &t.dy || each == &t.dx)) continue;
    std::string why = cudnn_shape_of(*each, 4, &shape);
    if (!why.empty()) return why;
  }
  if (out != nullptr) *out = t;
  return {};
}

// Bytes from a tensor's first element to one past its last (its strides may leave gaps).
size_t extent_bytes(const tsrpTensor& t) {
  int64_t last = 0;
  for (int i = 0; i < t.ndims; ++i) last += (t.dims[i] - 1) * t.strides[i];
  return static_cast<size_t>(last + 1) * element_size(t.data_type);
}

struct activation_prepared : prepared_problem {
  activation_descriptor activation;  // unused for identity
  tensor_descriptor x, y, dy, dx, y_recomputed;
};

std::unique_ptr<activation_prepared> prepare_activation(const tsrpActivationProblem& p, bool backward) {
  activation_tensors t{};
  const std::string why = activation_support(p, backward, &t);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  auto prepared = std::make_unique<activation_prepared>();
  prepared->x = make_tensor_descriptor(t.x);
  if (!backward) {
    prepared->y = make_tensor_descriptor(t.y);
  } else {
    prepared->dy = make_tensor_descriptor(t.dy);
    prepared->dx = make_tensor_descriptor(t.dx);
    prepared->y_recomputed = make_tensor_descriptor(t.dy);
    if (p.mode != TSRP_ACTIVATION_IDENTITY) prepared->workspace_bytes = extent_bytes(t.dy);
  }
  if (p.mode != TSRP_ACTIVATION_IDENTITY) {
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
    switch (p.mode) {
      case TSRP_ACTIVATION_SIGMOID: mode = CUDNN_ACTIVATION_SIGMOID; break;
      case TSRP_ACTIVATION_TANH: mode = CUDNN_ACTIVATION_TANH; break;
      case TSRP_ACTIVATION_CLIPPED_RELU: mode = CUDNN_ACTIVATION_CLIPPED_RELU; break;
      case TSRP_ACTIVATION_ELU: mode = CUDNN_ACTIVATION_ELU; break;
      case TSRP_ACTIVATION_SWISH: mode = CUDNN_ACTIVATION_SWISH; break;
      default: break;
    }
    prepared->activation = new_activation_descriptor();
    check_cudnn(cudnn().cudnnSetActivationDescriptor(prepared->activation, mode, CUDNN_PROPAGATE_NAN, p.coef),
                "cudnnSetActivationDescriptor");
    if (p.mode == TSRP_ACTIVATION_SWISH)
      check_cudnn(cudnn().cudnnSetActivationDescriptorSwishBeta(prepared->activation, p.coef),
                  "cudnnSetActivationDescriptorSwishBeta");
  }
  return prepared;
}

struct activation_forward {
  using problem_type = tsrpActivationProblem;
  using args_type = tsrpActivationArgs;
  using prepared_type = activation_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) {
    return activation_support(p, false, nullptr);
  }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_activation(p, false);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    if (p.mode == TSRP_ACTIVATION_IDENTITY) {
      check_cudnn(cudnn().cudnnTransformTensor(handle, &a.alpha, d.x, a.x, &a.beta, d.y, a.y),
                  "cudnnTransformTensor (identity activation)");
      return;
    }
    check_cudnn(cudnn().cudnnActivationForward(handle, d.activation, &a.alpha, d.x, a.x, &a.beta, d.y, a.y),
                "cudnnActivationForward");
  }
};

struct activation_backward {
  using problem_type = tsrpActivationProblem;
  using args_type = tsrpActivationArgs;
  using prepared_type = activation_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) {
    return activation_support(p, true, nullptr);
  }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_activation(p, true);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void* workspace, size_t) {
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    if (p.mode == TSRP_ACTIVATION_IDENTITY) {
      check_cudnn(cudnn().cudnnTransformTensor(handle, &a.alpha, d.dy, a.dy, &a.beta, d.dx, a.dx),
                  "cudnnTransformTensor (identity activation backward)");
      return;
    }
    require_pointer(a.x, "x");
    const float one = 1.0f, none = 0.0f;
    check_cudnn(cudnn().cudnnActivationForward(handle, d.activation, &one, d.x, a.x, &none, d.y_recomputed, workspace),
                "cudnnActivationForward (recomputing y for the backward)");
    check_cudnn(cudnn().cudnnActivationBackward(handle, d.activation, &a.alpha, d.y_recomputed, workspace, d.dy, a.dy,
                                                d.x, a.x, &a.beta, d.dx, a.dx),
                "cudnnActivationBackward");
  }
};

const kernel_spec forward_specs[] = {
    {"cudnn_act_fwd", TSRP_OP_ACTIVATION_FORWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnActivationForward; no leaky relu or GELU", 0},
};
const kernel_spec backward_specs[] = {
    {"cudnn_act_bwd", TSRP_OP_ACTIVATION_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnActivationBackward from y recomputed in the workspace; smooth modes f32 only", 0},
};

}  // namespace

void add_activation_kernels(kernel_list& list) {
  add_kernels<activation_forward>(list, forward_specs);
  add_kernels<activation_backward>(list, backward_specs);
}

}  // namespace tessera::cudnn_plugin
