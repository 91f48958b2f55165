// Per-handle memo of the selection policy's answers: a repeated call on the same problem skips
// every kernel's can_implement and workspace query, which is most of a warm call's host cost.
// The key is the operation, the explicit algorithm (or auto), the workspace available and the
// problem struct's bytes, compared in full (a hash collision is only a miss). A handle is used
// by one thread at a time, so there is no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::api {

class selection_cache {
 public:
  struct choice {
    int64_t kernel_id = -1;
    size_t workspace = 0;
  };

  // `problem` starts with its size_t struct_size, as every ABI struct does.
  const choice* find(int op, int64_t algo, size_t workspace_available, const void* problem,
                     size_t plugin_generation);
  void insert(int op, int64_t algo, size_t workspace_available, const void* problem,
              const choice& c);
  void clear() { entries_.clear(); }

 private:
  struct stored {
    int op;
    int64_t algo;
    size_t workspace_available;
    std::string bytes;
    choice value;
  };
  static constexpr size_t k_capacity = 4096;  // distinct problems per handle before a reset
  size_t generation_ = 0;  // registry plugin count the entries were made with
  size_t count_ = 0;
  std::unordered_map<uint64_t, std::vector<stored>> entries_;
};

}  // namespace tessera::api
