// The elementwise tensor operations on one engine, and the family's kernel list:
//   "add_tensor_elementwise"    c = alpha * a + beta * c, a broadcast along its size-1 dims
//   "op_tensor_elementwise"     c = op(alpha1 * a, alpha2 * b) + beta * c (add/mul/min/max, b
//                               broadcast) or op(alpha1 * a) + beta * c (sqrt, not = 1 - x)
//   "scale_tensor_elementwise"  y = alpha * y in place
//   "set_tensor_fill"           y = value, the value converted once on the host
// The engine merges the dims of all operands (ordered by the output's strides, so consecutive
// threads write consecutive memory) and then runs one of three loops: a flat loop when
// everything merged into one dim, 16-byte vectors along the innermost dim when each operand is
// contiguous (or broadcast) there and aligned, else a strided walk with 32-bit divisions by
// invariants (64-bit ones past 2^31 elements). Each element is computed by one thread in a fixed
// order, in fp32, and rounded once: results are bitwise reproducible.
#include "cuda_kernels.hpp"
#include "tensor_ops_common.cuh"
#include "tensor_ops_kernels.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace tessera::cuda {
namespace tensor_ops {
namespace {

constexpr int slot_a = 0;
constexpr int slot_b = 1;
constexpr int slot_c = 2;

struct elementwise_params {
  const void* a;
  const void* b;
  void* c;
  int32_t a_type, b_type, c_type;  // read only by dyn_t instantiations
  int32_t op;                      // elementwise_op
  int32_t propagate_nan;
  float alpha1, alpha2, beta;
  int64_t items;  // vectors of V elements (V = 1: elements)
  index_walker<3> walk;
};

// V elements of one operand at `offset`: a vector load, or one element repeated when the
// operand is broadcast along the innermost dim (stride 0 there).
template <typename T, int V>
__device__ __forceinline__ void load_values(const void* base, int64_t offset, bool broadcast, int32_t type,
                                            float (&v)[V]) {
  if constexpr (V == 1) {
    (void)broadcast;
    v[0] = load_element<T>(base, offset, type);
  } else {
    (void)type;
    if (broadcast) {
      const float value = value_of(static_cast<const T*>(base)[offset]);
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = value;
    } else {
      load_vector<T, V>(static_cast<const T*>(base) + offset, v);
    }
  }
}

template <typename T, int V>
__device__ __forceinline__ void store_values(void* base, int64_t offset, int32_t type, const float (&v)[V]) {
  if constexpr (V == 1) {
    store_element<T>(base, offset, type, v[0]);
  } else {
    (void)type;
    store_vector<T, V>(static_cast<T*>(base) + offset, v);
  }
}

// The switch is outside the per-element loops: `op` is the same for every thread.
template <int V>
__device__ __forceinline__ void apply(const elementwise_params& p, const float (&a)[V], const float (&b)[V],
                                      float (&r)[V]) {
  const float alpha1 = p.alpha1, alpha2 = p.alpha2;
  switch (p.op) {
    case elementwise_add:
#pragma unroll
      for (int j = 0; j < V; ++j) r[j] = alpha1 * a[j] + alpha2 * b[j];
      break;
    case elementwise_mul:
#pragma unroll
      for (int j = 0; j < V; ++j) r[j] = (alpha1 * a[j]) * (alpha2 * b[j]);
      break;
    case elementwise_min:
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float x = alpha1 * a[j], y = alpha2 * b[j];
        r[j] = p.propagate_nan && (isnan(x) || isnan(y)) ? x + y : fminf(x, y);
      }
      break;
    case elementwise_max:
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float x = alpha1 * a[j], y = alpha2 * b[j];
        r[j] = p.propagate_nan && (isnan(x) || isnan(y)) ? x + y : fmaxf(x, y);
      }
      break;
    case elementwise_sqrt:
#pragma unroll
      for (int j = 0; j < V; ++j) r[j] = sqrtf(alpha1 * a[j]);
      break;
    case elementwise_not:
#pragma unroll
      for (int j = 0; j < V; ++j) r[j] = 1.0f - alpha1 * a[j];
      break;
    default:  // elementwise_copy
#pragma unroll
      for (int j = 0; j < V; ++j) r[j] = alpha1 * a[j];
      break;
  }
}

