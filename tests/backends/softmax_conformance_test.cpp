// Softmax and log-softmax, forward and backward, on every kernel of every loaded backend,
// through the C API, against the naive reference (tests/reference/reference_softmax.hpp): both
// modes (over channels, over an instance), every algorithm, fp32/fp16/bf16, NCHW, NHWC and mixed
// layouts, 2-D to 5-D shapes including size-1 dims, a 1000-class classifier, more channels than a
// thread keeps in registers, and rows longer than a warp's 1024 and a block's 8192 register-held
// elements, two alpha/beta pairs. Outputs are poisoned with NaN when beta is 0. Backward is fed a
// real forward output.
#include "backend_fixture.hpp"
#include "reference_softmax.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"
#include "tolerance.hpp"

#include <tessera/tessera.hpp>
#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

class SoftmaxConformance : public BackendTest {};

const std::vector<int64_t> k_softmax_shapes[] = {
    {4, 1000},         // classifier logits
    {2, 16, 7, 9},     // per-pixel classes
    {1, 3, 5, 1, 7},   // 5-D with a size-1 dim
    {3, 5, 4, 6},      // channels not a multiple of 8
    {2, 1, 3, 3},      // a single channel
    {2, 40, 6, 6},     // 40 channels (NCHW: more than a thread holds), instance rows of 1440
    {2, 9000},         // rows longer than a block holds in registers (streamed, re-read)
    {300, 512},        // many rows per block of the CUDA warp-row kernel (its next-group copies)
    {1000, 64},        // and of short rows, several per warp
};

bool run_case(tsrHandle_t h, const tsrKernelInfo_t& k, bool backward, tsrSoftmaxAlgorithm_t algorithm,
              tsrSoftmaxMode_t mode, const tsrpTensor& in_t, const tsrpTensor& out_t, float alpha,
              float beta, uint32_t seed, std::string* declined) {
  tsrpSoftmaxProblem p{};
  p.struct_size = sizeof(p);
  p.algorithm = algorithm;
  p.mode = mode;
  ref::host_tensor x(in_t), y(in_t), dy(in_t), out0(out_t);
  ref::fill_integers(x, ref::fill_spec{-4, 4, 1.0}, seed);
  ref::fill_integers(dy, ref::fill_spec{-2, 2, 1.0}, seed + 1);
  ref::fill_integers(out0, ref::fill_spec{-2, 2, 1.0}, seed + 2);
  std::string error;
  if (backward) {
    p.x = p.y = in_t;
    EXPECT_TRUE(ref::softmax_forward(p, x.data(), 1.0, 0.0, y.data(), &error)) << error;
    y.round_to_data_type();
    p.dy = in_t;
    p.dx = out_t;
  } else {
    p.x = in_t;
    p.y = out_t;
  }
  desc_owner in_d(in_t), out_d(out_t);
  size_t ws = 0;
  tsrStatus_t s = backward ? tsrGetSoftmaxBackwardWorkspaceSize(h, algorithm, mode, in_d, in_d,
                                                                out_d, k.algo, &ws)
                           : tsrGetSoftmaxForwardWorkspaceSize(h, algorithm, mode, in_d, out_d,
                                                               k.algo, &ws);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  device_buffer bin(h, x.byte_size()), bdy(h, dy.byte_size()), bout(h, out0.byte_size());
  bin.upload(backward ? y : x);
  bdy.upload(dy);
  ref::host_tensor init = out0;
  if (beta == 0.0f) ref::fill_poison(init);
  bout.upload(init);
  s = backward ? tsrSoftmaxBackward(h, algorithm, mode, k.algo, alpha, in_d, bin.p, in_d, bdy.p,
                                    beta, out_d, bout.p)
               : tsrSoftmaxForward(h, algorithm, mode, k.algo, alpha, in_d, bin.p, beta, out_d,
                                   bout.p);
  if (TSR_STATUS_CATEGORY(s) == TSR_STATUS_NOT_SUPPORTED) {
    *declined = last_error();
    return false;
  }
  EXPECT_EQ(s, TSR_STATUS_SUCCESS) << last_error();
  ref::host_tensor got(out_t);
  bout.download(got);
  ref::host_tensor expected = out0;
  bool ok = backward
                ? ref::softmax_backward(p, y.data(), dy.data(), alpha, beta, expected.data(), &error)
                : ref::softmax_forward(p, x.data(), alpha, beta, expected.data(), &error);
  EXPECT_TRUE(ok) << error;
  expected.round_to_data_type();
  const int64_t row = ref::softmax_row_length(in_t, mode);
  ref::compare_result r =
      ref::compare(got, expected, ref::softmax_tolerance(out_t.data_type, row, backward));
  EXPECT_TRUE(r.ok()) << r.message;
  return true;
}

