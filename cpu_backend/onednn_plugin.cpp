// The plugin's one exported symbol: ABI negotiation and the description the host registers.
#include "onednn_context.hpp"
#include "onednn_device.hpp"
#include "onednn_errors.hpp"
#include "onednn_kernels.hpp"
#include "onednn_log.hpp"

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <vector>
#include <cstring>
#include <string>

namespace tessera::onednn {
namespace {

constexpr uint32_t spoken_abi_version = TSRP_ABI_VERSION_CURRENT;

// Static storage: the description's pointers must stay valid until the process exits.
const std::string& plugin_version() {
  static const std::string version = [] {
    const dnnl_version_t* v = dnnl_version();
    return "0.1.0+onednn" + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch);
  }();
  return version;
}

// One line per kernel, best first within an operation (selection takes the first that can run).
const std::vector<tsrpKernel>& kernel_table() {
  static const std::vector<tsrpKernel> kernels = {
      convolution_forward_kernel(),
      convolution_backward_data_kernel(),
      convolution_backward_filter_kernel(),
      convolution_backward_bias_kernel(),
      convolution_bias_activation_forward_kernel(),
      activation_forward_kernel(),
      activation_backward_kernel(),
      matmul_kernel(),
      pooling_forward_kernel(),
      pooling_backward_kernel(),
      softmax_forward_kernel(),
      softmax_backward_kernel(),
      lrn_forward_kernel(),
      lrn_backward_kernel(),
      add_tensor_kernel(),
      op_tensor_kernel(),
      scale_tensor_kernel(),
      set_tensor_kernel(),
      transform_tensor_kernel(),
      reduce_tensor_kernel(),
      rnn_forward_inference_kernel(),
      rnn_forward_training_kernel(),
      rnn_backward_data_kernel(),
      rnn_backward_weights_kernel(),
      batch_norm_forward_training_kernel(),
      batch_norm_forward_inference_kernel(),
      batch_norm_backward_kernel(),
      layer_norm_forward_kernel(),
      layer_norm_backward_kernel(),
      rms_norm_forward_kernel(),
      rms_norm_backward_kernel(),
  };
  return kernels;
}

tsrpStatus_t plugin_entry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  if (offer == nullptr || desc == nullptr) return TSRP_STATUS_BAD_PARAM;
  // Read only the part of the offer the host wrote (ABI rule for extensible structs).
  tsrpHostOffer host{};
  const size_t offer_size = offer->struct_size < sizeof host ? offer->struct_size : sizeof host;
  std::memcpy(&host, offer, offer_size);
  set_host_logger(host.log);

  if (host.host_abi_version < spoken_abi_version || host.host_abi_min > spoken_abi_version) {
    log_message(TSRP_LOG_WARN,
                "refusing host ABI range [" + std::to_string(host.host_abi_min) + ", " +
                    std::to_string(host.host_abi_version) + "]: this plugin speaks ABI " +
                    std::to_string(spoken_abi_version));
    return TSRP_STATUS_NOT_SUPPORTED;
  }

  const auto& kernels = kernel_table();
  tsrpPluginDesc answer{};
  answer.abi_version = spoken_abi_version;
  answer.name = "onednn";
  answer.version = plugin_version().c_str();
  answer.device_kind = TSRP_DEVICE_CPU;
  answer.context = &context_interface();
  answer.device = &device_interface();
  answer.kernels = kernels.data();
  answer.kernel_count = kernels.size();
  // Write no more than the host's struct holds; struct_size then says how much was written.
  const size_t desc_size = desc->struct_size < sizeof answer ? desc->struct_size : sizeof answer;
  answer.struct_size = desc_size;
  std::memcpy(desc, &answer, desc_size);
  log_message(TSRP_LOG_INFO, "oneDNN plugin " + plugin_version() + " loaded");
  return TSRP_STATUS_SUCCESS;
}

}  // namespace
}  // namespace tessera::onednn

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer,
                                                    tsrpPluginDesc* desc) {
  try {
    return tessera::onednn::plugin_entry(offer, desc);
  } catch (...) {
    tessera::onednn::log_message(TSRP_LOG_ERROR, "oneDNN plugin entry failed: " +
                                                     tessera::onednn::current_exception_text());
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}