// Items (vectors of V elements) per thread in flight: 16 elements' worth, so that the fp32
// copies of up to three operands fit the registers; one for the 64-bit index walk, whose
// divisions need the registers.
template <int V, bool Wide>
constexpr int elementwise_unroll = Wide ? 1 : V == 1 ? 4 : (16 / V > 1 ? 16 / V : 1);

// Each block takes a contiguous share of the items (one chunk of elementwise_unroll *
// blockDim.x unless the grid limit made the shares larger), each thread loading all of its items
// of a chunk before computing any.
// Unary: a one-operand op with beta == 0 (copy, scale, sqrt, not), known at compile time so that
// the kernel holds neither b nor the old c: 75 registers and 62 % of the DRAM peak for the
// general form on a 1 GiB copy (ncu, H200, 2026-12-03), where the copy alone needs a third.
template <typename TA, typename TB, typename TC, int V, bool Wide, bool Unary>
__global__ void __launch_bounds__(elementwise_threads) elementwise_kernel(const elementwise_params p) {
  constexpr int U = elementwise_unroll<V, Wide>;
  const bool read_c = !Unary && p.beta != 0.0f;
  const bool binary = !Unary && is_binary(p.op);
  const bool a_broadcast = p.walk.strides[slot_a][0] == 0;
  const bool b_broadcast = p.walk.strides[slot_b][0] == 0;
  const int64_t rows = (p.items + blockDim.x - 1) / blockDim.x;  // of blockDim.x items
  const int64_t share = (rows + gridDim.x - 1) / gridDim.x * blockDim.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * share;
  const int64_t end = min(p.items, begin + share);
  for (int64_t first = begin + threadIdx.x; first < end; first += static_cast<int64_t>(U) * blockDim.x) {
    int64_t offset[U][3];
    float a[U][V], b[U][V], old[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
      if (i < end) {
        p.walk.template offsets<Wide>(i, offset[u]);
        load_values<TA, V>(p.a, offset[u][slot_a], a_broadcast, p.a_type, a[u]);
        if (binary) {
          load_values<TB, V>(p.b, offset[u][slot_b], b_broadcast, p.b_type, b[u]);
        } else {
#pragma unroll
          for (int j = 0; j < V; ++j) b[u][j] = 0.0f;
        }
        if (read_c) load_values<TC, V>(p.c, offset[u][slot_c], false, p.c_type, old[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = first + static_cast<int64_t>(u) * blockDim.x;
      if (i < end) {
        float r[V];
        apply<V>(p, a[u], b[u], r);
        if (read_c) {
#pragma unroll
          for (int j = 0; j < V; ++j) r[j] += p.beta * old[u][j];
        }
        store_values<TC, V>(p.c, offset[u][slot_c], p.c_type, r);
      }
    }
  }
}

// Whether the innermost dim can be taken V elements at a time: its extent divides by V, the
// output is contiguous there, every input is contiguous or broadcast there, and each contiguous
// operand's vectors are aligned (its pointer and all its outer strides).
bool vectorizable(const merged_layout<3>& layout, int vector, const void* const (&data)[3],
                  const size_t (&sizes)[3], const bool (&used)[3]) {
  if (vector <= 1 || layout.extents[0] % vector != 0) return false;
  if (layout.strides[slot_c][0] != 1) return false;
  for (int o = 0; o < 3; ++o) {
    if (!used[o]) continue;
    const int64_t inner = layout.strides[o][0];
    if (inner == 0) continue;
    if (inner != 1 || !aligned_to(data[o], static_cast<size_t>(vector) * sizes[o])) return false;
    for (int d = 1; d < layout.ndims; ++d) {
      if (layout.strides[o][d] % vector != 0) return false;
    }
  }
  return true;
}

template <typename TA, typename TB, typename TC, int V, bool Wide>
void launch_engine(cuda_context& ctx, elementwise_params p, const merged_layout<3>& layout, int64_t elements) {
  p.walk = make_walker<3>(layout, V);
  p.items = elements / V;
  const unsigned int blocks =
      cuda_context::share_blocks(p.items, int64_t{elementwise_threads} * elementwise_unroll<V, Wide>);
  if (!Wide && !is_binary(p.op) && p.beta == 0.0f) {
    elementwise_kernel<TA, TB, TC, V, Wide, !Wide><<<blocks, elementwise_threads, 0, ctx.stream()>>>(p);
  } else {
    elementwise_kernel<TA, TB, TC, V, Wide, false><<<blocks, elementwise_threads, 0, ctx.stream()>>>(p);
  }
}

// ---- plain copy ------------------------------------------------------------------------------

// y = x bit for bit, 16 bytes per thread and one vector each: many short blocks. This loop shape
// moved 4.25 TB/s on the H200 where four vectors per thread moved 4.08 and a grid-stride loop
// 3.9-4.0 (tessera-bandwidth-probe, 1 GiB, 2026-12-03; cudaMemcpy 4.24).
__global__ void __launch_bounds__(elementwise_threads)
    copy_vectors_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t vectors) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += step) y[i] = x[i];
}

