#include "logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <strings.h>

namespace tessera::log {
namespace {

struct logger_state {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::set<std::string> once_keys;
};

// Leaked on purpose: plugins may log from their own static destructors at exit.
logger_state& state() {
  static logger_state* s = new logger_state();
  return *s;
}

std::atomic<int> g_level{-1};  // -1: not configured yet

level parse_level(const char* text) {
  if (!text || !*text) return level::warn;
  struct { const char* name; level lvl; } names[] = {
      {"trace", level::trace}, {"debug", level::debug}, {"info", level::info},
      {"warn", level::warn},   {"warning", level::warn}, {"error", level::error},
      {"off", level::off},     {"none", level::off}};
  for (const auto& n : names)
    if (strcasecmp(text, n.name) == 0) return n.lvl;
  return level::warn;
}

spdlog::level::level_enum to_spdlog(level lvl) {
  switch (lvl) {
    case level::trace: return spdlog::level::trace;
    case level::debug: return spdlog::level::debug;
    case level::info: return spdlog::level::info;
    case level::warn: return spdlog::level::warn;
    case level::error: return spdlog::level::err;
    case level::off: break;
  }
  return spdlog::level::off;
}

void configure_locked(logger_state& s) {
  level lvl = parse_level(std::getenv("TESSERA_LOG_LEVEL"));
  const char* file = std::getenv("TESSERA_LOG_FILE");
  try {
    if (file && *file)
      s.logger = std::make_shared<spdlog::logger>(
          "tessera", std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, false));
    else
      s.logger = std::make_shared<spdlog::logger>(
          "tessera", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    s.logger->set_pattern("[tessera %L %H:%M:%S.%e t%t] %v");
    s.logger->set_level(to_spdlog(lvl));
    s.logger->flush_on(spdlog::level::trace);
  } catch (...) {
    // An unwritable log file must not stop the library: fall back to stderr.
    s.logger = std::make_shared<spdlog::logger>(
        "tessera", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    s.logger->set_level(to_spdlog(lvl));
  }
  g_level.store(static_cast<int>(lvl), std::memory_order_release);
}

int current_level() {
  int lvl = g_level.load(std::memory_order_acquire);
  if (lvl < 0) {
    logger_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (g_level.load(std::memory_order_relaxed) < 0) configure_locked(s);
    lvl = g_level.load(std::memory_order_relaxed);
  }
  return lvl;
}

}  // namespace

bool enabled(level lvl) noexcept {
  return static_cast<int>(lvl) >= current_level() && lvl != level::off;
}

void write(level lvl, const std::string& message) noexcept {
  if (!enabled(lvl)) return;
  try {
    logger_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.logger->log(to_spdlog(lvl), message);
  } catch (...) {
  }
}

void write_once(level lvl, const std::string& key, const std::string& message) noexcept {
  if (!enabled(lvl)) return;
  try {
    logger_state& s = state();
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.once_keys.insert(key).second) return;
    }
    write(lvl, message);
  } catch (...) {
  }
}

void reconfigure_from_environment() noexcept {
  try {
    logger_state& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.logger) s.logger->flush();
    configure_locked(s);
  } catch (...) {
  }
}

}  // namespace tessera::log
