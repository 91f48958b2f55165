// The cuDNN plugin as the host sees it, checked where it was built (usually without a GPU):
// listed with the cuDNN version it found (or with the reason it could not load), no device
// interface of its own, kernels named after cuDNN's algorithms, and on a machine without a GPU
// every kernel declines with "no CUDA device" and nothing crashes. The conformance sweeps in the
// other files cover its numbers on the GPU machine. (With cuDNN missing altogether, see
// tests/cudnn/cudnn_missing_library_test.cpp.)
#include "plugin_entry.hpp"
#include "tensor_fill.hpp"
#include "test_support.hpp"

#include <tessera/plugin_abi.h>
#include <tessera/tessera.h>

#include <unistd.h>

#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

using namespace tessera::testing;
namespace ref = tessera::reference;

namespace {

constexpr const char* plugin_file = "libtessera-cudnn.so";

std::vector<std::string>& plugin_log() {
  static std::vector<std::string> lines;
  return lines;
}

void record_log(int32_t, const char*, const char* message) { plugin_log().push_back(message ? message : ""); }

// The plugin's entry point, from the file the registry loaded (plugin_entry.hpp).
struct cudnn_plugin_file : plugin_entry_call {
  // False (and a reason) when the plugin was not built or cannot be opened.
  bool open(std::string* why) {
    if (!call_plugin_entry(plugin_file, record_log, this, why)) {
      if (find_plugin_by_file(plugin_file, nullptr) < 0) *why = "the cudnn plugin is not built here (no cudnn.h)";
      return false;
    }
    return true;
  }
};

bool gpu_present() {
  int n = 0;
  tsrGetDeviceCount(TSR_DEVICE_CUDA, &n);
  // Without the cuda plugin Tessera counts no CUDA device even on a GPU machine; the driver's
  // control node tells the truth there.
  return n > 0 || access("/dev/nvidiactl", F_OK) == 0;
}

TEST(CudnnPlugin, is_listed_with_the_cudnn_version_it_found_or_the_reason_it_did_not_load) {
  tsrPluginInfo_t info{};
  if (find_plugin_by_file(plugin_file, &info) < 0) GTEST_SKIP() << "the cudnn plugin is not built here";
  if (!info.loaded) {
    EXPECT_NE(std::string(info.reason).find("cuDNN"), std::string::npos) << info.reason;
    GTEST_SKIP() << "cuDNN is not loadable here: " << info.reason;
  }
  EXPECT_STREQ(info.name, "cudnn");
  EXPECT_EQ(info.device_kind, TSR_DEVICE_CUDA);
  EXPECT_TRUE(std::regex_match(std::string(info.version), std::regex(R"(0\.1\.0\+cudnn9\.[0-9]+\.[0-9]+)")))
      << info.version;
  EXPECT_GT(info.kernel_count, 30);
}

TEST(CudnnPlugin, owns_no_device_memory_and_names_kernels_after_cudnn_algorithms) {
  cudnn_plugin_file plugin;
  std::string why;
  if (!plugin.open(&why)) GTEST_SKIP() << why;
  if (plugin.status != TSRP_STATUS_SUCCESS) GTEST_SKIP() << "entry point refused: cuDNN not loadable here";
  const tsrpPluginDesc& d = plugin.desc;
  EXPECT_EQ(d.abi_version, TSRP_ABI_VERSION_CURRENT);
  EXPECT_STREQ(d.name, "cudnn");
  EXPECT_EQ(d.device_kind, TSRP_DEVICE_CUDA);
  EXPECT_EQ(d.device, nullptr) << "CUDA memory belongs to the cuda plugin";
  ASSERT_NE(d.context, nullptr);
  EXPECT_NE(d.context->create, nullptr);
  EXPECT_NE(d.context->destroy, nullptr);
  EXPECT_NE(d.context->set_stream, nullptr);
  std::set<std::string> names;
  std::set<int32_t> operations;
  for (size_t i = 0; i < d.kernel_count; ++i) {
    const tsrpKernel& k = d.kernels[i];
    EXPECT_EQ(std::string(k.name).rfind("cudnn_", 0), 0u) << k.name;
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate kernel name " << k.name;
    EXPECT_GE(k.operation, 0);
    EXPECT_LT(k.operation, TSRP_OP_COUNT);
    EXPECT_NE(k.can_implement, nullptr);
    EXPECT_NE(k.workspace_size, nullptr);
    EXPECT_NE(k.run, nullptr);
    operations.insert(k.operation);
  }
  for (const char* expected : {"cudnn_conv_fwd_implicit_precomp_gemm", "cudnn_conv_bwd_data_algo_1",
                               "cudnn_conv_bwd_filter_algo_0", "cudnn_conv_bias_act_implicit_precomp_gemm",
                               "cudnn_pool_fwd", "cudnn_act_bwd", "cudnn_softmax_fwd", "cudnn_lrn_bwd",
                               "cudnn_bnorm_fwd_training", "cudnn_op_tensor", "cudnn_rnn_bwd_weights"})
    EXPECT_EQ(names.count(expected), 1u) << expected;
  // Only the algorithms cuDNN does not implement (or, for the fused Winograd, runs for none of
  // the sweep's problems on the H200) are left out.
  EXPECT_EQ(names.count("cudnn_conv_fwd_direct"), 0u);
  EXPECT_EQ(names.count("cudnn_conv_fwd_winograd"), 0u);
  EXPECT_EQ(names.count("cudnn_conv_bwd_data_winograd"), 0u);
  EXPECT_EQ(names.count("cudnn_conv_fwd_winograd_nonfused"), 1u);
  // The nondeterministic algorithms say so.
  for (size_t i = 0; i < d.kernel_count; ++i) {
    const std::string name = d.kernels[i].name;
    const bool atomic = name == "cudnn_conv_bwd_data_algo_0" || name == "cudnn_conv_bwd_filter_algo_0" ||
                        name == "cudnn_conv_bwd_filter_algo_3";
    if (atomic) {
      EXPECT_EQ(d.kernels[i].flags & TSRP_KERNEL_DETERMINISTIC, 0u) << name;
    }
  }
}

// One problem per operation that every kernel of the operation would take on a GPU (so that the
// only reason left to decline is the missing device).
tsrpTensor packed(int32_t dt, const std::vector<int64_t>& dims, bool channels_last = false) {
  return ref::host_tensor::packed(dt, dims, channels_last).desc();
}

std::vector<uint8_t> sample_problem(int32_t operation) {
  auto bytes_of = [](const auto& p) {
    const auto* b = reinterpret_cast<const uint8_t*>(&p);
    return std::vector<uint8_t>(b, b + sizeof(p));
  };
  switch (operation) {
    case TSRP_OP_CONVOLUTION_FORWARD:
    case TSRP_OP_CONVOLUTION_BACKWARD_DATA:
    case TSRP_OP_CONVOLUTION_BACKWARD_FILTER: {
      tsrpConvolutionProblem p{};
      p.struct_size = sizeof(p);
      p.x = packed(TSRP_DATA_HALF, {2, 16, 14, 14});  // f16: the FFT/Winograd kernels take it too
      p.w = packed(TSRP_DATA_HALF, {16, 16, 3, 3});
      p.y = packed(TSRP_DATA_HALF, {2, 16, 14, 14});
      p.spatial_dims = 2;
      p.compute_type = TSRP_DATA_FLOAT;
      p.groups = 1;
      for (int i = 0; i < 2; ++i) p.pad_before[i] = p.pad_after[i] = p.stride[i] = p.dilation[i] = 1;
      p.stride[2] = p.dilation[2] = 1;
      return bytes_of(p);
    }
    case TSRP_OP_CONVOLUTION_BACKWARD_BIAS: {
      tsrpConvolutionBackwardBiasProblem p{};
      p.struct_size = sizeof(p);
      p.dy = packed(TSRP_DATA_FLOAT, {2, 8, 5, 5});
      p.db = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
      return bytes_of(p);
    }
    case TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD: {
      tsrpConvolutionBiasActivationProblem p{};
      p.struct_size = sizeof(p);
      p.x = packed(TSRP_DATA_FLOAT, {2, 8, 9, 9});
      p.w = packed(TSRP_DATA_FLOAT, {8, 8, 3, 3});
      p.y = packed(TSRP_DATA_FLOAT, {2, 8, 9, 9});
      p.bias = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
      p.spatial_dims = 2;
      p.compute_type = TSRP_DATA_FLOAT;
      p.groups = 1;
      for (int i = 0; i < 3; ++i) p.stride[i] = p.dilation[i] = 1;
      p.pad_before[0] = p.pad_before[1] = p.pad_after[0] = p.pad_after[1] = 1;
      p.activation_mode = TSRP_ACTIVATION_RELU;
      return bytes_of(p);
    }
    case TSRP_OP_POOLING_FORWARD:
    case TSRP_OP_POOLING_BACKWARD: {
      tsrpPoolingProblem p{};
      p.struct_size = sizeof(p);
      p.mode = TSRP_POOLING_MAX;
      p.spatial_dims = 2;
      for (int i = 0; i < 3; ++i) p.window[i] = p.stride[i] = i < 2 ? 2 : 1;
      p.x = p.dx = packed(TSRP_DATA_FLOAT, {2, 4, 8, 8});
      p.y = p.dy = packed(TSRP_DATA_FLOAT, {2, 4, 4, 4});
      return bytes_of(p);
    }
    case TSRP_OP_ACTIVATION_FORWARD:
    case TSRP_OP_ACTIVATION_BACKWARD: {
      tsrpActivationProblem p{};
      p.struct_size = sizeof(p);
      p.mode = TSRP_ACTIVATION_RELU;
      p.x = p.y = p.dy = p.dx = packed(TSRP_DATA_FLOAT, {2, 3, 4, 5});
      return bytes_of(p);
    }
    case TSRP_OP_SOFTMAX_FORWARD:
    case TSRP_OP_SOFTMAX_BACKWARD: {
      tsrpSoftmaxProblem p{};
      p.struct_size = sizeof(p);
      p.algorithm = TSRP_SOFTMAX_ACCURATE;
      p.mode = TSRP_SOFTMAX_MODE_CHANNEL;
      p.x = p.y = p.dy = p.dx = packed(TSRP_DATA_FLOAT, {2, 10, 3, 3});
      return bytes_of(p);
    }
    case TSRP_OP_LRN_FORWARD:
    case TSRP_OP_LRN_BACKWARD: {
      tsrpLrnProblem p{};
      p.struct_size = sizeof(p);
      p.n = 5;
      p.alpha = 1e-4;
      p.beta = 0.75;
      p.k = 2.0;
      p.x = p.y = p.dy = p.dx = packed(TSRP_DATA_FLOAT, {2, 16, 5, 5});
      return bytes_of(p);
    }
    case TSRP_OP_BATCH_NORM_FORWARD_TRAINING:
    case TSRP_OP_BATCH_NORM_FORWARD_INFERENCE:
    case TSRP_OP_BATCH_NORM_BACKWARD: {
      tsrpBatchNormProblem p{};
      p.struct_size = sizeof(p);
      p.mode = TSRP_BATCH_NORM_SPATIAL;
      p.epsilon = 1e-5;
      p.exponential_average_factor = 0.1;
      p.update_running_stats = p.write_saved_stats = 1;
      p.x = p.y = p.dy = p.dx = packed(TSRP_DATA_FLOAT, {4, 8, 5, 5});
      p.param = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
      return bytes_of(p);
    }
    case TSRP_OP_ADD_TENSOR: {
      tsrpAddTensorProblem p{};
      p.struct_size = sizeof(p);
      p.a = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
      p.c = packed(TSRP_DATA_FLOAT, {2, 8, 4, 4});
      return bytes_of(p);
    }
    case TSRP_OP_OP_TENSOR: {
      tsrpOpTensorProblem p{};
      p.struct_size = sizeof(p);
      p.op = TSRP_OP_TENSOR_MUL;
      p.compute_type = TSRP_DATA_FLOAT;
      p.a = p.c = packed(TSRP_DATA_FLOAT, {2, 8, 4, 4});
      p.b = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
      return bytes_of(p);
    }
    case TSRP_OP_SCALE_TENSOR: {
      tsrpScaleTensorProblem p{};
      p.struct_size = sizeof(p);
      p.y = packed(TSRP_DATA_FLOAT, {2, 8, 4, 4});
      return bytes_of(p);
    }
    case TSRP_OP_SET_TENSOR: {
      tsrpSetTensorProblem p{};
      p.struct_size = sizeof(p);
      p.y = packed(TSRP_DATA_HALF, {2, 8, 4, 4});
      return bytes_of(p);
    }
    case TSRP_OP_TRANSFORM_TENSOR: {
      tsrpTransformTensorProblem p{};
      p.struct_size = sizeof(p);
      p.x = packed(TSRP_DATA_FLOAT, {2, 8, 4, 4});
      p.y = packed(TSRP_DATA_FLOAT, {2, 8, 4, 4}, true);
      return bytes_of(p);
    }
    case TSRP_OP_RNN_FORWARD_INFERENCE:
    case TSRP_OP_RNN_FORWARD_TRAINING:
    case TSRP_OP_RNN_BACKWARD_DATA:
    case TSRP_OP_RNN_BACKWARD_WEIGHTS: {
      tsrpRnnProblem p{};
      p.struct_size = sizeof(p);
      p.rnn = {TSRP_RNN_LSTM, 1, 1, TSRP_RNN_DOUBLE_BIAS, 3, 5};
      p.data_type = p.math_precision = TSRP_DATA_FLOAT;
      p.seq_length = 4;
      p.batch_size = 2;
      p.x = packed(TSRP_DATA_FLOAT, {4, 2, 3});
      p.y = packed(TSRP_DATA_FLOAT, {4, 2, 5});
      p.h = p.c = packed(TSRP_DATA_FLOAT, {1, 2, 5});
      p.weight_space_bytes = static_cast<uint64_t>(tsrpRnnWeightSpaceElements(&p.rnn)) * 4;
      return bytes_of(p);
    }
  }
  return {};
}

TEST(CudnnPlugin, without_a_gpu_every_kernel_declines_with_no_cuda_device_and_nothing_crashes) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: the conformance sweeps run the kernels instead";
  cudnn_plugin_file plugin;
  std::string why;
  if (!plugin.open(&why)) GTEST_SKIP() << why;
  if (plugin.status != TSRP_STATUS_SUCCESS) GTEST_SKIP() << "entry point refused: cuDNN not loadable here";
  const tsrpPluginDesc& d = plugin.desc;
  for (size_t i = 0; i < d.kernel_count; ++i) {
    const tsrpKernel& k = d.kernels[i];
    SCOPED_TRACE(k.name);
    std::vector<uint8_t> problem = sample_problem(k.operation);
    ASSERT_FALSE(problem.empty()) << "no sample problem for operation " << k.operation;
    char reason[256] = {};
    EXPECT_EQ(k.can_implement(k.user_data, problem.data(), reason, sizeof reason), 0);
    EXPECT_NE(std::string(reason).find("no CUDA device"), std::string::npos) << reason;
    EXPECT_EQ(std::string(reason).rfind(std::string(k.name) + ": ", 0), 0u) << "the reason names the kernel: " << reason;
    size_t bytes = 7;
    EXPECT_EQ(k.workspace_size(k.user_data, problem.data(), &bytes), TSRP_STATUS_NOT_SUPPORTED);
    // A host that ran it anyway, without a context: an error, not a crash.
    char message[256] = {};
    EXPECT_EQ(k.run(k.user_data, nullptr, problem.data(), problem.data(), nullptr, 0, message, sizeof message),
              TSRP_STATUS_BAD_PARAM);
    EXPECT_NE(std::string(message).find("context is null"), std::string::npos) << message;
  }
  // A CUDA handle's context: no device, no context, words that say so.
  void* context = reinterpret_cast<void*>(0x1);
  char message[256] = {};
  EXPECT_EQ(d.context->create(0, &context, message, sizeof message), TSRP_STATUS_DEVICE_ERROR);
  EXPECT_EQ(context, nullptr);
  EXPECT_NE(std::string(message).find("no CUDA device present"), std::string::npos) << message;
}

