#include "selection_cache.hpp"

#include "problem_key.hpp"

#include <cstring>

namespace tessera::api {
namespace {

// The problem's bytes hashed word by word, seeded with the other key parts.
uint64_t hash_key(int op, int64_t algo, size_t ws, const unsigned char* bytes, size_t n) {
  const uint64_t parts[3] = {static_cast<uint64_t>(op), static_cast<uint64_t>(algo), static_cast<uint64_t>(ws)};
  return hash_bytes(bytes, n, hash_bytes(parts, sizeof(parts)));
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
