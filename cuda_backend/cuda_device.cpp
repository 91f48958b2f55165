#include "cuda_device.hpp"

#include "cuda_context.hpp"
#include "cuda_errors.hpp"
#include "current_device_guard.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

namespace tessera::cuda {

int visible_device_count(std::string* why_none) noexcept {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    // cudaErrorInsufficientDriver (no libcuda) and cudaErrorNoDevice are the usual answers on a
    // machine without a GPU; consume the error so it is not reported by a later check.
    (void)cudaGetLastError();
    if (why_none != nullptr) {
      try {
        *why_none = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(error) + ": " +
                    cudaGetErrorString(error);
      } catch (...) {
      }
    }
    return 0;
  }
  if (count == 0 && why_none != nullptr) {
    try {
      *why_none = "cudaGetDeviceCount found no device";
    } catch (...) {
    }
  }
  return count;
}

namespace {

void require(bool condition, const char* message) {
  if (!condition) throw status_error(TSRP_STATUS_BAD_PARAM, message);
}

tsrpStatus_t device_count(int32_t* count) {
  return call_with_log("device_count", [&] {
    require(count != nullptr, "count is null");
    *count = static_cast<int32_t>(visible_device_count());
  });
}

tsrpStatus_t device_name(int32_t device_ordinal, char* name, size_t name_size) {
  return call_with_log("device_name", [&] {
    require(name != nullptr && name_size > 0, "name buffer is null or empty");
    const int count = visible_device_count();
    if (device_ordinal < 0 || device_ordinal >= count) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "CUDA device ordinal " + std::to_string(device_ordinal) +
                                                    " out of range: " + std::to_string(count) +
                                                    " devices present");
    }
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, device_ordinal), "cudaGetDeviceProperties");
    // properties.name is a fixed array; copy it bounded in case it is not terminated.
    const std::string device(properties.name, strnlen(properties.name, sizeof(properties.name)));
    write_text(name, name_size,
               device + " (sm_" + std::to_string(properties.major) + std::to_string(properties.minor) +
                   ", " + std::to_string(properties.multiProcessorCount) + " SMs)");
  });
}

tsrpStatus_t allocate(void* context, size_t bytes, void** pointer) {
  return call_with_log("allocate", [&] {
    require(pointer != nullptr, "pointer is null");
    *pointer = nullptr;
    cuda_context& ctx = context_from_handle(context);
    if (bytes == 0) return;
    current_device_guard on_device(ctx.device_ordinal());
    void* memory = nullptr;
    const cudaError_t error = cudaMalloc(&memory, bytes);
    if (error != cudaSuccess) {
      throw_cuda_error(error, "cudaMalloc of " + std::to_string(bytes) + " bytes on CUDA device " +
                                  std::to_string(ctx.device_ordinal()));
    }
    *pointer = memory;
  });
}

tsrpStatus_t deallocate(void* context, void* pointer) {
  return call_with_log("deallocate", [&] {
    cuda_context& ctx = context_from_handle(context);
    if (pointer == nullptr) return;
    current_device_guard on_device(ctx.device_ordinal());
    check_cuda(cudaFree(pointer), "cudaFree");
  });
}

void copy_on_stream(const cuda_context& ctx, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                    const char* what) {
  if (bytes == 0) return;
  require(dst != nullptr && src != nullptr, "copy with a null pointer");
  current_device_guard on_device(ctx.device_ordinal());
  // Ordered after the work already queued on the handle's stream, and complete on return as the
  // ABI promises, so the host may reuse or read its buffer immediately.
  check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream()), what);
  check_cuda(cudaStreamSynchronize(ctx.stream()), "cudaStreamSynchronize after a copy");
}

tsrpStatus_t copy_host_to_device(void* context, void* dst, const void* src, size_t bytes) {
  return call_with_log("copy_host_to_device", [&] {
    copy_on_stream(context_from_handle(context), dst, src, bytes, cudaMemcpyHostToDevice,
                   "cudaMemcpyAsync host to device");
  });
}

tsrpStatus_t copy_device_to_host(void* context, void* dst, const void* src, size_t bytes) {
  return call_with_log("copy_device_to_host", [&] {
    copy_on_stream(context_from_handle(context), dst, src, bytes, cudaMemcpyDeviceToHost,
                   "cudaMemcpyAsync device to host");
  });
}

tsrpStatus_t synchronize(void* context) {
  return call_with_log("synchronize", [&] {
    cuda_context& ctx = context_from_handle(context);
    current_device_guard on_device(ctx.device_ordinal());
    check_cuda(cudaStreamSynchronize(ctx.stream()), "cudaStreamSynchronize");
  });
}

