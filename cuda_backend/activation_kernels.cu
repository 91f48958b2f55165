// Kernels "eltwise_fwd" and "eltwise_bwd": every tsrpActivationMode_t in fp32, fp16 and bf16.
//   forward:  y  = alpha * act(x) + beta * y
//   backward: dx = alpha * act'(x) * dy + beta * dx
// Both share one kernel body: operand slot 0 is x, slot 1 is dy (backward only) and slot 2 is the
// output (y or dx). Each element is computed by exactly one thread with a fixed operation order,
// so results are bitwise reproducible.
#include "activation_functions.cuh"
#include "cuda_context.hpp"
#include "cuda_device.hpp"
#include "cuda_errors.hpp"
#include "cuda_kernels.hpp"
#include "current_device_guard.hpp"
#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace tessera::cuda {
namespace {

constexpr int threads_per_block = 256;
constexpr int operand_slots = 3;
constexpr int slot_x = 0;
constexpr int slot_dy = 1;
constexpr int slot_out = 2;

// Shape and per-operand strides after dropping size-1 dims and merging dims that are contiguous
// in every operand. A slot that is unused has all strides 0, which never prevents a merge.
struct strided_layout {
  int32_t ndims;
  int64_t dims[TSRP_MAX_DIMS];
  int64_t strides[operand_slots][TSRP_MAX_DIMS];
};

// ---- packed path: every operand dense with identical strides, so memory order is element order
// and the tensors can be walked as flat arrays.
constexpr int packed_unroll = 4;  // 16-byte vectors per thread in flight

template <typename T, int Mode, bool Backward>
__device__ __forceinline__ float eltwise_value(float x, float dy, float alpha, float coef) {
  if constexpr (Backward) {
    return alpha * (activation_derivative<Mode>(x, coef) * dy);
  } else {
    (void)dy;
    return alpha * activation_forward<Mode>(x, coef);
  }
}

// Each block takes a contiguous share of the vectors (one chunk of packed_unroll * blockDim.x
// unless the grid limit made the shares larger): a thread loads its packed_unroll vectors (one
// block-wide 4 KiB access each) before computing any. Many short blocks keep every SM loading
// until the end of the tensor.
template <typename T, int Mode, bool Backward>
__global__ void __launch_bounds__(threads_per_block)
    eltwise_packed(const T* x, const T* dy, T* out, int64_t count, float alpha, float beta, float coef,
                   bool vectorized) {
  // 16-byte accesses: 4 floats or 8 halves per ld.global.v4 / st.global.v4.
  constexpr int per_vector = 16 / sizeof(T);
  const bool read_out = beta != 0.0f;

  int64_t scalar_begin = 0;
  if (vectorized) {
    const int64_t vectors = count / per_vector;
    const uint4* x_vectors = reinterpret_cast<const uint4*>(x);
    const uint4* dy_vectors = reinterpret_cast<const uint4*>(dy);
    uint4* out_vectors = reinterpret_cast<uint4*>(out);
    const int64_t rows = (vectors + blockDim.x - 1) / blockDim.x;  // of blockDim.x vectors
    const int64_t share = (rows + gridDim.x - 1) / gridDim.x * blockDim.x;
    const int64_t begin = static_cast<int64_t>(blockIdx.x) * share;
    const int64_t end = min(vectors, begin + share);
    const int64_t chunk = static_cast<int64_t>(blockDim.x) * packed_unroll;
    for (int64_t first = begin + threadIdx.x; first < end; first += chunk) {
      uint4 xr[packed_unroll], dyr[packed_unroll], outr[packed_unroll];
#pragma unroll
      for (int u = 0; u < packed_unroll; ++u) {
        const int64_t v = first + static_cast<int64_t>(u) * blockDim.x;
        if (v < end) {
          xr[u] = x_vectors[v];
          if constexpr (Backward) dyr[u] = dy_vectors[v];
          if (read_out) outr[u] = out_vectors[v];
        }
      }
#pragma unroll
      for (int u = 0; u < packed_unroll; ++u) {
        const int64_t v = first + static_cast<int64_t>(u) * blockDim.x;
        if (v < end) {
          T xs[per_vector], dys[per_vector], outs[per_vector];
          memcpy(xs, &xr[u], sizeof(uint4));
          if constexpr (Backward) memcpy(dys, &dyr[u], sizeof(uint4));
          if (read_out) memcpy(outs, &outr[u], sizeof(uint4));
#pragma unroll
          for (int j = 0; j < per_vector; ++j) {
            float r = eltwise_value<T, Mode, Backward>(to_float(xs[j]), Backward ? to_float(dys[j]) : 0.0f, alpha,
                                                       coef);
            if (read_out) r += beta * to_float(outs[j]);
            outs[j] = from_float<T>(r);
          }
          uint4 raw;
          memcpy(&raw, outs, sizeof(raw));
          out_vectors[v] = raw;
        }
      }
    }
    scalar_begin = vectors * per_vector;
  }
  // The tail after the last whole vector, or everything when a pointer is not 16-byte aligned.
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = scalar_begin + first; i < count; i += step) {
    float r = eltwise_value<T, Mode, Backward>(to_float(x[i]), Backward ? to_float(dy[i]) : 0.0f, alpha, coef);
    if (read_out) r += beta * to_float(out[i]);
    out[i] = from_float<T>(r);
  }
}

