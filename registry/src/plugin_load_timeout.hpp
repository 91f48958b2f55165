// Loading a plugin with a deadline. A plugin's static constructors and entry point are foreign
// code: one that blocks (waits for a device, a license server, a lock that never comes) must not
// hang the serving process that asked for Tessera's first handle.
//
// The load runs in a helper thread; the caller waits at most the timeout. A plugin that does not
// answer in time is refused with a reason and abandoned: its thread is left running (a thread
// blocked inside foreign code cannot be stopped safely), it owns everything it touches (its own
// copy of the offer and of the outcome), and it never touches the registry. If it ever returns,
// its library stays mapped and unused (plugins are never unloaded once their code ran).
#pragma once

#include "plugin_loader.hpp"

#include <chrono>

namespace tessera::registry {

// TESSERA_PLUGIN_LOAD_TIMEOUT_MS: milliseconds per plugin, default 30000; 0 waits forever (the
// load then runs in the caller's thread).
std::chrono::milliseconds plugin_load_timeout();

// What loads one file: load_plugin_file, or a wrapper of it that must run in the thread that
// runs the plugin's code.
using plugin_file_loader = load_outcome (*)(const std::string& path, const tsrpHostOffer& offer);

// `load(path, offer)`, given at most `timeout` (zero: no limit, in the caller's thread).
load_outcome load_plugin_file_within(const std::string& path, const tsrpHostOffer& offer,
                                     std::chrono::milliseconds timeout,
                                     plugin_file_loader load = load_plugin_file);

}  // namespace tessera::registry
