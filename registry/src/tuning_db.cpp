#include "tuning_db.hpp"

#include "logging.hpp"

#include <sqlite3.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <strings.h>
#include <system_error>
#include <thread>
#include <tuple>

namespace fs = std::filesystem;

namespace tessera::registry {
namespace {

constexpr int busy_timeout_ms = 5000;
// Retries after SQLite's own busy wait gave up: bounded, so a wedged database costs a store,
// not a hung process.
constexpr auto retry_budget = std::chrono::seconds(15);

// Additive only (see the header): a newer schema may add tables and defaulted columns.
constexpr const char* schema_sql =
    "CREATE TABLE IF NOT EXISTS tessera_meta ("
    " key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tuning ("
    " device_fingerprint TEXT NOT NULL,"
    " plugin_name TEXT NOT NULL,"
    " plugin_version TEXT NOT NULL,"
    " operation INTEGER NOT NULL,"
    " problem_key TEXT NOT NULL,"
    " kernel_name TEXT NOT NULL,"
    " config_index INTEGER NOT NULL DEFAULT -1,"
    " time_ms REAL NOT NULL,"
    " workspace INTEGER NOT NULL DEFAULT 0,"
    " measured_at INTEGER NOT NULL DEFAULT 0,"
    " tessera_version TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (device_fingerprint, plugin_name, plugin_version, operation, problem_key)"
    ") WITHOUT ROWID;";

constexpr const char* select_columns =
    "SELECT device_fingerprint, plugin_name, plugin_version, operation, problem_key,"
    " kernel_name, config_index, time_ms, workspace, measured_at, tessera_version FROM tuning";

constexpr const char* key_where =
    " WHERE device_fingerprint=?1 AND plugin_name=?2 AND plugin_version=?3 AND operation=?4"
    " AND problem_key=?5";

// The newer measurement wins; an entry measured later than the incoming one stays.
constexpr const char* upsert_sql =
    "INSERT INTO tuning (device_fingerprint, plugin_name, plugin_version, operation, problem_key,"
    " kernel_name, config_index, time_ms, workspace, measured_at, tessera_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    " ON CONFLICT (device_fingerprint, plugin_name, plugin_version, operation, problem_key)"
    " DO UPDATE SET kernel_name=excluded.kernel_name, config_index=excluded.config_index,"
    " time_ms=excluded.time_ms, workspace=excluded.workspace, measured_at=excluded.measured_at,"
    " tessera_version=excluded.tessera_version"
    " WHERE excluded.measured_at >= tuning.measured_at";

constexpr const char* replace_sql =
    "INSERT OR REPLACE INTO tuning (device_fingerprint, plugin_name, plugin_version, operation,"
    " problem_key, kernel_name, config_index, time_ms, workspace, measured_at, tessera_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

struct statement {
  sqlite3_stmt* s = nullptr;
  statement() = default;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement() { sqlite3_finalize(s); }
};

int prepare(sqlite3* db, const char* sql, statement& st) {
  sqlite3_finalize(st.s);
  st.s = nullptr;
  return sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr);
}

int primary(int rc) { return rc & 0xff; }
bool is_busy(int rc) {
  return primary(rc) == SQLITE_BUSY || primary(rc) == SQLITE_LOCKED ||
         primary(rc) == SQLITE_PROTOCOL;
}
bool is_corrupt(int rc) { return primary(rc) == SQLITE_CORRUPT || primary(rc) == SQLITE_NOTADB; }

// SQLITE_ROW / SQLITE_DONE are progress, not errors.
int settle(int rc) { return (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc; }

std::string sqlite_message(sqlite3* db, int rc) {
  std::string text = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (text.empty() || text == "not an error") text = sqlite3_errstr(rc);
  return text + " (SQLite code " + std::to_string(rc) + ")";
}

void jitter_sleep(unsigned attempt) {
  // Spread the retries of processes that collided: 1..16 ms, grown with the attempt.
  static thread_local unsigned seed = static_cast<unsigned>(::getpid()) * 2654435761u ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
  seed = seed * 1103515245u + 12345u;
  unsigned ms = 1 + (seed >> 16) % (2u + std::min(attempt, 14u));
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Runs `body` (returning an SQLite code) as one transaction when `write`, retrying the whole of it
// while the database is busy, within retry_budget. Leaves no transaction open.
template <class Body>
int with_retry(sqlite3* db, bool write, Body&& body) {
  const auto deadline = std::chrono::steady_clock::now() + retry_budget;
  for (unsigned attempt = 0;; ++attempt) {
    int rc = SQLITE_OK;
    try {
      if (write) rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) rc = body();
      if (write && rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    } catch (...) {
      if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    // The caller words a failure from the code (sqlite_message), which ROLLBACK leaves alone.
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(db))
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK || !is_busy(rc) || std::chrono::steady_clock::now() >= deadline)
      return rc;
    jitter_sleep(attempt);
  }
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

void bind_key(sqlite3_stmt* s, const tuning_key& k) {
  bind_text(s, 1, k.device_fingerprint);
  bind_text(s, 2, k.plugin_name);
  bind_text(s, 3, k.plugin_version);
  sqlite3_bind_int(s, 4, k.operation);
  bind_text(s, 5, k.problem_key);
}

void bind_record(sqlite3_stmt* s, const tuning_record& r) {
  bind_key(s, r.key);
  bind_text(s, 6, r.kernel_name);
  sqlite3_bind_int64(s, 7, r.config_index);
  sqlite3_bind_double(s, 8, r.time_ms);
  sqlite3_bind_int64(s, 9, static_cast<sqlite3_int64>(r.workspace));
  sqlite3_bind_int64(s, 10, r.measured_at_unix);
  bind_text(s, 11, r.tessera_version);
}

std::string column_text(sqlite3_stmt* s, int i) {
  const unsigned char* p = sqlite3_column_text(s, i);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(s, i)))
           : std::string();
}

// Reads a row of select_columns.
tuning_record read_row(sqlite3_stmt* s) {
  tuning_record r;
  r.key.device_fingerprint = column_text(s, 0);
  r.key.plugin_name = column_text(s, 1);
  r.key.plugin_version = column_text(s, 2);
  r.key.operation = sqlite3_column_int(s, 3);
  r.key.problem_key = column_text(s, 4);
  r.kernel_name = column_text(s, 5);
  r.config_index = sqlite3_column_int64(s, 6);
  r.time_ms = sqlite3_column_double(s, 7);
  sqlite3_int64 ws = sqlite3_column_int64(s, 8);
  r.workspace = ws < 0 ? 0 : static_cast<size_t>(ws);
  r.measured_at_unix = sqlite3_column_int64(s, 9);
  r.tessera_version = column_text(s, 10);
  return r;
}

auto key_tuple(const tuning_key& k) {
  return std::tie(k.device_fingerprint, k.plugin_name, k.plugin_version, k.operation,
                  k.problem_key);
}

struct key_less {
  bool operator()(const tuning_key& a, const tuning_key& b) const {
    return key_tuple(a) < key_tuple(b);
  }
};

bool valid_record(const tuning_record& r) {
  return !r.key.device_fingerprint.empty() && !r.key.plugin_name.empty() &&
         !r.kernel_name.empty() && std::isfinite(r.time_ms) && r.time_ms >= 0.0 &&
         r.workspace <= static_cast<size_t>(std::numeric_limits<sqlite3_int64>::max());
}

const char* role_name(bool system) { return system ? "system" : "user"; }

void close_connection(tuning_db::connection& c) {
  if (c.db) sqlite3_close_v2(c.db);
  c.db = nullptr;
}

// Reports once per path and process, then leaves the database out.
void give_up(tuning_db::connection& c, const char* role, const std::string& why, bool report) {
  close_connection(c);
  c.state = tuning_db_state::unreadable;
  c.message = why;
  if (!report) return;
  std::string advice = std::string(role) == "user"
                           ? "; tuned results are not saved (move or delete the file to start a "
                             "fresh one)"
                           : "";
  log::write_once(log::level::warn, "tuning_db:" + c.path,
                  "tuning database '" + c.path + "' (" + role + ") cannot be used: " + why +
                      "; Tessera carries on without it" + advice);
}

// An operation failed: corruption found late leaves the database out like corruption at open;
// anything else (disk full, I/O error, still busy) is reported once per kind of operation.
void operation_failed(tuning_db::connection& c, const char* role, const char* what, int rc) {
  std::string why = std::string(what) + " failed: " + sqlite_message(c.db, rc);
  if (is_corrupt(rc)) {
    give_up(c, role, why, true);
    return;
  }
  log::write_once(log::level::warn, "tuning_db:" + c.path + ":" + what,
                  "tuning database '" + c.path + "' (" + role + "): " + why);
}

bool usable(const tuning_db::connection& c) {
  return c.db && (c.state == tuning_db_state::ok || c.state == tuning_db_state::read_only);
}

// quick_check, then the schema: version 0 for a database with no table at all (a new file), the
// version from tessera_meta, or a failure for anything else. Returns false after give_up().
bool validate(tuning_db::connection& c, const char* role, bool report) {
  std::string findings;
  statement st;
  int rc = with_retry(c.db, false, [&] {
    findings.clear();
    int r = prepare(c.db, "PRAGMA quick_check(5)", st);
    if (r == SQLITE_OK) while ((r = sqlite3_step(st.s)) == SQLITE_ROW) {
      if (!findings.empty()) findings += "; ";
      findings += column_text(st.s, 0);
    }
    return settle(r);
  });
  if (rc != SQLITE_OK) {
    give_up(c, role, sqlite_message(c.db, rc), report);
    return false;
  }
  if (findings != "ok") {
    give_up(c, role, "PRAGMA quick_check: " + findings, report);
    return false;
  }

  std::set<std::string> tables;
  std::string version_text;
  bool has_version = false;
  rc = with_retry(c.db, false, [&] {
    tables.clear();
    int r = prepare(c.db, "SELECT name FROM sqlite_master WHERE type='table'", st);
    if (r == SQLITE_OK) while ((r = sqlite3_step(st.s)) == SQLITE_ROW)
      tables.insert(column_text(st.s, 0));
    r = settle(r);
    if (r != SQLITE_OK || !tables.count("tessera_meta")) return r;
    r = prepare(c.db, "SELECT value FROM tessera_meta WHERE key='schema_version'", st);
    if (r == SQLITE_OK && (r = sqlite3_step(st.s)) == SQLITE_ROW) {
      has_version = true;
      version_text = column_text(st.s, 0);
    }
    return settle(r);
  });
  if (rc != SQLITE_OK) {
    give_up(c, role, sqlite_message(c.db, rc), report);
    return false;
  }
  c.schema_version = 0;
  if (tables.empty()) return true;
  if (!tables.count("tessera_meta") || !tables.count("tuning") || !has_version) {
    give_up(c, role, "not a Tessera tuning database (no tessera_meta/tuning tables)", report);
    return false;
  }
  c.schema_version = std::atoi(version_text.c_str());
  if (c.schema_version < 1) {
    give_up(c, role, "unknown schema version '" + version_text + "'", report);
    return false;
  }
  return true;
}

int create_schema(sqlite3* db) {
  return with_retry(db, true, [&] {
    int r = sqlite3_exec(db, schema_sql, nullptr, nullptr, nullptr);
    if (r != SQLITE_OK) return r;
    statement st;
    r = prepare(db, "INSERT OR IGNORE INTO tessera_meta (key, value) VALUES (?1, ?2)", st);
    const std::pair<std::string, std::string> rows[] = {
        {"schema_version", std::to_string(tuning_db::schema_version)},
        {"created_by", "tessera " TESSERA_VERSION_STRING}};
    for (const auto& row : rows) {
      if (r != SQLITE_OK) break;
      bind_text(st.s, 1, row.first);
      bind_text(st.s, 2, row.second);
      r = settle(sqlite3_step(st.s));
      sqlite3_reset(st.s);
    }
    return r;
  });
}

// Read-only opening: the system database, a merge source. A WAL database on read-only media
// without its -shm file cannot be opened the ordinary way; the immutable URI reads it as it is.
void open_readonly(tuning_db::connection& c, const std::string& path, bool system, bool report) {
  close_connection(c);
  c = tuning_db::connection{};
  c.path = path;
  if (path.empty()) return;
  const char* role = system ? "system" : "source";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (system) {
      if (log::enabled(log::level::debug))
        log::write(log::level::debug, "tuning database '" + path + "' (system) not present");
      return;
    }
    give_up(c, role, "no such file", report);
    return;
  }
  for (int pass = 0; pass < 2; ++pass) {
    std::string name = path;
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
    if (pass == 1) {
      std::string uri = "file:";
      for (char ch : fs::absolute(path, ec).string()) {
        if (ch == '%' || ch == '?' || ch == '#') {
          char hex[4];
          std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(ch));
          uri += hex;
        } else {
          uri += ch;
        }
      }
      name = uri + "?immutable=1";
      flags |= SQLITE_OPEN_URI;
    }
    close_connection(c);
    int rc = sqlite3_open_v2(name.c_str(), &c.db, flags, nullptr);
    if (rc != SQLITE_OK) {
      if (pass == 0 && primary(rc) == SQLITE_CANTOPEN) continue;
      give_up(c, role, "cannot open: " + sqlite_message(c.db, rc), report);
      return;
    }
    sqlite3_extended_result_codes(c.db, 1);
    sqlite3_busy_timeout(c.db, busy_timeout_ms);
    // Probe: a WAL file that cannot get its -shm shows here as SQLITE_CANTOPEN or
    // SQLITE_READONLY_DIRECTORY.
    int probe = with_retry(c.db, false, [&] {
      statement st;
      int r = prepare(c.db, "SELECT count(*) FROM sqlite_master", st);
      if (r == SQLITE_OK) r = sqlite3_step(st.s);
      return settle(r);
    });
    if (pass == 0 && (primary(probe) == SQLITE_CANTOPEN || primary(probe) == SQLITE_READONLY))
      continue;
    break;
  }
  if (!validate(c, role, report)) return;
  if (c.schema_version == 0) {
    give_up(c, role, "an empty database (no Tessera schema)", report);
    return;
  }
  c.state = tuning_db_state::read_only;
}

