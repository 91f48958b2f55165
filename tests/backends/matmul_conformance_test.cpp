// Matmul on every loaded backend, through the C API, against the naive reference: shapes from
// real networks (LSTM gates, attention with broadcast batch dims) and nasty ones (M/N/K of 1,
// primes, transposes through strides, padded leading dims, rank 5), every data type pair,
// alpha/beta pairs and both epilogue orders with and without a bias. Inputs are small integers
// (exact in f32), C is poisoned with NaN when beta is 0 (so it must be neither read nor left
// unwritten), and the gaps of padded tensors hold a sentinel that must survive.
#include "backend_fixture.hpp"
#include "reference_matmul.hpp"
#include "tensor_fill.hpp"
#include "tensor_index.hpp"
#include "test_support.hpp"
#include "tf32_probe.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class MatmulConformance : public BackendTest {};

enum class bias_kind { none, per_column, full, per_row, batched };

struct mm_shape {
  const char* label;
  std::vector<int64_t> a_dims;  // [batch..., M, K]
  std::vector<int64_t> b_dims;  // [batch..., K, N]
  bool transpose_a, transpose_b, transpose_c;
  int64_t pad;  // extra elements on each matrix's leading dimension (lda = cols + pad)
  bias_kind bias;
};

// clang-format off
const mm_shape k_shapes[] = {
  // label                      a dims          b dims          tA     tB     tC     pad bias
  {"square_16",                 {16, 16},       {16, 16},       false, false, false, 0, bias_kind::per_column},
  {"primes_7x13x11",            {7, 13},        {13, 11},       false, false, false, 0, bias_kind::full},
  {"all_ones_1x1x1",            {1, 1},         {1, 1},         false, false, false, 0, bias_kind::per_column},
  {"gemv_m1",                   {1, 17},        {17, 5},        false, false, false, 0, bias_kind::per_column},
  {"n1_column",                 {9, 4},         {4, 1},         false, false, false, 0, bias_kind::per_row},
  {"k1_outer_product",          {5, 1},         {1, 6},         false, false, false, 0, bias_kind::none},
  {"lstm_gates_64x128x512",     {64, 128},      {128, 512},     false, true,  false, 0, bias_kind::per_column},
  {"attention_2x3_bcast_b",     {2, 3, 5, 8},   {2, 1, 8, 7},   false, false, false, 0, bias_kind::none},
  {"attention_scores_qkT",      {2, 3, 6, 8},   {2, 3, 8, 6},   false, true,  false, 0, bias_kind::full},
  {"bcast_a_batch",             {1, 3, 6, 9},   {2, 3, 9, 4},   false, false, false, 0, bias_kind::batched},
  {"transposed_a",              {11, 7},        {7, 5},         true,  false, false, 0, bias_kind::per_column},
  {"transposed_all_batched",    {3, 5, 7},      {3, 7, 4},      true,  true,  true,  0, bias_kind::per_column},
  {"padded_leading_dims",       {2, 6, 10},     {2, 10, 3},     false, false, false, 3, bias_kind::full},
  {"long_k_300",                {3, 300},       {300, 4},       false, false, false, 0, bias_kind::per_column},
  {"rank5_bcast_both",          {2, 1, 2, 3, 4},{1, 2, 2, 4, 5},false, false, false, 0, bias_kind::per_column},
};
// clang-format on

// A matrix tensor [batch..., rows, cols]: row-major, or column-major (transposed) when asked,
// with `pad` extra elements per leading dimension, batch dims packed above.
tsrpTensor matrix_tensor(int32_t dt, const std::vector<int64_t>& dims, bool transposed, int64_t pad) {
  tsrpTensor t{};
  t.data_type = dt;
  t.ndims = static_cast<int32_t>(dims.size());
  const int n = t.ndims;
  for (int i = 0; i < n; ++i) t.dims[i] = dims[static_cast<size_t>(i)];
  const int64_t rows = dims[n - 2], cols = dims[n - 1];
  int64_t matrix;
  if (!transposed) {
    t.strides[n - 1] = 1;
    t.strides[n - 2] = cols + pad;
    matrix = rows * (cols + pad);
  } else {
    t.strides[n - 2] = 1;
    t.strides[n - 1] = rows + pad;
    matrix = cols * (rows + pad);
  }
  int64_t running = matrix;
  for (int i = n - 3; i >= 0; --i) {
    t.strides[i] = running;
    running *= dims[static_cast<size_t>(i)];
  }
  return t;
}

