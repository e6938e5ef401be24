#include "collector/group_commit.h"

#include <vector>

namespace opmap::collector {

GroupCommitter::GroupCommitter(Store* store, GroupCommitOptions options)
    : store_(store), options_(options), thread_([this] { Loop(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

absl::StatusOr<CommitOutcome> GroupCommitter::Commit(const BatchCommit& commit) {
  Waiter w{&commit};
  absl::MutexLock lock(&mu_);
  if (stop_) return absl::UnavailableError("collector is shutting down");
  if (queue_.empty()) first_queued_ = absl::Now();
  queue_.push_back(&w);
  mu_.Await(absl::Condition(&w.done));
  return std::move(w.outcome);
}

void GroupCommitter::Loop() {
  std::vector<Waiter*> group;
  std::vector<const BatchCommit*> commits;
  absl::MutexLock lock(&mu_);
  for (;;) {
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
    mu_.Await(absl::Condition(&ready));
    if (queue_.empty()) return;  // stopping, nothing left
    // Up to max_delay after the first for more, unless the group is full already.
    if (options_.max_delay > absl::ZeroDuration()) {
      auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || queue_.size() >= options_.max_batches;
      };
      mu_.AwaitWithDeadline(absl::Condition(&full), first_queued_ + options_.max_delay);
    }
    group.clear();
    commits.clear();
    int64_t records = 0;
    while (!queue_.empty() && group.size() < options_.max_batches) {
      Waiter* w = queue_.front();
      // A batch alone over max_records still goes, as a group of its own.
      if (!group.empty() && records + w->commit->record_count > options_.max_records) break;
      records += w->commit->record_count;
      group.push_back(w);
      commits.push_back(w->commit);
      queue_.pop_front();
    }
    if (!queue_.empty()) first_queued_ = absl::Now();
    mu_.Unlock();
    std::vector<absl::StatusOr<CommitOutcome>> outcomes = store_->CommitBatches(commits);
    mu_.Lock();
    for (size_t i = 0; i < group.size(); ++i) {
      group[i]->outcome = i < outcomes.size()
                              ? std::move(outcomes[i])
                              : absl::InternalError("the store answered fewer outcomes");
      group[i]->done = true;
    }
    groups_.fetch_add(1, std::memory_order_relaxed);
    batches_.fetch_add(static_cast<int64_t>(group.size()), std::memory_order_relaxed);
  }
}

}  // namespace opmap::collector
