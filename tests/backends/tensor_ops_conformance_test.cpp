// The tensor operations (add, op, scale, set, transform, reduce tensor) on every loaded backend
// that has kernels for them, through the C API, against the naive reference: integer inputs
// (exact in every type), NaN-poisoned outputs when beta is 0, f32/f16/bf16 plus int8/int32,
// NCHW, NHWC and strided layouts with gaps (whose gap elements must come back untouched), and
// shapes from real networks next to nasty ones (size-1 dims, primes, channels not a multiple
// of 8, 1-D and 5-D).
#include "backend_fixture.hpp"
#include "reference_tensor_ops.hpp"
#include "tensor_fill.hpp"
#include "tensor_index.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include <array>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class TensorOpsConformance : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // These entry points take no algorithm: the preference makes this backend's kernel the one
    // chosen (the handle serves one device, so only its backends compete anyway).
    ASSERT_OK(tsrSetBackendPreference(h_, GetParam().name.c_str()));
  }
};

enum class layout { nchw, nhwc, gapped };
const char* layout_name(layout l) {
  return l == layout::nchw ? "nchw" : l == layout::nhwc ? "nhwc" : "gapped";
}

// Packed NCHW/NHWC, or NCHW-ordered strides leaving one unused element after every row of
// every dim (so that an output kernel writing outside the addressed elements is caught).
tsrpTensor make_tensor(int32_t dt, const std::vector<int64_t>& dims, layout l) {
  if (l != layout::gapped) return ref::host_tensor::packed(dt, dims, l == layout::nhwc).desc();
  tsrpTensor t{};
  t.data_type = dt;
  t.ndims = static_cast<int32_t>(dims.size());
  int64_t stride = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    t.dims[i] = dims[static_cast<size_t>(i)];
    t.strides[i] = stride;
    stride *= t.dims[i] + 1;
  }
  return t;
}

bool is_int(int32_t dt) { return dt == TSRP_DATA_INT8 || dt == TSRP_DATA_INT32; }
std::string dt_name(int32_t dt) { return tessera::common::data_type_name(dt); }

// Elements of the extent that no logical index addresses must be as uploaded.
::testing::AssertionResult gaps_untouched(const ref::host_tensor& before, const ref::host_tensor& after) {
  std::vector<bool> addressed(static_cast<size_t>(before.extent()), false);
  const tsrpTensor& t = before.desc();
  ref::for_each_index(t.ndims, t.dims, [&](const int64_t index[]) {
    addressed[static_cast<size_t>(ref::offset_of(t, index))] = true;
  });
  for (int64_t i = 0; i < before.extent(); ++i) {
    if (addressed[static_cast<size_t>(i)]) continue;
    const float b = before.data()[i], a = after.data()[i];
    if (!(b == a || (std::isnan(b) && std::isnan(a))))
      return ::testing::AssertionFailure() << "unaddressed element at offset " << i << " changed from "
                                           << b << " to " << a;
  }
  return ::testing::AssertionSuccess();
}

struct scalars {
  float alpha, beta;
};
// Integer tensors get integer scalars (no rounding ties whose direction backends may choose).
std::vector<scalars> scalar_pairs(bool integer) {
  if (integer) return {{1.0f, 0.0f}, {2.0f, -1.0f}, {-1.0f, 3.0f}};
  return {{1.0f, 0.0f}, {0.5f, 2.0f}, {-2.0f, 0.0f}, {1.0f, -0.25f}};
}

// Declined (NOT_SUPPORTED) or ran; other failures are test failures.
bool declined(tsrStatus_t s, std::string* why) {
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *why = last_error();
    return true;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  return false;
}

void report(const char* op, const tsrKernelInfo_t& k, const tally& t) {
  EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name << " declined every case, e.g.: "
                      << t.example_reason;
  std::printf("[ conform  ] %s/%s %s: %d cases ran, %d declined%s%s\n", k.backend_name,
              k.kernel_name, op, t.ran, t.declined, t.declined ? ", e.g. " : "",
              t.example_reason.substr(0, 160).c_str());
}

