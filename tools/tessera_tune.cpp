// tessera-tune: looks after tuning databases so that a fleet can share one tuning. Lists one,
// exports it (a SQLite file to ship or merge elsewhere, or CSV to read), imports and merges
// others into it (per key the faster entry wins), prunes entries of old plugin versions and
// prints statistics. An internal tool: it uses the registry's C++ (tuning_db) directly.
//
//   tessera-tune list   [--db=PATH] [--system=PATH]
//   tessera-tune export [--db=PATH] OUT            (OUT.csv: CSV text; anything else: SQLite)
//   tessera-tune import [--db=PATH] IN...          (merge IN into the database, faster wins)
//   tessera-tune merge  OUT IN1 IN2 ...            (OUT, created if absent, takes them all)
//   tessera-tune prune  [--db=PATH] --plugin=NAME --version=VERSION
//   tessera-tune stats  [--db=PATH] [--system=PATH]
//   tessera-tune tune   [--db=PATH] [--progress] [tessera-bench modifiers] SUITE
//                                                  (tune_suite.hpp: measure and store winners)
//
// --db defaults to the library's user database: $TESSERA_TUNING_DB, else
// $XDG_CACHE_HOME/tessera/tuning.db, else ~/.cache/tessera/tuning.db.
// Exit status: 0 done, 1 failed, 2 usage error.
#include "tune_suite.hpp"
#include "tuning_db.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessera::tools {
namespace {

using registry::tuning_db;
using registry::tuning_db_state;
using registry::tuning_record;

constexpr const char* usage_text =
    "usage: tessera-tune COMMAND [OPTIONS]\n"
    "  list   [--db=PATH] [--system=PATH]   the entries, as a table\n"
    "  export [--db=PATH] OUT               write the entries to OUT (*.csv: CSV, else SQLite)\n"
    "  import [--db=PATH] IN...             merge IN into the database (the faster entry wins)\n"
    "  merge  OUT IN1 IN2 ...               merge every IN into OUT (created if absent)\n"
    "  prune  [--db=PATH] --plugin=NAME --version=VERSION\n"
    "                                       delete entries of other versions of a plugin\n"
    "  stats  [--db=PATH] [--system=PATH]   counts per plugin and device, integrity\n"
    "  tune   [--db=PATH] [--progress] [MODIFIERS] SUITE\n"
    "                                       run every problem of the tessera-bench batch file\n"
    "                                       SUITE once in tuning mode 'always': the library\n"
    "                                       measures every kernel of every backend of the device\n"
    "                                       and stores each backend's fastest in the database.\n"
    "                                       MODIFIERS are tessera-bench's, read before SUITE\n"
    "                                       (--dt=f16 --tag=nhwc; --backend=NAME picks the\n"
    "                                       device: that backend's). A progress bar with the\n"
    "                                       time left goes to stderr (always on a terminal).\n"
    "--db defaults to $TESSERA_TUNING_DB, else $XDG_CACHE_HOME/tessera/tuning.db, else\n"
    "~/.cache/tessera/tuning.db.\n";

struct arguments {
  std::string command;
  std::string db;
  std::string system;
  std::string plugin;
  std::string version;
  bool progress = false;
  std::vector<std::string> positional;
  std::vector<std::string> bench_args;  // options tessera-tune does not know: tune passes them on
};

int usage_error(const std::string& message) {
  std::cerr << "tessera-tune: " << message << "\n" << usage_text;
  return 2;
}

bool take_option(const std::string& arg, const char* name, std::string& value) {
  const std::string prefix = std::string(name) + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  value = arg.substr(prefix.size());
  return true;
}

std::string db_path(const arguments& a) {
  return a.db.empty() ? registry::default_tuning_db_path() : a.db;
}

// Read-only commands open the database as a "system" database: nothing is created or changed.
bool open_for_reading(tuning_db& db, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::cerr << "tessera-tune: no tuning database at '" << path << "'\n";
    return false;
  }
  db.open("", path);
  registry::tuning_db_info info = db.system_info();
  if (info.state == tuning_db_state::unreadable) {
    std::cerr << "tessera-tune: '" << path << "' cannot be used: " << info.message << "\n";
    return false;
  }
  return true;
}