void softmax_sweep(tsrHandle_t h, const std::string& backend, bool backward) {
  const tsrOperation_t op = backward ? TSR_OP_SOFTMAX_BACKWARD : TSR_OP_SOFTMAX_FORWARD;
  std::vector<tsrKernelInfo_t> ks = kernels_of(backend, op);
  if (ks.empty()) GTEST_SKIP() << backend << " has no " << tsrGetOperationName(op) << " kernel";
  const int32_t dtypes[] = {TSRP_DATA_FLOAT, TSRP_DATA_HALF, TSRP_DATA_BFLOAT16};
  const char* layout_names[] = {"nchw", "nhwc", "mixed"};
  for (const tsrKernelInfo_t& k : ks) {
    tally t;
    uint32_t seed = 900;
    for (tsrSoftmaxAlgorithm_t algorithm : {TSR_SOFTMAX_ACCURATE, TSR_SOFTMAX_LOG, TSR_SOFTMAX_FAST})
      for (tsrSoftmaxMode_t mode : {TSR_SOFTMAX_MODE_CHANNEL, TSR_SOFTMAX_MODE_INSTANCE})
        for (const std::vector<int64_t>& shape : k_softmax_shapes)
          for (int32_t dt : dtypes)
            for (int l = 0; l < 3; ++l)
              for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 0.0f}, {2.0f, 0.5f}}) {
                // FAST is ACCURATE's twin: one layout and data type are enough.
                if (algorithm == TSR_SOFTMAX_FAST && (dt != TSRP_DATA_FLOAT || l != 0)) continue;
                tsrpTensor in_t = ref::host_tensor::packed(dt, shape, l == 1).desc();
                tsrpTensor out_t = ref::host_tensor::packed(dt, shape, l != 0).desc();
                SCOPED_TRACE(std::string(k.backend_name) + "/" + k.kernel_name + " algorithm=" +
                             std::to_string(algorithm) + " mode=" + std::to_string(mode) +
                             " dims=" + tessera::common::format_dims(in_t.dims, in_t.ndims) +
                             " dt=" + tessera::common::data_type_name(dt) + " " + layout_names[l] +
                             " beta=" + std::to_string(beta));
                std::string why;
                if (run_case(h, k, backward, algorithm, mode, in_t, out_t, alpha, beta, seed++, &why)) {
                  ++t.ran;
                } else {
                  ++t.declined;
                  if (t.example_reason.empty()) t.example_reason = why;
                }
              }
    EXPECT_GT(t.ran, 0) << k.backend_name << "/" << k.kernel_name
                        << " declined every case, e.g.: " << t.example_reason;
    std::printf("[ conform  ] %s/%s %s: %d cases ran, %d declined%s%s\n", k.backend_name,
                k.kernel_name, tsrGetOperationName(op), t.ran, t.declined,
                t.declined ? ", e.g. " : "", t.example_reason.substr(0, 160).c_str());
  }
}

TEST_P(SoftmaxConformance, softmax_forward_matches_the_reference) {
  softmax_sweep(h_, GetParam().name, false);
}

TEST_P(SoftmaxConformance, softmax_backward_matches_the_reference) {
  softmax_sweep(h_, GetParam().name, true);
}

INSTANTIATE_TEST_SUITE_P(EveryLoadedBackend, SoftmaxConformance,
                         ::testing::ValuesIn(loaded_backends()), backend_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SoftmaxConformance);

}  // namespace
