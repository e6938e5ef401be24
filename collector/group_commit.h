// GroupCommitter: many ingest streams' batches stored in one store transaction.
//
// Why: a fleet sends many small windows (a 2 s window per process every 60 s), and each
// batch committed alone costs a transaction: on SQLite, its WAL frames — the pages every
// batch touches (the sessions and meta rows, the rollup buckets) rewritten per batch —
// and their writes. Gathered, those pages are written once per group.
//
// How: Commit() queues the batch and waits; one thread takes everything queued (at most
// max_batches / max_records), waiting up to max_delay after the first for more, and calls
// Store::CommitBatches. While one group commits, the next gathers, so under load groups
// form on their own (max_delay 0 adds no wait). Commit returns that batch's own outcome
// once the group's transaction returned: a batch is acknowledged only when durable.
//
// Thread safety: Commit may be called from any number of threads.
#ifndef OPMAP_COLLECTOR_GROUP_COMMIT_H_
#define OPMAP_COLLECTOR_GROUP_COMMIT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/store/store.h"

namespace opmap::collector {

struct GroupCommitOptions {
  size_t max_batches = 256;         // batches in one group at most
  int64_t max_records = 2'000'000;  // records (BatchCommit::record_count) in one group at most
  absl::Duration max_delay = absl::ZeroDuration();  // wait for more after the first
};

class GroupCommitter {
 public:
  GroupCommitter(Store* store, GroupCommitOptions options);
  ~GroupCommitter();  // commits what is queued, then stops
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Stores `commit` in the next group; its outcome once that group is durable.
  absl::StatusOr<CommitOutcome> Commit(const BatchCommit& commit);

  int64_t groups() const { return groups_.load(std::memory_order_relaxed); }
  int64_t batches() const { return batches_.load(std::memory_order_relaxed); }

 private:
  struct Waiter {
    const BatchCommit* commit;
    absl::StatusOr<CommitOutcome> outcome = absl::UnknownError("not committed");
    bool done = false;
  };
  void Loop();

  Store* const store_;
  const GroupCommitOptions options_;
  absl::Mutex mu_;
  std::deque<Waiter*> queue_ ABSL_GUARDED_BY(mu_);
  absl::Time first_queued_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> groups_{0}, batches_{0};
  std::thread thread_;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_GROUP_COMMIT_H_
