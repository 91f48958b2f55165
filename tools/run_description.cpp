#include "run_description.hpp"

#include <tessera/tessera.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tessera::tools {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  const size_t end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

// The value of the first "key: value" line of a /proc file whose key is `key`.
std::string proc_field(const std::string& path, const std::string& key) {
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    const size_t colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key)
      return trim(line.substr(colon + 1));
  }
  return "";
}

// The API names no GPU model; the NVIDIA driver's /proc files do, on the machines that have one.
std::vector<std::string> nvidia_gpu_models() {
  std::vector<std::string> models;
  std::error_code ec;
  for (const auto& gpu : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    const std::string model = proc_field((gpu.path() / "information").string(), "Model");
    if (!model.empty()) models.push_back(model);
  }
  return models;
}

std::string quoted_if_needed(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\"'") == std::string::npos) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

const char* kind_name(int kind) { return kind == TSR_DEVICE_CUDA ? "cuda" : "cpu"; }

}  // namespace

run_description describe_run(const std::vector<std::string>& args) {
  run_description run;
  run.date_utc = utc_now();
  for (const std::string& a : args)
    run.command += (run.command.empty() ? "" : " ") + quoted_if_needed(a);
  const size_t v = tsrGetVersion();
  run.tessera_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                        std::to_string(v % 100);
  tsrGetDeviceCount(TSR_DEVICE_CPU, &run.cpu_devices);
  tsrGetDeviceCount(TSR_DEVICE_CUDA, &run.cuda_devices);
  int count = 0;
  tsrGetPluginCount(&count);
  for (int i = 0; i < count; ++i) {
    tsrPluginInfo_t info{};
    info.struct_size = sizeof info;
    if (tsrGetPluginInfo(i, &info) != TSR_STATUS_SUCCESS) continue;
    run.plugins.push_back({info.name, info.version, kind_name(info.device_kind), info.loaded != 0,
                           info.kernel_count, info.reason});
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  run.hostname = host;
  utsname uts{};
  if (uname(&uts) == 0) run.os = std::string(uts.sysname) + " " + uts.release;
  run.cpu = proc_field("/proc/cpuinfo", "model name");
  run.cpu_threads = static_cast<int>(std::thread::hardware_concurrency());
  run.gpus = nvidia_gpu_models();
  run.gpu_driver = proc_field("/proc/driver/nvidia/version", "NVRM version");
  return run;
}

void write_run_description(json_writer& json, const run_description& run) {
  json.member("date", run.date_utc)
      .member("command", run.command)
      .member("tessera_version", run.tessera_version);
  json.key("devices")
      .begin_object()
      .member("cpu", run.cpu_devices)
      .member("cuda", run.cuda_devices)
      .end_object();
  json.key("plugins").begin_array();
  for (const plugin_description& p : run.plugins) {
    json.begin_object()
        .member("name", p.name)
        .member("version", p.version)
        .member("device_kind", p.device_kind)
        .member("loaded", p.loaded)
        .member("kernels", p.kernel_count);
    if (!p.loaded) json.member("reason", p.reason);
    json.end_object();
  }
  json.end_array();
  json.key("machine").begin_object()
      .member("hostname", run.hostname)
      .member("os", run.os)
      .member("cpu", run.cpu)
      .member("cpu_threads", run.cpu_threads);
  json.key("gpus").begin_array();
  for (const std::string& g : run.gpus) json.value(g);
  json.end_array();
  json.member("gpu_driver", run.gpu_driver);
  json.end_object();
}

}  // namespace tessera::tools
