// How much memory the host has, for every device interface of host memory: the registry's
// built-in host device and the oneDNN plugin's CPU device answer memory_info (plugin ABI 4) and
// bound their allocations the same way, from here (a plugin may link tessera_common; it never
// links the registry).
#ifndef TESSERA_COMMON_HOST_MEMORY_HPP
#define TESSERA_COMMON_HOST_MEMORY_HPP

#include <tessera/plugin_abi.h>

#include <cstddef>

namespace tessera::common {

// Physical memory in bytes: no allocation the host serves can be larger. 0 when the system does
// not say.
size_t host_physical_memory_bytes() noexcept;

// What an allocation can get now without swapping, an estimate (others allocate too): Linux's
// MemAvailable, else the free pages. At most host_physical_memory_bytes(); 0 when unknown.
size_t host_available_memory_bytes() noexcept;

// True when `bytes` exceeds physical memory: a request no allocator call can serve, to refuse
// without making it. False when the physical size is unknown.
bool exceeds_host_memory(size_t bytes) noexcept;

// tsrpDeviceInterface::memory_info of host memory (the context is unused): total = physical
// memory, free = available memory. NOT_SUPPORTED when the system does not say (the host then
// skips its checks); BAD_PARAM for a NULL output.
tsrpStatus_t host_memory_info(void* context, size_t* free_bytes, size_t* total_bytes) noexcept;

}  // namespace tessera::common

#endif  // TESSERA_COMMON_HOST_MEMORY_HPP