std::vector<int64_t> c_dims_of(const mm_shape& s) {
  const size_t n = s.a_dims.size();
  std::vector<int64_t> c(n);
  for (size_t i = 0; i + 2 < n; ++i) c[i] = s.a_dims[i] == 1 ? s.b_dims[i] : s.a_dims[i];
  c[n - 2] = s.a_dims[n - 2];
  c[n - 1] = s.b_dims[n - 1];
  return c;
}

std::vector<int64_t> bias_dims_of(const mm_shape& s) {
  std::vector<int64_t> c = c_dims_of(s), d(c.size(), 1);
  const size_t n = c.size();
  switch (s.bias) {
    case bias_kind::per_column: d[n - 1] = c[n - 1]; break;
    case bias_kind::full: d[n - 2] = c[n - 2]; d[n - 1] = c[n - 1]; break;
    case bias_kind::per_row: d[n - 2] = c[n - 2]; break;
    case bias_kind::batched: d = c; d[0] = 1; break;
    case bias_kind::none: break;
  }
  return d;
}

struct type_combo {
  int32_t in, out, bias, compute;
  const char* name;
};
const type_combo k_types[] = {
    {TSRP_DATA_FLOAT, TSRP_DATA_FLOAT, TSRP_DATA_FLOAT, TSR_DATA_FLOAT, "f32"},
    {TSRP_DATA_HALF, TSRP_DATA_HALF, TSRP_DATA_HALF, TSR_DATA_FLOAT, "f16"},
    {TSRP_DATA_BFLOAT16, TSRP_DATA_BFLOAT16, TSRP_DATA_BFLOAT16, TSR_DATA_FLOAT, "bf16"},
    {TSRP_DATA_HALF, TSRP_DATA_FLOAT, TSRP_DATA_FLOAT, TSR_DATA_FLOAT, "f16->f32"},
    {TSRP_DATA_BFLOAT16, TSRP_DATA_FLOAT, TSRP_DATA_FLOAT, TSR_DATA_FLOAT, "bf16->f32"},
    {TSRP_DATA_INT8, TSRP_DATA_INT32, TSRP_DATA_INT32, TSR_DATA_INT32, "s8->s32"},
    {TSRP_DATA_INT8, TSRP_DATA_FLOAT, TSRP_DATA_FLOAT, TSR_DATA_INT32, "s8->f32"},
};

struct epilogue {
  tsrActivationMode_t mode;
  double coef;
  tsrMatmulEpilogueOrder_t order;
  const char* name;
};
const epilogue k_epilogues[] = {
    {TSR_ACTIVATION_IDENTITY, 0, TSR_MATMUL_BLEND_AFTER_ACTIVATION, "none"},
    {TSR_ACTIVATION_RELU, 0, TSR_MATMUL_BLEND_AFTER_ACTIVATION, "relu,blend_after"},
    {TSR_ACTIVATION_RELU, 0, TSR_MATMUL_BLEND_BEFORE_ACTIVATION, "relu,blend_before"},
    {TSR_ACTIVATION_GELU_TANH, 0, TSR_MATMUL_BLEND_AFTER_ACTIVATION, "gelu_tanh,blend_after"},
    {TSR_ACTIVATION_SIGMOID, 0, TSR_MATMUL_BLEND_BEFORE_ACTIVATION, "sigmoid,blend_before"},
};

constexpr float k_sentinel = 77.0f;  // in gaps of padded tensors: must never change

// Marks the positions of the extent that are logical elements.
std::vector<bool> logical_positions(const tsrpTensor& t, int64_t extent) {
  std::vector<bool> used(static_cast<size_t>(extent), false);
  ref::for_each_index(t.ndims, t.dims,
                      [&](const int64_t index[]) { used[static_cast<size_t>(ref::offset_of(t, index))] = true; });
  return used;
}

struct matmul_case {
  tsrpMatmulProblem p;
  float alpha, beta;
  bool use_pool;  // pass no workspace: the handle's pool serves
  tsrMathMode_t math = TSR_MATH_DEFAULT;
  // TF32 numerics (tf32_probe.hpp): probe inputs, the result checked within TF32's bound;
  // `*differs` then says whether it differs from the exact sum anywhere.
  bool tf32_probe = false;
  bool* differs = nullptr;
};