TEST(CudnnPlugin, a_problem_cudnn_lacks_is_declined_with_its_reason_before_any_device_question) {
  cudnn_plugin_file plugin;
  std::string why;
  if (!plugin.open(&why)) GTEST_SKIP() << why;
  if (plugin.status != TSRP_STATUS_SUCCESS) GTEST_SKIP() << "entry point refused: cuDNN not loadable here";
  auto reason_of = [&](const char* kernel, const std::vector<uint8_t>& problem) {
    for (size_t i = 0; i < plugin.desc.kernel_count; ++i) {
      const tsrpKernel& k = plugin.desc.kernels[i];
      if (std::string(k.name) != kernel) continue;
      char reason[256] = {};
      EXPECT_EQ(k.can_implement(k.user_data, problem.data(), reason, sizeof reason), 0);
      return std::string(reason);
    }
    ADD_FAILURE() << "no kernel " << kernel;
    return std::string();
  };
  tsrpActivationProblem gelu{};
  gelu.struct_size = sizeof(gelu);
  gelu.mode = TSRP_ACTIVATION_GELU_ERF;
  gelu.x = gelu.y = packed(TSRP_DATA_FLOAT, {2, 3, 4, 5});
  const auto* g = reinterpret_cast<const uint8_t*>(&gelu);
  EXPECT_NE(reason_of("cudnn_act_fwd", {g, g + sizeof gelu}).find("no cuDNN legacy activation mode"), std::string::npos);

  std::vector<uint8_t> conv = sample_problem(TSRP_OP_CONVOLUTION_FORWARD);
  auto* p = reinterpret_cast<tsrpConvolutionProblem*>(conv.data());
  p->x = packed(TSRP_DATA_FLOAT, {2, 16, 14, 14});
  p->w = packed(TSRP_DATA_FLOAT, {16, 16, 3, 3});
  p->y = packed(TSRP_DATA_FLOAT, {2, 16, 14, 14});
  EXPECT_NE(reason_of("cudnn_conv_fwd_fft", conv).find("not exact in fp32"), std::string::npos);
  p->x.data_type = p->w.data_type = TSRP_DATA_INT8;
  p->compute_type = TSRP_DATA_INT32;
  EXPECT_NE(reason_of("cudnn_conv_fwd_implicit_gemm", conv).find("int8 not supported"), std::string::npos);

  std::vector<uint8_t> fused = sample_problem(TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD);
  reinterpret_cast<tsrpConvolutionBiasActivationProblem*>(fused.data())->activation_mode = TSRP_ACTIVATION_TANH;
  EXPECT_NE(reason_of("cudnn_conv_bias_act_implicit_gemm", fused).find("relu or identity only"), std::string::npos);
}

