#include "cudnn_symbols.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace tessera::cudnn_plugin {
namespace {

std::string loader_error() {
  const char* text = dlerror();
  return text ? text : "unknown loader error";
}

// Each resolver returns the first name the library lacks, or "" when it has them all.
#define TESSERA_RESOLVE_FUNCTION(name)                                        \
  table.name = reinterpret_cast<decltype(table.name)>(dlsym(library, #name)); \
  if (table.name == nullptr) return #name;

std::string resolve(void* library, cudnn_functions& table) {
  TESSERA_CUDNN_FUNCTIONS(TESSERA_RESOLVE_FUNCTION)
  return {};
}

#define TESSERA_RESOLVE_DRIVER_FUNCTION(name, symbol)                        \
  table.name = reinterpret_cast<decltype(table.name)>(dlsym(library, symbol)); \
  if (table.name == nullptr) return symbol;

std::string resolve(void* library, cuda_driver_functions& table) {
  TESSERA_CUDA_DRIVER_FUNCTIONS(TESSERA_RESOLVE_DRIVER_FUNCTION)
  return {};
}

#undef TESSERA_RESOLVE_FUNCTION
#undef TESSERA_RESOLVE_DRIVER_FUNCTION

cudnn_library open_cudnn() {
  cudnn_library lib;
  const char* chosen = std::getenv("TESSERA_CUDNN_LIBRARY");
  const bool explicit_path = chosen != nullptr && *chosen != '\0';
  lib.path = explicit_path ? chosen : "libcudnn.so.9";
  dlerror();
  // RTLD_LOCAL: cuDNN's symbols stay out of the global namespace (another plugin may carry its
  // own cuDNN). The handle is never closed: handles and descriptors made by it live until exit.
  void* library = dlopen(lib.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::string why = loader_error();
    // glibc's message starts with the path; say it ourselves when it does not.
    if (why.find(lib.path) == std::string::npos) why = lib.path + ": " + why;
    lib.reason = explicit_path
                     ? "TESSERA_CUDNN_LIBRARY: " + why
                     : "libcudnn.so.9 not on the loader path (" + why +
                           "); set TESSERA_CUDNN_LIBRARY to its full path";
    return lib;
  }
  const std::string missing = resolve(library, lib.functions);
  if (!missing.empty()) {
    lib.reason = lib.path + " lacks " + missing + " (cuDNN " + std::to_string(CUDNN_MAJOR) + ".x expected)";
    lib.functions = cudnn_functions{};
    return lib;
  }
  lib.version = lib.functions.cudnnGetVersion();
  // The legacy API's enums and signatures are those of the major version compiled against.
  if (lib.version / 10000 != CUDNN_MAJOR) {
    lib.reason = lib.path + " is cuDNN " + cudnn_version_text(lib.version) +
                 "; this plugin was built for cuDNN " + std::to_string(CUDNN_MAJOR) + ".x";
    return lib;
  }
  lib.loaded = true;
  return lib;
}

std::string driver_error_text(const cuda_driver_functions& f, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (f.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (f.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  const std::string label = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  return label + ": " + (text ? text : "no description");
}

cuda_driver open_driver() {
  cuda_driver d;
  dlerror();
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    d.why_no_device = "no CUDA driver (libcuda.so.1: " + loader_error() + ")";
    return d;
  }
  const std::string missing = resolve(library, d.functions);
  if (!missing.empty()) {
    d.why_no_device = "libcuda.so.1 lacks " + missing;
    d.functions = cuda_driver_functions{};
    return d;
  }
  d.loaded = true;
  CUresult result = d.functions.cuInit(0);
  if (result != CUDA_SUCCESS) {
    d.why_no_device = "cuInit: " + driver_error_text(d.functions, result);
    return d;
  }
  int count = 0;
  result = d.functions.cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS) {
    d.why_no_device = "cuDeviceGetCount: " + driver_error_text(d.functions, result);
    return d;
  }
  d.device_count = count;
  if (count == 0) d.why_no_device = "the CUDA driver reports no device";
  return d;
}

}  // namespace

std::string cudnn_version_text(size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

const cudnn_library& cudnn_library_instance() {
  static const cudnn_library lib = open_cudnn();  // thread-safe, once
  return lib;
}

const cuda_driver& cuda_driver_instance() {
  static const cuda_driver d = open_driver();
  return d;
}

}  // namespace tessera::cudnn_plugin
