#include "selection_cache.hpp"

#include <cstring>

namespace tessera::api {
namespace {

// FNV-1a over the problem bytes and the other key parts: cheap, and good enough for a map key.
uint64_t hash_key(int op, int64_t algo, size_t ws, const unsigned char* bytes, size_t n) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t len) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < len; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  mix(&op, sizeof(op));
  mix(&algo, sizeof(algo));
  mix(&ws, sizeof(ws));
  mix(bytes, n);
  return h;
}

size_t problem_size(const void* problem) { return *static_cast<const size_t*>(problem); }

}  // namespace

const selection_cache::choice* selection_cache::find(int op, int64_t algo, size_t ws,
                                                     const void* problem, size_t generation) {
  if (generation != generation_) {
    // A plugin was loaded since: its kernels may be preferred now.
    entries_.clear();
    count_ = 0;
    generation_ = generation;
    return nullptr;
  }
  const auto* bytes = static_cast<const unsigned char*>(problem);
  size_t n = problem_size(problem);
  auto it = entries_.find(hash_key(op, algo, ws, bytes, n));
  if (it == entries_.end()) return nullptr;
  for (const stored& s : it->second)
    if (s.op == op && s.algo == algo && s.workspace_available == ws && s.bytes.size() == n &&
        std::memcmp(s.bytes.data(), bytes, n) == 0)
      return &s.value;
  return nullptr;
}

void selection_cache::insert(int op, int64_t algo, size_t ws, const void* problem, const choice& c) {
  if (count_ >= k_capacity) {
    entries_.clear();
    count_ = 0;
  }
  const auto* bytes = static_cast<const unsigned char*>(problem);
  size_t n = problem_size(problem);
  entries_[hash_key(op, algo, ws, bytes, n)].push_back(
      stored{op, algo, ws, std::string(reinterpret_cast<const char*>(bytes), n), c});
  ++count_;
}

}  // namespace tessera::api
