// The tuning database against real processes: many writers and readers at once, a writer
// killed in the middle of a transaction, and files that are not (or no longer) databases.
#include "tuning_db.hpp"

#include "logging.hpp"
#include "tuning_db_test_records.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using tessera::registry::tuning_db;
using tessera::registry::tuning_db_state;
using tessera::registry::tuning_record;
using tessera::testing::test_key;
using tessera::testing::test_record;

namespace {

class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "tessera-tuning-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~temp_dir() {
    std::error_code ec;
    ::chmod(path_.c_str(), 0700);
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// fork + exec of the worker; `keep_fd` stays open in the child (the readiness pipe).
pid_t spawn_worker(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string exe = TESSERA_TUNING_DB_WORKER;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit status, or 128 + the signal that ended it.
int wait_worker(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Starts a worker that signals readiness through a pipe, waits for the byte, kills it.
void kill_worker_when_ready(const std::string& mode, const std::string& db) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = spawn_worker({mode, db, std::to_string(fds[1])});
  ASSERT_GT(pid, 0);
  ::close(fds[1]);
  char byte = 0;
  ASSERT_EQ(::read(fds[0], &byte, 1), 1) << mode << " worker died before it was ready";
  ::close(fds[0]);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_worker(pid), 128 + SIGKILL);
}

// Independent of tuning_db: SQLite's own verdict and row count.
std::string raw_integrity_check(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW)
      out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  } else {
    out = sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  return out;
}

int64_t raw_count(const std::string& path, const std::string& where = "") {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    std::string sql = "SELECT count(*) FROM tuning " + where;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Sends warnings to a file of the test's own for the life of the object.
class log_to {
 public:
  explicit log_to(const std::string& path) {
    ::setenv("TESSERA_LOG_FILE", path.c_str(), 1);
    ::setenv("TESSERA_LOG_LEVEL", "warn", 1);
    tessera::log::reconfigure_from_environment();
  }
  ~log_to() {
    ::unsetenv("TESSERA_LOG_FILE");
    tessera::log::reconfigure_from_environment();
  }
  log_to(const log_to&) = delete;
  log_to& operator=(const log_to&) = delete;
};

void fill(const std::string& path, const std::string& prefix, int count) {
  tuning_db db;
  ASSERT_TRUE(db.open(path, ""));
  std::vector<tuning_record> records;
  for (int i = 0; i < count; ++i) records.push_back(test_record(prefix, i));
  ASSERT_TRUE(db.store_all(records));
}

void expect_same(const tuning_record& a, const tuning_record& b) {
  EXPECT_EQ(a.key.device_fingerprint, b.key.device_fingerprint);
  EXPECT_EQ(a.key.plugin_name, b.key.plugin_name);
  EXPECT_EQ(a.key.plugin_version, b.key.plugin_version);
  EXPECT_EQ(a.key.operation, b.key.operation);
  EXPECT_EQ(a.key.problem_key, b.key.problem_key);
  EXPECT_EQ(a.kernel_name, b.kernel_name);
  EXPECT_EQ(a.config_index, b.config_index);
  EXPECT_EQ(a.time_ms, b.time_ms);
  EXPECT_EQ(a.workspace, b.workspace);
  EXPECT_EQ(a.measured_at_unix, b.measured_at_unix);
  EXPECT_EQ(a.tessera_version, b.tessera_version);
}

// ---- behaviour ---------------------------------------------------------------------------------

TEST(TuningDb, a_stored_record_is_found_by_another_process_and_another_object) {
  temp_dir dir;
  const std::string db_path = dir.file("nested/folder/tuning.db");  // the folder is created
  pid_t pid = spawn_worker({"store", db_path, "proc", "5"});
  ASSERT_EQ(wait_worker(pid), 0);

  tuning_db db;
  ASSERT_TRUE(db.open(db_path, ""));
  EXPECT_EQ(db.user_info().state, tuning_db_state::ok);
  EXPECT_EQ(db.user_info().schema_version, tuning_db::schema_version);
  for (int i = 0; i < 5; ++i) {
    auto found = db.lookup(test_key("proc", i));
    ASSERT_TRUE(found) << i;
    expect_same(*found, test_record("proc", i));
  }
  EXPECT_FALSE(db.lookup(test_key("proc", 5)));

  tuning_record nan_time = test_record("bad", 0, std::nan(""));
  EXPECT_FALSE(db.store(nan_time)) << "an invalid record is refused";
  EXPECT_FALSE(db.lookup(nan_time.key));

  tuning_record r = test_record("here", 0, 0.25);
  r.config_index = -1;
  ASSERT_TRUE(db.store(r));
  tuning_db other;
  other.open(db_path, "");
  auto found = other.lookup(r.key);
  ASSERT_TRUE(found);
  expect_same(*found, r);
}

TEST(TuningDb, the_user_entry_overrides_the_system_entry_and_the_system_is_never_written) {
  temp_dir dir;
  const std::string shipped = dir.file("system.db");
  {
    tuning_db maker;
    ASSERT_TRUE(maker.open(dir.file("maker.db"), ""));
    ASSERT_TRUE(maker.store(test_record("both", 0, 5.0)));
    ASSERT_TRUE(maker.store(test_record("system-only", 0, 6.0)));
    ASSERT_TRUE(maker.export_to(shipped));
  }
  ::chmod(shipped.c_str(), 0444);
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("user.db"), shipped));
  EXPECT_EQ(db.system_info().state, tuning_db_state::read_only);
  ASSERT_TRUE(db.store(test_record("both", 0, 7.0)));

  auto both = db.lookup(test_key("both", 0));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->time_ms, 7.0) << "the user database is asked first";
  auto system_only = db.lookup(test_key("system-only", 0));
  ASSERT_TRUE(system_only);
  EXPECT_EQ(system_only->time_ms, 6.0);
  EXPECT_EQ(raw_count(shipped), 2);
  EXPECT_EQ(raw_count(dir.file("user.db")), 1);
}