bool open_for_writing(tuning_db& db, const std::string& path) {
  if (path.empty()) {
    std::cerr << "tessera-tune: no database path (TESSERA_TUNING_DB is off and --db not given)\n";
    return false;
  }
  if (db.open(path, "")) return true;
  registry::tuning_db_info info = db.user_info();
  std::cerr << "tessera-tune: '" << path << "' is not writable (" << to_string(info.state)
            << (info.message.empty() ? "" : ": " + info.message) << ")\n";
  return false;
}

std::string format_time(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", ms);
  return text;
}

// The entries of --db, then those of --system that --db does not override (what a lookup sees).
int run_list(const arguments& a) {
  const std::string path = db_path(a);
  tuning_db db;
  if (!open_for_reading(db, path)) return 1;
  std::vector<std::pair<std::string, tuning_record>> records;
  std::set<std::string> keys;
  auto key_text = [](const tuning_record& r) {
    return r.key.device_fingerprint + '\x1f' + r.key.plugin_name + '\x1f' +
           r.key.plugin_version + '\x1f' + std::to_string(r.key.operation) + '\x1f' +
           r.key.problem_key;
  };
  for (tuning_record& r : db.list(true)) {
    keys.insert(key_text(r));
    records.emplace_back("user", std::move(r));
  }
  if (!a.system.empty()) {
    tuning_db system;
    if (!open_for_reading(system, a.system)) return 1;
    for (tuning_record& r : system.list(true))
      if (!keys.count(key_text(r))) records.emplace_back("system", std::move(r));
  }
  std::vector<std::string> header = {"plugin", "version",   "op",    "problem", "kernel",
                                     "config", "time_ms",   "workspace", "device"};
  if (!a.system.empty()) header.insert(header.begin(), "source");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [source, r] : records) {
    rows.push_back({r.key.plugin_name, r.key.plugin_version, std::to_string(r.key.operation),
                    r.key.problem_key, r.kernel_name,
                    r.config_index < 0 ? "-" : std::to_string(r.config_index),
                    format_time(r.time_ms), std::to_string(r.workspace),
                    r.key.device_fingerprint});
    if (!a.system.empty()) rows.back().insert(rows.back().begin(), source);
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
  std::cout << records.size() << " entr" << (records.size() == 1 ? "y" : "ies") << " in '"
            << path << "'" << (a.system.empty() ? "" : " and '" + a.system + "'") << "\n";
  return 0;
}

int run_export(const arguments& a) {
  if (a.positional.size() != 1) return usage_error("export takes one output file");
  const std::string path = db_path(a);
  tuning_db db;
  if (!open_for_reading(db, path)) return 1;
  const std::string& out = a.positional[0];
  if (!db.export_to(out)) {
    std::cerr << "tessera-tune: export to '" << out << "' failed (see the warning above)\n";
    return 1;
  }
  std::cout << "exported " << db.list(true).size() << " entries from '" << path << "' to '"
            << out << "'\n";
  return 0;
}

// Merges each source into `db`; reports per source and fails if any failed.
int merge_sources(tuning_db& db, const std::string& target,
                  const std::vector<std::string>& sources) {
  int status = 0;
  for (const std::string& in : sources) {
    registry::tuning_merge_result r = db.merge_from(in);
    if (!r.ok) {
      std::cerr << "tessera-tune: merging '" << in << "' failed: " << r.message << "\n";
      status = 1;
      continue;
    }
    std::cout << "'" << in << "' -> '" << target << "': " << r.read << " read, " << r.added
              << " added, " << r.replaced << " replaced (faster), " << r.kept
              << " kept (already as fast)\n";
  }
  return status;
}

int run_import(const arguments& a) {
  if (a.positional.empty()) return usage_error("import takes one or more input files");
  const std::string path = db_path(a);
  tuning_db db;
  if (!open_for_writing(db, path)) return 1;
  return merge_sources(db, path, a.positional);
}

