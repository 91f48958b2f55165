// Kernels "matmul_tensor_core_mma_sync", "matmul_tf32_mma_sync" and "matmul_simt_fma":
// C = epilogue(alpha * A @ B, bias,
// beta * C) on the plugin's GEMM engine (gemm_general.cuh), the whole epilogue fused into the
// GEMM's store (alpha, bias of any broadcast shape, activation, either blend order, one rounding
// of C).
//
// The mapping is direct: the matrix dims are the last two of each tensor (transposes are strides,
// passed as they are), the batch dims become the engine's batch dims with stride 0 wherever A, B
// or the bias has extent 1 (broadcast), and the bias's matrix dims get stride 0 where it
// broadcasts (per-column, per-row, full or batched biases are one code path). Nothing is staged,
// so neither kernel needs a workspace.
//
// The tensor-core kernel takes fp16/bf16 operands with any strides (its loader streams 16-byte
// aligned row- or column-major operands and stages any others through registers) and declines
// fp32 and int8; the TF32 kernel takes fp32 operands when the handle's math mode allows TF32
// (TESSERA_CUDA_GEMM_TF32=0 unlists it); the SIMT kernel
// takes every type the API allows, exact fp32 included.
#include "cuda_kernels.hpp"
#include "element_types.cuh"
#include "gemm_general.cuh"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::cuda {
namespace {

std::string dims_text(const tsrpTensor& t) {
  std::string s;
  for (int i = 0; i < t.ndims; ++i) s += (i ? "x" : "") + std::to_string(t.dims[i]);
  return s;
}

// The host has checked all of this; a kernel checks again because can_implement may be asked
// about any problem, and a wrong rank here would index outside the tensors' dims.
std::string shape_support(const tsrpMatmulProblem& p) {
  const int n = p.c.ndims;
  if (n < 2 || n > TSRP_MAX_DIMS) return "c has " + std::to_string(n) + " dims, expected 2 to " + std::to_string(TSRP_MAX_DIMS);
  if (p.a.ndims != n || p.b.ndims != n)
    return "a has " + std::to_string(p.a.ndims) + " dims and b " + std::to_string(p.b.ndims) + ", expected c's " +
           std::to_string(n);
  if (p.has_bias && p.bias.ndims != n)
    return "bias has " + std::to_string(p.bias.ndims) + " dims, expected c's " + std::to_string(n);
  if (p.a.dims[n - 1] != p.b.dims[n - 2] || p.c.dims[n - 2] != p.a.dims[n - 2] || p.c.dims[n - 1] != p.b.dims[n - 1])
    return "a (" + dims_text(p.a) + ") @ b (" + dims_text(p.b) + ") does not give c (" + dims_text(p.c) + ")";
  for (int i = 0; i < n - 2; ++i)
    if ((p.a.dims[i] != 1 && p.a.dims[i] != p.c.dims[i]) || (p.b.dims[i] != 1 && p.b.dims[i] != p.c.dims[i]))
      return "batch dim " + std::to_string(i) + " of a (" + dims_text(p.a) + ") or b (" + dims_text(p.b) +
             ") is neither 1 nor c's " + std::to_string(p.c.dims[i]);
  if (p.has_bias)
    for (int i = 0; i < n; ++i)
      if (p.bias.dims[i] != 1 && p.bias.dims[i] != p.c.dims[i])
        return "bias (" + dims_text(p.bias) + ") does not broadcast to c (" + dims_text(p.c) + ")";
  return {};
}

// The API's type table: f32 -> f32; f16/bf16 -> itself or f32; s8 -> s32 or f32.
std::string type_support(const tsrpMatmulProblem& p) {
  const int32_t in = p.a.data_type, out = p.c.data_type;
  if (p.b.data_type != in)
    return std::string("a is ") + data_type_name(in) + " and b " + data_type_name(p.b.data_type) +
           ", expected one data type";
  const bool ok = (in == TSRP_DATA_FLOAT && out == TSRP_DATA_FLOAT) ||
                  ((in == TSRP_DATA_HALF || in == TSRP_DATA_BFLOAT16) && (out == in || out == TSRP_DATA_FLOAT)) ||
                  (in == TSRP_DATA_INT8 && (out == TSRP_DATA_INT32 || out == TSRP_DATA_FLOAT));
  if (!ok)
    return std::string(data_type_name(in)) + " x " + data_type_name(in) + " -> " + data_type_name(out) +
           " (c) is not a matmul type combination";
  const int32_t compute = in == TSRP_DATA_INT8 ? TSRP_DATA_INT32 : TSRP_DATA_FLOAT;
  if (p.compute_type != compute)
    return std::string("compute type ") + data_type_name(p.compute_type) + " for " + data_type_name(in) +
           " operands, expected " + data_type_name(compute);
  if (p.has_bias && p.bias.data_type != out && p.bias.data_type != TSRP_DATA_FLOAT)
    return std::string("bias is ") + data_type_name(p.bias.data_type) + ", expected c's type (" + data_type_name(out) +
           ") or float";
  if (p.activation_mode < TSRP_ACTIVATION_IDENTITY || p.activation_mode > TSRP_ACTIVATION_SWISH)
    return "unknown activation mode " + std::to_string(p.activation_mode);
  if (p.epilogue_order != TSRP_MATMUL_BLEND_AFTER_ACTIVATION && p.epilogue_order != TSRP_MATMUL_BLEND_BEFORE_ACTIVATION)
    return "unknown epilogue order " + std::to_string(p.epilogue_order);
  return {};
}

// Stride of dim d as the engine walks it: 0 where the tensor broadcasts (extent 1 under a larger
// extent of c), so one element serves every index.
int64_t broadcast_stride(const tsrpTensor& t, int d) { return t.dims[d] == 1 ? 0 : t.strides[d]; }

gemm::matrix_ref matrix_of(const tsrpTensor& t, const void* data, int batch_rank) {
  gemm::matrix_ref r;
  r.data = data;
  r.data_type = t.data_type;
  const int n = t.ndims;
  r.row_stride = broadcast_stride(t, n - 2);
  r.col_stride = broadcast_stride(t, n - 1);
  for (int i = 0; i < batch_rank; ++i) r.batch_strides[i] = broadcast_stride(t, i);
  return r;
}

// Pointers stand in for the real ones when only the problem is known (support): the engine's
// checks look at types and sizes, never at addresses.
struct matmul_pointers {
  const void* a;
  const void* b;
  const void* bias;
  void* c;
  float alpha;
  float beta;
};

gemm::general_problem general_of(const tsrpMatmulProblem& p, const matmul_pointers& ptr) {
  const int n = p.c.ndims, batch_rank = n - 2;
  gemm::general_problem g;
  g.m = p.c.dims[n - 2];
  g.n = p.c.dims[n - 1];
  g.k = p.a.dims[n - 1];
  g.batch_rank = batch_rank;
  for (int i = 0; i < batch_rank; ++i) g.batch_dims[i] = p.c.dims[i];
  g.a = matrix_of(p.a, ptr.a, batch_rank);
  g.b = matrix_of(p.b, ptr.b, batch_rank);
  g.c.data = ptr.c;
  g.c.data_type = p.c.data_type;
  g.c.row_stride = p.c.strides[n - 2];
  g.c.col_stride = p.c.strides[n - 1];
  for (int i = 0; i < batch_rank; ++i) g.c.batch_strides[i] = p.c.strides[i];
  if (p.has_bias) g.bias = matrix_of(p.bias, ptr.bias, batch_rank);
  g.alpha = ptr.alpha;
  g.beta = ptr.beta;
  g.activation_mode = p.activation_mode;
  g.activation_coef = static_cast<float>(p.activation_coef);
  g.blend_before_activation = p.epilogue_order == TSRP_MATMUL_BLEND_BEFORE_ACTIVATION;
  g.allow_tf32 = p.math_mode == TSRP_MATH_ALLOW_TF32;
  return g;
}

gemm::general_problem general_of(const tsrpMatmulProblem& p) {
  alignas(256) static unsigned char placeholder[256];
  return general_of(p, {placeholder, placeholder, p.has_bias ? placeholder : nullptr, placeholder, 1.0f, 0.0f});
}

std::string matmul_support(const tsrpMatmulProblem& p) {
  if (std::string why = shape_support(p); !why.empty()) return why;
  if (std::string why = type_support(p); !why.empty()) return why;
  return gemm::problem_support(general_of(p));
}

void run_matmul(cuda_context& ctx, const tsrpMatmulProblem& p, const tsrpMatmulArgs& args, gemm::engine_path path) {
  require_pointer(args.a, element_count(p.a), "a");
  require_pointer(args.b, element_count(p.b), "b");
  require_pointer(args.c, element_count(p.c), "c");
  if (p.has_bias) require_pointer(args.bias, element_count(p.bias), "bias");
  gemm::launch(general_of(p, {args.a, args.b, p.has_bias ? args.bias : nullptr, args.c, args.alpha, args.beta}), path,
               ctx.stream());
}

struct matmul_tensor_core_traits {
  using problem_type = tsrpMatmulProblem;
  using args_type = tsrpMatmulArgs;
  static constexpr const char* name = "matmul_tensor_core_mma_sync";
  static constexpr int32_t operation = TSRP_OP_MATMUL;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp16/bf16 operands on tensor cores (mma.sync m16n8k16, ldmatrix, cp.async multi-stage pipeline), "
      "products exact and accumulated in fp32 in a fixed order (no split-k: bitwise reproducible). The "
      "epilogue (alpha, bias, activation, beta) runs in fp32 and C is rounded once. Any strides: row- or "
      "column-major operands with 16-byte aligned rows are streamed with cp.async, others staged through "
      "registers. fp32 and int8 operands are declined (matmul_simt_fma runs them).";