TEST(TuningDb, an_entry_of_another_plugin_version_is_never_returned) {
  temp_dir dir;
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("tuning.db"), ""));
  ASSERT_TRUE(db.store(test_record("p", 0, 1.0, 1000, "1.0.0")));
  EXPECT_TRUE(db.lookup(test_key("p", 0, "1.0.0")));
  EXPECT_FALSE(db.lookup(test_key("p", 0, "1.0.1")));
  EXPECT_FALSE(db.lookup(test_key("p", 0, "1.0")));

  ASSERT_TRUE(db.store(test_record("p", 0, 2.0, 1000, "2.0.0")));
  EXPECT_EQ(db.remove_stale("fake", "2.0.0"), 1);
  EXPECT_FALSE(db.lookup(test_key("p", 0, "1.0.0")));
  EXPECT_TRUE(db.lookup(test_key("p", 0, "2.0.0")));
}

TEST(TuningDb, a_store_replaces_an_older_measurement_but_not_a_newer_one) {
  temp_dir dir;
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("tuning.db"), ""));
  ASSERT_TRUE(db.store(test_record("k", 0, 1.0, 1000)));
  ASSERT_TRUE(db.store(test_record("k", 0, 3.0, 2000)));  // a re-tune: slower, but newer
  EXPECT_EQ(db.lookup(test_key("k", 0))->time_ms, 3.0);
  ASSERT_TRUE(db.store(test_record("k", 0, 0.5, 1500)));  // a late writer of an older run
  EXPECT_EQ(db.lookup(test_key("k", 0))->time_ms, 3.0);
}

TEST(TuningDb, merge_keeps_the_faster_entry_per_key_and_counts_what_it_did) {
  temp_dir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  {
    tuning_db db;
    ASSERT_TRUE(db.open(b, ""));
    ASSERT_TRUE(db.store_all({test_record("k", 1, 1.0), test_record("k", 2, 3.0),
                              test_record("k", 3, 4.0)}));
  }
  tuning_db db;
  ASSERT_TRUE(db.open(a, ""));
  ASSERT_TRUE(db.store_all({test_record("k", 1, 2.0), test_record("k", 2, 1.0)}));
  auto result = db.merge_from(b);
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.read, 3u);
  EXPECT_EQ(result.added, 1u);
  EXPECT_EQ(result.replaced, 1u);
  EXPECT_EQ(result.kept, 1u);
  EXPECT_EQ(db.lookup(test_key("k", 1))->time_ms, 1.0);
  EXPECT_EQ(db.lookup(test_key("k", 2))->time_ms, 1.0);
  EXPECT_EQ(db.lookup(test_key("k", 3))->time_ms, 4.0);

  auto missing = db.merge_from(dir.file("missing.db"));
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.message.find("no such file"), std::string::npos) << missing.message;
}

