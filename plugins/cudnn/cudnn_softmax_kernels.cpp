// Softmax forward and backward (cudnnSoftmaxForward / cudnnSoftmaxBackward): Tessera's
// algorithms (fast, accurate, log) and modes (instance, channel) are cuDNN's, value for value.
// cuDNN takes N, C, H, W tensors: 2-D and 3-D tensors get unit dims, and tensors of more dims have
// their spatial dims merged (any spatial order is the same softmax) where the strides allow.
// The backward reads the forward output y, which is what the ABI gives it.
//
// Layouts: cuDNN 9.19's softmax kernels read and write through one layout. On the H200, with x
// NCHW and y NHWC every instance-mode case and some channel-mode ones (log softmax of a
// 1x3x5x7 tensor) came out permuted, though cuDNN took both descriptors. So when the output's
// layout differs from the inputs', the inputs are first copied into the output's layout in the
// workspace (cudnnTransformTensor, an exact copy), and the softmax runs with one layout; alpha and
// beta stay cuDNN's, so nothing is rounded twice.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

struct softmax_tensors {
  tsrpTensor in, out, dy;  // forward: x -> y; backward: y, dy -> dx
  bool staged = false;     // inputs copied into out's layout first (see the file comment)
};

std::string softmax_support(const tsrpSoftmaxProblem& p, bool backward, softmax_tensors* out) {
  if (p.algorithm != TSRP_SOFTMAX_FAST && p.algorithm != TSRP_SOFTMAX_ACCURATE && p.algorithm != TSRP_SOFTMAX_LOG)
    return "unknown softmax algorithm " + std::to_string(p.algorithm);
  if (p.mode != TSRP_SOFTMAX_MODE_INSTANCE && p.mode != TSRP_SOFTMAX_MODE_CHANNEL)
    return "unknown softmax mode " + std::to_string(p.mode);
  // cuDNN's backward reads y and dy through one layout (one set of strides: with_strides_of).
  if (backward && !same_layout(p.y, p.dy)) return "y and dy in different layouts";
  softmax_tensors t{backward ? p.y : p.x, backward ? p.dx : p.y, with_strides_of(p.dy, p.y)};
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
  if (same_layout(t.in, t.out)) t.out = with_strides_of(t.out, t.in);
  else t.staged = true;
  if (out != nullptr) *out = t;
  return {};
}

struct softmax_prepared : prepared_problem {
  tensor_descriptor in, out, dy;
  bool staged = false;
  size_t staged_bytes = 0;  // one input copy in out's layout (backward: y's, then dy's)
};

std::unique_ptr<softmax_prepared> prepare_softmax(const tsrpSoftmaxProblem& p, bool backward) {
  softmax_tensors t{};
  const std::string why = softmax_support(p, backward, &t);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  auto prepared = std::make_unique<softmax_prepared>();
  prepared->in = make_tensor_descriptor(t.in);
  prepared->out = make_tensor_descriptor(t.out);
  if (backward) prepared->dy = make_tensor_descriptor(t.dy);
  prepared->staged = t.staged;
  if (t.staged) {
    prepared->staged_bytes = align_up(span_bytes(t.out));
    prepared->workspace_bytes = prepared->staged_bytes * (backward ? 2 : 1);
  }
  return prepared;
}

// An exact copy of `source` (described by `from`) into `target` with the output's layout.
void copy_into_output_layout(cudnnHandle_t handle, const softmax_prepared& d, cudnnTensorDescriptor_t from,
                             const void* source, void* target) {
  const float one = 1.0f, zero = 0.0f;
  check_cudnn(cudnn().cudnnTransformTensor(handle, &one, from, source, &zero, d.out, target),
              "cudnnTransformTensor (softmax input into the output's layout)");
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
                  const kernel_spec&, void* workspace, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    const void* x = a.x;
    cudnnTensorDescriptor_t x_desc = d.in;
    if (d.staged) {
      copy_into_output_layout(handle, d, d.in, a.x, workspace);
      x = workspace;
      x_desc = d.out;
    }
    check_cudnn(cudnn().cudnnSoftmaxForward(handle, algorithm_of(p.algorithm), mode_of(p.mode), &a.alpha, x_desc, x,
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
                  const kernel_spec&, void* workspace, size_t) {
    require_pointer(a.y_in, "y");
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    const void* y = a.y_in;
    const void* dy = a.dy;
    cudnnTensorDescriptor_t y_desc = d.in, dy_desc = d.dy;
    if (d.staged) {
      char* y_copy = static_cast<char*>(workspace);
      char* dy_copy = y_copy + d.staged_bytes;
      copy_into_output_layout(handle, d, d.in, a.y_in, y_copy);
      copy_into_output_layout(handle, d, d.dy, a.dy, dy_copy);
      y = y_copy;
      dy = dy_copy;
      y_desc = dy_desc = d.out;
    }
    check_cudnn(cudnn().cudnnSoftmaxBackward(handle, algorithm_of(p.algorithm), mode_of(p.mode), &a.alpha, y_desc, y,
                                             dy_desc, dy, &a.beta, d.out, a.dx),
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
