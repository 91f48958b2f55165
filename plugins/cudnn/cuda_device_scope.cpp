#include "cuda_device_scope.hpp"

#include "cudnn_errors.hpp"
#include "cudnn_symbols.hpp"

#include <mutex>
#include <vector>

namespace tessera::cudnn_plugin {
namespace {

std::string driver_text(CUresult result) {
  const char* name = nullptr;
  if (driver().cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = "CUresult";
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

// Primary contexts by ordinal, retained on first use. The runtime (and so the cuda plugin) shares
// them; releasing is left to process exit, as the runtime does.
CUcontext primary_context(int32_t ordinal) {
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  if (contexts.empty()) contexts.resize(static_cast<size_t>(cuda_device_count()), nullptr);
  CUcontext& slot = contexts.at(static_cast<size_t>(ordinal));
  if (slot == nullptr) {
    CUdevice device = 0;
    CUresult result = driver().cuDeviceGet(&device, ordinal);
    if (result == CUDA_SUCCESS) result = driver().cuDevicePrimaryCtxRetain(&slot, device);
    if (result != CUDA_SUCCESS) {
      slot = nullptr;
      throw plugin_error(TSRP_STATUS_DEVICE_ERROR, "CUDA device " + std::to_string(ordinal) +
                                                       ": retaining its primary context failed: " +
                                                       driver_text(result));
    }
  }
  return slot;
}

}  // namespace

int cuda_device_count(std::string* why_none) {
  const cuda_driver& d = cuda_driver_instance();
  if (d.device_count == 0 && why_none != nullptr) *why_none = d.why_no_device;
  return d.device_count;
}

void require_cuda_device(int32_t ordinal) {
  std::string why_none;
  const int count = cuda_device_count(&why_none);
  if (count == 0) throw plugin_error(TSRP_STATUS_DEVICE_ERROR, "no CUDA device present (" + why_none + ")");
  if (ordinal < 0 || ordinal >= count)
    throw plugin_error(TSRP_STATUS_BAD_PARAM, "CUDA device ordinal " + std::to_string(ordinal) +
                                                  " out of range: " + std::to_string(count) +
                                                  " devices present");
}

device_scope::device_scope(int32_t ordinal) {
  require_cuda_device(ordinal);
  CUcontext wanted = primary_context(ordinal);
  CUcontext current = nullptr;
  if (driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == wanted) return;
  const CUresult result = driver().cuCtxPushCurrent(wanted);
  if (result != CUDA_SUCCESS)
    throw plugin_error(TSRP_STATUS_DEVICE_ERROR, "CUDA device " + std::to_string(ordinal) +
                                                     ": making its context current failed: " +
                                                     driver_text(result));
  pushed_ = true;
}

device_scope::~device_scope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  (void)driver().cuCtxPopCurrent(&popped);
}

}  // namespace tessera::cudnn_plugin