TEST(TuningDb, export_then_import_gives_the_same_list_and_csv_is_readable_text) {
  temp_dir dir;
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("src.db"), ""));
  std::vector<tuning_record> records;
  for (int i = 0; i < 20; ++i) records.push_back(test_record("e", i, 0.5 + i));
  records[3].key.problem_key = "needs,\"quoting\"";
  ASSERT_TRUE(db.store_all(records));
  ASSERT_TRUE(db.export_to(dir.file("shared.db")));
  ASSERT_TRUE(db.export_to(dir.file("shared.csv")));
  EXPECT_FALSE(db.export_to(dir.file("src.db"))) << "a live WAL database is not overwritten";

  tuning_db other;
  ASSERT_TRUE(other.open(dir.file("dst.db"), ""));
  auto result = other.import_from(dir.file("shared.db"));
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.added, 20u);
  auto before = db.list(), after = other.list();
  ASSERT_EQ(before.size(), 20u);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) expect_same(after[i], before[i]);

  std::string csv = read_text(dir.file("shared.csv"));
  EXPECT_EQ(csv.rfind("device_fingerprint,plugin_name,plugin_version,operation,problem_key", 0),
            0u);
  EXPECT_EQ(occurrences(csv, "\r\n"), 21u);
  EXPECT_NE(csv.find("\"needs,\"\"quoting\"\"\""), std::string::npos);
}

TEST(TuningDb, list_shows_user_entries_and_the_system_entries_not_overridden_sorted_by_key) {
  temp_dir dir;
  const std::string shipped = dir.file("system.db");
  {
    tuning_db maker;
    ASSERT_TRUE(maker.open(dir.file("maker.db"), ""));
    ASSERT_TRUE(maker.store_all({test_record("a", 1, 9.0), test_record("c", 1, 9.0)}));
    ASSERT_TRUE(maker.export_to(shipped));
  }
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("user.db"), shipped));
  ASSERT_TRUE(db.store_all({test_record("b", 1, 1.0), test_record("a", 1, 1.0)}));
  auto all = db.list();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].key.problem_key, "a-1");
  EXPECT_EQ(all[0].time_ms, 1.0);
  EXPECT_EQ(all[1].key.problem_key, "b-1");
  EXPECT_EQ(all[2].key.problem_key, "c-1");
  EXPECT_EQ(db.list(false).size(), 2u);
}

TEST(TuningDb, a_database_of_a_newer_schema_is_read_but_never_written) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fill(path, "n", 3);
  raw_exec(path, "UPDATE tessera_meta SET value='99' WHERE key='schema_version'");
  log_to logging(dir.file("log.txt"));
  tuning_db db;
  EXPECT_FALSE(db.open(path, ""));
  EXPECT_EQ(db.user_info().state, tuning_db_state::read_only);
  EXPECT_TRUE(db.lookup(test_key("n", 1)));
  EXPECT_FALSE(db.store(test_record("n", 7)));
  EXPECT_EQ(raw_count(path), 3);
  EXPECT_NE(read_text(dir.file("log.txt")).find("newer Tessera (schema 99"), std::string::npos);
}

TEST(TuningDb, fingerprints_are_canonical) {
  EXPECT_EQ(tessera::registry::device_fingerprint("  NVIDIA  H200\t", 9, 0, 132, 12040, 12060),
            "gpu:NVIDIA H200;cc=9.0;sms=132;driver=12040;runtime=12060");
  EXPECT_EQ(tessera::registry::cpu_device_fingerprint("Xeon; a=b", 16, "avx512_core"),
            "cpu:Xeon_ a_b;cores=16;isa=avx512_core");
  EXPECT_EQ(tessera::registry::cpu_device_fingerprint("Xeon", 2, ""), "cpu:Xeon;cores=2");
  std::string here = tessera::registry::cpu_device_fingerprint();
  EXPECT_EQ(here.rfind("cpu:", 0), 0u);
  EXPECT_NE(here.find(";cores="), std::string::npos);
}

