// The persistent tuning database: the autotuner's winners, kept across processes in SQLite.
//
// Two files take part. The system database ships with an install and is only ever read
// (SQLITE_OPEN_READONLY). The user database (default_tuning_db_path()) is read and written; it is
// created with its schema when absent, and its folder with it. A lookup asks the user database
// first, then the system one, so a local measurement overrides the shipped one.
//
// Keys: device fingerprint, plugin name, plugin version, operation and problem key. The plugin
// version is part of the key, so an entry measured with another version of a plugin is never
// returned: a new plugin build is tuned afresh rather than trusted with an old winner.
//
// Safe under load and faults (MIOpen's per-user text databases corrupt under many processes;
// this is the answer):
//   * WAL journal, synchronous=NORMAL: readers never block the writer, a writer killed at any
//     point leaves the last committed state (the next opener rolls the WAL back); a power loss may
//     lose the last few commits but never corrupts.
//   * Every write is one BEGIN IMMEDIATE transaction; SQLITE_BUSY / SQLITE_LOCKED are waited out
//     (busy_timeout 5 s) and the whole transaction retried until 15 s have passed (so at worst
//     ~20 s), so concurrent writers of different keys all persist; past that the store fails.
//   * A file that is not a database, is truncated, fails PRAGMA quick_check, cannot be opened,
//     or is some other program's SQLite file is reported once per path and process (warn level,
//     with SQLite's words) and then behaves as absent: lookups miss and stores are dropped. It is
//     never modified or deleted: the user decides (delete it and a fresh one is made).
//   * No public member throws; failures are return values. One object may be used from several
//     threads (a mutex serialises its connections); each process opens its own object.
//
// Schema versions only ever add (tables, columns with defaults), as the ABI structs do. A user
// database written by a newer Tessera (schema version above tuning_db::schema_version) is read
// through the columns this version knows, and never written (stores are dropped, reported once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace tessera::registry {

struct tuning_key {
  std::string device_fingerprint;  // device_fingerprint() / cpu_device_fingerprint()
  std::string plugin_name;
  std::string plugin_version;
  int operation = 0;               // tsrOperation_t
  std::string problem_key;         // canonical problem string (the caller builds it)
};

struct tuning_record {
  tuning_key key;
  std::string kernel_name;
  int64_t config_index = -1;  // -1: the kernel has no tunable configs
  double time_ms = 0.0;
  size_t workspace = 0;
  int64_t measured_at_unix = 0;
  std::string tessera_version;  // the Tessera that measured it
};

enum class tuning_db_state {
  absent,      // no path given, or (system database) no file there
  ok,          // readable and writable (user database)
  read_only,   // readable only: the system database; a user database of a newer schema or
               // one whose file is not writable
  unreadable,  // reported once; behaves as absent
};

const char* to_string(tuning_db_state state) noexcept;

struct tuning_db_info {
  std::string path;
  tuning_db_state state = tuning_db_state::absent;
  int schema_version = 0;  // 0 when unknown
  std::string message;     // why read_only or unreadable
};

struct tuning_merge_result {
  bool ok = false;
  std::string message;  // why not ok
  size_t read = 0;      // entries in the source
  size_t added = 0;     // keys that were not in the target
  size_t replaced = 0;  // keys where the source was faster
  size_t kept = 0;      // keys where the target was already as fast or faster
};

class tuning_db {
 public:
  static constexpr int schema_version = 1;

  tuning_db() noexcept = default;
  ~tuning_db();
  tuning_db(const tuning_db&) = delete;
  tuning_db& operator=(const tuning_db&) = delete;

  // Opens (or reopens) the two databases; either path may be empty, and the system file may be
  // missing. Never fails as a whole: a database that cannot be used is reported and left out.
  // Returns true when the user database is writable.
  bool open(const std::string& user_path, const std::string& system_path) noexcept;
  void close() noexcept;

  tuning_db_info user_info() const noexcept;
  tuning_db_info system_info() const noexcept;

  // The entry for exactly this key (plugin version included): user database first, then system.
  std::optional<tuning_record> lookup(const tuning_key& key) const noexcept;

  // Upserts into the user database. The newer measurement wins: a re-tune is a deliberate act
  // (and the device, driver and plugin version are in the key, so an old entry cannot be
  // "better" for a reason the key does not capture); an entry whose measured_at_unix is newer
  // than the record's is kept, so a slow writer cannot undo a later re-tune. Returns false when
  // the record was not stored (no writable user database, invalid record, I/O failure).
  bool store(const tuning_record& record) noexcept;
  // Several records in one transaction (same rule as store). Returns false when none was stored.
  bool store_all(const std::vector<tuning_record>& records) noexcept;

  // What lookups see: every user entry, plus the system entries the user database does not
  // override; sorted by key. With include_system=false, the user database only.
  std::vector<tuning_record> list(bool include_system = true) const noexcept;

  // Writes list() to `path` atomically (a temporary file renamed over it). A name ending in
  // ".csv" gives an RFC 4180 text (for people and diffs; it cannot be imported); any other name
  // a self-contained SQLite file in rollback-journal mode, usable as a system database on
  // read-only media and by merge_from() anywhere. Refused (false) when `path` has a -wal file:
  // a live WAL database replaced under its WAL would be read through the old frames.
  bool export_to(const std::string& path) const noexcept;

  // Merges the SQLite tuning database at `path` into the user database in one transaction: per
  // key the faster entry wins (equal times: the newer). The source is opened read-only and
  // checked like any other; a bad source changes nothing.
  tuning_merge_result merge_from(const std::string& path) noexcept;
  tuning_merge_result import_from(const std::string& path) noexcept { return merge_from(path); }

  // Deletes the user entries of `plugin_name` whose version is not `current_version` (they can
  // never be returned again). Returns the number deleted, or -1 on failure.
  int64_t remove_stale(const std::string& plugin_name,
                       const std::string& current_version) noexcept;

  // PRAGMA integrity_check of the user (or system) database: "ok", or SQLite's findings.
  std::string integrity_check(bool system = false) const noexcept;

  struct connection {
    std::string path;
    sqlite3* db = nullptr;
    tuning_db_state state = tuning_db_state::absent;
    int schema_version = 0;
    std::string message;
  };

 private:
  mutable std::mutex mutex_;
  mutable connection user_;
  mutable connection system_;
};

// Where the user database lives: $TESSERA_TUNING_DB (the value "off" or "none" disables it:
// returns ""), else $XDG_CACHE_HOME/tessera/tuning.db, else ~/.cache/tessera/tuning.db.
std::string default_tuning_db_path();

// "gpu:NVIDIA H200;cc=9.0;sms=132;driver=12040;runtime=12060". Names are trimmed, inner runs of
// white space become one space, and ';' '=' and control characters become '_', so the string is
// canonical and can be split again.
std::string device_fingerprint(const std::string& name, int cc_major, int cc_minor, int sm_count,
                               int driver_version, int runtime_version);

// "cpu:Intel(R) Xeon(R) Platinum 8480+;cores=16;isa=avx512_core_amx" (";isa=..." only when an
// ISA is given). The first form reads the model name from /proc/cpuinfo and counts the online
// logical CPUs (not the affinity mask: a taskset does not change the machine).
std::string cpu_device_fingerprint(const std::string& isa = std::string());
std::string cpu_device_fingerprint(const std::string& model_name, int cores,
                                   const std::string& isa);

// The "model name" (x86) / "Model" / "Hardware" line of /proc/cpuinfo, or "unknown".
std::string cpu_model_name();

}  // namespace tessera::registry
