// A problem's identity across calls and processes: the bytes of its ABI struct. Problems are
// built zero-initialised by the API (padding included) and hold no pointers, so equal problems
// have equal bytes on every machine that runs the same Tessera.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessera::api {

// A 64-bit hash of `n` bytes, eight at a time: it sits on every call's warm path (the
// per-handle selection memo), where a byte-wise FNV-1a over a ~600-byte problem cost ~0.6 us of
// dependent multiplies. Little-endian word order: keys are stable across x86-64 and AArch64 hosts.
inline uint64_t hash_bytes(const void* data, size_t n, uint64_t seed = 0x243F6A8885A308D3ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  if (i < n) {
    uint64_t w = 0;
    __builtin_memcpy(&w, bytes + i, n - i);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

// The hash of a problem struct (its first member is its size).
inline uint64_t problem_hash(const void* problem) {
  size_t size = 0;
  __builtin_memcpy(&size, problem, sizeof(size));
  return hash_bytes(problem, size);
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
