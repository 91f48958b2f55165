#include "plugin_loader.hpp"

#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <unordered_set>

namespace tessera::registry {
namespace {

// Copies the prefix of a size-prefixed struct that both sides know; the rest stays zero.
template <typename T>
T copy_prefix(const void* source) {
  T out{};
  size_t given = *static_cast<const size_t*>(source);
  std::memcpy(static_cast<void*>(&out), source, given < sizeof(T) ? given : sizeof(T));
  out.struct_size = sizeof(T);
  return out;
}

bool valid_backend_name(const char* name) {
  if (!name || !*name || std::strlen(name) > 31) return false;
  for (const char* c = name; *c; ++c) {
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.';
    if (!ok) return false;
  }
  return true;
}

// The smallest struct sizes a plugin of ABI version 1 can have written.
constexpr size_t k_min_kernel_size = offsetof(tsrpKernel, run) + sizeof(void*);
constexpr size_t k_min_device_size = offsetof(tsrpDeviceInterface, event_destroy) + sizeof(void*);
constexpr size_t k_min_context_size = offsetof(tsrpContextInterface, destroy) + sizeof(void*);

std::string check_device_interface(const tsrpDeviceInterface& d) {
  if (!d.device_count || !d.device_name || !d.allocate || !d.deallocate ||
      !d.copy_host_to_device || !d.copy_device_to_host || !d.synchronize || !d.event_create ||
      !d.event_record || !d.event_elapsed_ms || !d.event_destroy)
    return "device interface has a NULL function";
  return {};
}

}  // namespace

load_outcome load_plugin_file(const std::string& path, const tsrpHostOffer& offer) {
  load_outcome out;
  out.plugin.path = path;
  auto refuse = [&](std::string why) {
    out.ok = false;
    out.reason = std::move(why);
    return out;
  };

  std::error_code fs_ec;
  if (!std::filesystem::is_regular_file(path, fs_ec)) return refuse("no such file");

  auto library = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  // RTLD_NOW: an unresolved symbol is found now, not in the middle of a call. RTLD_LOCAL: a
  // plugin's symbols never satisfy another plugin's (two plugins may embed different versions of
  // the same library).
  library->load(path,
                boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !library->is_loaded()) {
    // Boost's error code says little; the loader's own words name the real cause.
    std::string why = ec.message();
    if (void* again = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      dlclose(again);
    } else if (const char* text = dlerror()) {
      why = text;
    }
    return refuse("not a loadable shared library: " + why);
  }
  if (!library->has(TSRP_ENTRY_POINT_NAME))
    return refuse(std::string("no entry point '") + TSRP_ENTRY_POINT_NAME + "'");
  auto entry = reinterpret_cast<tsrpPluginEntryFn>(
      reinterpret_cast<void*>(&library->get<char>(TSRP_ENTRY_POINT_NAME)));
  out.plugin.library = library;

  tsrpPluginDesc desc{};
  desc.struct_size = sizeof(desc);
  tsrpStatus_t status;
  try {
    status = entry(&offer, &desc);
  } catch (const std::exception& e) {
    return refuse(std::string("entry point threw an exception: ") + e.what());
  } catch (...) {
    return refuse("entry point threw an exception");
  }
  if (status != TSRP_STATUS_SUCCESS) {
    std::string why = "entry point refused (status " + std::to_string(status) + ")";
    if (desc.abi_version)
      why += "; it speaks ABI version " + std::to_string(desc.abi_version) + ", host offers " +
             std::to_string(offer.host_abi_min) + ".." + std::to_string(offer.host_abi_version);
    return refuse(why);
  }
  out.plugin.abi_version = desc.abi_version;
  if (desc.abi_version < offer.host_abi_min || desc.abi_version > offer.host_abi_version)
    return refuse("plugin speaks ABI version " + std::to_string(desc.abi_version) +
                  ", host accepts versions " + std::to_string(offer.host_abi_min) + " to " +
                  std::to_string(offer.host_abi_version));
  if (!valid_backend_name(desc.name))
    return refuse("invalid backend name (1 to 31 characters of [A-Za-z0-9_.-] expected)");
  out.plugin.name = desc.name;
  out.plugin.version = desc.version ? desc.version : "";
  if (desc.device_kind != TSRP_DEVICE_CPU && desc.device_kind != TSRP_DEVICE_CUDA)
    return refuse("unknown device kind " + std::to_string(desc.device_kind));
  out.plugin.device_kind = desc.device_kind;

  if (desc.context) {
    if (desc.context->struct_size < k_min_context_size)
      return refuse("context interface struct_size " + std::to_string(desc.context->struct_size) +
                    " is smaller than ABI 1's");
    out.plugin.context = copy_prefix<tsrpContextInterface>(desc.context);
    if (!out.plugin.context.create || !out.plugin.context.destroy)
      return refuse("context interface has a NULL create or destroy");
    out.plugin.has_context = true;
  }
  if (desc.device) {
    if (desc.device->struct_size < k_min_device_size)
      return refuse("device interface struct_size " + std::to_string(desc.device->struct_size) +
                    " is smaller than ABI 1's");
    out.plugin.device = copy_prefix<tsrpDeviceInterface>(desc.device);
    std::string why = check_device_interface(out.plugin.device);
    if (!why.empty()) return refuse(why);
    out.plugin.has_device = true;
  }

  if (desc.kernel_count > 0 && !desc.kernels)
    return refuse("kernel_count is " + std::to_string(desc.kernel_count) + " but kernels is NULL");
  if (desc.kernel_count > 0) {
    // The table's stride is the plugin's sizeof(tsrpKernel), which its first entry states.
    size_t stride = desc.kernels[0].struct_size;
    if (stride < k_min_kernel_size)
      return refuse("kernel struct_size " + std::to_string(stride) + " is smaller than ABI 1's");
    const char* base = reinterpret_cast<const char*>(desc.kernels);
    // "operation/name" of every kernel taken: a set, so that a plugin declaring thousands of
    // kernels loads in linear time (the pairwise check it replaces was quadratic).
    std::unordered_set<std::string> taken;
    for (size_t i = 0; i < desc.kernel_count; ++i) {
      const auto* raw = reinterpret_cast<const tsrpKernel*>(base + i * stride);
      declared_kernel k;
      k.kernel = copy_prefix<tsrpKernel>(raw);
      std::string label = k.kernel.name ? k.kernel.name : "#" + std::to_string(i);
      if (!k.kernel.name || !*k.kernel.name) {
        out.plugin.skipped_kernels.push_back(label + ": no name");
        continue;
      }
      if (!k.kernel.can_implement || !k.kernel.run) {
        out.plugin.skipped_kernels.push_back(label + ": NULL can_implement or run");
        continue;
      }
      if (k.kernel.operation < 0 || k.kernel.operation >= TSRP_OP_COUNT) {
        out.plugin.skipped_kernels.push_back(
            label + ": unknown operation " + std::to_string(k.kernel.operation));
        continue;
      }
      if (!taken.insert(std::to_string(k.kernel.operation) + "/" + k.kernel.name).second) {
        out.plugin.skipped_kernels.push_back(label + ": duplicate kernel name");
        continue;
      }
      k.name = k.kernel.name;
      out.plugin.kernels.push_back(std::move(k));
    }
  }
  out.ok = true;
  return out;
}

}  // namespace tessera::registry