void open_user(tuning_db::connection& c, const std::string& path) {
  close_connection(c);
  c = tuning_db::connection{};
  c.path = path;
  if (path.empty()) return;
  const char* role = "user";
  // The default path sits in ~/.cache/tessera, which a fresh account does not have yet.
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      give_up(c, role, "cannot create its folder '" + parent.string() + "': " + ec.message(),
              true);
      return;
    }
  }
  int rc = sqlite3_open_v2(path.c_str(), &c.db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    give_up(c, role, "cannot open: " + sqlite_message(c.db, rc), true);
    return;
  }
  sqlite3_extended_result_codes(c.db, 1);
  sqlite3_busy_timeout(c.db, busy_timeout_ms);
  if (!validate(c, role, true)) return;
  // SQLite falls back to read-only when the file is not writable.
  const bool writable = sqlite3_db_readonly(c.db, "main") == 0;
  if (!writable && c.schema_version == 0) {
    give_up(c, role, "not writable and has no Tessera schema", true);
    return;
  }
  if (writable && c.schema_version <= tuning_db::schema_version) {
    // WAL first, so that the schema is created in the mode every later write uses. The mode is
    // persistent: after the first process switched it, this is a no-op.
    std::string mode;
    rc = with_retry(c.db, false, [&] {
      statement st;
      int r = prepare(c.db, "PRAGMA journal_mode=WAL", st);
      if (r == SQLITE_OK && (r = sqlite3_step(st.s)) == SQLITE_ROW) mode = column_text(st.s, 0);
      return settle(r);
    });
    if (rc != SQLITE_OK) {
      give_up(c, role, "PRAGMA journal_mode=WAL: " + sqlite_message(c.db, rc), true);
      return;
    }
    if (mode != "wal")
      log::write_once(log::level::warn, "tuning_db:" + path + ":wal",
                      "tuning database '" + path + "' stays in journal mode '" + mode +
                          "' (the file system refused WAL); concurrent use is slower");
    // A process kill loses nothing committed with NORMAL in WAL mode; only a power loss may
    // drop the last commits, and it never corrupts.
    sqlite3_exec(c.db, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
    if (c.schema_version == 0) {
      rc = create_schema(c.db);
      if (rc != SQLITE_OK) {
        give_up(c, role, "cannot create the schema: " + sqlite_message(c.db, rc), true);
        return;
      }
      c.schema_version = tuning_db::schema_version;
    }
  }
  if (!writable) {
    c.state = tuning_db_state::read_only;
    c.message = "the file is not writable: tuned results are not saved";
  } else if (c.schema_version > tuning_db::schema_version) {
    c.state = tuning_db_state::read_only;
    c.message = "written by a newer Tessera (schema " + std::to_string(c.schema_version) +
                ", this one knows " + std::to_string(tuning_db::schema_version) +
                "): read, never written";
  } else {
    c.state = tuning_db_state::ok;
    return;
  }
  log::write_once(log::level::warn, "tuning_db:" + path,
                  "tuning database '" + path + "' (user) is read-only: " + c.message);
}