// Restores an environment variable at the end of the scope.
class saved_env {
 public:
  explicit saved_env(const char* name) : name_(name) {
    const char* v = std::getenv(name);
    had_ = v != nullptr;
    if (v) value_ = v;
  }
  ~saved_env() {
    if (had_)
      ::setenv(name_, value_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string value_;
};

TEST(TuningDb, the_default_path_follows_the_environment) {
  saved_env a("TESSERA_TUNING_DB"), b("XDG_CACHE_HOME"), c("HOME");
  ::setenv("TESSERA_TUNING_DB", "/x/t.db", 1);
  EXPECT_EQ(tessera::registry::default_tuning_db_path(), "/x/t.db");
  ::setenv("TESSERA_TUNING_DB", "off", 1);
  EXPECT_EQ(tessera::registry::default_tuning_db_path(), "");
  ::unsetenv("TESSERA_TUNING_DB");
  ::setenv("XDG_CACHE_HOME", "/cache", 1);
  EXPECT_EQ(tessera::registry::default_tuning_db_path(), "/cache/tessera/tuning.db");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(tessera::registry::default_tuning_db_path(), "/home/u/.cache/tessera/tuning.db");
}

// ---- load --------------------------------------------------------------------------------------

TEST(TuningDbUnderLoad, sixteen_writer_processes_and_readers_lose_no_entry) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  constexpr int writers = 16, per_writer = 200, readers = 4;
  std::vector<pid_t> pids;
  for (int w = 0; w < writers; ++w)
    pids.push_back(spawn_worker({"store", path, "w" + std::to_string(w),
                                 std::to_string(per_writer)}));
  for (int r = 0; r < readers; ++r)
    pids.push_back(spawn_worker({"read", path, "w" + std::to_string(r), "200", "1500"}));
  for (size_t i = 0; i < pids.size(); ++i)
    EXPECT_EQ(wait_worker(pids[i]), 0) << (i < writers ? "writer " : "reader ") << i;

  EXPECT_EQ(raw_integrity_check(path), "ok");
  EXPECT_EQ(raw_count(path), writers * per_writer);
  tuning_db db;
  ASSERT_TRUE(db.open(path, ""));
  int missing = 0;
  for (int w = 0; w < writers; ++w)
    for (int i = 0; i < per_writer; ++i) {
      auto found = db.lookup(test_key("w" + std::to_string(w), i));
      if (!found || found->kernel_name != test_record("w" + std::to_string(w), i).kernel_name)
        ++missing;
    }
  EXPECT_EQ(missing, 0);
}

TEST(TuningDbUnderLoad, one_object_serves_several_threads) {
  temp_dir dir;
  tuning_db db;
  ASSERT_TRUE(db.open(dir.file("tuning.db"), ""));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (!db.store(test_record("t" + std::to_string(t), i))) ++failures;
        if (!db.lookup(test_key("t" + std::to_string(t), i))) ++failures;
        db.list(false);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(db.list().size(), 200u);
}

TEST(TuningDbUnderLoad, a_writer_killed_in_a_long_transaction_leaves_a_usable_database) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fill(path, "committed", 50);
  kill_worker_when_ready("long-txn", path);
  EXPECT_TRUE(fs::exists(path + "-wal")) << "the kill left its uncommitted frames behind";

  tuning_db db;
  ASSERT_TRUE(db.open(path, ""));
  EXPECT_EQ(db.integrity_check(), "ok");
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(db.lookup(test_key("committed", i))) << i;
  EXPECT_FALSE(db.lookup(test_key("uncommitted", 0)));
  EXPECT_TRUE(db.store(test_record("after", 0)));
  EXPECT_TRUE(db.lookup(test_key("after", 0)));
  EXPECT_EQ(raw_count(path), 51);
  EXPECT_EQ(raw_integrity_check(path), "ok");
}

TEST(TuningDbUnderLoad, a_process_killed_while_storing_leaves_a_usable_database) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fill(path, "committed", 10);
  kill_worker_when_ready("store-loop", path);
  tuning_db db;
  ASSERT_TRUE(db.open(path, ""));
  EXPECT_EQ(db.integrity_check(), "ok");
  EXPECT_TRUE(db.lookup(test_key("committed", 9)));
  EXPECT_TRUE(db.store(test_record("after", 0)));
  EXPECT_EQ(raw_integrity_check(path), "ok");
}