tsrpMatmulProblem make_problem(const mm_shape& s, const type_combo& t, const epilogue& e, bool with_bias) {
  tsrpMatmulProblem p{};
  p.struct_size = sizeof(p);
  p.a = matrix_tensor(t.in, s.a_dims, s.transpose_a, s.pad);
  p.b = matrix_tensor(t.in, s.b_dims, s.transpose_b, s.pad);
  p.c = matrix_tensor(t.out, c_dims_of(s), s.transpose_c, s.pad);
  p.has_bias = with_bias && s.bias != bias_kind::none;
  if (p.has_bias) p.bias = ref::host_tensor::packed(t.bias, bias_dims_of(s), false).desc();
  p.compute_type = t.compute;
  p.activation_mode = e.mode;
  p.activation_coef = e.coef;
  p.epilogue_order = e.order;
  return p;
}

// Runs one case on one kernel. Returns false (and records why) when the kernel declines.
bool run_matmul_case(tsrHandle_t h, const tsrKernelInfo_t& k, const matmul_case& mc, uint32_t seed,
                     std::string* declined) {
  const tsrpMatmulProblem& p = mc.p;
  ref::host_tensor a(p.a), b(p.b), c0(p.c);
  ref::host_tensor bias = p.has_bias ? ref::host_tensor(p.bias) : ref::host_tensor();
  const int64_t length = ref::matmul_reduction_length(p);
  if (mc.tf32_probe) {
    ref::fill_integers(a, tf32_probe_wide(), seed);
    ref::fill_integers(b, tf32_probe_narrow(), seed + 1);
  } else {
    // Sums must stay exact in C's type (s8 inputs: the s32/f32 accumulator's range). For f32 the
    // values are small integers, exact in TF32 too, so the f32 tolerance holds under TSR_MATH_ALLOW_TF32.
    ref::conv_fill fill = ref::choose_conv_fill(p.c.data_type, length);
    ref::fill_integers(a, fill.x, seed);
    ref::fill_integers(b, fill.w, seed + 1);
  }
  ref::fill_integers(c0, ref::fill_spec{-3, 3, 1.0}, seed + 2);
  if (p.has_bias) ref::fill_integers(bias, ref::fill_spec{-3, 3, 1.0}, seed + 3);

  tsrActivationDescriptor_t act = nullptr;
  tsrCreateActivationDescriptor(&act);
  tsrSetActivationDescriptor(act, static_cast<tsrActivationMode_t>(p.activation_mode), p.activation_coef);
  tsrMatmulDescriptor_t mm = nullptr;
  tsrCreateMatmulDescriptor(&mm);
  EXPECT_OK(tsrSetMatmulDescriptor(mm, static_cast<tsrDataType_t>(p.compute_type), act,
                                   static_cast<tsrMatmulEpilogueOrder_t>(p.epilogue_order)));
  tsrDestroyActivationDescriptor(act);  // the matmul descriptor holds a copy
  desc_owner ad(p.a), bd(p.b), cd(p.c);
  tsrTensorDescriptor_t bias_d = p.has_bias ? make_desc(p.bias) : nullptr;

  // The handle's math mode reaches the kernels as the problem's; restored below.
  EXPECT_OK(tsrSetMathMode(h, mc.math));
  const auto cleanup = [&] {
    tsrDestroyMatmulDescriptor(mm);
    tsrDestroyTensorDescriptor(bias_d);
    EXPECT_OK(tsrSetMathMode(h, TSR_MATH_DEFAULT));
  };

  size_t ws_bytes = 0;
  tsrStatus_t s = tsrGetMatmulWorkspaceSize(h, mm, ad, bd, bias_d, cd, k.algo, &ws_bytes);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    cleanup();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  device_buffer da(h, a.byte_size()), db(h, b.byte_size()), dc(h, c0.byte_size()),
      dbias(h, p.has_bias ? bias.byte_size() : 1), dws(h, ws_bytes);
  da.upload(a);
  db.upload(b);
  if (p.has_bias) dbias.upload(bias);
  ref::host_tensor c_init = c0;
  if (mc.beta == 0.0f) ref::fill_poison(c_init);  // beta 0: C must not be read
  const std::vector<bool> logical = logical_positions(p.c, c_init.extent());
  for (int64_t i = 0; i < c_init.extent(); ++i)
    if (!logical[static_cast<size_t>(i)]) c_init.data()[i] = k_sentinel;
  dc.upload(c_init);

  s = tsrMatmul(h, mm, k.algo, mc.alpha, ad, da.p, bd, db.p, bias_d, p.has_bias ? dbias.p : nullptr,
                mc.beta, cd, dc.p, mc.use_pool ? nullptr : dws.p, mc.use_pool ? 0 : ws_bytes);
  cleanup();
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(p.c);
  dc.download(got);

  ref::host_tensor expected = c0;
  std::string error;
  EXPECT_TRUE(ref::matmul(p, a.data(), b.data(), p.has_bias ? bias.data() : nullptr, mc.alpha,
                          mc.beta, expected.data(), &error))
      << error;
  expected.round_to_data_type();
  if (mc.tf32_probe) {
    const bool differs = expect_tf32_result(got, expected, length);
    if (mc.differs) *mc.differs = *mc.differs || differs;
  } else {
    ref::compare_result r = ref::compare(got, expected, ref::matmul_tolerance(p));
    EXPECT_TRUE(r.ok()) << r.message;
  }
  int64_t clobbered = 0;
  for (int64_t i = 0; i < got.extent(); ++i)
    if (!logical[static_cast<size_t>(i)] && got.data()[i] != k_sentinel) ++clobbered;
  EXPECT_EQ(clobbered, 0) << "elements between C's rows were written";
  return true;
}

