// Makes a device current for one plugin call and gives the caller its own current device back
// afterwards: an application driving several GPUs from one thread must not see its current
// device change because it called into Tessera.
#pragma once

#include "cuda_errors.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace tessera::cuda {

class current_device_guard {
 public:
  explicit current_device_guard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      cudaError_t error = cudaSetDevice(device);
      if (error != cudaSuccess) throw_cuda_error(error, "cudaSetDevice(" + std::to_string(device) + ")");
      switched_ = true;
    }
  }
  ~current_device_guard() {
    // A destructor cannot report; restoring the caller's device is best effort, and the error
    // is consumed so it does not surface in a later, unrelated check.
    if (switched_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
  }
  current_device_guard(const current_device_guard&) = delete;
  current_device_guard& operator=(const current_device_guard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace tessera::cuda