// Every row of a usable connection, sorted by key; on failure the connection may be left out.
bool read_all(tuning_db::connection& c, const char* role, std::vector<tuning_record>& out) {
  out.clear();
  if (!usable(c)) return true;
  const std::string sql = std::string(select_columns) +
                          " ORDER BY device_fingerprint, plugin_name, plugin_version, operation,"
                          " problem_key";
  statement st;
  int rc = with_retry(c.db, false, [&] {
    out.clear();
    int r = prepare(c.db, sql.c_str(), st);
    if (r == SQLITE_OK) while ((r = sqlite3_step(st.s)) == SQLITE_ROW) out.push_back(read_row(st.s));
    return settle(r);
  });
  if (rc != SQLITE_OK) {
    out.clear();
    operation_failed(c, role, "list", rc);
    return false;
  }
  return true;
}

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char ch : v) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         strcasecmp(s.c_str() + s.size() - suffix.size(), suffix.c_str()) == 0;
}

bool write_csv(const std::string& path, const std::vector<tuning_record>& records) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return false;
  out << "device_fingerprint,plugin_name,plugin_version,operation,problem_key,kernel_name,"
         "config_index,time_ms,workspace,measured_at_unix,tessera_version\r\n";
  char time_text[64];
  for (const tuning_record& r : records) {
    std::snprintf(time_text, sizeof time_text, "%.17g", r.time_ms);
    out << csv_field(r.key.device_fingerprint) << ',' << csv_field(r.key.plugin_name) << ','
        << csv_field(r.key.plugin_version) << ',' << r.key.operation << ','
        << csv_field(r.key.problem_key) << ',' << csv_field(r.kernel_name) << ','
        << r.config_index << ',' << time_text << ',' << r.workspace << ','
        << r.measured_at_unix << ',' << csv_field(r.tessera_version) << "\r\n";
  }
  out.flush();
  return static_cast<bool>(out);
}