void count(tally& t, bool ran, const std::string& why) {
  if (ran) {
    ++t.ran;
  } else {
    ++t.declined;
    if (t.example_reason.empty()) t.example_reason = why;
  }
}

const std::vector<std::vector<int64_t>> k_shapes = {
    {2, 16, 7, 7},  // resnet block
    {1, 3, 13, 11}, // primes, channels not a multiple of 8
    {1, 1, 1, 9},   // size-1 dims
    {17},           // 1-D, prime
    {1, 4, 3, 5, 6} // 3-D volume
};

const int32_t k_float_types[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};
const int32_t k_all_types[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16, TSRP_DATA_INT8,
                               TSRP_DATA_INT32};

// ---- transform ----------------------------------------------------------------------------

bool run_transform(tsrHandle_t h, const tsrpTensor& xt, const tsrpTensor& yt, scalars s,
                   uint32_t seed, std::string* why) {
  ref::host_tensor x(xt), y0(yt);
  ref::fill_integers(x, {-4, 4, 1.0}, seed);
  ref::fill_integers(y0, {-3, 3, 1.0}, seed + 1);
  ref::host_tensor init = y0;
  if (s.beta == 0.0f) ref::fill_poison(init);
  desc_owner xd(xt), yd(yt);
  device_buffer bx(h, x.byte_size()), by(h, init.byte_size());
  bx.upload(x);
  by.upload(init);
  if (declined(tsrTransformTensor(h, s.alpha, xd, bx.p, s.beta, yd, by.p), why)) return false;
  ref::host_tensor got(yt);
  by.download(got);
  ref::host_tensor expected = y0;
  tsrpTransformTensorProblem p{sizeof(p), xt, yt};
  std::string error;
  EXPECT_TRUE(ref::transform_tensor(p, x.data(), s.alpha, s.beta, expected.data(), &error)) << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(yt.data_type, 1));
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(gaps_untouched(init, got));
  return true;
}

TEST_P(TensorOpsConformance, transform_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_TRANSFORM_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no transform_tensor kernel";
  const std::pair<int32_t, int32_t> type_pairs[] = {
      {TSRP_DATA_FLOAT, TSRP_DATA_FLOAT},     {TSRP_DATA_FLOAT, TSRP_DATA_HALF},
      {TSRP_DATA_HALF, TSRP_DATA_FLOAT},      {TSRP_DATA_FLOAT, TSRP_DATA_BFLOAT16},
      {TSRP_DATA_BFLOAT16, TSRP_DATA_HALF},   {TSRP_DATA_HALF, TSRP_DATA_HALF},
      {TSRP_DATA_BFLOAT16, TSRP_DATA_BFLOAT16}, {TSRP_DATA_INT8, TSRP_DATA_FLOAT},
      {TSRP_DATA_FLOAT, TSRP_DATA_INT8},      {TSRP_DATA_INT32, TSRP_DATA_HALF},
      {TSRP_DATA_FLOAT, TSRP_DATA_INT32},     {TSRP_DATA_INT8, TSRP_DATA_INT32}};
  const std::pair<layout, layout> layouts[] = {{layout::nchw, layout::nhwc},
                                               {layout::nhwc, layout::nchw},
                                               {layout::nchw, layout::nchw},
                                               {layout::gapped, layout::nhwc},
                                               {layout::nchw, layout::gapped}};
  for (const auto& k : ks) {
    tally t;
    uint32_t seed = 1;
    for (const auto& dims : k_shapes)
      for (auto [xdt, ydt] : type_pairs)
        for (auto [xl, yl] : layouts)
          for (scalars s : scalar_pairs(is_int(xdt) || is_int(ydt))) {
            SCOPED_TRACE("transform " + tessera::common::format_dims(dims.data(), (int)dims.size()) +
                         " " + dt_name(xdt) + "/" + layout_name(xl) + " -> " + dt_name(ydt) + "/" +
                         layout_name(yl) + " alpha=" + std::to_string(s.alpha) +
                         " beta=" + std::to_string(s.beta));
            std::string why;
            count(t, run_transform(h_, make_tensor(xdt, dims, xl), make_tensor(ydt, dims, yl), s,
                                   seed++, &why),
                  why);
          }
    report("transform_tensor", k, t);
  }
}

