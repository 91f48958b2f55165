#include "tessera_common/host_memory.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

namespace tessera::common {
namespace {

constexpr uint64_t k_size_max = std::numeric_limits<size_t>::max();

// count * unit, saturated: on a 32-bit size_t a large machine must not wrap to a small answer.
size_t saturated_bytes(uint64_t count, uint64_t unit) noexcept {
  if (unit != 0 && count > k_size_max / unit) return static_cast<size_t>(k_size_max);
  return static_cast<size_t>(count * unit);
}

size_t pages_to_bytes(long pages) noexcept {
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return saturated_bytes(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size));
}

// MemAvailable of /proc/meminfo in bytes; 0 when absent (not Linux, or a kernel before 3.14).
// noexcept: it answers a plugin's device entry, which no exception may leave.
size_t meminfo_available_bytes() noexcept {
  try {
    constexpr char key[] = "MemAvailable:";
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);) {
      if (line.rfind(key, 0) != 0) continue;
      return saturated_bytes(std::strtoull(line.c_str() + sizeof(key) - 1, nullptr, 10), 1024);  // in KiB
    }
  } catch (...) {
    // No memory for a line of text: the free pages answer instead.
  }
  return 0;
}

}  // namespace

size_t host_physical_memory_bytes() noexcept { return pages_to_bytes(sysconf(_SC_PHYS_PAGES)); }

size_t host_available_memory_bytes() noexcept {
  // MemAvailable is the kernel's own estimate of what can be allocated without swapping. The free
  // pages (_SC_AVPHYS_PAGES, MemFree) leave out the page cache the kernel drops on demand, so on a
  // machine that has read a few large files they say "1 GB free" where 100 GB can be allocated;
  // they remain the answer only where MemAvailable is missing.
  size_t available = meminfo_available_bytes();
  if (available == 0) available = pages_to_bytes(sysconf(_SC_AVPHYS_PAGES));
  const size_t total = host_physical_memory_bytes();
  return available < total ? available : total;
}

bool exceeds_host_memory(size_t bytes) noexcept {
  // Physical memory does not change while the process runs, and allocators ask often.
  static const size_t physical = host_physical_memory_bytes();
  return physical != 0 && bytes > physical;
}

tsrpStatus_t host_memory_info(void*, size_t* free_bytes, size_t* total_bytes) noexcept {
  if (free_bytes == nullptr || total_bytes == nullptr) return TSRP_STATUS_BAD_PARAM;
  const size_t total = host_physical_memory_bytes();
  if (total == 0) return TSRP_STATUS_NOT_SUPPORTED;
  *total_bytes = total;
  *free_bytes = host_available_memory_bytes();
  return TSRP_STATUS_SUCCESS;
}

}  // namespace tessera::common
