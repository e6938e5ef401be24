// Background WAL checkpoints for the store's writer connection. Private to collector/store.
//
// Why: SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold,
// i.e. under the store's mutex. It copies the WAL back into the database file and
// fsyncs both (~15 ms per 4 MB on the development VM) while every ingest stream waits
// for the mutex. Measured with the ingest benchmark: 1.1 M kernel records/s with it,
// 1.95 M/s with no checkpoints at all. Here the writer only counts WAL pages (its wal
// hook calls OnCommit) and a thread with its own connection does the copying and syncing
// (PASSIVE: it never waits for, nor blocks, writers or readers).
//
// A WAL only restarts from its beginning when a writer finds every frame in it copied.
// Under continuous commits a PASSIVE checkpoint never catches up by itself (frames keep
// arriving while it copies), so after each pass the thread runs a second, short pass
// with writers paused (`pause_writers` takes the store's mutex) over what arrived
// meanwhile. That bounds the WAL at about the threshold plus one pass's worth of commits.
// Should the thread fall behind anyway (e.g. a long reader holds old frames), a commit
// that finds the WAL past `hard_limit_pages` checkpoints synchronously, as SQLite would.
//
// Durability is unchanged: a commit is in the WAL (in the OS) when it returns, whoever
// checkpoints it later; the WAL is synced before any of it is copied.
//
// Thread safety: OnCommit is called by the writer with the store's mutex held; Flush and
// the counters from any thread.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "collector/store/sqlite/sqlite_db.h"

namespace opmap::collector {

class WalCheckpointer {
 public:
  using PauseWriters = std::function<void(absl::FunctionRef<void()>)>;

  // `db`: a connection of its own to the store's file. Starts the thread.
  WalCheckpointer(std::unique_ptr<sqlite::Database> db, int threshold_pages,
                  int hard_limit_pages, PauseWriters pause_writers);
  ~WalCheckpointer();  // stops and joins the thread (a pass in progress finishes)
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // After each commit, with the WAL's size in pages: wakes the thread past the threshold.
  // True past the hard limit: the writer should checkpoint now, itself.
  bool OnCommit(int wal_pages);

  // Runs a pass now and waits for it (tests; shutdown needs none: closing the last
  // connection checkpoints). Returns the pass's error, if any.
  absl::Status Flush();

  int64_t passes() const;
  int64_t failures() const;

 private:
  void Run();
  absl::Status Pass();

  std::unique_ptr<sqlite::Database> db_;  // used by the thread (and Flush's pass) only
  const int threshold_pages_;
  const int hard_limit_pages_;
  PauseWriters pause_writers_;

  mutable absl::Mutex mu_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t passes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Mutex pass_mu_;  // one pass at a time (thread or Flush)
  std::thread thread_;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H_
