#include "onednn_constant_weights.hpp"

#include "onednn_errors.hpp"

#include <cstdlib>
#include <string>

namespace tessera::onednn {

void constant_weights_cache::free_aligned::operator()(void* p) const noexcept { std::free(p); }

void* constant_weights_cache::find_or_make(const void* user_weights, uint32_t generation, const void* plan,
                                           size_t bytes, const std::function<void(void*)>& fill) {
  if (generation != generation_ || total_ + bytes > k_limit) {
    copies_.clear();
    total_ = 0;
    generation_ = generation;
  }
  const key k{user_weights, plan, bytes};
  auto it = copies_.find(k);
  if (it != copies_.end()) return it->second.get();
  void* memory = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (memory == nullptr)
    throw plugin_error(TSRP_STATUS_OUT_OF_MEMORY,
                       "conv_fwd: keeping a " + std::to_string(bytes) + "-byte constant filter failed");
  std::unique_ptr<void, free_aligned> owned(memory);
  fill(memory);
  total_ += bytes;
  return copies_.emplace(k, std::move(owned)).first->second.get();
}

}  // namespace tessera::onednn
