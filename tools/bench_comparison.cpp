#include "bench_comparison.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace tessera::tools {
namespace {

const char* status_name(outcome_status status) {
  static const char* const names[] = {"PASSED", "SKIPPED", "FAILED"};
  return names[static_cast<int>(status)];
}

// The row's verdict: failed when any backend failed, skipped when none ran, else passed (a
// backend that could not run it says so in its cell).
outcome_status row_status(const comparison_row& row) {
  bool any_passed = false;
  for (const problem_outcome& o : row.outcomes) {
    if (o.status == outcome_status::failed) return outcome_status::failed;
    any_passed |= o.status == outcome_status::passed;
  }
  return any_passed ? outcome_status::passed : outcome_status::skipped;
}

std::string without_backend_flag(std::string descriptor, const std::string& backend) {
  if (backend.empty()) return descriptor;
  const std::string flag = " --backend=" + backend;
  const size_t at = descriptor.find(flag);
  if (at != std::string::npos) descriptor.erase(at, flag.size());
  return descriptor;
}

std::string format_cell(const comparison_row& row, size_t i) {
  const problem_outcome& o = row.outcomes[i];
  if (o.status == outcome_status::skipped) return row.labels[i] + " SKIPPED: " + o.detail;
  std::string cell = o.status == outcome_status::failed ? row.labels[i] + " FAILED " : "";
  cell += o.implementation;
  char number[96];
  const scaled_rate rate = tera_rate(o);
  if (o.time_ms >= 0) {
    std::snprintf(number, sizeof number, " %.4gms %.4g%s", o.time_ms, rate.value,
                  rate.unit.c_str());
    cell += number;
  } else {
    cell += " - -";
  }
  if (i > 0) {
    const double r = row.ratio(i);
    if (std::isfinite(r)) {
      std::snprintf(number, sizeof number, " ratio %.3f", r);
      cell += number;
    } else {
      cell += " ratio -";
    }
  }
  return cell;
}

}  // namespace

std::vector<std::string> split_backend_list(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.push_back(name);
  if (names.empty()) names.push_back("");  // the default device
  return names;
}

std::vector<std::string> backend_labels(const std::vector<std::string>& backends) {
  std::vector<std::string> labels;
  std::map<std::string, int> seen;
  for (const std::string& b : backends) {
    const std::string name = b.empty() ? "default" : b;
    const int n = ++seen[name];
    labels.push_back(n == 1 ? name : name + "#" + std::to_string(n));
  }
  return labels;
}

scaled_rate tera_rate(const problem_outcome& outcome) {
  scaled_rate r;
  if (outcome.rate < 0) return r;
  const std::string unit = outcome.rate_unit;
  if (unit == "GFLOP/s") return {outcome.rate / 1e3, "TFLOP/s"};
  if (unit == "GB/s") return {outcome.rate / 1e3, "TB/s"};
  return {outcome.rate, unit};
}

double comparison_row::ratio(size_t i) const {
  const problem_outcome& first = outcomes[0];
  const problem_outcome& other = outcomes[i];
  if (first.status != outcome_status::passed || other.status != outcome_status::passed ||
      first.time_ms <= 0 || other.time_ms < 0)
    return std::numeric_limits<double>::quiet_NaN();
  return other.time_ms / first.time_ms;
}

comparison_row run_on_each_backend(bench_runner& runner, const bench_problem& problem) {
  comparison_row row;
  row.problem = problem;
  row.backends = split_backend_list(problem.settings.backend);
  row.labels = backend_labels(row.backends);
  for (size_t i = 0; i < row.backends.size(); ++i) {
    bench_problem on_one = problem;
    on_one.settings.backend = row.backends[i];
    // Slot i: a backend listed twice gets two handles, a self-consistency check.
    row.outcomes.push_back(runner.run(on_one, static_cast<int>(i)));
  }
  row.descriptor = without_backend_flag(row.outcomes[0].descriptor, row.backends[0]);
  return row;
}

std::string format_row(const comparison_row& row) {
  if (!row.side_by_side()) return format_outcome(row.outcomes[0]);
  std::string line = std::string(status_name(row_status(row))) + " " + row.descriptor;
  for (size_t i = 0; i < row.outcomes.size(); ++i) line += " | " + format_cell(row, i);
  for (size_t i = 0; i < row.outcomes.size(); ++i) {
    const problem_outcome& o = row.outcomes[i];
    if (o.status != outcome_status::failed) continue;
    line += "\n    " + row.labels[i] + ": " + o.detail;
    if (!o.repro.empty()) line += "\n    repro: " + o.repro;
  }
  return line;
}

void ratio_geomeans::add(const comparison_row& row) {
  for (size_t i = 1; i < row.outcomes.size(); ++i) {
    const std::string key = row.problem.suite + '\x1f' + row.labels[i] + '\x1f' + row.labels[0];
    auto [it, fresh] = sums_.try_emplace(key);
    if (fresh) order_.push_back({row.problem.suite, row.labels[i], row.labels[0], 0.0, 0});
    const double r = row.ratio(i);
    if (!std::isfinite(r) || r <= 0) continue;
    it->second.log_sum += std::log(r);
    ++it->second.count;
  }
}

std::vector<ratio_geomeans::mean> ratio_geomeans::means() const {
  std::vector<mean> out;
  for (mean m : order_) {
    const sum& s = sums_.at(m.suite + '\x1f' + m.backend + '\x1f' + m.baseline);
    m.problems = s.count;
    m.value = s.count ? std::exp(s.log_sum / s.count) : std::numeric_limits<double>::quiet_NaN();
    out.push_back(m);
  }
  return out;
}

std::string format_geomean(const ratio_geomeans::mean& m) {
  char text[64];
  if (m.problems)
    std::snprintf(text, sizeof text, "%.3f", m.value);
  else
    std::snprintf(text, sizeof text, "-");
  return "geomean " + m.suite + ": " + m.backend + "/" + m.baseline + " time ratio " + text +
         " over " + std::to_string(m.problems) + " problem" + (m.problems == 1 ? "" : "s") +
         " (> 1: " + m.baseline + " is faster)";
}

}  // namespace tessera::tools