bool write_sqlite(const std::string& path, const std::vector<tuning_record>& records,
                  std::string& why) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(db, 1);
    // Rollback-journal mode: the file is complete in itself and readable on read-only media.
    rc = sqlite3_exec(db, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  }
  if (rc == SQLITE_OK) rc = create_schema(db);
  if (rc == SQLITE_OK) {
    rc = with_retry(db, true, [&] {
      statement st;
      int r = prepare(db, replace_sql, st);
      for (const tuning_record& rec : records) {
        if (r != SQLITE_OK) break;
        bind_record(st.s, rec);
        r = settle(sqlite3_step(st.s));
        sqlite3_reset(st.s);
      }
      return r;
    });
  }
  if (rc != SQLITE_OK) why = sqlite_message(db, rc);
  if (db && sqlite3_close(db) != SQLITE_OK && rc == SQLITE_OK) {
    why = "close failed";
    rc = SQLITE_ERROR;
  }
  return rc == SQLITE_OK;
}

}  // namespace

const char* to_string(tuning_db_state state) noexcept {
  switch (state) {
    case tuning_db_state::absent: return "absent";
    case tuning_db_state::ok: return "ok";
    case tuning_db_state::read_only: return "read-only";
    case tuning_db_state::unreadable: return "unreadable";
  }
  return "unknown";
}

