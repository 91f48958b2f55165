// Caches of built oneDNN plans, so repeated calls with the same problem neither re-create
// primitive descriptors nor re-JIT primitives.
#pragma once

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera::onednn {

// Builds a cache key from everything that changes what oneDNN builds: the kernel, every tensor's
// dims/strides/dtype, the operation's parameters and the alpha/beta-dependent attributes. Raw
// bytes, so two problems share a key only if they are identical.
class cache_key {
 public:
  explicit cache_key(const char* kernel_name) : bytes_(kernel_name) { bytes_.push_back('\0'); }
  cache_key& add(int64_t value);
  cache_key& add(double value);
  cache_key& add(const tsrpTensor& t);
  const std::string& str() const noexcept { return bytes_; }

 private:
  std::string bytes_;
};

// Whatever a kernel stores: a plan with its primitive descriptors and primitives.
struct cached_entry {
  virtual ~cached_entry() = default;
};

// LRU of at most `capacity` entries. Not thread-safe on purpose: it lives in a context, and a
// context belongs to one handle, which Tessera (like cuDNN) uses from one thread at a time.
class primitive_cache {
 public:
  static constexpr size_t default_capacity = 1024;

  explicit primitive_cache(size_t capacity = default_capacity) : capacity_(capacity) {}

  // The entry for `key` (marked most recently used), or null.
  std::shared_ptr<const cached_entry> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const cached_entry> entry);
  size_t size() const noexcept { return index_.size(); }

  // find(), or build with `make()` (which may throw: then nothing is cached) and insert.
  template <class T, class Make>
  std::shared_ptr<const T> get_or_create(const std::string& key, Make&& make) {
    if (auto hit = find(key)) return std::static_pointer_cast<const T>(hit);
    std::shared_ptr<const T> made = make();
    insert(key, made);
    return made;
  }

 private:
  using entry_list = std::list<std::pair<std::string, std::shared_ptr<const cached_entry>>>;
  size_t capacity_;
  entry_list lru_;  // most recently used first
  std::unordered_map<std::string, entry_list::iterator> index_;
};

// The same LRU behind a mutex, for answers that are not tied to a context: can_implement and
// workspace_size get no context, and hosts may call them from any thread.
class shared_cache {
 public:
  explicit shared_cache(size_t capacity = primitive_cache::default_capacity) : cache_(capacity) {}

  template <class T, class Make>
  std::shared_ptr<const T> get_or_create(const std::string& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto hit = cache_.find(key)) return std::static_pointer_cast<const T>(hit);
    }
    // Built outside the lock: building is slow, and two threads building the same answer at
    // once is harmless (the second insert replaces the first with an equal value).
    std::shared_ptr<const T> made = make();
    std::lock_guard<std::mutex> lock(mutex_);
    cache_.insert(key, made);
    return made;
  }

 private:
  std::mutex mutex_;
  primitive_cache cache_;
};

}  // namespace tessera::onednn
