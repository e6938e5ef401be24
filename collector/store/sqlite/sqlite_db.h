// A thin layer over the SQLite C API for the store: one connection, prepared statements
// cached by their SQL text, results as absl::Status naming what failed, and a
// transaction guard that rolls back unless committed. Private to collector/store.
//
// Thread safety: none. SqliteStore serialises all use of one Database with its mutex.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_DB_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace opmap::collector::sqlite {

// An absl::Status for SQLite result code `rc`: kUnavailable for what a retry may fix
// (SQLITE_BUSY / LOCKED / IOERR), kResourceExhausted for a full disk, kDataLoss for a
// corrupt or foreign file, kFailedPrecondition when the file can't be opened or written,
// kInternal otherwise. The message is "<context>: <sqlite message> (<code name>)".
absl::Status Error(sqlite3* db, int rc, std::string_view context);

// A cached prepared statement in use: binds, steps, reads columns; resets itself (and
// clears its bindings) when it goes out of scope so the cache can hand it out again.
// Bound text and blobs are NOT copied: they must outlive the Statement.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite. A bind error is reported by the next Step.
  Statement& BindInt(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, std::string_view value);

  // Makes the statement ready to bind and run again (e.g. one insert per row).
  void Reset();

  // true: a row is ready to read; false: the statement is done.
  absl::StatusOr<bool> Step();
  // Steps until done, ignoring any rows.
  absl::Status Run();

  int64_t Int(int column) const;
  bool IsNull(int column) const;
  double Double(int column) const;
  // Valid until the next Step or the end of the Statement.
  std::string_view Text(int column) const;
  std::string_view Blob(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_error_ = 0;  // first failing sqlite3_bind_* code
};

class Database {
 public:
  // Opens (creating if missing) the file at `path`, read-write.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The statement for `sql`, prepared once and cached for the Database's lifetime
  // (SQLite re-prepares it by itself after a schema change). One Statement per SQL text
  // may be in use at a time: a second Prepare of the same text resets the first.
  absl::StatusOr<Statement> Prepare(const std::string& sql);
  // Runs one or more statements that return no rows (schema, pragmas, BEGIN/COMMIT).
  absl::Status Exec(const std::string& sql);
  // Runs a pragma that returns one value, e.g. "PRAGMA journal_mode=WAL" → "wal".
  absl::StatusOr<std::string> PragmaValue(const std::string& sql);

  // Replaces SQLite's automatic checkpoint (which runs inside the COMMIT that crosses
  // its threshold): `hook` runs after each commit, inside it, with the number of pages
  // in the WAL. It may checkpoint this Database (the write lock is released by then).
  void SetWalHook(std::function<void(int wal_pages)> hook);
  // A PASSIVE checkpoint: copies WAL frames no reader still needs into the database
  // file and syncs it, without waiting for any lock.
  struct CheckpointResult {
    int wal_frames = 0;     // frames in the WAL
    int copied_frames = 0;  // of them, now in the database file
  };
  absl::StatusOr<CheckpointResult> Checkpoint();

  int64_t LastInsertRowid() const;
  int64_t Changes() const;
  const std::string& path() const { return path_; }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  static int WalHookTrampoline(void* self, sqlite3* db, const char* name, int pages);

  sqlite3* db_;
  std::string path_;
  absl::flat_hash_map<std::string, sqlite3_stmt*> cache_;
  std::function<void(int)> wal_hook_;
};

// BEGIN IMMEDIATE (takes the write lock now, so a busy database fails here, waiting up
// to the busy timeout, and never half-way through); rolls back on destruction unless
// Commit succeeded.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Database& db);
  // BEGIN (deferred), for reading: every statement until the guard ends reads the same
  // snapshot (in WAL mode, the commits that had returned at the first read).
  static absl::StatusOr<Transaction> BeginRead(Database& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  absl::Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;  // null once committed or rolled back
};

}  // namespace opmap::collector::sqlite

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_DB_H_
