#include "cudnn_kernel_glue.hpp"

namespace tessera::cudnn_plugin {

verdict cached_verdict(const std::string& key, const std::function<verdict()>& compute) {
  // Bounded like the per-context cache: a long-running process with ever-new shapes starts over.
  constexpr size_t max_verdicts = 4096;
  static std::mutex mutex;
  static std::unordered_map<std::string, verdict> verdicts;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = verdicts.find(key);
    if (found != verdicts.end()) return found->second;
  }
  verdict v = compute();  // asks cuDNN; outside this lock (the query handle has its own)
  std::lock_guard<std::mutex> lock(mutex);
  if (verdicts.size() >= max_verdicts) verdicts.clear();
  verdicts.emplace(key, v);
  return v;
}

}  // namespace tessera::cudnn_plugin