tuning_db::~tuning_db() { close(); }

bool tuning_db::open(const std::string& user_path, const std::string& system_path) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    open_user(user_, user_path);
    open_readonly(system_, system_path, true, true);
    return user_.state == tuning_db_state::ok;
  } catch (...) {
    close_connection(user_);
    close_connection(system_);
    user_.state = system_.state = tuning_db_state::unreadable;
    return false;
  }
}

void tuning_db::close() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  close_connection(user_);
  close_connection(system_);
  user_ = connection{};
  system_ = connection{};
}

tuning_db_info tuning_db::user_info() const noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    return {user_.path, user_.state, user_.schema_version, user_.message};
  } catch (...) {
    return {};
  }
}

tuning_db_info tuning_db::system_info() const noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    return {system_.path, system_.state, system_.schema_version, system_.message};
  } catch (...) {
    return {};
  }
}

std::optional<tuning_record> tuning_db::lookup(const tuning_key& key) const noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string sql = std::string(select_columns) + key_where;
    for (connection* c : {&user_, &system_}) {
      if (!usable(*c)) continue;
      std::optional<tuning_record> found;
      statement st;
      int rc = with_retry(c->db, false, [&] {
        found.reset();
        int r = prepare(c->db, sql.c_str(), st);
        if (r == SQLITE_OK) {
          bind_key(st.s, key);
          r = sqlite3_step(st.s);
          if (r == SQLITE_ROW) found = read_row(st.s);
        }
        return settle(r);
      });
      if (rc != SQLITE_OK) {
        operation_failed(*c, role_name(c == &system_), "lookup", rc);
        continue;
      }
      if (found) return found;
    }
  } catch (...) {
  }
  return std::nullopt;
}