// ---- add ----------------------------------------------------------------------------------

// c's dims and the broadcast a of each case.
struct broadcast_case {
  const char* label;
  std::vector<int64_t> c, small;
};
const broadcast_case k_broadcasts[] = {
    {"bias_per_channel", {2, 16, 7, 7}, {1, 16, 1, 1}},
    {"same_shape", {1, 3, 13, 11}, {1, 3, 13, 11}},
    {"scalar", {2, 5, 3, 3}, {1, 1, 1, 1}},
    {"per_pixel", {3, 7, 5, 4}, {3, 1, 5, 4}},
    {"one_d", {17}, {1}},
    {"volume_bias", {1, 4, 3, 5, 6}, {1, 4, 1, 1, 1}},
    {"row_and_column", {2, 3, 1, 9}, {1, 3, 1, 9}}};

bool run_add(tsrHandle_t h, const tsrpTensor& at, const tsrpTensor& ct, scalars s, uint32_t seed,
             std::string* why) {
  ref::host_tensor a(at), c0(ct);
  ref::fill_integers(a, {-4, 4, 1.0}, seed);
  ref::fill_integers(c0, {-3, 3, 1.0}, seed + 1);
  ref::host_tensor init = c0;
  if (s.beta == 0.0f) ref::fill_poison(init);
  desc_owner ad(at), cd(ct);
  device_buffer ba(h, a.byte_size()), bc(h, init.byte_size());
  ba.upload(a);
  bc.upload(init);
  if (declined(tsrAddTensor(h, s.alpha, ad, ba.p, s.beta, cd, bc.p), why)) return false;
  ref::host_tensor got(ct);
  bc.download(got);
  ref::host_tensor expected = c0;
  tsrpAddTensorProblem p{sizeof(p), at, ct};
  std::string error;
  EXPECT_TRUE(ref::add_tensor(p, a.data(), s.alpha, s.beta, expected.data(), &error)) << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(ct.data_type, 1));
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(gaps_untouched(init, got));
  return true;
}

TEST_P(TensorOpsConformance, add_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_ADD_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no add_tensor kernel";
  for (const auto& k : ks) {
    tally t;
    uint32_t seed = 100;
    for (const auto& bc : k_broadcasts)
      for (int32_t dt : k_all_types)
        for (layout l : {layout::nchw, layout::nhwc, layout::gapped})
          for (scalars s : scalar_pairs(is_int(dt))) {
            // Mixed types too: an f32 bias into a low-precision c.
            for (int32_t adt : {dt, int32_t{TSRP_DATA_FLOAT}}) {
              if (adt != dt && is_int(dt)) continue;
              SCOPED_TRACE(std::string("add ") + bc.label + " a=" + dt_name(adt) + " c=" +
                           dt_name(dt) + " " + layout_name(l) + " alpha=" + std::to_string(s.alpha) +
                           " beta=" + std::to_string(s.beta));
              std::string why;
              count(t, run_add(h_, make_tensor(adt, bc.small, l == layout::gapped ? layout::nchw : l),
                               make_tensor(dt, bc.c, l), s, seed++, &why),
                    why);
            }
          }
    report("add_tensor", k, t);
  }
}

// ---- op tensor ----------------------------------------------------------------------------

