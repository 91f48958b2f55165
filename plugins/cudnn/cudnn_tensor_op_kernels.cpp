// Tensor operations: add (cudnnAddTensor), op-tensor (cudnnOpTensor: add, mul, min, max, sqrt,
// not), scale (cudnnScaleTensor), set (cudnnSetTensor) and transform (cudnnTransformTensor, the
// layout converter). Tessera's definitions are cuDNN's: the same blends, the same broadcast rule
// (each dim of the broadcast operand 1 or the output's), c may alias a in op-tensor.
//
// Declined: integer tensors (cuDNN's int8 arithmetic rounds and saturates by its own rules, which
// Tessera's exact integer contract does not promise to match), operands of different data types
// (cuDNN's op-tensor type table pairs A and B; transform converts layouts, not types), compute
// types other than f32, and more than 5 dims (cuDNN's documented limit for these calls). The
// reduction (cudnnReduceTensor) is not wrapped: its index tie rule is not documented.
#include "cudnn_descriptors.hpp"
#include "cudnn_kernel_glue.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

#include <cmath>
#include <cstring>

namespace tessera::cudnn_plugin {
namespace {

bool floating(int32_t t) { return t == TSRP_DATA_FLOAT || t == TSRP_DATA_HALF || t == TSRP_DATA_BFLOAT16; }

// "" when every tensor is a floating tensor of `type` with at most 5 dims that fits cuDNN.
std::string elementwise_support(std::initializer_list<const tsrpTensor*> tensors) {
  const int32_t type = (*tensors.begin())->data_type;
  if (!floating(type)) return std::string(data_type_name(type)) + " tensors not enabled (f32, f16, bf16 are)";
  cudnn_tensor_shape shape;
  for (const tsrpTensor* t : tensors) {
    if (t->data_type != type) return "operands of different data types (cuDNN pairs them)";
    if (t->ndims > 5) return "more than 5 dims (cuDNN's tensor operations take up to 5)";
    std::string why = cudnn_shape_of(*t, 4, &shape);
    if (!why.empty()) return why;
  }
  return {};
}

std::string require_support(std::initializer_list<const tsrpTensor*> tensors) {
  std::string why = elementwise_support(tensors);
  if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
  return why;
}

// Rounds a double to a binary floating format with `exponent_bits` and `mantissa_bits` (round to
// nearest even, overflow to infinity, subnormals kept): the bits of an f16 or bf16 value.
uint32_t encode_float(double v, int exponent_bits, int mantissa_bits) {
  const uint32_t sign = std::signbit(v) ? 1u << (exponent_bits + mantissa_bits) : 0u;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t infinity = ((1u << exponent_bits) - 1u) << mantissa_bits;
  if (std::isnan(v)) return sign | infinity | (1u << (mantissa_bits - 1));
  const double magnitude = std::fabs(v);
  if (std::isinf(magnitude)) return sign | infinity;
  if (magnitude == 0.0) return sign;
  int k = 0;
  std::frexp(magnitude, &k);
  int e = std::max(k - 1, 1 - bias);  // subnormals share the smallest normal exponent's scale
  double m = std::nearbyint(std::ldexp(magnitude, mantissa_bits - e));
  if (m >= std::ldexp(1.0, mantissa_bits + 1)) {  // rounding carried into the exponent
    m /= 2;
    ++e;
  }
  if (e > bias) return sign | infinity;
  const auto mantissa = static_cast<uint32_t>(m);
  if (mantissa < (1u << mantissa_bits)) return sign | mantissa;  // subnormal
  return sign | (static_cast<uint32_t>(e + bias) << mantissa_bits) | (mantissa - (1u << mantissa_bits));
}

// ---- add ---------------------------------------------------------------------------------------

struct two_tensors : prepared_problem {
  tensor_descriptor a, c;
};

struct add_tensor {
  using problem_type = tsrpAddTensorProblem;
  using args_type = tsrpAddTensorArgs;
  using prepared_type = two_tensors;

  static std::string support(const problem_type& p, const kernel_spec&) { return elementwise_support({&p.c, &p.a}); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    require_support({&p.c, &p.a});
    auto d = std::make_unique<prepared_type>();
    d->a = make_tensor_descriptor(p.a);
    d->c = make_tensor_descriptor(p.c);
    return d;
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.a, "a");
    require_pointer(a.c, "c");
    check_cudnn(cudnn().cudnnAddTensor(handle, &a.alpha, d.a, a.a, &a.beta, d.c, a.c), "cudnnAddTensor");
  }
};

// ---- op-tensor ---------------------------------------------------------------------------------

bool unary(int32_t op) { return op == TSRP_OP_TENSOR_SQRT || op == TSRP_OP_TENSOR_NOT; }

struct op_tensor_prepared : prepared_problem {
  op_tensor_descriptor op;
  tensor_descriptor a, b, c;
};

struct op_tensor {
  using problem_type = tsrpOpTensorProblem;
  using args_type = tsrpOpTensorArgs;
  using prepared_type = op_tensor_prepared;

