#include "registry.hpp"

#include "host_device.hpp"
#include "logging.hpp"
#include "plugin_discovery.hpp"
#include "plugin_load_timeout.hpp"

#include <filesystem>

namespace tessera::registry {
namespace {

// While a plugin's entry point runs, what it logs at warn level or above is also collected here:
// a refusal's status alone ("entry point refused (status 3000)") says nothing of why, and the
// plugin's own words (e.g. the cuDNN plugin's "libcudnn.so.9 not found ...") then become part of
// the reason that tsrGetPluginInfo and tessera-info show.
thread_local std::string* entry_point_words = nullptr;

void host_log(int32_t level, const char* plugin, const char* message) {
  if (entry_point_words && level >= TSRP_LOG_WARN && message && *message) {
    if (!entry_point_words->empty()) *entry_point_words += "; ";
    *entry_point_words += message;
  }
  log::level lvl = log::level::info;
  switch (level) {
    case TSRP_LOG_TRACE: lvl = log::level::trace; break;
    case TSRP_LOG_DEBUG: lvl = log::level::debug; break;
    case TSRP_LOG_INFO: lvl = log::level::info; break;
    case TSRP_LOG_WARN: lvl = log::level::warn; break;
    default: lvl = log::level::error; break;
  }
  if (!log::enabled(lvl)) return;
  log::write(lvl, std::string("[") + (plugin ? plugin : "?") + "] " + (message ? message : ""));
}

std::string absolute_path(const std::string& given_path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(given_path, ec);
  return ec ? given_path : p.lexically_normal().string();
}

// load_plugin_file, collecting the entry point's words into a refusal's reason. It runs in the
// thread that runs the plugin's code (the timed load's helper), where entry_point_words lives.
load_outcome load_collecting_words(const std::string& path, const tsrpHostOffer& offer) {
  std::string words;
  entry_point_words = &words;
  load_outcome outcome;
  try {
    outcome = load_plugin_file(path, offer);
  } catch (...) {
    entry_point_words = nullptr;
    throw;
  }
  entry_point_words = nullptr;
  if (!outcome.ok && !words.empty() && outcome.reason.rfind("entry point refused", 0) == 0)
    outcome.reason += ": " + words;
  return outcome;
}

tsrpHostOffer make_offer() {
  tsrpHostOffer offer{};
  offer.struct_size = sizeof(offer);
  offer.host_abi_version = TSRP_ABI_VERSION_CURRENT;
  offer.host_abi_min = TSRP_ABI_VERSION_MIN;
  offer.host_version = TESSERA_VERSION_STRING;
  offer.log = host_log;
  return offer;
}

}  // namespace

registry& registry::instance() {
  // Leaked on purpose: see the header.
  static registry* r = new registry();
  return *r;
}

registry::registry() : filter_(backend_filter::from_environment()), by_operation_(TSRP_OP_COUNT) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  discover_locked();
}

void registry::discover_locked() {
  for (const std::string& folder : plugin_search_folders()) {
    std::vector<std::string> files = plugin_files_in(folder);
    if (log::enabled(log::level::debug))
      log::write(log::level::debug, "plugin folder " + folder + ": " +
                                        std::to_string(files.size()) + " candidate(s)");
    for (const std::string& file : files) {
      std::string path = absolute_path(file);
      if (loaded_locked(path)) continue;
      // Nothing else can use the registry while it is being constructed: holding the lock while
      // the plugin's code runs blocks nobody.
      add_locked(path, load_plugin_file_within(path, make_offer(), plugin_load_timeout(), load_collecting_words));
    }
  }
}

bool registry::loaded_locked(const std::string& path) const {
  for (const plugin_record& existing : plugins_)
    if (existing.path == path && existing.loaded) return true;
  return false;
}

int registry::find_plugin(const std::string& name) const {
  for (size_t i = 0; i < plugins_.size(); ++i)
    if (plugins_[i].loaded && plugins_[i].name == name) return static_cast<int>(i);
  return -1;
}

const tsrpDeviceInterface* registry::device_interface(int32_t device_kind, int* plugin_index) const {
  bool served = false;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    const plugin_record& p = plugins_[i];
    if (!p.loaded || p.device_kind != device_kind) continue;
    served = true;
    if (p.plugin.has_device) {
      *plugin_index = static_cast<int>(i);
      return &p.plugin.device;
    }
  }
  *plugin_index = -1;
  // Host memory needs no plugin; CUDA memory does.
  if (device_kind == TSRP_DEVICE_CPU) return &host_device_interface();
  (void)served;
  return nullptr;
}

load_result registry::load(const std::string& given_path) {
  std::string path = absolute_path(given_path);
  std::lock_guard<std::mutex> one_load_at_a_time(load_mutex_);
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    if (loaded_locked(path)) return {true, {}};  // loading the same file twice is a no-op
  }
  load_outcome outcome = load_plugin_file_within(path, make_offer(), plugin_load_timeout(), load_collecting_words);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  return add_locked(path, std::move(outcome));
}

load_result registry::add_locked(const std::string& path, load_outcome outcome) {
  plugin_record record;
  record.path = path;
  record.name = outcome.plugin.name;
  record.version = outcome.plugin.version;
  record.abi_version = outcome.plugin.abi_version;
  record.device_kind = outcome.plugin.device_kind;

  std::string reason = outcome.reason;
  if (outcome.ok) {
    int other = find_plugin(outcome.plugin.name);
    if (other >= 0)
      reason = "duplicate backend name '" + outcome.plugin.name + "' (already loaded from " +
               plugins_[other].path + ")";
    else
      reason = filter_.refusal(outcome.plugin.name);
  }
  if (!reason.empty()) {
    record.loaded = false;
    record.reason = reason;
    // The library stays mapped even when refused: its entry point already ran, and unloading
    // code that may have started threads is not safe.
    record.plugin.library = outcome.plugin.library;
    log::write(log::level::warn, "plugin " + path + " skipped: " + reason);
    plugins_.push_back(std::move(record));
    return {false, reason};
  }

  record.loaded = true;
  record.plugin = std::move(outcome.plugin);
  size_t plugin_index = plugins_.size();
  for (const std::string& skipped : record.plugin.skipped_kernels)
    log::write(log::level::warn, "plugin " + record.name + ": kernel " + skipped + " skipped");
  for (const declared_kernel& k : record.plugin.kernels) {
    kernel_record kr;
    kr.id = static_cast<int64_t>(kernels_.size());
    kr.plugin_index = plugin_index;
    kr.kernel = k.kernel;
    kr.kernel_name = k.name;
    kr.full_name = record.name + "/" + k.name;
    by_operation_[k.kernel.operation].push_back(kr.id);
    kernels_.push_back(std::move(kr));
  }
  if (log::enabled(log::level::info))
    log::write(log::level::info, "plugin " + record.name + " " + record.version + " (ABI " +
                                     std::to_string(record.abi_version) + ") loaded from " + path +
                                     " with " + std::to_string(record.plugin.kernels.size()) +
                                     " kernel(s)");
  plugins_.push_back(std::move(record));
  return {true, {}};
}

}  // namespace tessera::registry