// ---- general path: any strides (negative and zero included) on up to 8 dims.
template <typename T, bool Backward>
__global__ void __launch_bounds__(threads_per_block)
    eltwise_strided(const T* x, const T* dy, T* out, strided_layout layout, int64_t count, int mode,
                    float alpha, float beta, float coef) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const bool read_out = beta != 0.0f;
  for (int64_t i = first; i < count; i += step) {
    // Row-major decomposition of the linear index, last dim fastest. Fully unrolled with a guard
    // so that `layout` is only ever indexed by constants and stays in parameter space.
    int64_t rest = i;
    int64_t x_offset = 0, dy_offset = 0, out_offset = 0;
#pragma unroll
    for (int d = TSRP_MAX_DIMS - 1; d >= 0; --d) {
      if (d < layout.ndims) {
        const int64_t coordinate = rest % layout.dims[d];
        rest /= layout.dims[d];
        x_offset += coordinate * layout.strides[slot_x][d];
        dy_offset += coordinate * layout.strides[slot_dy][d];
        out_offset += coordinate * layout.strides[slot_out][d];
      }
    }
    float r;
    if constexpr (Backward) {
      r = alpha * (activation_by_mode<true>(mode, to_float(x[x_offset]), coef) * to_float(dy[dy_offset]));
    } else {
      (void)dy_offset;
      r = alpha * activation_by_mode<false>(mode, to_float(x[x_offset]), coef);
    }
    if (read_out) r += beta * to_float(out[out_offset]);
    out[out_offset] = from_float<T>(r);
  }
}

// ---- host side ---------------------------------------------------------------------------------

struct eltwise_kind {
  const char* kernel_name;
  bool backward;
};
constexpr eltwise_kind forward_kind{"eltwise_fwd", false};
constexpr eltwise_kind backward_kind{"eltwise_bwd", true};

// The tensors an operation reads or writes, by slot; nullptr for an unused slot.
void operand_tensors(const tsrpActivationProblem& p, bool backward, const tsrpTensor* (&tensors)[operand_slots]) {
  tensors[slot_x] = &p.x;
  tensors[slot_dy] = backward ? &p.dy : nullptr;
  tensors[slot_out] = backward ? &p.dx : &p.y;
}

const char* slot_name(int slot, bool backward) {
  if (slot == slot_x) return "x";
  if (slot == slot_dy) return "dy";
  return backward ? "dx" : "y";
}

