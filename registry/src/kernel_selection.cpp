#include "kernel_selection.hpp"

#include <algorithm>

namespace tessera::registry {
namespace {

// Visits candidates in preference order with the rank of their backend in that order; stops
// when `visit` returns false.
template <typename Visit>
void for_each_candidate(const registry& reg, const selection_request& req, Visit&& visit) {
  const std::vector<int64_t>& ids = reg.kernels_for(req.op);
  const auto& kernels = reg.kernels();
  const auto& plugins = reg.plugins();
  auto serves = [&](const kernel_record& k) {
    return plugins[k.plugin_index].device_kind == req.device_kind;
  };
  const std::vector<size_t> none;
  const std::vector<size_t>& preferred = req.preferred_plugins ? *req.preferred_plugins : none;
  size_t group = 0;
  for (size_t plugin : preferred) {
    for (int64_t id : ids)
      if (kernels[id].plugin_index == plugin && serves(kernels[id]))
        if (!visit(kernels[id], group)) return;
    ++group;
  }
  // The others by load order: a plugin's rank is preferred.size() + its index.
  for (int64_t id : ids) {
    const kernel_record& k = kernels[id];
    if (!serves(k)) continue;
    if (std::find(preferred.begin(), preferred.end(), k.plugin_index) != preferred.end()) continue;
    if (!visit(k, group + k.plugin_index)) return;
  }
}

// Estimates rank within a backend; no estimate ranks after every estimate, in table order.
bool ranks_before(const kernel_verdict& a, const kernel_verdict& b) {
  if (a.group != b.group) return a.group < b.group;
  const bool ea = a.estimate_us >= 0.0, eb = b.estimate_us >= 0.0;
  if (ea != eb) return ea;
  return ea && a.estimate_us < b.estimate_us;
}

kernel_verdict judge(const registry& reg, const kernel_record& k, const selection_request& req) {
  kernel_verdict v;
  v.kernel_id = k.id;
  if (req.unavailable && k.plugin_index < req.unavailable->size() &&
      !(*req.unavailable)[k.plugin_index].empty()) {
    v.reason = (*req.unavailable)[k.plugin_index];
    return v;
  }
  if (reg.plugins()[k.plugin_index].device_kind != req.device_kind) {
    v.reason = "serves another device kind";
    return v;
  }
  if (req.preferred_only && req.explicit_kernel < 0) {
    const std::vector<size_t> none;
    const std::vector<size_t>& preferred = req.preferred_plugins ? *req.preferred_plugins : none;
    if (std::find(preferred.begin(), preferred.end(), k.plugin_index) == preferred.end()) {
      v.reason = "backend " + reg.plugins()[k.plugin_index].name +
                 " is not in the handle's exclusive backend list (tsrSetBackendsExclusive)";
      return v;
    }
  }
  char reason[256] = {0};
  int yes = 0;
  try {
    yes = k.kernel.can_implement(k.kernel.user_data, req.problem, reason, sizeof(reason));
  } catch (...) {
    v.reason = "can_implement threw an exception";
    return v;
  }
  reason[sizeof(reason) - 1] = '\0';
  if (!yes) {
    v.reason = reason[0] ? reason : "declined without a reason";
    return v;
  }
  if (k.kernel.workspace_size) {
    size_t bytes = 0;
    tsrpStatus_t s;
    try {
      s = k.kernel.workspace_size(k.kernel.user_data, req.problem, &bytes);
    } catch (...) {
      s = TSRP_STATUS_INTERNAL_ERROR;
    }
    if (s != TSRP_STATUS_SUCCESS) {
      v.reason = "workspace query failed (status " + std::to_string(s) + ")";
      return v;
    }
    v.workspace = bytes;
  }
  if (req.deterministic_only && !(k.kernel.flags & TSRP_KERNEL_DETERMINISTIC)) {
    v.reason = "not deterministic (the handle asks for deterministic kernels only)";
    return v;
  }
  if (req.check_workspace && v.workspace > req.workspace_available) {
    v.workspace_short = true;
    v.reason = "needs " + std::to_string(v.workspace) + " bytes of workspace, " +
               std::to_string(req.workspace_available) + " given";
    return v;
  }
  v.can_run = true;
  if (k.kernel.estimate_us) {
    try {
      const double us = k.kernel.estimate_us(k.kernel.user_data, req.problem);
      v.estimate_us = us >= 0.0 ? us : -1.0;
    } catch (...) {
      v.estimate_us = -1.0;
    }
  }
  return v;
}

}  // namespace

selection_result select_kernel(const registry& reg, const selection_request& req) {
  selection_result result;
  if (req.explicit_kernel >= 0) {
    kernel_verdict v = judge(reg, reg.kernels()[req.explicit_kernel], req);
    if (v.can_run) {
      result.kernel_id = v.kernel_id;
      result.workspace = v.workspace;
    } else {
      result.workspace_short = v.workspace_short;
      result.declined.push_back(std::move(v));
    }
    return result;
  }
  // The first backend with a runnable kernel runs the problem; its remaining kernels are judged
  // too, so that the estimates can choose among them.
  kernel_verdict best;
  bool found = false;
  for_each_candidate(reg, req, [&](const kernel_record& k, size_t group) {
    if (found && group != best.group) return false;
    kernel_verdict v = judge(reg, k, req);
    v.group = group;
    if (v.can_run) {
      if (!found || ranks_before(v, best)) best = v;
      found = true;
      return true;
    }
    result.workspace_short |= v.workspace_short;
    result.declined.push_back(std::move(v));
    return true;
  });
  if (found) {
    result.kernel_id = best.kernel_id;
    result.workspace = best.workspace;
  }
  return result;
}

std::vector<kernel_verdict> rank_candidates(const registry& reg, const selection_request& req) {
  std::vector<kernel_verdict> all;
  for_each_candidate(reg, req, [&](const kernel_record& k, size_t group) {
    kernel_verdict v = judge(reg, k, req);
    v.group = group;
    all.push_back(std::move(v));
    return true;
  });
  // Runnable first, in the order select_kernel prefers them; the rest in preference order.
  auto runnable_end =
      std::stable_partition(all.begin(), all.end(), [](const kernel_verdict& v) { return v.can_run; });
  std::stable_sort(all.begin(), runnable_end, ranks_before);
  return all;
}

std::string join_reasons(const registry& reg, const std::vector<kernel_verdict>& declined) {
  if (declined.empty()) return "no kernel of this operation is loaded for this device";
  // Bounded: a plugin may register thousands of kernels, and a message is copied on every
  // failing call. The first ones are the preferred ones, which are what the reader wants.
  constexpr size_t k_max_listed = 32;
  std::string out;
  for (size_t i = 0; i < declined.size() && i < k_max_listed; ++i) {
    if (!out.empty()) out += "; ";
    out += reg.kernels()[declined[i].kernel_id].full_name + ": " + declined[i].reason;
  }
  if (declined.size() > k_max_listed)
    out += "; and " + std::to_string(declined.size() - k_max_listed) + " more kernels declined";
  return out;
}

}  // namespace tessera::registry