  static std::string support(const tsrpMatmulProblem& p) {
    if (std::string why = matmul_support(p); !why.empty()) return why;
    return gemm::tensor_core_support(general_of(p));
  }

  static void run(cuda_context& ctx, const tsrpMatmulProblem& p, const tsrpMatmulArgs& a, void*, size_t) {
    run_matmul(ctx, p, a, gemm::engine_path::tensor_cores);
  }
};

struct matmul_tf32_traits {
  using problem_type = tsrpMatmulProblem;
  using args_type = tsrpMatmulArgs;
  static constexpr const char* name = "matmul_tf32_mma_sync";
  static constexpr int32_t operation = TSRP_OP_MATMUL;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "fp32 operands on the TF32 tensor cores (mma.sync m16n8k8, operands rounded to TF32 once, to nearest) "
      "when the handle's math mode allows TF32; products accumulated in fp32 in a fixed order (no split-k: "
      "bitwise reproducible). The epilogue (alpha, bias, activation, beta) runs in fp32 and C is rounded once. "
      "Any strides (operands staged through registers). Declines other types and the default math mode "
      "(matmul_simt_fma runs fp32 exact).";

  static std::string support(const tsrpMatmulProblem& p) {
    if (std::string why = matmul_support(p); !why.empty()) return why;
    return gemm::tf32_support(general_of(p));
  }

