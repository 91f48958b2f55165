// Selection policy: which kernel runs a problem. Candidates are the kernels of the operation
// whose plugin serves the handle's device kind: first those of the preferred backends in the
// order given, then the rest in load order, each plugin's kernels in its own table order (a
// plugin lists its kernels best first, as oneDNN's implementation lists do). The first backend
// with a kernel that can run the problem, and whose workspace fits, runs it; among that
// backend's runnable kernels the one with the smallest cost estimate (tsrpKernel.estimate_us)
// wins, kernels without an estimate following in table order. Deterministic-only handles skip
// kernels without TSRP_KERNEL_DETERMINISTIC. Every refusal is kept with its reason so that
// "not supported" can say why, kernel by kernel.
#pragma once

#include "registry.hpp"

#include <string>
#include <vector>

namespace tessera::registry {

struct kernel_verdict {
  int64_t kernel_id = -1;
  bool can_run = false;
  bool workspace_short = false;  // could run, but needs more workspace than given
  size_t workspace = 0;
  double estimate_us = -1.0;     // the kernel's own estimate when it can run; -1: none
  size_t group = 0;              // rank of its backend in the preference order
  std::string reason;            // why it declined
};

struct selection_request {
  int op = 0;
  int32_t device_kind = TSRP_DEVICE_CPU;
  const void* problem = nullptr;
  const std::vector<size_t>* preferred_plugins = nullptr;  // plugin indices, may be null
  // Automatic choices consider the preferred plugins only (tsrSetBackendsExclusive); an explicit
  // kernel is still honoured, whatever its backend.
  bool preferred_only = false;
  // Per plugin index: non-empty when the handle cannot use that plugin (its context failed).
  const std::vector<std::string>* unavailable = nullptr;
  int64_t explicit_kernel = -1;      // tsrAlgo_t, or -1 for automatic choice
  bool check_workspace = true;
  size_t workspace_available = 0;
  bool deterministic_only = false;   // decline kernels without TSRP_KERNEL_DETERMINISTIC
};

struct selection_result {
  int64_t kernel_id = -1;  // -1: nothing can run
  size_t workspace = 0;
  bool workspace_short = false;  // something could run but not in the workspace given
  std::vector<kernel_verdict> declined;
};

// Caller holds the registry's read lock.
selection_result select_kernel(const registry& reg, const selection_request& request);

// Every candidate with its verdict, runnable first in the order select_kernel would prefer them
// (backend preference, then estimate), then the rest in preference order (get-algorithm, find).
std::vector<kernel_verdict> rank_candidates(const registry& reg, const selection_request& request);

// "onednn/conv_fwd: reason; cuda/conv_fwd_direct: reason" (for messages).
std::string join_reasons(const registry& reg, const std::vector<kernel_verdict>& declined);

}  // namespace tessera::registry