// Whether the request is a plain copy: y = 1 * x + 0 * y between floating tensors of one type
// laid out densely in the same order, 16-byte aligned and a whole number of 16-byte vectors.
// Converting through fp32 and back leaves every such value as it was (NaN payloads aside), so the
// bits can move as they are. Integer types keep the engine: their fp32 conversion is the contract.
bool plain_copy(const elementwise_request& r, const merged_layout<3>& layout, int64_t elements) {
  if (r.op != elementwise_copy || r.alpha1 != 1.0f || r.beta != 0.0f) return false;
  const int32_t type = r.a->data_type;
  if (type != r.c->data_type) return false;
  if (type != TSRP_DATA_FLOAT && type != TSRP_DATA_HALF && type != TSRP_DATA_BFLOAT16) return false;
  if (layout.ndims != 1 || layout.strides[slot_a][0] != 1 || layout.strides[slot_c][0] != 1) return false;
  const size_t bytes = static_cast<size_t>(elements) * element_size(type);
  return bytes % 16 == 0 && aligned_to(r.a_data, 16) && aligned_to(r.c_data, 16);
}

void launch_plain_copy(cuda_context& ctx, const elementwise_request& r, int64_t elements) {
  if (r.a_data == r.c_data) return;  // in place: nothing changes
  const int64_t vectors = elements * static_cast<int64_t>(element_size(r.a->data_type)) / 16;
  const unsigned int blocks = cuda_context::share_blocks(vectors, elementwise_threads);
  copy_vectors_kernel<<<blocks, elementwise_threads, 0, ctx.stream()>>>(static_cast<const uint4*>(r.a_data),
                                                                        static_cast<uint4*>(r.c_data), vectors);
}

// ---- set -------------------------------------------------------------------------------------

template <typename Bits, int V, bool Wide>
__global__ void __launch_bounds__(elementwise_threads)
    fill_kernel(Bits* y, const index_walker<1> walk, int64_t items, Bits value) {
  using raw_t = typename raw_vector<static_cast<int>(sizeof(Bits)) * V>::type;
  Bits values[V];
#pragma unroll
  for (int j = 0; j < V; ++j) values[j] = value;
  raw_t raw;
  memcpy(&raw, values, sizeof(raw));
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < items; i += step) {
    int64_t offset[1];
    walk.template offsets<Wide>(i, offset);
    *reinterpret_cast<raw_t*>(y + offset[0]) = raw;
  }
}