// Empty when the kernel can run the problem; otherwise why not. The device is not looked at here.
std::string problem_support(const void* problem, const eltwise_kind& kind) {
  if (problem == nullptr) return "activation problem is null";
  const auto& p = *static_cast<const tsrpActivationProblem*>(problem);
  if (p.struct_size < sizeof(tsrpActivationProblem)) {
    return "activation problem struct_size " + std::to_string(p.struct_size) + " is smaller than " +
           std::to_string(sizeof(tsrpActivationProblem));
  }
  if (p.mode < TSRP_ACTIVATION_IDENTITY || p.mode > TSRP_ACTIVATION_SWISH) {
    return "activation mode " + std::to_string(p.mode) + " not supported by " + kind.kernel_name;
  }
  const tsrpTensor* tensors[operand_slots];
  operand_tensors(p, kind.backward, tensors);
  for (int slot = 0; slot < operand_slots; ++slot) {
    const tsrpTensor* t = tensors[slot];
    if (t == nullptr) continue;
    const std::string name = slot_name(slot, kind.backward);
    if (!is_floating_storage(t->data_type)) {
      return std::string("data type ") + data_type_name(t->data_type) + " not supported by " +
             kind.kernel_name + " (tensor " + name + ")";
    }
    if (t->data_type != p.x.data_type) {
      return "tensor " + name + " is " + data_type_name(t->data_type) + " but x is " +
             data_type_name(p.x.data_type) + ": " + kind.kernel_name + " needs one data type";
    }
    if (t->ndims < 1 || t->ndims > TSRP_MAX_DIMS) {
      return "tensor " + name + " has " + std::to_string(t->ndims) + " dims; " + kind.kernel_name +
             " takes 1 to " + std::to_string(TSRP_MAX_DIMS);
    }
    if (t->ndims != p.x.ndims) return "tensor " + name + " and x differ in rank";
    for (int d = 0; d < t->ndims; ++d) {
      if (t->dims[d] != p.x.dims[d]) return "tensor " + name + " and x differ in dim " + std::to_string(d);
      if (t->dims[d] < 0) return "tensor " + name + " has a negative dim";
    }
  }
  return {};
}

// True when every used operand has the same strides (over dims longer than 1, the only ones
// whose stride matters) and those strides tile memory without gaps or overlap in some order.
bool packed_identical(const tsrpTensor* const (&tensors)[operand_slots]) {
  const tsrpTensor& x = *tensors[slot_x];
  for (const tsrpTensor* t : tensors) {
    if (t == nullptr) continue;
    for (int d = 0; d < x.ndims; ++d) {
      if (x.dims[d] > 1 && t->strides[d] != x.strides[d]) return false;
    }
  }
  std::pair<int64_t, int64_t> stride_dim[TSRP_MAX_DIMS];
  int used = 0;
  for (int d = 0; d < x.ndims; ++d) {
    if (x.dims[d] > 1) stride_dim[used++] = {x.strides[d], x.dims[d]};
  }
  // Insertion sort: at most 8 entries (std::sort trips a false -Warray-bounds in GCC 12 here).
  for (int i = 1; i < used; ++i) {
    for (int j = i; j > 0 && stride_dim[j] < stride_dim[j - 1]; --j) std::swap(stride_dim[j], stride_dim[j - 1]);
  }
  int64_t expected = 1;
  for (int i = 0; i < used; ++i) {
    if (stride_dim[i].first != expected) return false;
    expected *= stride_dim[i].second;
  }
  return true;
}

strided_layout coalesced_layout(const tsrpTensor* const (&tensors)[operand_slots]) {
  const tsrpTensor& x = *tensors[slot_x];
  strided_layout layout{};
  layout.ndims = 0;
  for (int d = 0; d < x.ndims; ++d) {
    if (x.dims[d] == 1) continue;  // its coordinate is always 0
    if (layout.ndims > 0) {
      // Dim d is faster than the last kept dim `outer`; they merge when, in every operand,
      // stepping `outer` once equals stepping d dims[d] times: then offset(c_outer, c_d) =
      // (c_outer * dims[d] + c_d) * stride_d.
      const int outer = layout.ndims - 1;
      bool mergeable = true;
      for (int s = 0; s < operand_slots; ++s) {
        const int64_t inner_stride = tensors[s] ? tensors[s]->strides[d] : 0;
        if (layout.strides[s][outer] != inner_stride * x.dims[d]) mergeable = false;
      }
      if (mergeable) {
        layout.dims[outer] *= x.dims[d];
        for (int s = 0; s < operand_slots; ++s) layout.strides[s][outer] = tensors[s] ? tensors[s]->strides[d] : 0;
        continue;
      }
    }
    const int kept = layout.ndims++;
    layout.dims[kept] = x.dims[d];
    for (int s = 0; s < operand_slots; ++s) layout.strides[s][kept] = tensors[s] ? tensors[s]->strides[d] : 0;
  }
  if (layout.ndims == 0) {  // a single element
    layout.ndims = 1;
    layout.dims[0] = 1;
  }
  return layout;
}