// ---- faults ------------------------------------------------------------------------------------

// Opens `path` (as the user database, and again as the system one) twice, looks up and stores:
// nothing throws or crashes, nothing is found or stored, and the log names the path once.
void expect_reported_once_and_ignored(const std::string& path, const temp_dir& dir,
                                      const std::string& words) {
  const std::string log_file = dir.file("log.txt");
  log_to logging(log_file);
  for (int round = 0; round < 2; ++round) {
    tuning_db db;
    EXPECT_FALSE(db.open(path, ""));
    EXPECT_EQ(db.user_info().state, tuning_db_state::unreadable);
    EXPECT_FALSE(db.lookup(test_key("x", 0)));
    EXPECT_FALSE(db.store(test_record("x", 0)));
    EXPECT_TRUE(db.list().empty());
    EXPECT_FALSE(db.merge_from(path).ok);
    EXPECT_EQ(db.remove_stale("fake", "1"), -1);
  }
  std::string log = read_text(log_file);
  EXPECT_EQ(occurrences(log, "tuning database '" + path + "' (user) cannot be used"), 1u) << log;
  EXPECT_NE(log.find(words), std::string::npos) << log;
  EXPECT_NE(log.find("Tessera carries on without it"), std::string::npos) << log;

  tuning_db as_system;
  as_system.open("", path);
  EXPECT_EQ(as_system.system_info().state, tuning_db_state::unreadable);
  EXPECT_FALSE(as_system.lookup(test_key("x", 0)));
}

TEST(TuningDbFaults, a_file_of_random_bytes_is_reported_once_and_ignored) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  {
    std::ofstream out(path, std::ios::binary);
    std::mt19937 rng(42);
    for (int i = 0; i < 16384; ++i) out.put(static_cast<char>(rng()));
  }
  expect_reported_once_and_ignored(path, dir, "file is not a database");
  EXPECT_EQ(fs::file_size(path), 16384u) << "the file is left as it was";
}

TEST(TuningDbFaults, a_database_truncated_to_half_is_reported_once_and_ignored) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fill(path, "t", 3000);
  ASSERT_FALSE(fs::exists(path + "-wal")) << "the last close checkpoints the WAL";
  auto size = fs::file_size(path);
  ASSERT_GT(size, 8192u);
  fs::resize_file(path, size / 2);
  expect_reported_once_and_ignored(path, dir, "malformed");
}

TEST(TuningDbFaults, a_directory_where_the_file_should_be_is_reported_once_and_ignored) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fs::create_directory(path);
  expect_reported_once_and_ignored(path, dir, "cannot open");
}

TEST(TuningDbFaults, another_programs_sqlite_file_is_reported_and_left_alone) {
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  expect_reported_once_and_ignored(path, dir, "not a Tessera tuning database");
}

TEST(TuningDbFaults, a_file_without_read_permission_is_reported_once_and_ignored) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: file permissions do not stop reads";
  temp_dir dir;
  const std::string path = dir.file("tuning.db");
  fill(path, "p", 3);
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  expect_reported_once_and_ignored(path, dir, "cannot open");
}

TEST(TuningDbFaults, a_folder_that_cannot_be_created_is_reported_and_ignored) {
  temp_dir dir;
  { std::ofstream(dir.file("plain-file")) << "x"; }
  const std::string path = dir.file("plain-file/sub/tuning.db");
  log_to logging(dir.file("log.txt"));
  tuning_db db;
  EXPECT_FALSE(db.open(path, ""));
  EXPECT_EQ(db.user_info().state, tuning_db_state::unreadable);
  EXPECT_FALSE(db.store(test_record("x", 0)));
  EXPECT_NE(read_text(dir.file("log.txt")).find("cannot create its folder"), std::string::npos);
}

TEST(TuningDbFaults, a_missing_system_database_is_no_error) {
  temp_dir dir;
  tuning_db db;
  EXPECT_TRUE(db.open(dir.file("user.db"), dir.file("no-such-system.db")));
  EXPECT_EQ(db.system_info().state, tuning_db_state::absent);
  EXPECT_FALSE(db.lookup(test_key("x", 0)));
}

}  // namespace
