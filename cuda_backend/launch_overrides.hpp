// Launch-geometry overrides for measurement: TESSERA_CUDA_<NAME>=<integer> replaces one kernel
// family's built-in choice, so that a single device call can time the alternatives side by side
// and test each (tools/gpu/device_run.sh `variants`). The built-in values are what those
// measurements chose (docs/CUDA_BACKEND_NOTES.md). Values outside [low, high] or unparsable ones
// are ignored; callers read them once per process (a function-local static).
#pragma once

#include <cstdlib>

namespace tessera::cuda {

inline int launch_override(const char* variable, int fallback, int low, int high) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < low || value > high) return fallback;
  return static_cast<int>(value);
}

}  // namespace tessera::cuda