std::string case_label(const tsrKernelInfo_t& k, const mm_shape& s, const type_combo& t,
                       const epilogue& e, bool bias, float alpha, float beta) {
  return std::string(k.backend_name) + "/" + k.kernel_name + " " + s.label + " " + t.name +
         " epilogue=" + e.name + (bias ? " bias" : "") + " alpha=" + std::to_string(alpha) +
         " beta=" + std::to_string(beta);
}

TEST_P(MatmulConformance, matmul_matches_the_reference) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_MATMUL);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no matmul kernel";
  const std::pair<float, float> scalars[] = {{1.0f, 0.0f}, {0.5f, 2.0f}};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 7;
    for (const mm_shape& s : k_shapes)
      for (const type_combo& tc : k_types)
        for (const epilogue& e : k_epilogues)
          for (bool with_bias : {false, true})
            for (auto [alpha, beta] : scalars) {
              // Keep the sweep affordable: every shape sees every type with the plain and the
              // full epilogue; the other epilogues run on f32 and bf16.
              const bool plain = e.mode == TSR_ACTIVATION_IDENTITY && !with_bias;
              const bool full = e.mode == TSR_ACTIVATION_RELU && with_bias &&
                                e.order == TSR_MATMUL_BLEND_BEFORE_ACTIVATION;
              if (!plain && !full && tc.in != TSRP_DATA_FLOAT && tc.in != TSRP_DATA_BFLOAT16) continue;
              if (with_bias && s.bias == bias_kind::none) continue;
              // f32 runs again with TF32 allowed (the kernels that only run under it); its small
              // integer inputs are exact in TF32, so the f32 tolerance holds.
              for (tsrMathMode_t math : {TSR_MATH_DEFAULT, TSR_MATH_ALLOW_TF32}) {
                if (math == TSR_MATH_ALLOW_TF32 && tc.in != TSRP_DATA_FLOAT) continue;
                SCOPED_TRACE(case_label(k, s, tc, e, with_bias, alpha, beta) +
                             (math == TSR_MATH_ALLOW_TF32 ? " math=tf32" : ""));
                matmul_case mc{make_problem(s, tc, e, with_bias), alpha, beta, false, math};
                std::string why;
                if (run_matmul_case(h_, k, mc, seed++, &why)) {
                  ++t.ran;
                } else {
                  ++t.declined;
                  if (t.example_reason.empty()) t.example_reason = why;
                }
              }
            }
    EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name
                        << " declined every case, e.g.: " << t.example_reason;
    // The oneDNN backend promises every case of this sweep.
    if (std::string(k.backend_name) == "onednn") {
      EXPECT_EQ(t.declined, 0) << "e.g. " << t.example_reason;
    }
    std::printf("[ conform  ] %s/%s matmul: %d cases ran, %d declined%s%s\n", k.backend_name,
                k.kernel_name, t.ran, t.declined, t.declined ? ", e.g. " : "",
                t.example_reason.substr(0, 160).c_str());
  }
}

