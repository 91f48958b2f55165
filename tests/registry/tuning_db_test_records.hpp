// The records tuning_db_test and its worker processes agree on: key "PREFIX-i" of a fake
// plugin on a fake GPU, with contents derived from the key so that a reader can check them.
#pragma once

#include "tuning_db.hpp"

#include <string>

namespace tessera::testing {

inline registry::tuning_key test_key(const std::string& prefix, int i,
                                     const std::string& plugin_version = "1.0.0") {
  registry::tuning_key k;
  k.device_fingerprint = registry::device_fingerprint("Test GPU", 9, 0, 132, 12040, 12060);
  k.plugin_name = "fake";
  k.plugin_version = plugin_version;
  k.operation = 3;
  k.problem_key = prefix + "-" + std::to_string(i);
  return k;
}

inline registry::tuning_record test_record(const std::string& prefix, int i,
                                           double time_ms = 1.0, int64_t measured_at = 1000,
                                           const std::string& plugin_version = "1.0.0") {
  registry::tuning_record r;
  r.key = test_key(prefix, i, plugin_version);
  r.kernel_name = "kernel_for_" + prefix + "_" + std::to_string(i);
  r.config_index = i % 7;
  r.time_ms = time_ms;
  r.workspace = static_cast<size_t>(i) * 64;
  r.measured_at_unix = measured_at;
  r.tessera_version = "0.1.0";
  return r;
}

}  // namespace tessera::testing
