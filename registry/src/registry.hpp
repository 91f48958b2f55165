// The registry: every plugin found (loaded or refused, with the reason), every kernel of the
// loaded ones per operation, and the device interface of each device kind. One per process,
// created on first use, never destroyed (plugins are never unloaded while anything they made can
// still run; at process exit the OS reclaims them).
#pragma once

#include "backend_filter.hpp"
#include "plugin_loader.hpp"

#include <tessera/plugin_abi.h>

#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace tessera::registry {

struct plugin_record {
  std::string path;
  std::string name;     // empty when it never told its name
  std::string version;
  uint32_t abi_version = 0;
  int32_t device_kind = TSRP_DEVICE_CPU;
  bool loaded = false;
  std::string reason;   // why not loaded
  loaded_plugin plugin; // valid when loaded
};

struct kernel_record {
  int64_t id = 0;           // the public tsrAlgo_t: index in kernels()
  size_t plugin_index = 0;
  tsrpKernel kernel{};
  std::string kernel_name;  // "conv_fwd"
  std::string full_name;    // "onednn/conv_fwd"
};

struct load_result {
  bool ok = false;
  std::string reason;
};

class registry {
 public:
  // Discovers and loads plugins the first time it is called.
  static registry& instance();

  // Readers hold this while they use plugins() / kernels(); a load takes it exclusively.
  std::shared_lock<std::shared_mutex> read_lock() const {
    return std::shared_lock<std::shared_mutex>(mutex_);
  }
  const std::deque<plugin_record>& plugins() const { return plugins_; }
  const std::deque<kernel_record>& kernels() const { return kernels_; }
  const std::vector<int64_t>& kernels_for(int op) const { return by_operation_[op]; }
  const backend_filter& filter() const { return filter_; }

  // Index of the loaded plugin named `name`, or -1.
  int find_plugin(const std::string& name) const;

  // The device interface serving `device_kind` and the index of the plugin that provides it
  // (-1 for the registry's own host interface). nullptr when no plugin serves the kind.
  const tsrpDeviceInterface* device_interface(int32_t device_kind, int* plugin_index) const;

  // Loads one more plugin (tsrLoadPlugin). The plugin's code runs without the registry's lock
  // held, so calls on other threads go on meanwhile (for up to plugin_load_timeout()); then the
  // lock is taken exclusively to add it.
  load_result load(const std::string& path);

 private:
  registry();
  void discover_locked();
  // Adds what loading `path` gave (a plugin, or a refusal with its reason). Caller holds mutex_
  // exclusively.
  load_result add_locked(const std::string& path, load_outcome outcome);
  bool loaded_locked(const std::string& path) const;

  mutable std::shared_mutex mutex_;
  // Serializes loads (each plugin's entry point runs once); never held with mutex_ exclusive
  // while foreign code runs.
  std::mutex load_mutex_;
  backend_filter filter_;
  std::deque<plugin_record> plugins_;
  std::deque<kernel_record> kernels_;
  std::vector<std::vector<int64_t>> by_operation_;
};

}  // namespace tessera::registry
