// Entry point of the CUDA plugin: negotiates the ABI and hands the host the context interface,
// the device interface and the kernel table. Loading the plugin touches no GPU: the driver is
// first used when the host asks for devices, so the plugin loads on machines without one.
#include "cuda_context.hpp"
#include "cuda_device.hpp"
#include "cuda_errors.hpp"
#include "cuda_kernels.hpp"
#include "host_log.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace tessera::cuda {
namespace {

constexpr uint32_t plugin_abi_version = TSRP_ABI_VERSION_CURRENT;

// "0.1.0+cuda13.0": the runtime is linked statically, so its version is the one built in.
const char* plugin_version() {
  static const std::string version = [] {
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    return "0.1.0+cuda" + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  }();
  return version.c_str();
}

tsrpStatus_t context_create(int32_t device_ordinal, void** context, char* message, size_t message_size) {
  return call_with_message(message, message_size, [&] {
    if (context == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, "context is null");
    *context = nullptr;
    *context = cuda_context::create(device_ordinal).release();
  });
}

void context_destroy(void* context) {
  try {
    delete static_cast<cuda_context*>(context);
  } catch (...) {
  }
}

tsrpStatus_t context_set_stream(void* context, void* stream) {
  return call_with_log("set_stream", [&] { context_from_handle(context).set_stream(static_cast<cudaStream_t>(stream)); });
}

const tsrpContextInterface context_table = {sizeof(tsrpContextInterface), context_create, context_destroy,
                                            context_set_stream};

// The field the plugin fills last; a host desc shorter than that cannot receive the answer.
constexpr size_t desc_size_needed = offsetof(tsrpPluginDesc, kernel_count) + sizeof(size_t);

tsrpStatus_t entry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  if (offer == nullptr || desc == nullptr) return TSRP_STATUS_BAD_PARAM;
  if (offer->struct_size < offsetof(tsrpHostOffer, host_abi_min) + sizeof(uint32_t)) return TSRP_STATUS_BAD_PARAM;
  // Fields the host's struct does not have are treated as absent, per the ABI's struct_size rule.
  const bool has_logger = offer->struct_size >= offsetof(tsrpHostOffer, log) + sizeof(offer->log);
  if (has_logger) set_host_logger(offer->log);
  if (offer->host_abi_version < plugin_abi_version || offer->host_abi_min > plugin_abi_version) {
    const std::string text = "CUDA plugin speaks ABI " + std::to_string(plugin_abi_version) + "; host offers " +
                             std::to_string(offer->host_abi_min) + " to " + std::to_string(offer->host_abi_version);
    log_message(TSRP_LOG_WARN, text.c_str());
    return TSRP_STATUS_NOT_SUPPORTED;
  }
  if (desc->struct_size < desc_size_needed) return TSRP_STATUS_BAD_PARAM;

  // The kernel table is built once and lives until the process exits, as the ABI requires.
  static const kernel_list kernels = [] {
    kernel_list list;
    add_conv_implicit_gemm_kernels(list);    // tensor-core kernels first: tried before the direct one
    add_conv_depthwise_kernels(list);        // before the direct kernels, which take any grouping
    add_conv_depthwise_wgrad_kernels(list);  // the same, before conv_bwd_filter_tiled
    add_conv_dgrad_kernel_stride_kernels(list);  // up-convolutions, before conv_bwd_data_tiled
    list.push_back(conv_fwd_direct_kernel());
    add_conv_fused_kernels(list);
    add_conv_backward_kernels(list);
    list.push_back(eltwise_fwd_kernel());
    list.push_back(eltwise_bwd_kernel());
    add_pooling_kernels(list);
    add_softmax_kernels(list);
    add_lrn_kernels(list);
    add_batch_norm_kernels(list);
    add_layer_norm_kernels(list);
    add_tensor_op_kernels(list);
    add_matmul_kernels(list);
    add_rnn_kernels(list);
    return list;
  }();
  // A host built with a larger desc keeps its zeroed tail ("behave as before the field existed");
  // struct_size tells it how much of the struct this plugin wrote.
  desc->struct_size = sizeof(tsrpPluginDesc);
  desc->abi_version = plugin_abi_version;
  desc->name = plugin_name;
  desc->version = plugin_version();
  desc->device_kind = TSRP_DEVICE_CUDA;
  desc->context = &context_table;
  desc->device = &device_interface();
  desc->kernels = kernels.data();
  desc->kernel_count = kernels.size();
  return TSRP_STATUS_SUCCESS;
}

}  // namespace
}  // namespace tessera::cuda

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  try {
    return tessera::cuda::entry(offer, desc);
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}