// TF32 numerics (TSR_MATH_ALLOW_TF32), as the convolutions' tests: probe inputs whose sums are
// exact in fp32 but not in TF32, every f32 shape with the plain epilogue. Each result must stay
// within TF32's bound of the exact sum, and a kernel named *_tf32 must run and differ from it
// somewhere (it is not an exact path in disguise); other kernels may stay exact.
TEST_P(MatmulConformance, tf32_matmul_stays_within_tf32_rounding) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_MATMUL);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no matmul kernel";
  for (const tsrKernelInfo_t& k : ks) {
    int ran = 0;
    bool differs = false;
    uint32_t seed = 211;
    for (const mm_shape& s : k_shapes) {
      SCOPED_TRACE(case_label(k, s, k_types[0], k_epilogues[0], false, 1.0f, 0.0f) + " math=tf32 probe");
      matmul_case mc{make_problem(s, k_types[0], k_epilogues[0], false), 1.0f, 0.0f, false,
                     TSR_MATH_ALLOW_TF32, true, &differs};
      ASSERT_LE(ref::matmul_reduction_length(mc.p), tf32_probe_max_length);
      std::string why;
      if (run_matmul_case(h_, k, mc, seed++, &why)) ++ran;
    }
    if (std::string(k.kernel_name).find("_tf32") != std::string::npos) {
      EXPECT_GT(ran, 0) << k.kernel_name << " declined every f32 case under TSR_MATH_ALLOW_TF32";
      EXPECT_TRUE(differs) << k.kernel_name << " gave exact fp32 results: not the TF32 tensor cores";
    }
    std::printf("[ conform  ] %s/%s matmul tf32: %d cases ran%s\n", k.backend_name, k.kernel_name, ran,
                differs ? ", rounded like TF32" : "");
  }
}

// The handle's pool serves a call given no workspace, with the same result.
TEST_P(MatmulConformance, matmul_without_a_workspace_uses_the_handle_pool) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_MATMUL);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no matmul kernel";
  for (const tsrKernelInfo_t& k : ks)
    for (const type_combo& tc : {k_types[1], k_types[2]}) {  // f16 and bf16: staged on most CPUs
      const mm_shape& s = k_shapes[11];                     // transposed_all_batched
      SCOPED_TRACE(case_label(k, s, tc, k_epilogues[4], true, 0.5f, 2.0f));
      matmul_case mc{make_problem(s, tc, k_epilogues[4], true), 0.5f, 2.0f, true};
      std::string why;
      if (!run_matmul_case(h_, k, mc, 99, &why)) GTEST_SKIP() << why;
    }
}

// Get-algorithm lists the backend's kernels: each that can run this problem with its workspace,
// agreeing with the query, and each that cannot with its reason (the TF32 kernel declines f16).
TEST_P(MatmulConformance, get_algorithm_lists_the_kernel_with_its_workspace) {
  std::vector<tsrKernelInfo_t> ks = kernels_of(GetParam().name, TSR_OP_MATMUL);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no matmul kernel";
  const tsrpMatmulProblem p =
      make_problem(k_shapes[11], k_types[1], k_epilogues[1], true);  // f16, transposes, bias, relu
  tsrActivationDescriptor_t act = nullptr;
  ASSERT_OK(tsrCreateActivationDescriptor(&act));
  ASSERT_OK(tsrSetActivationDescriptor(act, TSR_ACTIVATION_RELU, 0));
  tsrMatmulDescriptor_t mm = nullptr;
  ASSERT_OK(tsrCreateMatmulDescriptor(&mm));
  ASSERT_OK(tsrSetMatmulDescriptor(mm, TSR_DATA_FLOAT, act, TSR_MATMUL_BLEND_AFTER_ACTIVATION));
  desc_owner ad(p.a), bd(p.b), cd(p.c), biasd(p.bias);
  std::vector<tsrAlgoPerf_t> perf(8);
  for (auto& x : perf) x.struct_size = sizeof(tsrAlgoPerf_t);
  int n = 0;
  ASSERT_OK(tsrGetMatmulAlgorithm(h_, mm, ad, bd, biasd, cd, 8, &n, perf.data()));
  bool found = false;
  for (int i = 0; i < n; ++i) {
    if (GetParam().name != perf[i].backend_name) continue;
    if (perf[i].status != TSR_STATUS_SUCCESS) {
      EXPECT_NE(perf[i].reason[0], '\0') << perf[i].kernel_name << " declined without a reason";
      continue;
    }
    found = true;
    EXPECT_EQ(perf[i].time_ms, -1.0f);
    size_t bytes = 0;
    EXPECT_OK(tsrGetMatmulWorkspaceSize(h_, mm, ad, bd, biasd, cd, perf[i].algo, &bytes));
    EXPECT_EQ(bytes, perf[i].workspace_size);
  }
  EXPECT_TRUE(found) << "no " << GetParam().name << " kernel that can run the problem in the get-algorithm answer";
  tsrDestroyMatmulDescriptor(mm);
  tsrDestroyActivationDescriptor(act);
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, MatmulConformance,
                         ::testing::ValuesIn(loaded_backends()), backend_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MatmulConformance);

}  // namespace
