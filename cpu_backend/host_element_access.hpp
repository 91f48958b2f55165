// Plain host reads and writes of single tensor elements by element offset, in every storage type
// the plugin takes. For the few loops the plugin runs itself instead of a oneDNN primitive (the
// reduction's indices, max pooling over inputs that hold NaN), where exactness matters more than
// speed: reads are exact, writes round once to nearest, ties to even, and keep NaN a NaN.
#pragma once

#include <tessera/plugin_abi.h>

#include <cstdint>

namespace tessera::onednn {

// The element at `offset` elements from `base`, widened exactly to double. f32, f16, bf16, s8,
// s32; NaN for a type this file does not know.
double load_element(const void* base, int32_t data_type, int64_t offset) noexcept;

// Writes `value` at `offset` elements from `base`, rounded once to the storage type (f32, f16,
// bf16). Other types are left untouched: callers only store floating results.
void store_element(void* base, int32_t data_type, int64_t offset, float value) noexcept;

// True when the element at `offset` is a NaN; reads the bits only (no conversion).
bool element_is_nan(const void* base, int32_t data_type, int64_t offset) noexcept;

}  // namespace tessera::onednn