int run_merge(const arguments& a) {
  if (a.positional.size() < 2) return usage_error("merge takes OUT and at least one input");
  const std::string& out = a.positional[0];
  tuning_db db;
  if (!open_for_writing(db, out)) return 1;
  return merge_sources(db, out,
                       std::vector<std::string>(a.positional.begin() + 1, a.positional.end()));
}

int run_prune(const arguments& a) {
  if (a.plugin.empty() || a.version.empty())
    return usage_error("prune needs --plugin=NAME and --version=VERSION");
  const std::string path = db_path(a);
  tuning_db db;
  if (!open_for_writing(db, path)) return 1;
  int64_t removed = db.remove_stale(a.plugin, a.version);
  if (removed < 0) {
    std::cerr << "tessera-tune: prune failed (see the warning above)\n";
    return 1;
  }
  std::cout << "removed " << removed << " entries of '" << a.plugin << "' not at version '"
            << a.version << "'\n";
  return 0;
}

void print_stats(const std::string& title, const registry::tuning_db_info& info,
                 const std::vector<tuning_record>& records, const std::string& integrity) {
  std::error_code ec;
  auto size = std::filesystem::file_size(info.path, ec);
  std::cout << title << ": " << info.path << "\n"
            << "  state:          "
            << (info.state == tuning_db_state::read_only ? "readable" : to_string(info.state))
            << (info.message.empty() ? "" : " (" + info.message + ")") << "\n"
            << "  schema version: " << info.schema_version << "\n"
            << "  file size:      " << (ec ? std::string("?") : std::to_string(size)) << " bytes\n"
            << "  integrity:      " << integrity << "\n"
            << "  entries:        " << records.size() << "\n";
  std::map<std::string, size_t> per_plugin;
  std::map<std::string, size_t> per_device;
  for (const tuning_record& r : records) {
    ++per_plugin[r.key.plugin_name + " " + r.key.plugin_version];
    ++per_device[r.key.device_fingerprint];
  }
  for (const auto& [name, n] : per_plugin) std::cout << "    plugin " << name << ": " << n << "\n";
  for (const auto& [name, n] : per_device) std::cout << "    device " << name << ": " << n << "\n";
}

int run_stats(const arguments& a) {
  const std::string path = db_path(a);
  int status = 0;
  {
    tuning_db db;
    if (open_for_reading(db, path)) {
      print_stats("database", db.system_info(), db.list(true), db.integrity_check(true));
    } else {
      status = 1;
    }
  }
  if (!a.system.empty()) {
    tuning_db db;
    if (open_for_reading(db, a.system)) {
      print_stats("system database", db.system_info(), db.list(true), db.integrity_check(true));
    } else {
      status = 1;
    }
  }
  return status;
}

int run(int argc, char** argv) {
  arguments a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "help") {
      std::cout << usage_text;
      return 0;
    }
    if (take_option(arg, "--db", a.db) || take_option(arg, "--system", a.system) ||
        take_option(arg, "--plugin", a.plugin) || take_option(arg, "--version", a.version))
      continue;
    if (arg == "--progress") {
      a.progress = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      a.bench_args.push_back(arg);
      continue;
    }
    if (a.command.empty())
      a.command = arg;
    else
      a.positional.push_back(arg);
  }
  if (a.command.empty()) return usage_error("no command given");
  if (a.command != "tune" && !a.bench_args.empty())
    return usage_error("unknown option '" + a.bench_args.front() + "'");
  if (a.command == "list") return a.positional.empty() ? run_list(a) : usage_error("list takes no file");
  if (a.command == "export") return run_export(a);
  if (a.command == "import") return run_import(a);
  if (a.command == "merge") return run_merge(a);
  if (a.command == "prune") return run_prune(a);
  if (a.command == "stats") return run_stats(a);
  if (a.command == "tune") {
    if (a.positional.size() != 1) return usage_error("tune takes one suite (a batch file)");
    return tune_suite({a.positional[0], a.bench_args, db_path(a), a.progress});
  }
  return usage_error("unknown command '" + a.command + "'");
}

}  // namespace
}  // namespace tessera::tools

int main(int argc, char** argv) { return tessera::tools::run(argc, argv); }