bool tuning_db::store(const tuning_record& record) noexcept {
  try {
    return store_all(std::vector<tuning_record>{record});
  } catch (...) {
    return false;
  }
}

bool tuning_db::store_all(const std::vector<tuning_record>& records) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (user_.state != tuning_db_state::ok || !user_.db) return false;
    size_t valid = 0;
    for (const tuning_record& r : records) valid += valid_record(r) ? 1 : 0;
    if (valid != records.size() && log::enabled(log::level::debug))
      log::write(log::level::debug, "tuning database: " + std::to_string(records.size() - valid) +
                                        " invalid record(s) not stored");
    if (valid == 0) return false;
    int rc = with_retry(user_.db, true, [&] {
      statement st;
      int r = prepare(user_.db, upsert_sql, st);
      for (const tuning_record& rec : records) {
        if (r != SQLITE_OK) break;
        if (!valid_record(rec)) continue;
        bind_record(st.s, rec);
        r = settle(sqlite3_step(st.s));
        sqlite3_reset(st.s);
      }
      return r;
    });
    if (rc != SQLITE_OK) {
      operation_failed(user_, "user", "store", rc);
      return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<tuning_record> tuning_db::list(bool include_system) const noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<tuning_record> user_rows, system_rows;
    read_all(user_, "user", user_rows);
    if (!include_system) return user_rows;
    read_all(system_, "system", system_rows);
    std::set<tuning_key, key_less> seen;
    for (const tuning_record& r : user_rows) seen.insert(r.key);
    for (tuning_record& r : system_rows)
      if (!seen.count(r.key)) user_rows.push_back(std::move(r));
    std::sort(user_rows.begin(), user_rows.end(),
              [](const tuning_record& a, const tuning_record& b) { return key_less()(a.key, b.key); });
    return user_rows;
  } catch (...) {
    return {};
  }
}

