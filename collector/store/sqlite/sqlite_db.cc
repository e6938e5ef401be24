#include "collector/store/sqlite/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_format.h"

namespace opmap::collector::sqlite {
namespace {

const char* CodeName(int primary) {
  switch (primary) {
    case SQLITE_ERROR: return "SQLITE_ERROR";
    case SQLITE_INTERNAL: return "SQLITE_INTERNAL";
    case SQLITE_PERM: return "SQLITE_PERM";
    case SQLITE_ABORT: return "SQLITE_ABORT";
    case SQLITE_BUSY: return "SQLITE_BUSY";
    case SQLITE_LOCKED: return "SQLITE_LOCKED";
    case SQLITE_NOMEM: return "SQLITE_NOMEM";
    case SQLITE_READONLY: return "SQLITE_READONLY";
    case SQLITE_INTERRUPT: return "SQLITE_INTERRUPT";
    case SQLITE_IOERR: return "SQLITE_IOERR";
    case SQLITE_CORRUPT: return "SQLITE_CORRUPT";
    case SQLITE_FULL: return "SQLITE_FULL";
    case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN";
    case SQLITE_PROTOCOL: return "SQLITE_PROTOCOL";
    case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT";
    case SQLITE_MISMATCH: return "SQLITE_MISMATCH";
    case SQLITE_MISUSE: return "SQLITE_MISUSE";
    case SQLITE_AUTH: return "SQLITE_AUTH";
    case SQLITE_RANGE: return "SQLITE_RANGE";
    case SQLITE_NOTADB: return "SQLITE_NOTADB";
    default: return "SQLITE_?";
  }
}

}  // namespace

absl::Status Error(sqlite3* db, int rc, std::string_view context) {
  // The connection's message is more specific (e.g. the failing constraint) when it
  // describes this error; otherwise SQLite's generic text for the code.
  const char* detail = db != nullptr && (sqlite3_errcode(db) & 0xff) == (rc & 0xff) ? sqlite3_errmsg(db)
                                                                   : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  std::string message =
      absl::StrFormat("%s: %s (%s)", context, detail, CodeName(primary));
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_PROTOCOL:
      return absl::UnavailableError(message);
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

// ----- Statement ----------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ != nullptr) Reset();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = 0;
}

Statement& Statement::BindInt(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindText(int index, std::string_view value) {
  // A non-null pointer even for "": SQLite binds NULL for a null pointer.
  int rc = sqlite3_bind_text64(stmt_, index, value.empty() ? "" : value.data(), value.size(),
                               SQLITE_STATIC, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindBlob(int index, std::string_view value) {
  int rc = sqlite3_bind_blob64(stmt_, index, value.empty() ? "" : value.data(), value.size(),
                               SQLITE_STATIC);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (bind_error_ != 0) return Error(db_, bind_error_, "binding a parameter");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_, rc, sqlite3_sql(stmt_));
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string_view Statement::Text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(p),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string_view Statement::Blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_, column);
  if (p == nullptr) return {};
  return std::string_view(static_cast<const char*>(p),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

// ----- Database -----------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOMUTEX: the store's own mutex serialises use of the connection.
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st = Error(db, rc, absl::StrFormat("opening %s", path));
    sqlite3_close(db);  // a handle is returned even on failure
    return st;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Database>(new Database(db, path));
}

Database::~Database() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

absl::StatusOr<Statement> Database::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Statement(db_, it->second);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db_, rc, absl::StrFormat("%s: preparing \"%s\"", path_, sql));
  }
  cache_.emplace(sql, stmt);
  return Statement(db_, stmt);
}

absl::Status Database::Exec(const std::string& sql) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(db_, rc, absl::StrFormat("%s: \"%s\"", path_, sql));
  return absl::OkStatus();
}

absl::StatusOr<std::string> Database::PragmaValue(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db_, rc, absl::StrFormat("%s: \"%s\"", path_, sql));
  }
  std::string value;
  rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    const unsigned char* p = sqlite3_column_text(stmt, 0);
    if (p != nullptr) value = reinterpret_cast<const char*>(p);
    rc = sqlite3_step(stmt);
  }
  if (rc != SQLITE_DONE) {
    absl::Status st = Error(db_, rc, absl::StrFormat("%s: \"%s\"", path_, sql));
    sqlite3_finalize(stmt);
    return st;
  }
  sqlite3_finalize(stmt);
  return value;
}

void Database::SetWalHook(std::function<void(int)> hook) {
  wal_hook_ = std::move(hook);
  sqlite3_wal_hook(db_, wal_hook_ ? &Database::WalHookTrampoline : nullptr, this);
}

int Database::WalHookTrampoline(void* self, sqlite3*, const char*, int pages) {
  static_cast<Database*>(self)->wal_hook_(pages);
  return SQLITE_OK;
}

absl::StatusOr<Database::CheckpointResult> Database::Checkpoint() {
  CheckpointResult r;
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &r.wal_frames,
                                     &r.copied_frames);
  if (rc != SQLITE_OK) return Error(db_, rc, absl::StrFormat("%s: checkpoint", path_));
  return r;
}

int64_t Database::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
int64_t Database::Changes() const { return sqlite3_changes64(db_); }

// ----- Transaction --------------------------------------------------------------------

absl::StatusOr<Transaction> Transaction::Begin(Database& db) {
  if (absl::Status st = db.Exec("BEGIN IMMEDIATE"); !st.ok()) return st;
  return Transaction(&db);
}

absl::StatusOr<Transaction> Transaction::BeginRead(Database& db) {
  if (absl::Status st = db.Exec("BEGIN"); !st.ok()) return st;
  return Transaction(&db);
}

Transaction::~Transaction() {
  // Best effort: if ROLLBACK itself fails the connection is unusable anyway, and SQLite
  // rolls back an unfinished transaction when the connection closes.
  if (db_ != nullptr) (void)db_->Exec("ROLLBACK");
}

absl::Status Transaction::Commit() {
  absl::Status st = db_->Exec("COMMIT");
  // A failed COMMIT leaves the transaction open (e.g. SQLITE_BUSY); the destructor
  // rolls it back so nothing of it is kept.
  if (st.ok()) db_ = nullptr;
  return st;
}

}  // namespace opmap::collector::sqlite
