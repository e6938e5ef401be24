#include "collector/store/sqlite/wal_checkpointer.h"

#include <utility>

namespace opmap::collector {

WalCheckpointer::WalCheckpointer(std::unique_ptr<sqlite::Database> db, int threshold_pages,
                                 int hard_limit_pages, PauseWriters pause_writers)
    : db_(std::move(db)),
      threshold_pages_(threshold_pages),
      hard_limit_pages_(hard_limit_pages),
      pause_writers_(std::move(pause_writers)),
      thread_([this] { Run(); }) {}

WalCheckpointer::~WalCheckpointer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

bool WalCheckpointer::OnCommit(int wal_pages) {
  if (wal_pages >= hard_limit_pages_) return true;
  if (wal_pages >= threshold_pages_) {
    absl::MutexLock lock(&mu_);
    requested_ = true;
  }
  return false;
}

absl::Status WalCheckpointer::Flush() { return Pass(); }

int64_t WalCheckpointer::passes() const {
  absl::MutexLock lock(&mu_);
  return passes_;
}

int64_t WalCheckpointer::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

void WalCheckpointer::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](WalCheckpointer* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->requested_ || self->stop_;
          },
          this));
      if (stop_) return;
      requested_ = false;
    }
    // A failure (e.g. SQLITE_BUSY from another process on the file) is counted; the
    // next commit past the threshold asks again.
    (void)Pass();
  }
}

absl::Status WalCheckpointer::Pass() {
  absl::MutexLock pass_lock(&pass_mu_);
  // First the bulk, concurrently with commits: whatever is in the WAL now.
  absl::StatusOr<sqlite::Database::CheckpointResult> r = db_->Checkpoint();
  if (r.ok() && r->copied_frames < r->wal_frames) {
    // Then, writers paused, the frames committed meanwhile, so that the next commit
    // finds the WAL fully copied and starts it over. Never called with mu_ held: the
    // writer holds the store's mutex when it calls OnCommit, which takes mu_.
    pause_writers_([&] { r = db_->Checkpoint(); });
  }
  absl::MutexLock lock(&mu_);
  ++passes_;
  if (!r.ok()) {
    ++failures_;
    return r.status();
  }
  return absl::OkStatus();
}

}  // namespace opmap::collector
