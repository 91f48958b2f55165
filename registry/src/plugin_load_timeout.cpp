#include "plugin_load_timeout.hpp"

#include "logging.hpp"

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tessera::registry {
namespace {

constexpr long long k_default_timeout_ms = 30000;

// Shared by the waiting caller and the helper thread; lives as long as either holds it.
struct pending_load {
  std::string path;
  tsrpHostOffer offer{};
  plugin_file_loader load = load_plugin_file;
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  bool abandoned = false;  // the caller stopped waiting
  load_outcome outcome;
};

// Libraries of plugins that answered after they were abandoned: kept mapped, never used. Leaked on
// purpose, as the registry is.
void keep_mapped(std::shared_ptr<boost::dll::shared_library> library) {
  static std::mutex* mutex = new std::mutex();
  static auto* kept = new std::vector<std::shared_ptr<boost::dll::shared_library>>();
  std::lock_guard<std::mutex> lock(*mutex);
  kept->push_back(std::move(library));
}

void run_load(const std::shared_ptr<pending_load>& job) {
  load_outcome outcome;
  try {
    outcome = job->load(job->path, job->offer);
  } catch (const std::exception& e) {
    outcome.ok = false;
    outcome.reason = std::string("loading failed: ") + e.what();
  } catch (...) {
    outcome.ok = false;
    outcome.reason = "loading failed";
  }
  std::lock_guard<std::mutex> lock(job->mutex);
  if (job->abandoned) {
    // Nobody reads the outcome any more. Its library is kept mapped for the life of the process
    // (decision 4: code that ran may have left threads or callbacks behind).
    if (outcome.plugin.library) keep_mapped(std::move(outcome.plugin.library));
    log::write(log::level::warn, "plugin " + job->path +
                                     " finished loading after its timeout; it stays unused");
    return;
  }
  job->outcome = std::move(outcome);
  job->finished = true;
  job->finished_cv.notify_all();
}

}  // namespace

std::chrono::milliseconds plugin_load_timeout() {
  const char* text = std::getenv("TESSERA_PLUGIN_LOAD_TIMEOUT_MS");
  if (!text || !*text) return std::chrono::milliseconds(k_default_timeout_ms);
  char* end = nullptr;
  long long ms = std::strtoll(text, &end, 10);
  if (*end != '\0' || ms < 0) {
    log::write_once(log::level::warn, "TESSERA_PLUGIN_LOAD_TIMEOUT_MS",
                    std::string("TESSERA_PLUGIN_LOAD_TIMEOUT_MS='") + text +
                        "' is not a number of milliseconds; using " +
                        std::to_string(k_default_timeout_ms));
    return std::chrono::milliseconds(k_default_timeout_ms);
  }
  // A day at most: beyond it, waiting is waiting forever, and the clock arithmetic of a larger
  // value would overflow.
  constexpr long long k_day_ms = 24LL * 3600 * 1000;
  return std::chrono::milliseconds(ms < k_day_ms ? ms : k_day_ms);
}

load_outcome load_plugin_file_within(const std::string& path, const tsrpHostOffer& offer,
                                     std::chrono::milliseconds timeout, plugin_file_loader load) {
  if (timeout.count() == 0) return load(path, offer);
  auto job = std::make_shared<pending_load>();
  job->path = path;
  job->load = load;
  job->offer = offer;  // the helper's own copy: the caller's may be gone when it reads it
  try {
    std::thread([job] { run_load(job); }).detach();
  } catch (const std::system_error& e) {
    log::write(log::level::warn, "plugin " + path + ": no thread for a timed load (" + e.what() +
                                     "); loading without a timeout");
    return load(path, offer);
  }
  std::unique_lock<std::mutex> lock(job->mutex);
  if (!job->finished_cv.wait_for(lock, timeout, [&] { return job->finished; })) {
    job->abandoned = true;
    load_outcome out;
    out.ok = false;
    out.reason = "did not finish loading within " + std::to_string(timeout.count()) +
                 " ms (TESSERA_PLUGIN_LOAD_TIMEOUT_MS); abandoned: its library stays mapped, its "
                 "entry point is left running and nothing of it is used";
    log::write(log::level::error, "plugin " + path + ": " + out.reason);
    return out;
  }
  return std::move(job->outcome);
}

}  // namespace tessera::registry
