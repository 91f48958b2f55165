#include "onednn_device.hpp"

#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_log.hpp"

#include <tessera_common/host_memory.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>

namespace tessera::onednn {
namespace {

// 64 bytes: one cache line and the widest AVX-512 vector, what oneDNN's kernels like best.
constexpr size_t allocation_alignment = 64;

struct cpu_event {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

// Device-interface functions have no message buffer: failures are logged, then a status returned.
template <class Body>
tsrpStatus_t device_guard(const char* what, Body&& body) noexcept {
  char message[512] = "";
  tsrpStatus_t status = guard(what, message, sizeof message, body);
  if (status == TSRP_STATUS_SUCCESS) return status;
  // Bodies return BAD_PARAM without a message for plain argument errors.
  log_message(TSRP_LOG_ERROR, message[0] != '\0' ? std::string(message)
                                                  : std::string(what) + ": invalid argument");
  return status;
}

// Kernels run synchronously on the CPU stream, but waiting keeps the contract ("ordered on the
// context's stream") true should the stream ever become asynchronous.
void wait_for_stream(void* handle) {
  if (handle != nullptr) as_context(handle).stream().wait();
}

tsrpStatus_t device_count(int32_t* count) {
  if (count == nullptr) return TSRP_STATUS_BAD_PARAM;
  *count = 1;
  return TSRP_STATUS_SUCCESS;
}

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    if (begin == std::string::npos) break;
    return line.substr(begin);
  }
  return "cpu";
}

tsrpStatus_t device_name(int32_t device_ordinal, char* name, size_t name_size) {
  return device_guard("device_name", [&] {
    if (device_ordinal != 0 || name == nullptr || name_size == 0) return TSRP_STATUS_BAD_PARAM;
    static const std::string model = cpu_model_name();
    write_message(name, name_size, model);
    return TSRP_STATUS_SUCCESS;
  });
}

// A zero-byte request still returns a valid, unique pointer (a 64-byte block), so callers never
// have to special-case null; deallocate frees it like any other.
tsrpStatus_t allocate(void* /*context*/, size_t bytes, void** pointer) {
  if (pointer == nullptr) return TSRP_STATUS_BAD_PARAM;
  *pointer = nullptr;
  if (bytes > SIZE_MAX - allocation_alignment) return TSRP_STATUS_OUT_OF_MEMORY;
  // More than the machine's physical memory can never be served: refused without asking
  // aligned_alloc (an ASan build reports such a request as an error of its own).
  if (common::exceeds_host_memory(bytes)) return TSRP_STATUS_OUT_OF_MEMORY;
  // aligned_alloc requires a size that is a multiple of the alignment.
  const size_t rounded =
      bytes == 0 ? allocation_alignment
                 : (bytes + allocation_alignment - 1) / allocation_alignment * allocation_alignment;
  void* p = std::aligned_alloc(allocation_alignment, rounded);
  if (p == nullptr) return TSRP_STATUS_OUT_OF_MEMORY;
  *pointer = p;
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t deallocate(void* /*context*/, void* pointer) {
  std::free(pointer);
  return TSRP_STATUS_SUCCESS;
}

tsrpStatus_t copy(void* handle, void* dst, const void* src, size_t bytes) {
  return device_guard("copy", [&] {
    if (bytes == 0) return TSRP_STATUS_SUCCESS;
    if (dst == nullptr || src == nullptr) return TSRP_STATUS_BAD_PARAM;
    wait_for_stream(handle);
    std::memcpy(dst, src, bytes);
    return TSRP_STATUS_SUCCESS;
  });
}

tsrpStatus_t synchronize(void* handle) {
  return device_guard("synchronize", [&] {
    wait_for_stream(handle);
    return TSRP_STATUS_SUCCESS;
  });
}

tsrpStatus_t event_create(void* /*context*/, void** event) {
  if (event == nullptr) return TSRP_STATUS_BAD_PARAM;
  *event = new (std::nothrow) cpu_event();
  return *event == nullptr ? TSRP_STATUS_OUT_OF_MEMORY : TSRP_STATUS_SUCCESS;
}

tsrpStatus_t event_record(void* handle, void* event) {
  return device_guard("event_record", [&] {
    if (event == nullptr) return TSRP_STATUS_BAD_PARAM;
    wait_for_stream(handle);
    auto* e = static_cast<cpu_event*>(event);
    e->time = std::chrono::steady_clock::now();
    e->recorded = true;
    return TSRP_STATUS_SUCCESS;
  });
}

tsrpStatus_t event_elapsed_ms(void* /*context*/, void* start, void* end, float* milliseconds) {
  if (start == nullptr || end == nullptr || milliseconds == nullptr) return TSRP_STATUS_BAD_PARAM;
  const auto* s = static_cast<const cpu_event*>(start);
  const auto* e = static_cast<const cpu_event*>(end);
  if (!s->recorded || !e->recorded) return TSRP_STATUS_BAD_PARAM;
  *milliseconds = std::chrono::duration<float, std::milli>(e->time - s->time).count();
  return TSRP_STATUS_SUCCESS;
}

void event_destroy(void* /*context*/, void* event) { delete static_cast<cpu_event*>(event); }

// The CPU's model, logical core count and the ISA oneDNN dispatches to: a tuning result measured
// on one of these does not carry over to a machine that differs in any of them.
tsrpStatus_t fingerprint(int32_t, char* text, size_t size) {
  std::string model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  for (char& c : model)
    if (c == ';' || c == '=' || static_cast<unsigned char>(c) < 0x20) c = '_';
  const std::string isa = std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
  std::snprintf(text, size, "cpu:%s;cores=%u;isa=%s", model.c_str(), std::thread::hardware_concurrency(), isa.c_str());
  return TSRP_STATUS_SUCCESS;
}

const tsrpDeviceInterface g_device_interface = {
    sizeof(tsrpDeviceInterface), device_count, device_name, allocate, deallocate,
    copy,                        copy,         synchronize, event_create, event_record,
    event_elapsed_ms,            event_destroy, fingerprint,
    nullptr /* pointer_device: host memory is every CPU handle's */,
    common::host_memory_info /* physical and available memory, as the registry's host device says */};

}  // namespace

const tsrpDeviceInterface& device_interface() noexcept { return g_device_interface; }

}  // namespace tessera::onednn