template <typename Bits>
void launch_fill(cuda_context& ctx, const tsrpTensor& y, void* data, Bits value) {
  const int64_t elements = element_count(y);
  const tsrpTensor* tensors[1] = {&y};
  const merged_layout<1> layout = elementwise_layout<1>(y, tensors, 0);
  constexpr int V = 16 / static_cast<int>(sizeof(Bits));
  bool vectorized = layout.extents[0] % V == 0 && layout.strides[0][0] == 1 && aligned_to(data, 16);
  for (int d = 1; d < layout.ndims && vectorized; ++d) vectorized = layout.strides[0][d] % V == 0;
  const int vector = vectorized ? V : 1;
  const index_walker<1> walk = make_walker<1>(layout, vector);
  const int64_t items = elements / vector;
  const unsigned int blocks = ctx.grid_stride_blocks(items, elementwise_threads);
  Bits* y_bits = static_cast<Bits*>(data);
  if (vectorized && (layout.ndims == 1 || items <= max_int32)) {
    fill_kernel<Bits, V, false><<<blocks, elementwise_threads, 0, ctx.stream()>>>(y_bits, walk, items, value);
  } else if (layout.ndims == 1 || items <= max_int32) {
    fill_kernel<Bits, 1, false><<<blocks, elementwise_threads, 0, ctx.stream()>>>(y_bits, walk, items, value);
  } else {
    const index_walker<1> scalar_walk = make_walker<1>(layout, 1);
    const unsigned int scalar_blocks = ctx.grid_stride_blocks(elements, elementwise_threads);
    fill_kernel<Bits, 1, true><<<scalar_blocks, elementwise_threads, 0, ctx.stream()>>>(y_bits, scalar_walk, elements,
                                                                                        value);
  }
}

template <typename Int>
Int saturated(double v, double low, double high) {
  if (std::isnan(v)) return 0;  // the host refuses it; never undefined behaviour here
  const double r = std::nearbyint(v);  // round half to even in the default rounding mode
  return static_cast<Int>(r <= low ? low : r >= high ? high : r);
}

// ---- checks shared by the kernels -------------------------------------------------------------

std::string output_reason(const tsrpTensor& t, const char* name) {
  std::string why = tensor_reason(t, name);
  if (why.empty()) why = output_overlap_reason(t, name);
  return why;
}

// ---- kernels -----------------------------------------------------------------------------------

struct add_tensor_traits {
  using problem_type = tsrpAddTensorProblem;
  using args_type = tsrpAddTensorArgs;
  static constexpr const char* name = "add_tensor_elementwise";
  static constexpr int32_t operation = TSRP_OP_ADD_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 arithmetic, rounded once to c's type (integers round to nearest even and saturate); "
      "16-byte vectors where a and c are contiguous or a is broadcast along the innermost dim";

  static std::string support(const problem_type& p) {
    std::string why = tensor_reason(p.a, "a");
    if (why.empty()) why = output_reason(p.c, "c");
    if (why.empty()) why = broadcast_reason(p.a, "a", p.c, "c");
    return why;
  }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const int64_t elements = element_count(p.c);
    if (elements == 0) return;
    require_pointer(a.a, elements, "a");
    require_pointer(a.c, elements, "c");
    elementwise_request r;
    r.op = elementwise_copy;
    r.a = &p.a;
    r.a_data = a.a;
    r.c = &p.c;
    r.c_data = a.c;
    r.alpha1 = a.alpha;
    r.beta = a.beta;
    launch_elementwise(ctx, r);
  }
};

bool is_unary_op(int32_t op) { return op == TSRP_OP_TENSOR_SQRT || op == TSRP_OP_TENSOR_NOT; }

int32_t engine_op(int32_t op) {
  switch (op) {
    case TSRP_OP_TENSOR_ADD: return elementwise_add;
    case TSRP_OP_TENSOR_MUL: return elementwise_mul;
    case TSRP_OP_TENSOR_MIN: return elementwise_min;
    case TSRP_OP_TENSOR_MAX: return elementwise_max;
    case TSRP_OP_TENSOR_SQRT: return elementwise_sqrt;
    default: return elementwise_not;
  }
}

struct op_tensor_traits {
  using problem_type = tsrpOpTensorProblem;
  using args_type = tsrpOpTensorArgs;
  static constexpr const char* name = "op_tensor_elementwise";
  static constexpr int32_t operation = TSRP_OP_OP_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 arithmetic (alpha1 * a and alpha2 * b rounded to fp32 first), rounded once to c's "
      "type; sqrt is IEEE-exact; min/max return the non-NaN operand unless NaN propagation is "
      "asked for; 16-byte vectors where the operands are contiguous or broadcast innermost";

