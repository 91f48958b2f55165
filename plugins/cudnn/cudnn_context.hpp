// Per-handle state: the CUDA device, a cuDNN handle on it bound to the handle's stream, and the
// cuDNN descriptors each problem needs, built on first use and kept (a warm call then only sets
// pointers and calls cuDNN). Also the process-wide handle that can_implement uses, since a
// kernel's can_implement has no context but cuDNN answers "can you?" only through a handle.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera::cudnn_plugin {

// What a kernel builds once per problem: descriptors, the workspace it needs, anything derived.
struct prepared_problem {
  virtual ~prepared_problem() = default;
  size_t workspace_bytes = 0;
};

class cudnn_context {
 public:
  // Creates the cuDNN handle on the device (cudnnCreate, with the device's context current).
  // Throws plugin_error: DEVICE_ERROR "no CUDA device present (...)" without a device.
  static std::unique_ptr<cudnn_context> create(int32_t device_ordinal);
  ~cudnn_context();
  cudnn_context(const cudnn_context&) = delete;
  cudnn_context& operator=(const cudnn_context&) = delete;

  int32_t device_ordinal() const noexcept { return device_ordinal_; }
  cudnnHandle_t handle() const noexcept { return handle_; }

  // cudnnSetStream: every later call of this context is ordered on `stream` (a cudaStream_t).
  void set_stream(void* stream);

  // The prepared problem for (kernel, problem bytes), built by `build` with this context's handle
  // on first use. `build` throws plugin_error when cuDNN refuses the problem.
  std::shared_ptr<const prepared_problem> prepared(
      const void* kernel, const void* problem, size_t problem_size,
      const std::function<std::unique_ptr<prepared_problem>(cudnnHandle_t)>& build);

 private:
  cudnn_context(int32_t device_ordinal, cudnnHandle_t handle) : device_ordinal_(device_ordinal), handle_(handle) {}

  int32_t device_ordinal_;
  cudnnHandle_t handle_;
  std::mutex cache_mutex_;
  std::unordered_map<std::string, std::shared_ptr<const prepared_problem>> cache_;
};

// The context pointer the host passes back; throws BAD_PARAM for null.
cudnn_context& context_from(void* context);

// The key of a (kernel, problem) pair: the kernel's address followed by the problem's bytes.
std::string problem_key(const void* kernel, const void* problem, size_t problem_size);

// Runs `use` with the process-wide query handle (device 0's, created on first use) under its
// lock and with device 0 current. Throws plugin_error when no handle can be made; the reason is
// kept, so every later query fails fast with the same words.
void with_query_handle(const std::function<void(cudnnHandle_t)>& use);

}  // namespace tessera::cudnn_plugin
