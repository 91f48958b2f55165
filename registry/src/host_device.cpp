#include "host_device.hpp"

#include "tuning_db.hpp"

#include <tessera_common/host_memory.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tessera::registry {
namespace {

tsrpStatus_t host_count(int32_t* count) {
  *count = 1;
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_name(int32_t, char* name, size_t size) {
  std::snprintf(name, size, "%s", "host CPU");
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_allocate(void*, size_t bytes, void** pointer) {
  if (bytes == 0) {
    *pointer = nullptr;
    return TSRP_STATUS_SUCCESS;
  }
  // More than the machine's physical memory can never be served: refused without asking
  // aligned_alloc (which an ASan build reports as an error of its own). The second test keeps the
  // rounding below from wrapping where the physical size is unknown.
  if (common::exceeds_host_memory(bytes) || bytes > SIZE_MAX - 63) return TSRP_STATUS_OUT_OF_MEMORY;
  // 64-byte alignment: what vectorized CPU kernels (and oneDNN) prefer.
  size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) return TSRP_STATUS_OUT_OF_MEMORY;
  *pointer = p;
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_deallocate(void*, void* pointer) {
  std::free(pointer);
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_copy(void*, void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_sync(void*) { return TSRP_STATUS_SUCCESS; }

using clock = std::chrono::steady_clock;

tsrpStatus_t host_event_create(void*, void** event) {
  *event = new (std::nothrow) clock::time_point();
  return *event ? TSRP_STATUS_SUCCESS : TSRP_STATUS_OUT_OF_MEMORY;
}

tsrpStatus_t host_event_record(void*, void* event) {
  *static_cast<clock::time_point*>(event) = clock::now();
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t host_event_elapsed(void*, void* start, void* end, float* ms) {
  auto d = *static_cast<clock::time_point*>(end) - *static_cast<clock::time_point*>(start);
  *ms = std::chrono::duration<float, std::milli>(d).count();
  return TSRP_STATUS_SUCCESS;
}

void host_event_destroy(void*, void* event) { delete static_cast<clock::time_point*>(event); }

// The CPU's model and core count: what makes one machine's tuning differ from another's.
tsrpStatus_t host_fingerprint(int32_t, char* text, size_t size) {
  std::snprintf(text, size, "%s", cpu_device_fingerprint().c_str());
  return TSRP_STATUS_SUCCESS;
}

const tsrpDeviceInterface k_host = {
    sizeof(tsrpDeviceInterface), host_count,       host_name,       host_allocate,
    host_deallocate,             host_copy,        host_copy,       host_sync,
    host_event_create,           host_event_record, host_event_elapsed, host_event_destroy,
    host_fingerprint,            nullptr /* pointer_device: host memory is every CPU handle's */,
    common::host_memory_info /* physical and available memory, as the oneDNN plugin says */};

}  // namespace

const tsrpDeviceInterface& host_device_interface() { return k_host; }

}  // namespace tessera::registry
