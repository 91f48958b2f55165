// A problem's identity across calls and processes: the bytes of its ABI struct. Problems are
// built zero-initialised by the API (padding included) and hold no pointers, so equal problems
// have equal bytes on every machine that runs the same Tessera.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessera::api {

// FNV-1a over the struct (its first member is its size).
inline uint64_t problem_hash(const void* problem) {
  size_t size = 0;
  __builtin_memcpy(&size, problem, sizeof(size));
  const auto* bytes = static_cast<const unsigned char*>(problem);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

// The tuning database's problem key: "<operation>:<struct size>:<hash>".
inline std::string problem_key(const char* operation_name, const void* problem) {
  size_t size = 0;
  __builtin_memcpy(&size, problem, sizeof(size));
  char text[64];
  std::snprintf(text, sizeof(text), ":%zu:%016llx", size, static_cast<unsigned long long>(problem_hash(problem)));
  return std::string(operation_name) + text;
}

}  // namespace tessera::api