bool aligned_16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, bool Backward>
void launch_packed(int mode, unsigned int blocks, cudaStream_t stream, const T* x, const T* dy, T* out,
                   int64_t count, float alpha, float beta, float coef, bool vectorized) {
#define TESSERA_LAUNCH_PACKED(m)                                                                    \
  case m:                                                                                           \
    eltwise_packed<T, m, Backward><<<blocks, threads_per_block, 0, stream>>>(x, dy, out, count, alpha, \
                                                                             beta, coef, vectorized); \
    break;
  switch (mode) {
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_IDENTITY)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_RELU)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_SIGMOID)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_TANH)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_LEAKY_RELU)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_CLIPPED_RELU)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_ELU)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_GELU_ERF)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_GELU_TANH)
    TESSERA_LAUNCH_PACKED(TSRP_ACTIVATION_SWISH)
    default:
      throw status_error(TSRP_STATUS_INTERNAL_ERROR, "activation mode " + std::to_string(mode) + " reached launch");
  }
#undef TESSERA_LAUNCH_PACKED
}

void run_eltwise(const eltwise_kind& kind, void* context, const void* problem, const void* args) {
  cuda_context& ctx = context_from_handle(context);
  const std::string unsupported = problem_support(problem, kind);
  if (!unsupported.empty()) throw status_error(TSRP_STATUS_NOT_SUPPORTED, unsupported);
  if (args == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, "activation arguments are null");
  const auto& a = *static_cast<const tsrpActivationArgs*>(args);
  if (a.struct_size < sizeof(tsrpActivationArgs)) {
    throw status_error(TSRP_STATUS_BAD_PARAM, "activation arguments struct_size " + std::to_string(a.struct_size) +
                                                  " is smaller than " + std::to_string(sizeof(tsrpActivationArgs)));
  }
  if (!ctx.can_run_plugin_code()) {
    throw status_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string(kind.kernel_name) + " needs compute capability 9.0 or newer; CUDA device " +
                           std::to_string(ctx.device_ordinal()) + " is sm_" +
                           std::to_string(ctx.compute_capability_major()) +
                           std::to_string(ctx.compute_capability_minor()));
  }
  const auto& p = *static_cast<const tsrpActivationProblem*>(problem);
  const int64_t count = element_count(p.x);
  if (count == 0) return;

  const void* x = a.x;
  const void* dy = kind.backward ? a.dy : nullptr;
  void* out = kind.backward ? a.dx : a.y;
  if (x == nullptr || out == nullptr || (kind.backward && dy == nullptr)) {
    throw status_error(TSRP_STATUS_BAD_PARAM, std::string(kind.kernel_name) + ": a tensor pointer is null");
  }
  const tsrpTensor* tensors[operand_slots];
  operand_tensors(p, kind.backward, tensors);
  const float alpha = a.alpha, beta = a.beta, coef = static_cast<float>(p.coef);

  current_device_guard on_device(ctx.device_ordinal());
  const cudaStream_t stream = ctx.stream();
  dispatch_storage_type(p.x.data_type, [&](auto type_tag) {
    using T = decltype(type_tag);
    const T* x_typed = static_cast<const T*>(x);
    const T* dy_typed = static_cast<const T*>(dy);
    T* out_typed = static_cast<T*>(out);
    if (packed_identical(tensors)) {
      constexpr int per_vector = 16 / sizeof(T);
      const bool vectorized = aligned_16(x) && aligned_16(dy) && aligned_16(out) && count >= per_vector;
      // Vectors: a chunk (packed_unroll vectors per thread) per block; elements: grid-stride.
      const unsigned int blocks =
          vectorized ? cuda_context::share_blocks(count / per_vector, int64_t{threads_per_block} * packed_unroll)
                     : ctx.grid_stride_blocks(count, threads_per_block);
      if (kind.backward) {
        launch_packed<T, true>(p.mode, blocks, stream, x_typed, dy_typed, out_typed, count, alpha, beta, coef, vectorized);
      } else {
        launch_packed<T, false>(p.mode, blocks, stream, x_typed, dy_typed, out_typed, count, alpha, beta, coef, vectorized);
      }
    } else {
      const strided_layout layout = coalesced_layout(tensors);
      const unsigned int blocks = ctx.grid_stride_blocks(count, threads_per_block);
      if (kind.backward) {
        eltwise_strided<T, true><<<blocks, threads_per_block, 0, stream>>>(x_typed, dy_typed, out_typed, layout, count,
                                                                         p.mode, alpha, beta, coef);
      } else {
        eltwise_strided<T, false><<<blocks, threads_per_block, 0, stream>>>(x_typed, dy_typed, out_typed, layout,
                                                                          count, p.mode, alpha, beta, coef);
      }
    }
  });
  check_cuda(cudaGetLastError(), (std::string("launching ") + kind.kernel_name).c_str());
}

