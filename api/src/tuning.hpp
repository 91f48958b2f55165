// The autotuner on the dispatch path (tsrSetTuningMode, TESSERA_TUNING) and find: measuring
// candidates on scratch outputs, and the persistent tuning database (registry/src/tuning_db.hpp)
// that remembers the winners across processes.
#pragma once

#include "dispatch.hpp"
#include "handle.hpp"

#include "tuning_db.hpp"

#include <string>
#include <vector>

namespace tessera::api {

// The process's tuning database: the user file (TESSERA_TUNING_DB, default
// ~/.cache/tessera/tuning.db) and the read-only system file shipped with an install
// (TESSERA_TUNING_SYSTEM_DB, default <libdir>/../share/tessera/tuning.db). Opened on first use.
registry::tuning_db& process_tuning_db();

// What identifies the handle's device in the database (its plugin's fingerprint, else its name).
const std::string& device_fingerprint(tsrContext& h);

// Limits of one measurement: TESSERA_TUNING_MAX_CANDIDATES (default 32) kernels, and
// TESSERA_TUNING_MAX_MS (default 5000) milliseconds of wall time for all of them.
struct tuning_limits {
  size_t max_candidates = 32;
  double max_ms = 5000.0;
};
tuning_limits tuning_limits_from_environment();

// Times the runnable verdicts of `ranked` (median of `iterations` after a warm-up) on scratch
// outputs allocated for the purpose: the caller's outputs are never written, also when beta is
// not 0. `times` gets one entry per verdict (-1: not measured, with the reason put into the
// verdict, which then no longer counts as runnable). Workspace: the caller's when given, else the
// handle's pool.
tsrStatus_t measure_candidates(tsrContext& h, const operation_call& call,
                               std::vector<registry::kernel_verdict>& ranked, std::vector<float>* times,
                               const tuning_limits& limits, int iterations);

// For a call with TSR_ALGO_AUTO whose problem is not memoized: the kernel the handle's tuning
// mode picks (the database's entry, or a fresh measurement it then stores), or kernel_id -1 when
// the heuristic is to choose. The caller holds the registry's read lock.
registry::selection_result tuned_choice(tsrContext& h, const registry::registry& reg, const operation_call& call,
                                        size_t workspace_available);

}  // namespace tessera::api