bool tuning_db::export_to(const std::string& path) const noexcept {
  try {
    std::error_code ec;
    if (fs::exists(path + "-wal", ec)) {
      // Renamed over a live WAL database, the new file would be read through the old WAL.
      log::write(log::level::warn, "tuning database export: '" + path +
                                       "' is a database in use (it has a -wal file); export "
                                       "to another name");
      return false;
    }
    std::vector<tuning_record> records = list(true);
    const std::string temp = path + ".tmp." + std::to_string(::getpid());
    fs::remove(temp, ec);
    std::string why;
    bool ok = ends_with(path, ".csv") ? write_csv(temp, records) : write_sqlite(temp, records, why);
    if (ok) {
      fs::rename(temp, path, ec);
      if (ec) {
        ok = false;
        why = ec.message();
      }
    }
    if (!ok) {
      fs::remove(temp, ec);
      log::write(log::level::warn, "tuning database export to '" + path + "' failed" +
                                       (why.empty() ? std::string() : ": " + why));
    }
    return ok;
  } catch (...) {
    return false;
  }
}

tuning_merge_result tuning_db::merge_from(const std::string& path) noexcept {
  tuning_merge_result result;
  try {
    std::vector<tuning_record> incoming;
    {
      // Read the whole source first and close it: merging a file into itself then works too.
      connection source;
      open_readonly(source, path, false, false);
      if (!usable(source)) {
        result.message = "'" + path + "': " + (source.message.empty() ? "cannot be read"
                                                                      : source.message);
        close_connection(source);
        return result;
      }
      bool read_ok = read_all(source, "source", incoming);
      std::string why = source.message;
      close_connection(source);
      if (!read_ok) {
        result.message = "'" + path + "': cannot be read" + (why.empty() ? "" : ": " + why);
        return result;
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (user_.state != tuning_db_state::ok || !user_.db) {
      result.message = "the target database is not writable (" +
                       std::string(to_string(user_.state)) +
                       (user_.message.empty() ? "" : ": " + user_.message) + ")";
      return result;
    }
    const std::string select_sql =
        std::string("SELECT time_ms, measured_at FROM tuning") + key_where;
    int rc = with_retry(user_.db, true, [&] {
      result.read = result.added = result.replaced = result.kept = 0;
      statement find, put;
      int r = prepare(user_.db, select_sql.c_str(), find);
      if (r == SQLITE_OK) r = prepare(user_.db, replace_sql, put);
      for (const tuning_record& rec : incoming) {
        if (r != SQLITE_OK) break;
        ++result.read;
        if (!valid_record(rec)) {
          ++result.kept;
          continue;
        }
        bind_key(find.s, rec.key);
        r = sqlite3_step(find.s);
        bool exists = r == SQLITE_ROW;
        bool take = !exists;
        if (exists) {
          double old_time = sqlite3_column_double(find.s, 0);
          int64_t old_when = sqlite3_column_int64(find.s, 1);
          take = rec.time_ms < old_time ||
                 (rec.time_ms == old_time && rec.measured_at_unix > old_when);
        }
        r = settle(r);
        sqlite3_reset(find.s);
        if (r != SQLITE_OK) break;
        if (!take) {
          ++result.kept;
          continue;
        }
        bind_record(put.s, rec);
        r = settle(sqlite3_step(put.s));
        sqlite3_reset(put.s);
        ++(exists ? result.replaced : result.added);
      }
      return r;
    });
    if (rc != SQLITE_OK) {
      result.message = "merge failed: " + sqlite_message(user_.db, rc);
      operation_failed(user_, "user", "merge", rc);
      result.added = result.replaced = result.kept = 0;
      return result;
    }
    result.ok = true;
  } catch (...) {
    result.ok = false;
    if (result.message.empty()) result.message = "out of memory";
  }
  return result;
}

int64_t tuning_db::remove_stale(const std::string& plugin_name,
                                const std::string& current_version) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (user_.state != tuning_db_state::ok || !user_.db) return -1;
    int64_t removed = 0;
    int rc = with_retry(user_.db, true, [&] {
      statement st;
      int r = prepare(user_.db, "DELETE FROM tuning WHERE plugin_name=?1 AND plugin_version<>?2",
                      st);
      if (r != SQLITE_OK) return r;
      bind_text(st.s, 1, plugin_name);
      bind_text(st.s, 2, current_version);
      r = settle(sqlite3_step(st.s));
      removed = sqlite3_changes(user_.db);
      return r;
    });
    if (rc != SQLITE_OK) {
      operation_failed(user_, "user", "remove_stale", rc);
      return -1;
    }
    return removed;
  } catch (...) {
    return -1;
  }
}