int can_implement(const eltwise_kind& kind, const void* problem, char* reason, size_t reason_size) noexcept {
  try {
    std::string why = problem_support(problem, kind);
    if (why.empty() && visible_device_count() == 0) why = "no CUDA device present";
    if (why.empty()) return 1;
    write_text(reason, reason_size, why);
    return 0;
  } catch (...) {
    write_text(reason, reason_size, std::string(kind.kernel_name) + ": internal error while checking the problem");
    return 0;
  }
}

int can_implement_fwd(void*, const void* problem, char* reason, size_t reason_size) {
  return can_implement(forward_kind, problem, reason, reason_size);
}
int can_implement_bwd(void*, const void* problem, char* reason, size_t reason_size) {
  return can_implement(backward_kind, problem, reason, reason_size);
}

tsrpStatus_t run_fwd(void*, void* context, const void* problem, const void* args, void*, size_t, char* message,
                     size_t message_size) {
  return call_with_message(message, message_size, [&] { run_eltwise(forward_kind, context, problem, args); });
}
tsrpStatus_t run_bwd(void*, void* context, const void* problem, const void* args, void*, size_t, char* message,
                     size_t message_size) {
  return call_with_message(message, message_size, [&] { run_eltwise(backward_kind, context, problem, args); });
}

constexpr const char* eltwise_notes =
    "fp32 arithmetic with the accurate libdevice expf/tanhf/erff/expm1f (no fast-math); fp16 and "
    "bf16 are widened to fp32 and rounded to nearest even on store; derivatives in terms of x";

}  // namespace

const tsrpKernel& eltwise_fwd_kernel() noexcept {
  static const tsrpKernel kernel = {sizeof(tsrpKernel), forward_kind.kernel_name, TSRP_OP_ACTIVATION_FORWARD,
                                    TSRP_KERNEL_DETERMINISTIC, eltwise_notes, nullptr, can_implement_fwd,
                                    nullptr, run_fwd, nullptr /* estimate_us */};
  return kernel;
}

const tsrpKernel& eltwise_bwd_kernel() noexcept {
  static const tsrpKernel kernel = {sizeof(tsrpKernel), backward_kind.kernel_name, TSRP_OP_ACTIVATION_BACKWARD,
                                    TSRP_KERNEL_DETERMINISTIC, eltwise_notes, nullptr, can_implement_bwd,
                                    nullptr, run_bwd, nullptr /* estimate_us */};
  return kernel;
}

}  // namespace tessera::cuda