bool run_op(tsrHandle_t h, tsrOpTensorOp_t op, const tsrpTensor& at, const tsrpTensor& bt,
            const tsrpTensor& ct, float alpha1, float alpha2, float beta, uint32_t seed,
            bool in_place, std::string* why) {
  const bool unary = op == TSR_OP_TENSOR_SQRT || op == TSR_OP_TENSOR_NOT;
  ref::host_tensor a(at), b(bt), c0(ct);
  // sqrt needs alpha1 * a >= 0; not is meant for 0/1 masks.
  ref::fill_spec a_fill = op == TSR_OP_TENSOR_SQRT ? ref::fill_spec{0, 16, 1.0}
                          : op == TSR_OP_TENSOR_NOT ? ref::fill_spec{0, 1, 1.0}
                                                    : ref::fill_spec{-4, 4, 1.0};
  ref::fill_integers(a, a_fill, seed);
  ref::fill_integers(b, {-4, 4, 1.0}, seed + 1);
  ref::fill_integers(c0, {-3, 3, 1.0}, seed + 2);
  if (in_place) c0 = a;
  ref::host_tensor init = c0;
  if (beta == 0.0f && !in_place) ref::fill_poison(init);
  desc_owner ad(at), bd(bt), cd(ct);
  tsrOpTensorDescriptor_t od = nullptr;
  tsrCreateOpTensorDescriptor(&od);
  EXPECT_OK(tsrSetOpTensorDescriptor(od, op, TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN));
  device_buffer ba(h, a.byte_size()), bb(h, b.byte_size()), bc(h, init.byte_size());
  ba.upload(a);
  bb.upload(b);
  bc.upload(init);
  void* c_ptr = in_place ? ba.p : bc.p;
  tsrStatus_t s = tsrOpTensor(h, od, alpha1, ad, ba.p, alpha2, unary ? nullptr : (tsrTensorDescriptor_t)bd,
                              unary ? nullptr : bb.p, beta, cd, c_ptr);
  tsrDestroyOpTensorDescriptor(od);
  if (declined(s, why)) return false;
  ref::host_tensor got(ct);
  (in_place ? ba : bc).download(got);
  ref::host_tensor expected = c0;
  tsrpOpTensorProblem p{};
  p.struct_size = sizeof(p);
  p.op = op;
  p.a = at;
  p.b = bt;
  p.c = ct;
  std::string error;
  EXPECT_TRUE(ref::op_tensor(p, a.data(), b.data(), alpha1, alpha2, beta, expected.data(), &error))
      << error;
  expected.round_to_data_type();
  ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(ct.data_type, 1));
  EXPECT_TRUE(r.ok()) << r.message;
  if (!in_place) {
    EXPECT_TRUE(gaps_untouched(init, got));
  }
  return true;
}

TEST_P(TensorOpsConformance, op_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_OP_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no op_tensor kernel";
  const tsrOpTensorOp_t ops[] = {TSR_OP_TENSOR_ADD, TSR_OP_TENSOR_MUL, TSR_OP_TENSOR_MIN,
                                 TSR_OP_TENSOR_MAX, TSR_OP_TENSOR_SQRT, TSR_OP_TENSOR_NOT};
  for (const auto& k : ks) {
    tally t;
    uint32_t seed = 200;
    for (tsrOpTensorOp_t op : ops)
      for (const auto& bc : k_broadcasts)
        for (int32_t dt : k_all_types)
          for (layout l : {layout::nchw, layout::nhwc, layout::gapped}) {
            if (op == TSR_OP_TENSOR_SQRT && is_int(dt)) continue;  // irrational results
            const bool integer = is_int(dt);
            // alpha1, alpha2, beta: integers for integer types; the sqrt case keeps alpha1 > 0.
            std::vector<std::array<float, 3>> triples =
                integer ? std::vector<std::array<float, 3>>{{1, 1, 0}, {2, -1, 1}}
                        : std::vector<std::array<float, 3>>{{1, 1, 0}, {0.5f, -2, 2}, {4, 0.25f, -1}};
            for (auto [alpha1, alpha2, beta] : triples) {
              SCOPED_TRACE("op " + std::to_string(op) + " " + bc.label + " " + dt_name(dt) + " " +
                           layout_name(l) + " alpha1=" + std::to_string(alpha1) +
                           " alpha2=" + std::to_string(alpha2) + " beta=" + std::to_string(beta));
              std::string why;
              // b in a different type from a and c once per case: f32 b.
              const int32_t bdt = (l == layout::nhwc && !integer) ? int32_t{TSRP_DATA_FLOAT} : dt;
              count(t, run_op(h_, op, make_tensor(dt, bc.c, l),
                              make_tensor(bdt, bc.small, l == layout::gapped ? layout::nchw : l),
                              make_tensor(dt, bc.c, l), alpha1, alpha2, beta, seed++, false, &why),
                    why);
            }
          }
    // c aliasing a (in place), as cuDNN allows.
    for (int32_t dt : k_float_types) {
      SCOPED_TRACE("op add in place " + dt_name(dt));
      std::string why;
      count(t, run_op(h_, TSR_OP_TENSOR_ADD, make_tensor(dt, {2, 16, 7, 7}, layout::nhwc),
                      make_tensor(dt, {1, 16, 1, 1}, layout::nhwc),
                      make_tensor(dt, {2, 16, 7, 7}, layout::nhwc), 1.0f, 2.0f, 1.0f, seed++, true, &why),
            why);
    }
    report("op_tensor", k, t);
  }
}

