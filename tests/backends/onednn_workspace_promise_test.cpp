// The oneDNN plugin's tensor-op kernels run in the workspace their workspace_size reported,
// whatever the call's scalars. workspace_size cannot see the scalars: it reports the largest plan
// over scalar classes (k_scale_classes in cpu_backend/onednn_tensor_op_kernel.hpp), and run builds
// the plan for the call's own scalars. A NaN beta is judged by oneDNN apart from its class: the
// jit binary takes a sum post-op only when its scale equals itself, so op_tensor's direct plan
// became the reference binary and run chose the staged plan instead, asking for dense f32 buffers
// workspace_size had not counted ("op_tensor needs a workspace of 191 bytes (see workspace_size),
// got 0" for a 4x4 f16 or bf16 c, the message the C API fuzzer once reported).
//
// Called through the plugin's ABI, as the registry calls it: the C API refuses a non-finite beta
// before any kernel sees it, the ABI does not (and hosts other than libtessera may pass one).
#include "plugin_entry.hpp"
#include "reference_tensor_ops.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"

#include <tessera/plugin_abi.h>
#include <tessera/tessera.h>


#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

void ignore_log(int32_t, const char*, const char*) {}

tsrpTensor packed(int32_t data_type, const std::vector<int64_t>& dims) {
  return ref::host_tensor::packed(data_type, dims, false).desc();
}

const char* type_name(int32_t dt) {
  switch (dt) {
    case TSRP_DATA_FLOAT: return "f32";
    case TSRP_DATA_HALF: return "f16";
    case TSRP_DATA_BFLOAT16: return "bf16";
    default: return "?";
  }
}

struct op_case {
  int32_t op;
  int32_t type;  // a's and c's; b is f32 (so that the staged plan stages a and c only)
};

// Runs op_tensor through the ABI with the workspace workspace_size reported, and compares c with
// the naive reference.
void run_and_compare(const opened_plugin& plugin, const op_case& k, float alpha1, float alpha2,
                     float beta) {
  const tsrpKernel* kernel = plugin.kernel("op_tensor");
  ASSERT_NE(kernel, nullptr);
  const bool unary = k.op == TSRP_OP_TENSOR_SQRT || k.op == TSRP_OP_TENSOR_NOT;
  tsrpOpTensorProblem p{};
  p.struct_size = sizeof(p);
  p.op = k.op;
  p.compute_type = TSRP_DATA_FLOAT;
  p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
  p.a = packed(k.type, {4, 4});
  p.c = p.a;
  p.b = unary ? p.a : packed(TSRP_DATA_FLOAT, {4, 4});

  char reason[512] = {0};
  ASSERT_EQ(kernel->can_implement(kernel->user_data, &p, reason, sizeof(reason)), 1) << reason;
  size_t workspace_bytes = 0;
  ASSERT_EQ(kernel->workspace_size(kernel->user_data, &p, &workspace_bytes), TSRP_STATUS_SUCCESS);

  ref::host_tensor a(p.a), b(p.b), c(p.c);
  ref::fill_integers(a, {0, 4, 1.0}, 11);  // non-negative: sqrt's input
  ref::fill_integers(b, {-4, 4, 1.0}, 12);
  ref::fill_integers(c, {-3, 3, 1.0}, 13);
  std::vector<uint8_t> a_bytes = a.pack(), b_bytes = b.pack(), c_bytes = c.pack();
  std::vector<uint8_t> workspace(workspace_bytes);

  tsrpOpTensorArgs args{};
  args.struct_size = sizeof(args);
  args.a = a_bytes.data();
  args.b = unary ? nullptr : b_bytes.data();
  args.c = c_bytes.data();
  args.alpha1 = alpha1;
  args.alpha2 = alpha2;
  args.beta = beta;
  char message[512] = {0};
  void* workspace_pointer = workspace_bytes ? workspace.data() : nullptr;
  const tsrpStatus_t status = kernel->run(kernel->user_data, plugin.context, &p, &args,
                                          workspace_pointer, workspace_bytes, message,
                                          sizeof(message));
  ASSERT_EQ(status, TSRP_STATUS_SUCCESS)
      << message << " (workspace_size reported " << workspace_bytes << " bytes)";

  ref::host_tensor got(p.c);
  got.unpack(c_bytes.data());
  ref::host_tensor expected = c;
  std::string error;
  ASSERT_TRUE(ref::op_tensor(p, a.data(), b.data(), alpha1, alpha2, beta, expected.data(), &error))
      << error;
  expected.round_to_data_type();
  const ref::compare_result r = ref::compare(got, expected, ref::tensor_op_tolerance(k.type, 1));
  EXPECT_TRUE(r.ok()) << r.message;
}

const op_case k_cases[] = {{TSRP_OP_TENSOR_ADD, TSRP_DATA_HALF},
                           {TSRP_OP_TENSOR_ADD, TSRP_DATA_BFLOAT16},
                           {TSRP_OP_TENSOR_MUL, TSRP_DATA_FLOAT},
                           {TSRP_OP_TENSOR_SQRT, TSRP_DATA_BFLOAT16}};

class OnednnWorkspacePromise : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!plugin_.open("libtessera-onednn.so", ignore_log, &why)) GTEST_SKIP() << why;
  }
  opened_plugin plugin_;
};

}  // namespace

// beta = NaN: c = op(alpha1 * a, alpha2 * b) + NaN * c is NaN everywhere, in the workspace that
// workspace_size reported (0 bytes on CPUs whose jit binary takes these types directly).
TEST_F(OnednnWorkspacePromise, op_tensor_with_a_nan_beta_runs_in_the_reported_workspace) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const op_case& k : k_cases) {
    SCOPED_TRACE(std::string("op ") + std::to_string(k.op) + " " + type_name(k.type));
    run_and_compare(plugin_, k, 2.0f, 1.0f, nan);
  }
}

// The same problems with finite scalars of every class still run in it and match the reference
// (the classes' own plans, unchanged by the limit).
TEST_F(OnednnWorkspacePromise, op_tensor_with_finite_scalars_runs_in_the_reported_workspace) {
  const float scalars[][3] = {{1.0f, 1.0f, 0.0f}, {2.0f, -1.0f, 1.0f}, {0.5f, 2.0f, -2.0f}};
  for (const op_case& k : k_cases)
    for (const auto& s : scalars) {
      SCOPED_TRACE(std::string("op ") + std::to_string(k.op) + " " + type_name(k.type) +
                   " alpha1=" + std::to_string(s[0]) + " alpha2=" + std::to_string(s[1]) +
                   " beta=" + std::to_string(s[2]));
      run_and_compare(plugin_, k, s[0], s[1], s[2]);
    }
}
