// Entry point of the cuDNN plugin: negotiates the ABI, opens libcudnn, and hands the host a
// context interface and the kernel table. It provides no device interface: the cuda plugin owns
// CUDA memory, and the registry gives a CUDA handle the interface of the first CUDA plugin that
// has one, so this plugin's kernels run on memory the cuda plugin allocated.
//
// When libcudnn cannot be opened (or is not cuDNN 9), the entry point refuses: the registry then
// lists the plugin as not loaded, and the reason (which names the path tried) is logged once at
// warn level through the host's logger, which the registry also appends to the refusal it shows
// in tessera-info. A refusal rather than an empty kernel table because "cudnn" is then not a
// backend users can select, and tsrSetBackendPreference("cudnn") fails with the list of loaded
// backends instead of silently falling back.
#include "cudnn_context.hpp"
#include "cudnn_errors.hpp"
#include "cudnn_kernels.hpp"
#include "cudnn_symbols.hpp"

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <string>

namespace tessera::cudnn_plugin {
namespace {

constexpr uint32_t plugin_abi_version = TSRP_ABI_VERSION_CURRENT;
constexpr const char* plugin_release = "0.1.0";

tsrpStatus_t context_create(int32_t device_ordinal, void** context, char* message, size_t message_size) {
  if (context == nullptr) return TSRP_STATUS_BAD_PARAM;
  *context = nullptr;
  try {
    *context = cudnn_context::create(device_ordinal).release();
    return TSRP_STATUS_SUCCESS;
  } catch (const plugin_error& e) {
    write_text(message, message_size, e.what());
    return e.status();
  } catch (const std::exception& e) {
    write_text(message, message_size, e.what());
    return TSRP_STATUS_INTERNAL_ERROR;
  } catch (...) {
    write_text(message, message_size, "creating the cuDNN context threw");
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

void context_destroy(void* context) {
  try {
    delete static_cast<cudnn_context*>(context);
  } catch (...) {
  }
}

tsrpStatus_t context_set_stream(void* context, void* stream) {
  try {
    context_from(context).set_stream(stream);
    return TSRP_STATUS_SUCCESS;
  } catch (const plugin_error& e) {
    log_message(TSRP_LOG_ERROR, std::string("set_stream: ") + e.what());
    return e.status();
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

const tsrpContextInterface context_table = {sizeof(tsrpContextInterface), context_create, context_destroy,
                                            context_set_stream};

// "0.1.0+cudnn9.19.0": the cuDNN found at run time, which may differ from the headers' version.
const char* plugin_version() {
  static const std::string version =
      std::string(plugin_release) + "+cudnn" + cudnn_version_text(cudnn_library_instance().version);
  return version.c_str();
}

const kernel_list& kernels() {
  static const kernel_list list = [] {
    kernel_list all;
    add_convolution_kernels(all);
    add_pooling_kernels(all);
    add_activation_kernels(all);
    add_softmax_kernels(all);
    add_lrn_kernels(all);
    add_batch_norm_kernels(all);
    add_tensor_op_kernels(all);
    add_rnn_kernels(all);
    return all;
  }();
  return list;
}

// The last field the plugin fills; a host desc shorter than that cannot take the answer.
constexpr size_t desc_size_needed = offsetof(tsrpPluginDesc, kernel_count) + sizeof(size_t);

tsrpStatus_t entry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  if (offer == nullptr || desc == nullptr) return TSRP_STATUS_BAD_PARAM;
  if (offer->struct_size < offsetof(tsrpHostOffer, host_abi_min) + sizeof(uint32_t)) return TSRP_STATUS_BAD_PARAM;
  if (offer->struct_size >= offsetof(tsrpHostOffer, log) + sizeof(offer->log)) set_host_logger(offer->log);
  if (offer->host_abi_version < plugin_abi_version || offer->host_abi_min > plugin_abi_version) {
    log_message(TSRP_LOG_WARN, "cudnn plugin speaks ABI " + std::to_string(plugin_abi_version) + "; host offers " +
                                   std::to_string(offer->host_abi_min) + " to " +
                                   std::to_string(offer->host_abi_version));
    if (desc->struct_size >= offsetof(tsrpPluginDesc, abi_version) + sizeof(uint32_t))
      desc->abi_version = plugin_abi_version;
    return TSRP_STATUS_NOT_SUPPORTED;
  }
  if (desc->struct_size < desc_size_needed) return TSRP_STATUS_BAD_PARAM;

  const cudnn_library& lib = cudnn_library_instance();
  if (!lib.loaded) {
    warn_once("cudnn library", "cuDNN not loaded: " + lib.reason);
    return TSRP_STATUS_NOT_SUPPORTED;
  }
  desc->struct_size = sizeof(tsrpPluginDesc);
  desc->abi_version = plugin_abi_version;
  desc->name = plugin_name;
  desc->version = plugin_version();
  desc->device_kind = TSRP_DEVICE_CUDA;
  desc->context = &context_table;
  desc->device = nullptr;  // CUDA memory belongs to the cuda plugin
  desc->kernels = kernels().data();
  desc->kernel_count = kernels().size();
  return TSRP_STATUS_SUCCESS;
}

}  // namespace
}  // namespace tessera::cudnn_plugin

extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer, tsrpPluginDesc* desc) {
  try {
    return tessera::cudnn_plugin::entry(offer, desc);
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}