// ---- scale and set ------------------------------------------------------------------------

TEST_P(TensorOpsConformance, scale_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_SCALE_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no scale_tensor kernel";
  for (const auto& k : ks) {
    tally t;
    uint32_t seed = 300;
    for (const auto& dims : k_shapes)
      for (int32_t dt : k_all_types)
        for (layout l : {layout::nchw, layout::nhwc, layout::gapped})
          for (float alpha : is_int(dt) ? std::vector<float>{2, -3, 0} : std::vector<float>{0.5f, -3, 0}) {
            SCOPED_TRACE("scale " + tessera::common::format_dims(dims.data(), (int)dims.size()) + " " +
                         dt_name(dt) + " " + layout_name(l) + " alpha=" + std::to_string(alpha));
            const tsrpTensor yt = make_tensor(dt, dims, l);
            ref::host_tensor y0(yt);
            ref::fill_integers(y0, {-4, 4, 1.0}, seed++);
            // Gaps get poison: a kernel that writes them is caught.
            ref::host_tensor init(yt);
            ref::fill_poison(init);
            ref::for_each_index(yt.ndims, yt.dims, [&](const int64_t i[]) { init.at(i) = y0.at(i); });
            desc_owner yd(yt);
            device_buffer by(h_, init.byte_size());
            by.upload(init);
            std::string why;
            if (declined(tsrScaleTensor(h_, yd, by.p, alpha), &why)) {
              count(t, false, why);
              continue;
            }
            ref::host_tensor got(yt);
            by.download(got);
            ref::host_tensor expected = y0;
            tsrpScaleTensorProblem p{sizeof(p), yt};
            ref::scale_tensor(p, alpha, expected.data());
            expected.round_to_data_type();
            ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(dt, 1));
            EXPECT_TRUE(r.ok()) << r.message;
            EXPECT_TRUE(gaps_untouched(init, got));
            count(t, true, "");
          }
    report("scale_tensor", k, t);
  }
}

TEST_P(TensorOpsConformance, set_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_SET_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no set_tensor kernel";
  for (const auto& k : ks) {
    tally t;
    for (const auto& dims : k_shapes)
      for (int32_t dt : k_all_types)
        for (layout l : {layout::nchw, layout::nhwc, layout::gapped}) {
          std::vector<double> values = {1.5, -3.0, 0.0};
          if (dt == TSRP_DATA_INT8) values = {-7, 300 /* saturates to 127 */, 2.4 /* rounds to 2 */};
          if (dt == TSRP_DATA_INT32) values = {123456, -5, 0};
          if (!is_int(dt)) values.push_back(std::nan(""));
          for (double value : values) {
            SCOPED_TRACE("set " + tessera::common::format_dims(dims.data(), (int)dims.size()) + " " +
                         dt_name(dt) + " " + layout_name(l) + " value=" + std::to_string(value));
            const tsrpTensor yt = make_tensor(dt, dims, l);
            ref::host_tensor init(yt);
            ref::fill_integers(init, {-4, 4, 1.0}, 7);  // never read, and the gaps must stay
            desc_owner yd(yt);
            device_buffer by(h_, init.byte_size());
            by.upload(init);
            std::string why;
            if (declined(tsrSetTensor(h_, yd, by.p, value), &why)) {
              count(t, false, why);
              continue;
            }
            ref::host_tensor got(yt);
            by.download(got);
            ref::host_tensor expected(yt);
            tsrpSetTensorProblem p{sizeof(p), yt};
            ref::set_tensor(p, value, expected.data());
            expected.round_to_data_type();
            ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(dt, 1));
            EXPECT_TRUE(r.ok()) << r.message;
            EXPECT_TRUE(gaps_untouched(init, got));
            count(t, true, "");
          }
        }
    report("set_tensor", k, t);
  }
}

