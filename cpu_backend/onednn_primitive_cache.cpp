#include "onednn_primitive_cache.hpp"

#include <cstring>

namespace tessera::onednn {

cache_key& cache_key::add(int64_t value) {
  bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  return *this;
}

cache_key& cache_key::add(double value) {
  // Bit pattern, not value: -0.0 and 0.0 may build different attributes, and NaN must equal
  // itself for the lookup to hit.
  int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return add(bits);
}

cache_key& cache_key::add(const tsrpTensor& t) {
  add(static_cast<int64_t>(t.data_type)).add(static_cast<int64_t>(t.ndims));
  for (int i = 0; i < t.ndims && i < TSRP_MAX_DIMS; ++i) add(t.dims[i]).add(t.strides[i]);
  return *this;
}

std::shared_ptr<const cached_entry> primitive_cache::find(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void primitive_cache::insert(const std::string& key, std::shared_ptr<const cached_entry> entry) {
  if (capacity_ == 0) return;
  auto it = index_.find(key);
  if (it != index_.end()) {
    it->second->second = std::move(entry);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, std::move(entry));
  index_.emplace(key, lru_.begin());
  while (index_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

}  // namespace tessera::onednn
