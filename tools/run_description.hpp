// What a benchmark file must say about its run to be read later: when, by which command, on
// which machine, with which Tessera and plugins. tessera-bench writes it as the JSON header that
// tools/perf-report turns into the preamble of docs/PERFORMANCE.md.
#ifndef TESSERA_TOOLS_RUN_DESCRIPTION_HPP
#define TESSERA_TOOLS_RUN_DESCRIPTION_HPP

#include <string>
#include <vector>

#include "json_writer.hpp"

namespace tessera::tools {

struct plugin_description {
  std::string name;
  std::string version;
  std::string device_kind;  // "cpu", "cuda"
  bool loaded = false;
  int kernel_count = 0;
  std::string reason;  // why it was not loaded
};

struct run_description {
  std::string date_utc;  // ISO 8601, e.g. "2025-01-31T12:00:00Z"
  std::string command;   // the command line, words joined by spaces
  std::string tessera_version;
  int cpu_devices = 0;
  int cuda_devices = 0;
  std::vector<plugin_description> plugins;
  // The machine: what the library does not report, read from the operating system.
  std::string hostname;
  std::string os;                 // "Linux 6.1.0"
  std::string cpu;                // /proc/cpuinfo's model name
  int cpu_threads = 0;
  std::vector<std::string> gpus;  // the NVIDIA driver's model names, one per GPU
  std::string gpu_driver;         // the NVIDIA driver's version line
};

// Describes this process's run; `args` is argv.
run_description describe_run(const std::vector<std::string>& args);

// Writes it as the members of the JSON object being written.
void write_run_description(json_writer& json, const run_description& run);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_RUN_DESCRIPTION_HPP
