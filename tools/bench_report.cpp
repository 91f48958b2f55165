#include "bench_report.hpp"

#include <tessera_common/shape_inference.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "json_writer.hpp"

namespace tessera::tools {
namespace {

const char* status_word(outcome_status status) {
  static const char* const words[] = {"passed", "skipped", "failed"};
  return words[static_cast<int>(status)];
}

// What describes a problem whatever backend ran it.
struct problem_columns {
  std::string driver, dtype, layout;
};
problem_columns columns_of(const bench_problem& p) {
  return {driver_name(p.settings.driver), common::data_type_name(p.settings.data_type),
          p.settings.channels_last ? "nhwc" : "nchw"};
}

bool opened(std::ofstream& file, const std::string& path, std::string* error) {
  if (file) return true;
  if (error) *error = "cannot write '" + path + "'";
  return false;
}

bool closed(std::ofstream& file, const std::string& path, std::string* error) {
  file.close();
  if (file) return true;
  if (error) *error = "writing '" + path + "' failed";
  return false;
}

// RFC 4180: fields with a comma, a quote or a line break are quoted, quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(double value) {
  if (!std::isfinite(value) || value < 0) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

bool write_json_report(const std::string& path, const run_description& run, const run_progress& progress,
                       const std::vector<comparison_row>& rows,
                       const std::vector<ratio_geomeans::mean>& geomeans, std::string* error) {
  // Written beside the target and renamed over it: a reader never sees half a file.
  const std::string partial = path + ".partial";
  std::ofstream file(partial);
  if (!opened(file, partial, error)) return false;
  json_writer json(file);
  json.begin_object().member("format", "tessera-bench/1");
  json.key("header").begin_object();
  write_run_description(json, run);
  json.end_object();
  json.member("problems_planned", static_cast<int64_t>(progress.problems_planned))
      .member("problems_done", static_cast<int64_t>(rows.size()))
      .member("complete", progress.complete);
  json.key("rows").begin_array();
  for (const comparison_row& row : rows) {
    const problem_columns c = columns_of(row.problem);
    json.begin_object()
        .member("suite", row.problem.suite)
        .member("problem", row.descriptor)
        .member("text", row.problem.text)
        .member("origin", row.problem.origin)
        .member("driver", c.driver)
        .member("dtype", c.dtype)
        .member("layout", c.layout);
    json.key("results").begin_array();
    for (size_t i = 0; i < row.outcomes.size(); ++i) {
      const problem_outcome& o = row.outcomes[i];
      const scaled_rate rate = tera_rate(o);
      json.begin_object()
          .member("backend", row.labels[i])
          .member("status", status_word(o.status))
          .member("kernel", o.implementation);
      // Not measured (and NaN) is written as null.
      json.member("time_ms", o.time_ms >= 0 ? o.time_ms : std::nan(""))
          .member("rate", rate.value >= 0 ? rate.value : std::nan(""))
          .member("rate_unit", rate.unit)
          .member("ratio", i == 0 ? std::nan("") : row.ratio(i));
      if (o.status != outcome_status::passed) json.member("detail", o.detail);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.key("geomeans").begin_array();
  for (const ratio_geomeans::mean& m : geomeans)
    json.begin_object()
        .member("suite", m.suite)
        .member("backend", m.backend)
        .member("baseline", m.baseline)
        .member("ratio", m.problems ? m.value : std::nan(""))
        .member("problems", m.problems)
        .end_object();
  json.end_array();
  json.end_object();
  if (!closed(file, partial, error)) return false;
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    if (error) *error = "cannot rename " + partial + " to " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool write_csv_report(const std::string& path, const std::vector<comparison_row>& rows,
                      std::string* error) {
  std::ofstream file(path);
  if (!opened(file, path, error)) return false;
  size_t columns = 1;
  for (const comparison_row& row : rows) columns = std::max(columns, row.outcomes.size());
  file << "suite,problem,text,driver,dtype,layout";
  for (size_t k = 1; k <= columns; ++k)
    for (const char* name : {"backend", "status", "kernel", "time_ms", "rate", "unit", "ratio"})
      file << ',' << name << '_' << k;
  file << '\n';
  for (const comparison_row& row : rows) {
    const problem_columns c = columns_of(row.problem);
    file << csv_field(row.problem.suite) << ',' << csv_field(row.descriptor) << ','
         << csv_field(row.problem.text) << ',' << c.driver << ',' << c.dtype << ',' << c.layout;
    for (size_t i = 0; i < columns; ++i) {
      if (i >= row.outcomes.size()) {
        file << ",,,,,,,";
        continue;
      }
      const problem_outcome& o = row.outcomes[i];
      const scaled_rate rate = tera_rate(o);
      file << ',' << csv_field(row.labels[i]) << ',' << status_word(o.status) << ','
           << csv_field(o.implementation) << ',' << csv_number(o.time_ms) << ','
           << csv_number(rate.value) << ',' << rate.unit << ','
           << (i == 0 ? "" : csv_number(row.ratio(i)));
    }
    file << '\n';
  }
  return closed(file, path, error);
}

}  // namespace tessera::tools