  static std::string support(const problem_type& p, const kernel_spec&) {
    if (p.op < TSRP_OP_TENSOR_ADD || p.op > TSRP_OP_TENSOR_NOT) return "unknown op-tensor op " + std::to_string(p.op);
    if (p.compute_type != TSRP_DATA_FLOAT) return "compute type other than f32";
    return unary(p.op) ? elementwise_support({&p.c, &p.a}) : elementwise_support({&p.c, &p.a, &p.b});
  }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec& spec) {
    const std::string why = support(p, spec);
    if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
    auto d = std::make_unique<prepared_type>();
    // Values match cuDNN's enums (plugin_abi_tensor_ops.h); the cast keeps them one to one.
    const auto op = static_cast<cudnnOpTensorOp_t>(p.op);
    const cudnnNanPropagation_t nan = p.nan_propagation == TSRP_PROPAGATE_NAN ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
    d->op = new_op_tensor_descriptor();
    check_cudnn(cudnn().cudnnSetOpTensorDescriptor(d->op, op, CUDNN_DATA_FLOAT, nan), "cudnnSetOpTensorDescriptor");
    d->a = make_tensor_descriptor(p.a);
    d->b = make_tensor_descriptor(unary(p.op) ? p.a : p.b);
    d->c = make_tensor_descriptor(p.c);
    return d;
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.a, "a");
    require_pointer(a.c, "c");
    if (!unary(p.op)) require_pointer(a.b, "b");
    // Unary ops ignore B; cuDNN still wants a tensor there, so a stands in for it.
    const void* b = unary(p.op) ? a.a : a.b;
    check_cudnn(cudnn().cudnnOpTensor(handle, d.op, &a.alpha1, d.a, a.a, &a.alpha2, d.b, b, &a.beta, d.c, a.c),
                "cudnnOpTensor");
  }
};

// ---- scale and set -----------------------------------------------------------------------------

struct one_tensor : prepared_problem {
  tensor_descriptor y;
};

struct scale_tensor {
  using problem_type = tsrpScaleTensorProblem;
  using args_type = tsrpScaleTensorArgs;
  using prepared_type = one_tensor;

  static std::string support(const problem_type& p, const kernel_spec&) { return elementwise_support({&p.y}); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    require_support({&p.y});
    auto d = std::make_unique<prepared_type>();
    d->y = make_tensor_descriptor(p.y);
    return d;
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.y, "y");
    check_cudnn(cudnn().cudnnScaleTensor(handle, d.y, a.y, &a.alpha), "cudnnScaleTensor");
  }
};

struct set_tensor {
  using problem_type = tsrpSetTensorProblem;
  using args_type = tsrpSetTensorArgs;
  using prepared_type = one_tensor;

  static std::string support(const problem_type& p, const kernel_spec&) { return elementwise_support({&p.y}); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    require_support({&p.y});
    auto d = std::make_unique<prepared_type>();
    d->y = make_tensor_descriptor(p.y);
    return d;
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type& p, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.y, "y");
    // cudnnSetTensor reads one value of y's own type from host memory.
    unsigned char value[8] = {};
    if (p.y.data_type == TSRP_DATA_FLOAT) {
      const float f = static_cast<float>(a.value);
      std::memcpy(value, &f, sizeof f);
    } else {
      const uint16_t bits = static_cast<uint16_t>(
          p.y.data_type == TSRP_DATA_HALF ? encode_float(a.value, 5, 10) : encode_float(a.value, 8, 7));
      std::memcpy(value, &bits, sizeof bits);
    }
    check_cudnn(cudnn().cudnnSetTensor(handle, d.y, a.y, value), "cudnnSetTensor");
  }
};

// ---- transform ---------------------------------------------------------------------------------

struct transform_tensor {
  using problem_type = tsrpTransformTensorProblem;
  using args_type = tsrpTransformTensorArgs;
  using prepared_type = two_tensors;  // a: x, c: y

  static std::string support(const problem_type& p, const kernel_spec&) { return elementwise_support({&p.y, &p.x}); }
  static std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type& p, const kernel_spec&) {
    require_support({&p.y, &p.x});
    auto d = std::make_unique<prepared_type>();
    d->a = make_tensor_descriptor(p.x);
    d->c = make_tensor_descriptor(p.y);
    return d;
  }
  static void run(cudnnHandle_t handle, const prepared_type& d, const problem_type&, const args_type& a,
                  const kernel_spec&, void*, size_t) {
    require_pointer(a.x, "x");
    require_pointer(a.y, "y");
    check_cudnn(cudnn().cudnnTransformTensor(handle, &a.alpha, d.a, a.x, &a.beta, d.c, a.y), "cudnnTransformTensor");
  }
};

constexpr uint32_t deterministic = TSRP_KERNEL_DETERMINISTIC;
const kernel_spec add_specs[] = {{"cudnn_add_tensor", TSRP_OP_ADD_TENSOR, deterministic, "cuDNN cudnnAddTensor", 0}};
const kernel_spec op_specs[] = {{"cudnn_op_tensor", TSRP_OP_OP_TENSOR, deterministic, "cuDNN cudnnOpTensor, f32 compute", 0}};
const kernel_spec scale_specs[] = {{"cudnn_scale_tensor", TSRP_OP_SCALE_TENSOR, deterministic, "cuDNN cudnnScaleTensor", 0}};
const kernel_spec set_specs[] = {{"cudnn_set_tensor", TSRP_OP_SET_TENSOR, deterministic, "cuDNN cudnnSetTensor", 0}};
const kernel_spec transform_specs[] = {
    {"cudnn_transform_tensor", TSRP_OP_TRANSFORM_TENSOR, deterministic, "cuDNN cudnnTransformTensor (one data type)", 0}};

}  // namespace

void add_tensor_op_kernels(kernel_list& list) {
  add_kernels<add_tensor>(list, add_specs);
  add_kernels<op_tensor>(list, op_specs);
  add_kernels<scale_tensor>(list, scale_specs);
  add_kernels<set_tensor>(list, set_specs);
  add_kernels<transform_tensor>(list, transform_specs);
}

}  // namespace tessera::cudnn_plugin
