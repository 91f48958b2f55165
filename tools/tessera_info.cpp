// tessera-info: what this Tessera installation has: its version, the devices per kind, the
// plugins found (loaded, or why not) and the kernels per operation. --json prints the same
// as one JSON object, for scripts and bug reports.
#include <tessera/tessera.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "json_writer.hpp"

namespace tessera::tools {
namespace {

std::string last_error() {
  char message[1024] = {};
  tsrGetLastErrorString(message, sizeof message);
  return message;
}

// A failed query ends the program: what follows would be built on missing data.
void check(tsrStatus_t status, const char* what) {
  if (status == TSR_STATUS_SUCCESS) return;
  std::cerr << "tessera-info: " << what << " failed: " << tsrGetErrorString(status) << ": "
            << last_error() << "\n";
  std::exit(1);
}

const char* device_kind_name(int kind) {
  switch (kind) {
    case TSR_DEVICE_CPU: return "cpu";
    case TSR_DEVICE_CUDA: return "cuda";
  }
  return "unknown";
}

std::string version_text(size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

struct device_count {
  tsrDeviceKind_t kind;
  int count;
};

struct operation_kernels {
  tsrOperation_t op;
  std::vector<tsrKernelInfo_t> kernels;
};

struct installation {
  size_t version = 0;
  std::vector<device_count> devices;
  std::vector<tsrPluginInfo_t> plugins;
  std::vector<operation_kernels> operations;
};

installation query() {
  installation info;
  info.version = tsrGetVersion();
  for (tsrDeviceKind_t kind : {TSR_DEVICE_CPU, TSR_DEVICE_CUDA}) {
    int count = 0;
    check(tsrGetDeviceCount(kind, &count), "tsrGetDeviceCount");
    info.devices.push_back({kind, count});
  }
  int plugin_count = 0;
  check(tsrGetPluginCount(&plugin_count), "tsrGetPluginCount");
  for (int i = 0; i < plugin_count; ++i) {
    tsrPluginInfo_t p{};
    p.struct_size = sizeof p;
    check(tsrGetPluginInfo(i, &p), "tsrGetPluginInfo");
    info.plugins.push_back(p);
  }
  for (int op = 0; op < TSR_OP_COUNT; ++op) {
    operation_kernels entry{static_cast<tsrOperation_t>(op), {}};
    int count = 0;
    check(tsrGetKernelCount(entry.op, &count), "tsrGetKernelCount");
    for (int i = 0; i < count; ++i) {
      tsrKernelInfo_t k{};
      k.struct_size = sizeof k;
      check(tsrGetKernelInfo(entry.op, i, &k), "tsrGetKernelInfo");
      entry.kernels.push_back(k);
    }
    info.operations.push_back(std::move(entry));
  }
  return info;
}

void print_text(const installation& info) {
  std::cout << "Tessera " << version_text(info.version) << " (tessera-info built against "
            << version_text(TSR_VERSION) << ")\n";
  std::cout << "\nDevices:\n";
  for (const device_count& d : info.devices)
    std::cout << "  " << device_kind_name(d.kind) << ": " << d.count << "\n";

  std::cout << "\nPlugins (" << info.plugins.size() << "):\n";
  if (info.plugins.empty()) std::cout << "  none found\n";
  for (const tsrPluginInfo_t& p : info.plugins) {
    std::cout << "  " << (p.name[0] ? p.name : "(unnamed)");
    if (p.version[0]) std::cout << " " << p.version;
    std::cout << "  ABI " << p.abi_version << "  " << device_kind_name(p.device_kind) << "\n";
    std::cout << "    path: " << p.path << "\n";
    if (p.loaded)
      std::cout << "    loaded, " << p.kernel_count << " kernel" << (p.kernel_count == 1 ? "" : "s")
                << "\n";
    else
      std::cout << "    not loaded: " << (p.reason[0] ? p.reason : "no reason given") << "\n";
  }

  std::cout << "\nKernels:\n";
  for (const operation_kernels& op : info.operations) {
    std::cout << "  " << tsrGetOperationName(op.op) << " (" << op.kernels.size() << "):\n";
    for (const tsrKernelInfo_t& k : op.kernels) {
      std::cout << "    " << k.backend_name << "/" << k.kernel_name << "  "
                << device_kind_name(k.device_kind)
                << (k.deterministic ? "  deterministic" : "  non-deterministic");
      if (k.notes[0]) std::cout << "  " << k.notes;
      std::cout << "\n";
    }
  }
}

void print_json(const installation& info) {
  json_writer json(std::cout);
  json.begin_object();
  json.member("version", version_text(info.version));
  json.member("compiled_version", version_text(TSR_VERSION));
  json.key("devices").begin_object();
  for (const device_count& d : info.devices) json.member(device_kind_name(d.kind), d.count);
  json.end_object();
  json.key("plugins").begin_array();
  for (const tsrPluginInfo_t& p : info.plugins) {
    json.begin_object();
    json.member("name", p.name);
    json.member("version", p.version);
    json.member("abi_version", p.abi_version);
    json.member("device_kind", device_kind_name(p.device_kind));
    json.member("path", p.path);
    json.member("loaded", p.loaded != 0);
    json.member("kernel_count", p.kernel_count);
    if (!p.loaded) json.member("reason", p.reason);
    json.end_object();
  }
  json.end_array();
  json.key("kernels").begin_object();
  for (const operation_kernels& op : info.operations) {
    json.key(tsrGetOperationName(op.op)).begin_array();
    for (const tsrKernelInfo_t& k : op.kernels) {
      json.begin_object();
      json.member("name", std::string(k.backend_name) + "/" + k.kernel_name);
      json.member("backend", k.backend_name);
      json.member("kernel", k.kernel_name);
      json.member("algo", static_cast<int64_t>(k.algo));
      json.member("device_kind", device_kind_name(k.device_kind));
      json.member("deterministic", k.deterministic != 0);
      json.member("notes", k.notes);
      json.end_object();
    }
    json.end_array();
  }
  json.end_object();
  json.end_object();
}

int run(int argc, char** argv) {
  bool as_json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << "usage: tessera-info [--json]\n"
                   "Prints the Tessera version, devices, plugins (loaded or why not) and kernels.\n";
      return 0;
    } else {
      std::cerr << "tessera-info: unknown argument '" << argv[i] << "' (try --help)\n";
      return 2;
    }
  }
  check(tsrCheckVersion(TSR_VERSION), "tsrCheckVersion");
  const installation info = query();
  if (as_json)
    print_json(info);
  else
    print_text(info);
  return 0;
}

}  // namespace
}  // namespace tessera::tools

int main(int argc, char** argv) { return tessera::tools::run(argc, argv); }
