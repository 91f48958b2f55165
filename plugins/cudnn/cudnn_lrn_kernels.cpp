// LRN across channels, forward and backward (cudnnLRNCrossChannelForward / Backward). Tessera's
// LRN is defined as cuDNN's: window lookBehind = (n - 1) / 2 and lookAhead = n / 2 (cuDNN's
// n - lookBehind - 1 is the same), alpha divided by n, n in 1..16. cuDNN also asks k >= 1e-5 and
// beta >= 0.01 (CUDNN_LRN_MIN_K, CUDNN_LRN_MIN_BETA); smaller ones are declined. cuDNN casts
// alpha, beta and k to the tensors' type, so f16/bf16 results carry that rounding too.
// The backward reads y, the forward output, as cuDNN's does; tensors are brought to 4-D by
// merging spatial dims where the strides allow.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

namespace tessera::cudnn_plugin {
namespace {

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

struct lrn_tensors {
  tsrpTensor x, y, dy, dx;
};

std::string lrn_support(const tsrpLrnProblem& p, bool backward, lrn_tensors* out) {
  if (p.n < CUDNN_LRN_MIN_N || p.n > CUDNN_LRN_MAX_N) return "window " + std::to_string(p.n) + " outside cuDNN's 1..16";
  if (p.k < CUDNN_LRN_MIN_K) return "k below cuDNN's minimum of 1e-5";
  if (p.beta < CUDNN_LRN_MIN_BETA) return "beta below cuDNN's minimum of 0.01";
  const int32_t dt = p.x.data_type;
  if (!floating(dt)) return std::string(data_type_name(dt)) + " LRN not supported";
  if (p.y.data_type != dt || (backward && (p.dy.data_type != dt || p.dx.data_type != dt)))
    return "all tensors must share one data type";
  if (backward) {
    // cuDNN's backward takes one layout for y and dy, and one for x and dx.
    if (!same_layout(p.y, p.dy)) return "y and dy in different layouts";
    if (!same_layout(p.x, p.dx)) return "x and dx in different layouts";
  }
  lrn_tensors t{p.x, p.y, p.dy, p.dx};
  const bool merged = backward ? merge_spatial_dims({&t.x, &t.y, &t.dy, &t.dx}, 4) : merge_spatial_dims({&t.x, &t.y}, 4);
  if (!merged) return "more than 4 dims whose spatial layout cannot be merged";
  cudnn_tensor_shape shape;
  for (const tsrpTensor* each : {&t.x, &t.y}) {
    std::string why = cudnn_shape_of(*each, 4, &shape);
    if (!why.empty()) return why;
  }
  if (out != nullptr) *out = t;
  return {};
}

struct lrn_prepared : prepared_problem {
  lrn_descriptor lrn;
  tensor_descriptor x, y, dy, dx;
};

std::unique_ptr<lrn_prepared> prepare_lrn(const tsrpLrnProblem& p, bool backward) {
  lrn_tensors t{};
  const std::string why = lrn_support(p, backward, &t);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  auto prepared = std::make_unique<lrn_prepared>();
  prepared->lrn = new_lrn_descriptor();
  check_cudnn(cudnn().cudnnSetLRNDescriptor(prepared->lrn, static_cast<unsigned>(p.n), p.alpha, p.beta, p.k),
              "cudnnSetLRNDescriptor");
  prepared->x = make_tensor_descriptor(t.x);
  prepared->y = make_tensor_descriptor(t.y);
  if (backward) {
    prepared->dy = make_tensor_descriptor(t.dy);
    prepared->dx = make_tensor_descriptor(t.dx);
  }
  return prepared;
}

struct lrn_forward {
  using problem_type = tsrpLrnProblem;
  using args_type = tsrpLrnArgs;
  using prepared_type = lrn_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return lrn_support(p, false, nullptr); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_lrn(p, false);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    check_cudnn(cudnn().cudnnLRNCrossChannelForward(handle, d.lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &a.alpha, d.x, a.x,
                                                    &a.beta, d.y, a.y),
                "cudnnLRNCrossChannelForward");
  }
};

struct lrn_backward {
  using problem_type = tsrpLrnProblem;
  using args_type = tsrpLrnArgs;
  using prepared_type = lrn_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) { return lrn_support(p, true, nullptr); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    return prepare_lrn(p, true);
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y_in, "y");
    require_pointer(a.dy, "dy");
    require_pointer(a.dx, "dx");
    check_cudnn(cudnn().cudnnLRNCrossChannelBackward(handle, d.lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &a.alpha, d.y,
                                                     a.y_in, d.dy, a.dy, d.x, a.x, &a.beta, d.dx, a.dx),
                "cudnnLRNCrossChannelBackward");
  }
};

const kernel_spec forward_specs[] = {
    {"cudnn_lrn_fwd", TSRP_OP_LRN_FORWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnLRNCrossChannelForward; k, alpha, beta rounded to the data type", 0},
};
const kernel_spec backward_specs[] = {
    {"cudnn_lrn_bwd", TSRP_OP_LRN_BACKWARD, TSRP_KERNEL_DETERMINISTIC,
     "cuDNN cudnnLRNCrossChannelBackward (reads the forward y)", 0},
};

}  // namespace

void add_lrn_kernels(kernel_list& list) {
  add_kernels<lrn_forward>(list, forward_specs);
  add_kernels<lrn_backward>(list, backward_specs);
}

}  // namespace tessera::cudnn_plugin
