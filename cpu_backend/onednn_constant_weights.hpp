// Filters kept in oneDNN's preferred layout between calls, under the caller's constant-weights
// promise (tsrSetConstantWeights; tsrpConvolutionProblem.weights_generation). Without it the
// forward convolution reorders the user's filter into the workspace on every call, because the
// C API cannot know that the filter did not change; a direct oneDNN user with constant weights
// reorders them once (docs/BENCHMARK_NOTES.md measured what that costs: +43 % at minibatch 1).
//
// One cache per context (per handle, used by one thread at a time), keyed by the filter pointer,
// the promise and the plan (which fixes the layout). A new promise drops the copies of the old
// one; past k_limit bytes everything is dropped and rebuilt on demand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>

namespace tessera::onednn {

class constant_weights_cache {
 public:
  static constexpr size_t k_limit = size_t(1) << 30;

  // The kept copy for this filter, plan and promise; `fill` writes a new copy's `bytes` on first
  // use (or after the promise changed).
  void* find_or_make(const void* user_weights, uint32_t generation, const void* plan, size_t bytes,
                     const std::function<void(void*)>& fill);
  size_t bytes_kept() const noexcept { return total_; }

 private:
  struct free_aligned {
    void operator()(void* p) const noexcept;
  };
  using key = std::tuple<const void*, const void*, size_t>;  // filter pointer, plan, bytes
  std::map<key, std::unique_ptr<void, free_aligned>> copies_;
  uint32_t generation_ = 0;
  size_t total_ = 0;
};

}  // namespace tessera::onednn
