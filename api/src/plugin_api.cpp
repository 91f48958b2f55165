// Listing plugins and kernels, loading a plugin explicitly, algorithms by name.
#include "error_state.hpp"
#include "handle.hpp"
#include "validation.hpp"

#include <cstdio>
#include <cstring>

using namespace tessera::api;
using tessera::registry::registry;

namespace {

tsrStatus_t check_op(const char* fn, tsrOperation_t op) {
  if (op < 0 || op >= TSR_OP_COUNT)
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": op " + std::to_string(op) + " is not a tsrOperation_t");
  return TSR_STATUS_SUCCESS;
}

template <typename T>
tsrStatus_t check_info_struct(const char* fn, const char* type_name, T* info) {
  if (!info) return fail(TSR_STATUS_BAD_PARAM_NULL_POINTER, std::string(fn) + ": info is NULL");
  if (info->struct_size < sizeof(T))
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": info->struct_size is " + std::to_string(info->struct_size) +
                    ", expected sizeof(" + type_name + ") = " + std::to_string(sizeof(T)));
  return TSR_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

TSR_API const char* tsrGetOperationName(tsrOperation_t op) {
  switch (op) {
    case TSR_OP_CONVOLUTION_FORWARD: return "convolution_forward";
    case TSR_OP_ACTIVATION_FORWARD: return "activation_forward";
    case TSR_OP_ACTIVATION_BACKWARD: return "activation_backward";
    case TSR_OP_CONVOLUTION_BACKWARD_DATA: return "convolution_backward_data";
    case TSR_OP_CONVOLUTION_BACKWARD_FILTER: return "convolution_backward_filter";
    case TSR_OP_CONVOLUTION_BACKWARD_BIAS: return "convolution_backward_bias";
    case TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD: return "convolution_bias_activation_forward";
    case TSR_OP_POOLING_FORWARD: return "pooling_forward";
    case TSR_OP_POOLING_BACKWARD: return "pooling_backward";
    case TSR_OP_SOFTMAX_FORWARD: return "softmax_forward";
    case TSR_OP_SOFTMAX_BACKWARD: return "softmax_backward";
    case TSR_OP_LRN_FORWARD: return "lrn_forward";
    case TSR_OP_LRN_BACKWARD: return "lrn_backward";
    case TSR_OP_BATCH_NORM_FORWARD_TRAINING: return "batch_norm_forward_training";
    case TSR_OP_BATCH_NORM_FORWARD_INFERENCE: return "batch_norm_forward_inference";
    case TSR_OP_BATCH_NORM_BACKWARD: return "batch_norm_backward";
    case TSR_OP_LAYER_NORM_FORWARD: return "layer_norm_forward";
    case TSR_OP_LAYER_NORM_BACKWARD: return "layer_norm_backward";
    case TSR_OP_RMS_NORM_FORWARD: return "rms_norm_forward";
    case TSR_OP_RMS_NORM_BACKWARD: return "rms_norm_backward";
    case TSR_OP_ADD_TENSOR: return "add_tensor";
    case TSR_OP_OP_TENSOR: return "op_tensor";
    case TSR_OP_SCALE_TENSOR: return "scale_tensor";
    case TSR_OP_SET_TENSOR: return "set_tensor";
    case TSR_OP_TRANSFORM_TENSOR: return "transform_tensor";
    case TSR_OP_REDUCE_TENSOR: return "reduce_tensor";
    case TSR_OP_MATMUL: return "matmul";
    case TSR_OP_RNN_FORWARD_INFERENCE: return "rnn_forward_inference";
    case TSR_OP_RNN_FORWARD_TRAINING: return "rnn_forward_training";
    case TSR_OP_RNN_BACKWARD_DATA: return "rnn_backward_data";
    case TSR_OP_RNN_BACKWARD_WEIGHTS: return "rnn_backward_weights";
    case TSR_OP_COUNT:
    case TSR_OPERATION_ENUM_MIN_:
    case TSR_OPERATION_ENUM_MAX_: break;  // not operations
  }
  return "unknown_operation";
}

