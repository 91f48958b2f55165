// Host-side carving of a normalization kernel's workspace into float arrays. Each array starts on
// a 256-byte boundary, so the layout depends only on the sizes asked for, and a kernel's
// workspace() and run() compute the same offsets from the same problem.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::cuda {

inline int64_t norm_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class norm_workspace_layout {
 public:
  // Offset of a new array of `count` floats.
  size_t reserve_floats(int64_t count) {
    const size_t at = bytes_;
    bytes_ = (bytes_ + static_cast<size_t>(count) * sizeof(float) + 255) / 256 * 256;
    return at;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

inline float* norm_workspace_floats(void* workspace, size_t offset) {
  return reinterpret_cast<float*>(static_cast<char*>(workspace) + offset);
}

}  // namespace tessera::cuda