  static std::string support(const problem_type& p) {
    if (p.op < TSRP_OP_TENSOR_ADD || p.op > TSRP_OP_TENSOR_NOT) return "op tensor op " + std::to_string(p.op) + " is unknown";
    if (p.compute_type != TSRP_DATA_FLOAT) {
      return std::string("compute type ") + data_type_name(p.compute_type) + ": the arithmetic is fp32 (use float)";
    }
    if (p.nan_propagation != TSRP_NOT_PROPAGATE_NAN && p.nan_propagation != TSRP_PROPAGATE_NAN) {
      return "nan_propagation " + std::to_string(p.nan_propagation) + " is unknown";
    }
    std::string why = tensor_reason(p.a, "a");
    if (why.empty()) why = output_reason(p.c, "c");
    if (why.empty() && !same_dims(p.a, p.c)) why = "tensors a and c have different dims";
    if (why.empty() && !is_unary_op(p.op)) {
      why = tensor_reason(p.b, "b");
      if (why.empty()) why = broadcast_reason(p.b, "b", p.c, "c");
    }
    return why;
  }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const int64_t elements = element_count(p.c);
    if (elements == 0) return;
    const bool unary = is_unary_op(p.op);
    require_pointer(a.a, elements, "a");
    if (!unary) require_pointer(a.b, elements, "b");
    require_pointer(a.c, elements, "c");
    elementwise_request r;
    r.op = engine_op(p.op);
    r.propagate_nan = p.nan_propagation == TSRP_PROPAGATE_NAN;
    r.a = &p.a;
    r.a_data = a.a;
    r.b = unary ? nullptr : &p.b;
    r.b_data = unary ? nullptr : a.b;
    r.c = &p.c;
    r.c_data = a.c;
    r.alpha1 = a.alpha1;
    r.alpha2 = unary ? 0.0f : a.alpha2;
    r.beta = a.beta;
    launch_elementwise(ctx, r);
  }
};

struct scale_tensor_traits {
  using problem_type = tsrpScaleTensorProblem;
  using args_type = tsrpScaleTensorArgs;
  static constexpr const char* name = "scale_tensor_elementwise";
  static constexpr int32_t operation = TSRP_OP_SCALE_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "y = alpha * y in fp32, rounded once to y's type (integers round to nearest even and "
      "saturate); in place, 16-byte vectors where y is contiguous innermost";

  static std::string support(const problem_type& p) { return output_reason(p.y, "y"); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const int64_t elements = element_count(p.y);
    if (elements == 0) return;
    require_pointer(a.y, elements, "y");
    elementwise_request r;
    r.op = elementwise_copy;
    r.a = &p.y;
    r.a_data = a.y;
    r.c = &p.y;
    r.c_data = a.y;
    r.alpha1 = a.alpha;
    r.beta = 0.0f;  // y is read once, as a
    launch_elementwise(ctx, r);
  }
};

struct set_tensor_traits {
  using problem_type = tsrpSetTensorProblem;
  using args_type = tsrpSetTensorArgs;
  static constexpr const char* name = "set_tensor_fill";
  static constexpr int32_t operation = TSRP_OP_SET_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "the value is converted once on the host: to fp32 and then fp16/bf16 (round to nearest "
      "even) or int8 (round half to even, saturate); int32 directly from the double, so values "
      "beyond 2^24 stay exact; 16-byte stores where y is contiguous innermost";

