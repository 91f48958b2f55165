// A process for tuning_db_test: the test runs many of these at once against one database, and
// kills some in the middle of a write.
//
//   store DB PREFIX COUNT      stores COUNT distinct keys "PREFIX-i", one transaction each;
//                              exit 0 when every store succeeded
//   read DB PREFIX COUNT MS    looks keys "PREFIX-i" up for MS milliseconds; exit 0 unless a
//                              found entry has the wrong contents
//   long-txn DB FD             opens one transaction of 100000 inserts, writes a byte to FD
//                              after the first 2000 and never commits (the test kills it)
//   store-loop DB FD           writes a byte to FD, then stores new keys "loop-i" until killed
#include "tuning_db.hpp"

#include <sqlite3.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tuning_db_test_records.hpp"

using tessera::registry::tuning_db;
using tessera::testing::test_record;

namespace {

int store(const std::string& path, const std::string& prefix, int count) {
  tuning_db db;
  if (!db.open(path, "")) return 3;
  int failed = 0;
  for (int i = 0; i < count; ++i)
    if (!db.store(test_record(prefix, i))) ++failed;
  if (failed) std::fprintf(stderr, "worker %s: %d stores failed\n", prefix.c_str(), failed);
  return failed ? 1 : 0;
}

int read(const std::string& path, const std::string& prefix, int count, int ms) {
  tuning_db db;
  db.open(path, "");
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  int wrong = 0;
  for (int i = 0; std::chrono::steady_clock::now() < end; i = (i + 1) % count) {
    auto expected = test_record(prefix, i);
    auto found = db.lookup(expected.key);
    if (found && found->kernel_name != expected.kernel_name) ++wrong;
  }
  return wrong ? 1 : 0;
}

void signal_ready(int fd) {
  char byte = 'r';
  if (::write(fd, &byte, 1) != 1) std::_Exit(4);
}

int long_transaction(const std::string& path, int fd) {
  {
    tuning_db db;  // schema and WAL mode, as the library makes them
    if (!db.open(path, "")) return 3;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return 3;
  sqlite3_busy_timeout(db, 5000);
  // A small cache spills the uncommitted pages into the WAL while the transaction runs.
  sqlite3_exec(db, "PRAGMA cache_size=16", nullptr, nullptr, nullptr);
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) return 3;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO tuning (device_fingerprint, plugin_name, plugin_version,"
                     " operation, problem_key, kernel_name, time_ms) VALUES (?1, ?2, ?3, ?4, ?5,"
                     " ?6, ?7)",
                     -1, &st, nullptr);
  for (int i = 0; i < 100000; ++i) {
    auto r = test_record("uncommitted", i);
    sqlite3_bind_text(st, 1, r.key.device_fingerprint.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r.key.plugin_name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r.key.plugin_version.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, r.key.operation);
    sqlite3_bind_text(st, 5, r.key.problem_key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, r.kernel_name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 7, r.time_ms);
    if (sqlite3_step(st) != SQLITE_DONE) return 5;
    sqlite3_reset(st);
    if (i == 2000) signal_ready(fd);
  }
  // Never commits: the test kills this process before it gets here, or while it waits.
  std::this_thread::sleep_for(std::chrono::seconds(60));
  return 6;
}

int store_loop(const std::string& path, int fd) {
  tuning_db db;
  if (!db.open(path, "")) return 3;
  signal_ready(fd);
  for (int i = 0;; ++i) db.store(test_record("loop", i));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "store" && argc == 5) return store(argv[2], argv[3], std::atoi(argv[4]));
  if (mode == "read" && argc == 6)
    return read(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]));
  if (mode == "long-txn" && argc == 4) return long_transaction(argv[2], std::atoi(argv[3]));
  if (mode == "store-loop" && argc == 4) return store_loop(argv[2], std::atoi(argv[3]));
  std::fprintf(stderr, "usage: tessera_tuning_db_worker store|read|long-txn|store-loop ...\n");
  return 2;
}