tsrpStatus_t event_create(void* context, void** event) {
  return call_with_log("event_create", [&] {
    require(event != nullptr, "event is null");
    *event = nullptr;
    cuda_context& ctx = context_from_handle(context);
    // Events belong to the current device's context, hence the guard.
    current_device_guard on_device(ctx.device_ordinal());
    cudaEvent_t created = nullptr;
    check_cuda(cudaEventCreate(&created), "cudaEventCreate");
    *event = created;
  });
}

tsrpStatus_t event_record(void* context, void* event) {
  return call_with_log("event_record", [&] {
    require(event != nullptr, "event is null");
    cuda_context& ctx = context_from_handle(context);
    current_device_guard on_device(ctx.device_ordinal());
    check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(event), ctx.stream()), "cudaEventRecord");
  });
}

tsrpStatus_t event_elapsed_ms(void* context, void* start, void* end, float* milliseconds) {
  return call_with_log("event_elapsed_ms", [&] {
    require(start != nullptr && end != nullptr && milliseconds != nullptr, "null event or result");
    cuda_context& ctx = context_from_handle(context);
    current_device_guard on_device(ctx.device_ordinal());
    // cudaEventElapsedTime answers cudaErrorNotReady while `end` is pending; waiting for it makes
    // record-run-record-elapsed work without a separate synchronize.
    check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(end)), "cudaEventSynchronize");
    check_cuda(cudaEventElapsedTime(milliseconds, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
               "cudaEventElapsedTime");
  });
}

// "gpu:NVIDIA H200;cc=9.0;sms=132;driver=13000;runtime=13000": what the tuning database keys
// device-specific winners by (registry/src/tuning_db.hpp describes the canonical form; names are
// kept free of ';' and '=' here too).
tsrpStatus_t fingerprint(int32_t device_ordinal, char* text, size_t text_size) {
  return call_with_log("fingerprint", [&] {
    require(text != nullptr && text_size > 0, "text buffer is null or empty");
    const int count = visible_device_count();
    if (device_ordinal < 0 || device_ordinal >= count) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "CUDA device ordinal " + std::to_string(device_ordinal) +
                                                    " out of range: " + std::to_string(count) +
                                                    " devices present");
    }
    cudaDeviceProp p{};
    check_cuda(cudaGetDeviceProperties(&p, device_ordinal), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    std::string name(p.name, strnlen(p.name, sizeof(p.name)));
    for (char& c : name)
      if (c == ';' || c == '=' || static_cast<unsigned char>(c) < 0x20) c = '_';
    const std::string out = "gpu:" + name + ";cc=" + std::to_string(p.major) + "." + std::to_string(p.minor) +
                            ";sms=" + std::to_string(p.multiProcessorCount) + ";driver=" + std::to_string(driver) +
                            ";runtime=" + std::to_string(runtime);
    write_text(text, text_size, out);
  });
}

// Which device's memory a pointer is: cudaPointerGetAttributes, a driver-side lookup that does
// not synchronize. Host memory (registered or not) and unknown pointers answer -1.
tsrpStatus_t pointer_device(const void* pointer, int32_t* device_ordinal) {
  if (device_ordinal == nullptr) return TSRP_STATUS_BAD_PARAM;
  *device_ordinal = -1;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();  // an unknown pointer is an answer (-1), not a sticky error
    return TSRP_STATUS_SUCCESS;
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged)
    *device_ordinal = attributes.device;
  return TSRP_STATUS_SUCCESS;
}

// Free and total memory of the context's device. cudaMemGetInfo answers for the current device,
// hence the guard (as for every other entry that acts on the context's device).
tsrpStatus_t memory_info(void* context, size_t* free_bytes, size_t* total_bytes) {
  return call_with_log("memory_info", [&] {
    require(free_bytes != nullptr && total_bytes != nullptr, "free_bytes or total_bytes is null");
    cuda_context& ctx = context_from_handle(context);
    current_device_guard on_device(ctx.device_ordinal());
    size_t free_now = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free_now, &total), "cudaMemGetInfo");
    *free_bytes = free_now;
    *total_bytes = total;
  });
}

void event_destroy(void* context, void* event) {
  (void)call_with_log("event_destroy", [&] {
    if (event == nullptr) return;
    cuda_context& ctx = context_from_handle(context);
    current_device_guard on_device(ctx.device_ordinal());
    check_cuda(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
  });
}

}  // namespace

const tsrpDeviceInterface& device_interface() noexcept {
  static const tsrpDeviceInterface table = {
      sizeof(tsrpDeviceInterface), device_count,         device_name,         allocate,
      deallocate,                  copy_host_to_device,  copy_device_to_host, synchronize,
      event_create,                event_record,         event_elapsed_ms,    event_destroy,
      fingerprint,                 pointer_device,       memory_info,
  };
  return table;
}

}  // namespace tessera::cuda
