// The oneDNN plugin's tensor-op kernels cache their can_implement/workspace_size answers per
// problem (onednn_tensor_op_kernel.hpp); every field check() judges must be part of that key, or a
// problem inherits the answer of one that differs only there. Called through the plugin's ABI, as
// the registry calls it (the C API validates the fields below itself; other hosts may not).
#include "plugin_entry.hpp"
#include "tensor_fill.hpp"

#include <tessera/plugin_abi.h>

#include <gtest/gtest.h>

#include <string>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

void ignore_log(int32_t, const char*, const char*) {}

class OnednnQueryKey : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!plugin_.open("libtessera-onednn.so", ignore_log, &why)) GTEST_SKIP() << why;
  }
  opened_plugin plugin_;
};

tsrpReduceTensorProblem reduce_problem(int32_t op, int32_t indices) {
  tsrpReduceTensorProblem p{};
  p.struct_size = sizeof(p);
  p.op = op;
  p.compute_type = TSRP_DATA_FLOAT;
  p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
  p.indices = indices;
  p.indices_type = TSRP_32BIT_INDICES;
  p.a = ref::host_tensor::packed(TSRP_DATA_FLOAT, {3, 5}, false).desc();
  p.c = ref::host_tensor::packed(TSRP_DATA_FLOAT, {3, 1}, false).desc();
  return p;
}

}  // namespace

// A sum without indices is implementable; the same sum asking for indices is not ("indices are
// only defined for min, max and amax"), whichever is asked first.
TEST_F(OnednnQueryKey, reduce_tensor_answers_depend_on_the_indices_mode) {
  const tsrpKernel* kernel = plugin_.kernel("reduce_tensor");
  ASSERT_NE(kernel, nullptr);
  const tsrpReduceTensorProblem plain = reduce_problem(TSRP_REDUCE_TENSOR_ADD, TSRP_REDUCE_TENSOR_NO_INDICES);
  const tsrpReduceTensorProblem with_indices = reduce_problem(TSRP_REDUCE_TENSOR_ADD, TSRP_REDUCE_TENSOR_FLATTENED_INDICES);
  char reason[512] = {0};
  ASSERT_EQ(kernel->can_implement(kernel->user_data, &plain, reason, sizeof(reason)), 1) << reason;
  reason[0] = '\0';
  EXPECT_EQ(kernel->can_implement(kernel->user_data, &with_indices, reason, sizeof(reason)), 0);
  EXPECT_NE(std::string(reason).find("indices"), std::string::npos) << reason;
  size_t bytes = 0;
  EXPECT_EQ(kernel->workspace_size(kernel->user_data, &with_indices, &bytes), TSRP_STATUS_NOT_SUPPORTED);
  // An index type other than 32 bits is declined too, after 32-bit ones were accepted for a max.
  tsrpReduceTensorProblem max32 = reduce_problem(TSRP_REDUCE_TENSOR_MAX, TSRP_REDUCE_TENSOR_FLATTENED_INDICES);
  ASSERT_EQ(kernel->can_implement(kernel->user_data, &max32, reason, sizeof(reason)), 1) << reason;
  tsrpReduceTensorProblem other_type = max32;
  other_type.indices_type = TSRP_32BIT_INDICES + 1;
  EXPECT_EQ(kernel->can_implement(kernel->user_data, &other_type, reason, sizeof(reason)), 0);
}