// What the H200 showed cuDNN 9.19 fails at is declined up front, with words that say why.
TEST(CudnnPlugin, problems_cudnn_gets_wrong_on_the_gpu_are_declined_with_the_reason) {
  cudnn_plugin_file plugin;
  std::string why;
  if (!plugin.open(&why)) GTEST_SKIP() << why;
  if (plugin.status != TSRP_STATUS_SUCCESS) GTEST_SKIP() << "entry point refused: cuDNN not loadable here";
  // The reason a kernel gives (empty when it accepts the problem).
  auto reason_of = [&](const char* kernel, const std::vector<uint8_t>& problem) {
    for (size_t i = 0; i < plugin.desc.kernel_count; ++i) {
      const tsrpKernel& k = plugin.desc.kernels[i];
      if (std::string(k.name) != kernel) continue;
      char reason[256] = {};
      return k.can_implement(k.user_data, problem.data(), reason, sizeof reason) ? std::string() : std::string(reason);
    }
    ADD_FAILURE() << "no kernel " << kernel;
    return std::string();
  };

  std::vector<uint8_t> lrn = sample_problem(TSRP_OP_LRN_FORWARD);
  auto* l = reinterpret_cast<tsrpLrnProblem*>(lrn.data());
  l->x = l->y = l->dy = l->dx = packed(TSRP_DATA_BFLOAT16, {2, 16, 5, 5});
  EXPECT_NE(reason_of("cudnn_lrn_fwd", lrn).find("bf16 LRN"), std::string::npos);
  EXPECT_NE(reason_of("cudnn_lrn_bwd", lrn).find("bf16 LRN"), std::string::npos);

  // Batch norm backward over one element per channel (N = 1, 1x1): spatial declined.
  std::vector<uint8_t> bn = sample_problem(TSRP_OP_BATCH_NORM_BACKWARD);
  auto* b = reinterpret_cast<tsrpBatchNormProblem*>(bn.data());
  b->x = b->y = b->dy = b->dx = packed(TSRP_DATA_FLOAT, {1, 8, 1, 1});
  EXPECT_NE(reason_of("cudnn_bnorm_bwd", bn).find("one element per statistic"), std::string::npos);

  // Training a relu RNN is declined on all three kernels; relu inference is not, for that reason.
  std::vector<uint8_t> rnn = sample_problem(TSRP_OP_RNN_FORWARD_TRAINING);
  auto* r = reinterpret_cast<tsrpRnnProblem*>(rnn.data());
  r->rnn.cell_mode = TSRP_RNN_RELU;
  r->c = tsrpTensor{};
  r->weight_space_bytes = static_cast<uint64_t>(tsrpRnnWeightSpaceElements(&r->rnn)) * 4;
  for (const char* kernel : {"cudnn_rnn_fwd_training", "cudnn_rnn_bwd_data", "cudnn_rnn_bwd_weights"})
    EXPECT_NE(reason_of(kernel, rnn).find("relu'(0)"), std::string::npos) << kernel;
  EXPECT_EQ(reason_of("cudnn_rnn_fwd_inference", rnn).find("relu"), std::string::npos);
}

}  // namespace