// ---- reduce -------------------------------------------------------------------------------

struct reduce_case {
  const char* label;
  std::vector<int64_t> a, c;
};
const reduce_case k_reductions[] = {
    {"over_channels", {2, 16, 7, 7}, {2, 1, 7, 7}},
    {"per_channel_stats", {2, 16, 7, 7}, {1, 16, 1, 1}},
    {"everything", {2, 5, 7, 3}, {1, 1, 1, 1}},
    {"rows_of_primes", {3, 7, 5, 11}, {3, 7, 5, 1}},
    {"nothing_reduced", {2, 3, 4, 5}, {2, 3, 4, 5}},
    {"one_d", {17}, {1}},
    {"volume_spatial", {1, 4, 3, 5, 6}, {1, 4, 1, 1, 1}},
    {"size_one_dims", {1, 1, 9, 1}, {1, 1, 1, 1}}};

bool has_indices(tsrReduceTensorOp_t op) {
  return op == TSR_REDUCE_TENSOR_MIN || op == TSR_REDUCE_TENSOR_MAX || op == TSR_REDUCE_TENSOR_AMAX;
}

bool run_reduce(tsrHandle_t h, const tsrKernelInfo_t& k, tsrReduceTensorOp_t op, bool indices,
                const tsrpTensor& at, const tsrpTensor& ct, scalars s, uint32_t seed,
                std::string* why) {
  ref::host_tensor a(at), c0(ct);
  // Small integers: many ties, so the first-index rule is exercised; mul avoids 0 so products
  // carry information (they are powers of two and exact).
  ref::fill_integers(a, op == TSR_REDUCE_TENSOR_MUL ? ref::fill_spec{-2, 2, 1.0} : ref::fill_spec{-4, 4, 1.0},
                     seed);
  if (op == TSR_REDUCE_TENSOR_MUL)
    ref::for_each_index(at.ndims, at.dims, [&](const int64_t i[]) {
      if (a.at(i) == 0.0f) a.at(i) = 1.0f;
    });
  ref::fill_integers(c0, {-3, 3, 1.0}, seed + 1);
  ref::host_tensor init = c0;
  if (s.beta == 0.0f) ref::fill_poison(init);
  desc_owner ad(at), cd(ct);
  tsrReduceTensorDescriptor_t rd = nullptr;
  tsrCreateReduceTensorDescriptor(&rd);
  EXPECT_OK(tsrSetReduceTensorDescriptor(rd, op, TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN,
                                         indices ? TSR_REDUCE_TENSOR_FLATTENED_INDICES
                                                 : TSR_REDUCE_TENSOR_NO_INDICES,
                                         TSR_32BIT_INDICES));
  size_t ws_bytes = 0, idx_bytes = 0;
  tsrStatus_t st = tsrGetReductionWorkspaceSize(h, rd, ad, cd, k.algo, &ws_bytes);
  if (declined(st, why)) {
    tsrDestroyReduceTensorDescriptor(rd);
    return false;
  }
  EXPECT_OK(tsrGetReductionIndicesSize(h, rd, ad, cd, &idx_bytes));
  const int64_t c_count = a.element_count() > 0 ? ref::host_tensor(ct).element_count() : 0;
  EXPECT_EQ(idx_bytes, indices ? static_cast<size_t>(c_count) * 4 : 0u);
  device_buffer ba(h, a.byte_size()), bc(h, init.byte_size()), bws(h, ws_bytes), bidx(h, idx_bytes);
  ba.upload(a);
  bc.upload(init);
  std::vector<uint32_t> idx_init(idx_bytes / 4, 0xdeadbeefu);
  if (idx_bytes) tsrMemcpyHostToDevice(h, bidx.p, idx_init.data(), idx_bytes);
  st = tsrReduceTensor(h, rd, k.algo, indices ? bidx.p : nullptr, idx_bytes, bws.p, ws_bytes,
                       s.alpha, ad, ba.p, s.beta, cd, bc.p);
  tsrDestroyReduceTensorDescriptor(rd);
  if (declined(st, why)) return false;
  ref::host_tensor got(ct);
  bc.download(got);
  ref::host_tensor expected = c0;
  tsrpReduceTensorProblem p{};
  p.struct_size = sizeof(p);
  p.op = op;
  p.a = at;
  p.c = ct;
  std::vector<uint32_t> want_idx;
  std::string error;
  EXPECT_TRUE(ref::reduce_tensor(p, a.data(), s.alpha, s.beta, expected.data(),
                                 indices ? &want_idx : nullptr, &error))
      << error;
  expected.round_to_data_type();
  ref::compare_result r =
      ref::compare(got, expected, ref::tensor_op_tolerance(ct.data_type, ref::reduction_length(p)));
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(gaps_untouched(init, got));
  if (indices) {
    std::vector<uint32_t> got_idx(idx_bytes / 4);
    tsrMemcpyDeviceToHost(h, got_idx.data(), bidx.p, idx_bytes);
    EXPECT_EQ(got_idx, want_idx);
  }
  return true;
}