  static void run(cuda_context& ctx, const tsrpMatmulProblem& p, const tsrpMatmulArgs& a, void*, size_t) {
    run_matmul(ctx, p, a, gemm::engine_path::tensor_cores);
  }
};

struct matmul_simt_traits {
  using problem_type = tsrpMatmulProblem;
  using args_type = tsrpMatmulArgs;
  static constexpr const char* name = "matmul_simt_fma";
  static constexpr int32_t operation = TSRP_OP_MATMUL;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes =
      "Shared-memory tiled GEMM on CUDA cores, any strides and every type: fp32 exact (one fp32 FMA per "
      "product, fixed order), fp16/bf16 widened to fp32, int8 accumulated exactly in int32. The epilogue "
      "(alpha, bias, activation, beta) runs in fp32 and C is rounded once (s32: to nearest even, "
      "saturated; with alpha 1 and nothing else the int32 sum is stored as it is). Bitwise reproducible.";

  static std::string support(const tsrpMatmulProblem& p) { return matmul_support(p); }

  static void run(cuda_context& ctx, const tsrpMatmulProblem& p, const tsrpMatmulArgs& a, void*, size_t) {
    run_matmul(ctx, p, a, gemm::engine_path::simt);
  }
};

}  // namespace

void add_matmul_kernels(kernel_list& out) {
  out.push_back(make_kernel<matmul_tensor_core_traits>());
  // Listed by default since its GPU runs of 2026-12-05 (fp32 4096^3 under TF32: 3.26-3.38 ms against
  // 6.42-6.56 on the exact SIMT kernel, H100 and H200); TESSERA_CUDA_GEMM_TF32=0 unlists it.
  if (gemm::tf32_switched_on()) out.push_back(make_kernel<matmul_tf32_traits>());
  out.push_back(make_kernel<matmul_simt_traits>());
}

}  // namespace tessera::cuda
