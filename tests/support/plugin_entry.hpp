// A plugin's entry point called directly, as the registry calls it, on the file the registry
// loaded (the same mapped instance, never closed, like the registry's): for tests that talk to a
// plugin through its ABI (what a host other than libtessera would do).
#pragma once

#include "test_support.hpp"

#include <tessera/plugin_abi.h>
#include <tessera/tessera.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace tessera::testing {

struct plugin_entry_call {
  tsrPluginInfo_t info{};  // as the registry lists the file
  tsrpPluginDesc desc{};   // what the entry point filled in
  tsrpStatus_t status = TSRP_STATUS_INTERNAL_ERROR;  // what the entry point returned
};

// False (and why) when no listed plugin's path ends with `file` or the file has no entry point;
// otherwise the entry point was called with `log` as the host's logger (its answer in
// call->status and call->desc).
inline bool call_plugin_entry(const std::string& file, void (*log)(int32_t, const char*, const char*),
                              plugin_entry_call* call, std::string* why) {
  if (find_plugin_by_file(file, &call->info) < 0) {
    *why = file + " is not listed here (not built)";
    return false;
  }
  void* library = dlopen(call->info.path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *why = dlerror();
    return false;
  }
  auto entry = reinterpret_cast<tsrpPluginEntryFn>(dlsym(library, TSRP_ENTRY_POINT_NAME));
  if (entry == nullptr) {
    *why = "no entry point";
    return false;
  }
  tsrpHostOffer offer{};
  offer.struct_size = sizeof(offer);
  offer.host_abi_version = TSRP_ABI_VERSION_CURRENT;
  offer.host_abi_min = TSRP_ABI_VERSION_MIN;
  offer.host_version = "test";
  offer.log = log;
  call->desc.struct_size = sizeof(call->desc);
  call->status = entry(&offer, &call->desc);
  return true;
}

// A loaded plugin's kernel table and one context of it, for calling its kernels as the registry
// does.
struct opened_plugin {
  tsrpPluginDesc desc{};
  void* context = nullptr;

  opened_plugin() = default;
  opened_plugin(const opened_plugin&) = delete;
  opened_plugin& operator=(const opened_plugin&) = delete;
  ~opened_plugin() {
    if (context && desc.context && desc.context->destroy) desc.context->destroy(context);
  }

  // False (and why) when the plugin `file` is not loaded here, refuses, or gives no context.
  bool open(const std::string& file, void (*log)(int32_t, const char*, const char*), std::string* why) {
    plugin_entry_call call;
    if (!call_plugin_entry(file, log, &call, why)) return false;
    if (!call.info.loaded || call.status != TSRP_STATUS_SUCCESS || call.desc.context == nullptr) {
      *why = file + " is not loaded here, or its entry point refused";
      return false;
    }
    desc = call.desc;
    char message[256] = {0};
    if (desc.context->create(0, &context, message, sizeof(message)) != TSRP_STATUS_SUCCESS) {
      *why = std::string("no context: ") + message;
      return false;
    }
    return true;
  }

  const tsrpKernel* kernel(const char* name) const {
    for (size_t i = 0; i < desc.kernel_count; ++i)
      if (std::strcmp(desc.kernels[i].name, name) == 0) return &desc.kernels[i];
    return nullptr;
  }
};

}  // namespace tessera::testing