  // Overlapping strides are accepted: every write stores the same bits.
  static std::string support(const problem_type& p) { return tensor_reason(p.y, "y"); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void*, size_t) {
    const int64_t elements = element_count(p.y);
    if (elements == 0) return;
    require_pointer(a.y, elements, "y");
    switch (p.y.data_type) {
      case TSRP_DATA_FLOAT: {
        const float f = static_cast<float>(a.value);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        launch_fill<uint32_t>(ctx, p.y, a.y, bits);
        break;
      }
      case TSRP_DATA_HALF: {
        const __half h = __float2half_rn(static_cast<float>(a.value));
        uint16_t bits;
        std::memcpy(&bits, &h, sizeof(bits));
        launch_fill<uint16_t>(ctx, p.y, a.y, bits);
        break;
      }
      case TSRP_DATA_BFLOAT16: {
        const __nv_bfloat16 h = __float2bfloat16_rn(static_cast<float>(a.value));
        uint16_t bits;
        std::memcpy(&bits, &h, sizeof(bits));
        launch_fill<uint16_t>(ctx, p.y, a.y, bits);
        break;
      }
      case TSRP_DATA_INT8: {
        // Through fp32 first, as the reference and oneDNN's f32 source do.
        const int8_t v = saturated<int8_t>(static_cast<double>(static_cast<float>(a.value)), -128.0, 127.0);
        uint8_t bits;
        std::memcpy(&bits, &v, sizeof(bits));
        launch_fill<uint8_t>(ctx, p.y, a.y, bits);
        break;
      }
      default: {
        const int32_t v = saturated<int32_t>(a.value, -2147483648.0, 2147483647.0);
        uint32_t bits;
        std::memcpy(&bits, &v, sizeof(bits));
        launch_fill<uint32_t>(ctx, p.y, a.y, bits);
        break;
      }
    }
  }
};

}  // namespace

void launch_elementwise(cuda_context& ctx, const elementwise_request& r) {
  const int64_t elements = element_count(*r.c);
  if (elements == 0) return;
  const bool binary = is_binary(r.op);
  const tsrpTensor* tensors[3] = {r.a, binary ? r.b : nullptr, r.c};
  const merged_layout<3> layout = elementwise_layout<3>(*r.c, tensors, slot_c);
  if (plain_copy(r, layout, elements)) {
    launch_plain_copy(ctx, r, elements);
    return;
  }

  elementwise_params p{};
  p.a = r.a_data;
  p.b = binary ? r.b_data : nullptr;
  p.c = r.c_data;
  p.a_type = r.a->data_type;
  p.b_type = binary ? r.b->data_type : r.a->data_type;
  p.c_type = r.c->data_type;
  p.op = r.op;
  p.propagate_nan = r.propagate_nan ? 1 : 0;
  p.alpha1 = r.alpha1;
  p.alpha2 = r.alpha2;
  p.beta = r.beta;

  const void* const data[3] = {p.a, p.b, p.c};
  const size_t sizes[3] = {element_size(p.a_type), element_size(p.b_type), element_size(p.c_type)};
  const bool used[3] = {true, binary, true};
  dispatch_operand_types(p.a_type, p.b_type, p.c_type, [&](auto a_tag, auto b_tag, auto c_tag) {
    using TA = decltype(a_tag);
    using TB = decltype(b_tag);
    using TC = decltype(c_tag);
    constexpr int V = vector_width<TA, TB, TC>();
    const bool vectorized = vectorizable(layout, V, data, sizes, used);
    const int64_t items = vectorized ? elements / V : elements;
    if (layout.ndims > 1 && items > max_int32) {
      // Past 32-bit index arithmetic: the general instantiation with 64-bit division.
      launch_engine<dyn_t, dyn_t, dyn_t, 1, true>(ctx, p, layout, elements);
    } else if constexpr (V > 1) {
      if (vectorized) {
        launch_engine<TA, TB, TC, V, false>(ctx, p, layout, elements);
      } else {
        launch_engine<TA, TB, TC, 1, false>(ctx, p, layout, elements);
      }
    } else {
      launch_engine<TA, TB, TC, 1, false>(ctx, p, layout, elements);
    }
  });
}

}  // namespace tensor_ops

void add_tensor_op_kernels(kernel_list& out) {
  using namespace tensor_ops;
  out.push_back(make_kernel<add_tensor_traits>());
  out.push_back(make_kernel<op_tensor_traits>());
  out.push_back(make_kernel<scale_tensor_traits>());
  out.push_back(make_kernel<set_tensor_traits>());
  add_transform_kernels(out);
  add_reduce_kernels(out);
}

}  // namespace tessera::cuda
