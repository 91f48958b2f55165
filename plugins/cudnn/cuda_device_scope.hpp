// Which CUDA devices exist, and making one of them current around cuDNN calls.
//
// cuDNN works on the calling thread's current CUDA context. Tessera's memory for a CUDA handle
// comes from the cuda plugin, which uses each device's primary context (the CUDA runtime's). This
// plugin makes that same primary context current through the driver API, for the duration of a
// call, and restores what the thread had before: no CUDA runtime is linked, and a thread that
// calls Tessera for device 1 while its own current device is 0 is served correctly.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace tessera::cudnn_plugin {

// Devices the driver reports (0 without a driver or a GPU); `why_none` says why when 0.
int cuda_device_count(std::string* why_none = nullptr);

// Throws plugin_error (BAD_PARAM) for an ordinal out of range and DEVICE_ERROR when there is no
// device at all; the message starts with "no CUDA device present" in that case, as the cuda
// plugin's does.
void require_cuda_device(int32_t ordinal);

class device_scope {
 public:
  // Makes the primary context of `ordinal` current (retained once per process, never released);
  // throws plugin_error when the device cannot be used.
  explicit device_scope(int32_t ordinal);
  ~device_scope();
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  bool pushed_ = false;  // false when the context was current already: nothing to restore
};

}  // namespace tessera::cudnn_plugin
