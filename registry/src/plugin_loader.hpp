// Loading one plugin file: open it (absolute path, RTLD_NOW | RTLD_LOCAL), find its one entry
// point, negotiate the ABI version, and check what it declares before anything of it is used.
// A refusal is a value (the reason), never an exception or a crash.
#pragma once

#include <tessera/plugin_abi.h>

#include <memory>
#include <string>
#include <vector>

namespace boost::dll {
class shared_library;
}

namespace tessera::registry {

// One kernel as declared, copied out of the plugin's table (prefix-aware: an older plugin's
// shorter struct is zero-extended).
struct declared_kernel {
  tsrpKernel kernel{};
  std::string name;
};

struct loaded_plugin {
  std::string path;
  std::string name;
  std::string version;
  uint32_t abi_version = 0;
  int32_t device_kind = TSRP_DEVICE_CPU;
  bool has_context = false;
  tsrpContextInterface context{};
  bool has_device = false;
  tsrpDeviceInterface device{};
  std::vector<declared_kernel> kernels;
  std::vector<std::string> skipped_kernels;  // "name: why", kernels refused one by one
  // Kept for the life of the process: plugins are never unloaded (ARCHITECTURE.md, decision 4).
  std::shared_ptr<boost::dll::shared_library> library;
};

struct load_outcome {
  bool ok = false;
  std::string reason;  // why not, when !ok
  loaded_plugin plugin;
};

load_outcome load_plugin_file(const std::string& path, const tsrpHostOffer& offer);

}  // namespace tessera::registry