std::string tuning_db::integrity_check(bool system) const noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    connection& c = system ? system_ : user_;
    if (!usable(c))
      return std::string("not open (") + to_string(c.state) +
             (c.message.empty() ? "" : ": " + c.message) + ")";
    std::string findings;
    statement st;
    int rc = with_retry(c.db, false, [&] {
      findings.clear();
      int r = prepare(c.db, "PRAGMA integrity_check", st);
      if (r == SQLITE_OK) while ((r = sqlite3_step(st.s)) == SQLITE_ROW) {
        if (!findings.empty()) findings += "; ";
        findings += column_text(st.s, 0);
      }
      return settle(r);
    });
    if (rc != SQLITE_OK) return sqlite_message(c.db, rc);
    return findings;
  } catch (...) {
    return "out of memory";
  }
}

std::string default_tuning_db_path() {
  const char* explicit_path = std::getenv("TESSERA_TUNING_DB");
  if (explicit_path && *explicit_path) {
    if (strcasecmp(explicit_path, "off") == 0 || strcasecmp(explicit_path, "none") == 0)
      return std::string();
    return explicit_path;
  }
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // The XDG spec: a relative value is invalid and is ignored.
  if (xdg && xdg[0] == '/') return (fs::path(xdg) / "tessera" / "tuning.db").string();
  std::string home;
  if (const char* h = std::getenv("HOME"); h && *h) {
    home = h;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) {
    home = pw->pw_dir;
  }
  if (home.empty()) return std::string();
  return (fs::path(home) / ".cache" / "tessera" / "tuning.db").string();
}

namespace {

std::string canonical_field(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char ch : text) {
    if (std::isspace(ch)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += (ch == ';' || ch == '=' || ch < 0x20 || ch == 0x7f) ? '_' : static_cast<char>(ch);
  }
  return out.empty() ? "unknown" : out;
}

}  // namespace

std::string device_fingerprint(const std::string& name, int cc_major, int cc_minor, int sm_count,
                               int driver_version, int runtime_version) {
  return "gpu:" + canonical_field(name) + ";cc=" + std::to_string(cc_major) + "." +
         std::to_string(cc_minor) + ";sms=" + std::to_string(sm_count) +
         ";driver=" + std::to_string(driver_version) +
         ";runtime=" + std::to_string(runtime_version);
}

std::string cpu_device_fingerprint(const std::string& model_name, int cores,
                                   const std::string& isa) {
  std::string out = "cpu:" + canonical_field(model_name) + ";cores=" + std::to_string(cores);
  if (!isa.empty()) out += ";isa=" + canonical_field(isa);
  return out;
}

std::string cpu_device_fingerprint(const std::string& isa) {
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cpu_device_fingerprint(cpu_model_name(), cores > 0 ? static_cast<int>(cores) : 0, isa);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, fallback;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string field = line.substr(0, colon);
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back())))
      field.pop_back();
    std::string value = line.substr(colon + 1);
    if (field == "model name") return canonical_field(value);
    if ((field == "Model" || field == "Hardware") && fallback.empty()) fallback = value;
  }
  return fallback.empty() ? "unknown" : canonical_field(fallback);
}

}  // namespace tessera::registry
