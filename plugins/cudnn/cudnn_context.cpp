#include "cudnn_context.hpp"

#include "cuda_device_scope.hpp"
#include "cudnn_errors.hpp"
#include "cudnn_symbols.hpp"

#include <cstring>

namespace tessera::cudnn_plugin {
namespace {

// Enough for every problem of a real network several times over; past it the cache starts over
// rather than growing without bound (a long-running process with ever-new shapes).
constexpr size_t max_cached_problems = 1024;

cudnnHandle_t create_handle(int32_t device_ordinal) {
  device_scope on_device(device_ordinal);
  cudnnHandle_t handle = nullptr;
  check_cudnn(cudnn().cudnnCreate(&handle), ("cudnnCreate on CUDA device " + std::to_string(device_ordinal)).c_str());
  return handle;
}

// cuDNN 9 opens its sub-libraries on first use; one that is missing or mismatched would make
// every call of its family fail. Say so once, with cuDNN's words, when the first handle exists.
void report_sub_libraries_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::pair<const char*, decltype(cudnn().cudnnOpsVersionCheck)> checks[] = {
        {"ops (pooling, activation, softmax, LRN, batch norm, tensor ops)", cudnn().cudnnOpsVersionCheck},
        {"cnn (convolutions)", cudnn().cudnnCnnVersionCheck},
        {"adv (RNN)", cudnn().cudnnAdvVersionCheck}};
    for (const auto& [family, check] : checks) {
      const cudnnStatus_t status = check();
      if (status != CUDNN_STATUS_SUCCESS)
        warn_once(std::string("sublibrary ") + family,
                  std::string("cuDNN sub-library for ") + family + " is unusable: " + cudnn_status_text(status));
    }
  });
}

}  // namespace

std::unique_ptr<cudnn_context> cudnn_context::create(int32_t device_ordinal) {
  cudnnHandle_t handle = create_handle(device_ordinal);
  report_sub_libraries_once();
  return std::unique_ptr<cudnn_context>(new cudnn_context(device_ordinal, handle));
}

cudnn_context::~cudnn_context() {
  try {
    cache_.clear();  // descriptors first: they may belong to the handle's library state
    device_scope on_device(device_ordinal_);
    (void)cudnn().cudnnDestroy(handle_);
  } catch (...) {
  }
}

void cudnn_context::set_stream(void* stream) {
  device_scope on_device(device_ordinal_);
  check_cudnn(cudnn().cudnnSetStream(handle_, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
}

std::shared_ptr<const prepared_problem> cudnn_context::prepared(
    const void* kernel, const void* problem, size_t problem_size,
    const std::function<std::unique_ptr<prepared_problem>(cudnnHandle_t)>& build) {
  std::string key = problem_key(kernel, problem, problem_size);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto found = cache_.find(key);
    if (found != cache_.end()) return found->second;
  }
  // Built outside the lock: building calls cuDNN, and a racing builder only wastes its copy.
  std::shared_ptr<const prepared_problem> made = build(handle_);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= max_cached_problems) cache_.clear();
  return cache_.emplace(std::move(key), std::move(made)).first->second;
}

cudnn_context& context_from(void* context) {
  if (context == nullptr) throw plugin_error(TSRP_STATUS_BAD_PARAM, "cudnn context is null");
  return *static_cast<cudnn_context*>(context);
}

std::string problem_key(const void* kernel, const void* problem, size_t problem_size) {
  std::string key(sizeof(kernel) + problem_size, '\0');
  std::memcpy(&key[0], &kernel, sizeof(kernel));
  std::memcpy(&key[sizeof(kernel)], problem, problem_size);
  return key;
}

void with_query_handle(const std::function<void(cudnnHandle_t)>& use) {
  static std::mutex mutex;
  static cudnnHandle_t handle = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (handle == nullptr && failure.empty()) {
    try {
      handle = create_handle(0);
      report_sub_libraries_once();
    } catch (const plugin_error& e) {
      failure = e.what();
    }
  }
  if (handle == nullptr) throw plugin_error(TSRP_STATUS_DEVICE_ERROR, failure);
  device_scope on_device(0);
  use(handle);
}

}  // namespace tessera::cudnn_plugin