TSR_API tsrStatus_t tsrGetPluginCount(int* count) {
  const char* fn = "tsrGetPluginCount";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "count", count)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    *count = static_cast<int>(reg.plugins().size());
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetPluginInfo(int index, tsrPluginInfo_t* info) {
  const char* fn = "tsrGetPluginInfo";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_info_struct(fn, "tsrPluginInfo_t", info)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    if (index < 0 || index >= static_cast<int>(reg.plugins().size()))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": index " + std::to_string(index) + " out of range: " +
                      std::to_string(reg.plugins().size()) + " plugin(s) found");
    const auto& p = reg.plugins()[index];
    size_t size = info->struct_size;
    std::memset(static_cast<void*>(info), 0, sizeof(*info));
    info->struct_size = size;
    std::snprintf(info->name, sizeof(info->name), "%s", p.name.c_str());
    std::snprintf(info->version, sizeof(info->version), "%s", p.version.c_str());
    info->abi_version = p.abi_version;
    info->loaded = p.loaded ? 1 : 0;
    info->device_kind = static_cast<tsrDeviceKind_t>(p.device_kind);
    info->kernel_count = p.loaded ? static_cast<int>(p.plugin.kernels.size()) : 0;
    std::snprintf(info->path, sizeof(info->path), "%s", p.path.c_str());
    std::snprintf(info->reason, sizeof(info->reason), "%s", p.reason.c_str());
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrLoadPlugin(const char* path) {
  const char* fn = "tsrLoadPlugin";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_not_null(fn, "path", path)) return s;
    if (!*path) return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE, std::string(fn) + ": path is empty");
    tessera::registry::load_result r = registry::instance().load(path);
    if (!r.ok)
      return fail(TSR_STATUS_NOT_SUPPORTED_PLUGIN,
                  std::string(fn) + ": plugin '" + path + "' refused: " + r.reason);
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetKernelCount(tsrOperation_t op, int* count) {
  const char* fn = "tsrGetKernelCount";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_op(fn, op)) return s;
    if (tsrStatus_t s = check_not_null(fn, "count", count)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    *count = static_cast<int>(reg.kernels_for(op).size());
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetKernelInfo(tsrOperation_t op, int index, tsrKernelInfo_t* info) {
  const char* fn = "tsrGetKernelInfo";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_op(fn, op)) return s;
    if (tsrStatus_t s = check_info_struct(fn, "tsrKernelInfo_t", info)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    const auto& ids = reg.kernels_for(op);
    if (index < 0 || index >= static_cast<int>(ids.size()))
      return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                  std::string(fn) + ": index " + std::to_string(index) + " out of range: " +
                      std::to_string(ids.size()) + " kernel(s) of " + tsrGetOperationName(op));
    const auto& k = reg.kernels()[ids[index]];
    size_t size = info->struct_size;
    std::memset(static_cast<void*>(info), 0, sizeof(*info));
    info->struct_size = size;
    info->algo = k.id;
    info->op = op;
    info->device_kind = static_cast<tsrDeviceKind_t>(reg.plugins()[k.plugin_index].device_kind);
    info->deterministic = (k.kernel.flags & TSRP_KERNEL_DETERMINISTIC) ? 1 : 0;
    std::snprintf(info->kernel_name, sizeof(info->kernel_name), "%s", k.kernel_name.c_str());
    std::snprintf(info->backend_name, sizeof(info->backend_name), "%s",
                  reg.plugins()[k.plugin_index].name.c_str());
    std::snprintf(info->notes, sizeof(info->notes), "%s", k.kernel.notes ? k.kernel.notes : "");
    return TSR_STATUS_SUCCESS;
  });
}

TSR_API tsrStatus_t tsrGetAlgoByName(tsrOperation_t op, const char* name, tsrAlgo_t* algo) {
  const char* fn = "tsrGetAlgoByName";
  return guarded(fn, [&] {
    if (tsrStatus_t s = check_op(fn, op)) return s;
    if (tsrStatus_t s = check_not_null(fn, "name", name)) return s;
    if (tsrStatus_t s = check_not_null(fn, "algo", algo)) return s;
    registry& reg = registry::instance();
    auto lock = reg.read_lock();
    for (int64_t id : reg.kernels_for(op))
      if (reg.kernels()[id].full_name == name) {
        *algo = id;
        return TSR_STATUS_SUCCESS;
      }
    return fail(TSR_STATUS_BAD_PARAM_OUT_OF_RANGE,
                std::string(fn) + ": name '" + name + "' is no loaded kernel of " +
                    tsrGetOperationName(op) + " (names are backend/kernel, e.g. onednn/conv_fwd)");
  });
}

}  // extern "C"
