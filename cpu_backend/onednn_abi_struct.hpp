// Reading the host's versioned ABI structs.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace tessera::onednn {

// The ABI rule for extensible structs: read only the prefix both sides know (the host's
// struct_size vs our sizeof) and treat fields the host did not write as zero, i.e. "behave as
// before the field existed". Returns false for a null pointer or a struct too short to hold even
// its struct_size.
template <class T>
bool read_struct(const void* from, T& to) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memset(&to, 0, sizeof(T));
  if (from == nullptr) return false;
  size_t their_size;
  std::memcpy(&their_size, from, sizeof their_size);
  if (their_size < sizeof(size_t)) return false;
  std::memcpy(&to, from, their_size < sizeof(T) ? their_size : sizeof(T));
  return true;
}

}  // namespace tessera::onednn