TEST_P(TensorOpsConformance, reduce_tensor_matches_the_reference) {
  auto ks = kernels_of(GetParam().name, TSR_OP_REDUCE_TENSOR);
  if (ks.empty()) GTEST_SKIP() << GetParam().name << " has no reduce_tensor kernel";
  const tsrReduceTensorOp_t ops[] = {TSR_REDUCE_TENSOR_ADD,  TSR_REDUCE_TENSOR_MUL,
                                     TSR_REDUCE_TENSOR_MIN,  TSR_REDUCE_TENSOR_MAX,
                                     TSR_REDUCE_TENSOR_AMAX, TSR_REDUCE_TENSOR_AVG,
                                     TSR_REDUCE_TENSOR_NORM1, TSR_REDUCE_TENSOR_NORM2};
  for (const auto& k : ks) {
    tally t;
    uint32_t seed = 400;
    for (tsrReduceTensorOp_t op : ops)
      for (const auto& rc : k_reductions)
        for (int32_t dt : k_all_types)
          for (layout l : {layout::nchw, layout::nhwc, layout::gapped}) {
            const bool integer = is_int(dt);
            // Integer outputs only for ops with integer results that fit.
            if (integer && (op == TSR_REDUCE_TENSOR_AVG || op == TSR_REDUCE_TENSOR_NORM2 ||
                            op == TSR_REDUCE_TENSOR_MUL))
              continue;
            if (dt == TSRP_DATA_INT8 && (op == TSR_REDUCE_TENSOR_ADD || op == TSR_REDUCE_TENSOR_NORM1))
              continue;  // sums beyond 127 saturate: not this test's subject
            for (bool indices : {false, true}) {
              if (indices && !has_indices(op)) continue;
              for (scalars s : scalar_pairs(integer)) {
                if (indices && s.alpha != 1.0f) continue;  // indices do not depend on scalars
                SCOPED_TRACE("reduce op " + std::to_string(op) + " " + rc.label + " " + dt_name(dt) +
                             " " + layout_name(l) + (indices ? " indices" : "") +
                             " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta));
                std::string why;
                // The input in f32 once per case for a low-precision c (mixed types).
                const int32_t adt = (l == layout::nhwc && !integer) ? int32_t{TSRP_DATA_FLOAT} : dt;
                count(t, run_reduce(h_, k, op, indices, make_tensor(adt, rc.a, l), make_tensor(dt, rc.c, l),
                                    s, seed++, &why),
                      why);
              }
            }
          }
    report("reduce_tensor", k, t);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, TensorOpsConformance,
                         ::testing::ValuesIn(loaded_backends()), backend_param_name);

}  // namespace
