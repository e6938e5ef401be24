// RecentAgents: which agent ids sent a batch lately, for the collector's
// opmap_collector_agents_active gauge. An agent opens an Ingest stream only while it
// uploads a burst of windows (one window per process every 60 s by default), so the open
// streams say little about how many agents report; the ids seen within a window of time
// do. Bounded: at most `max_ids` ids are held; while that many are live, new ones are not
// counted (the gauge is then a floor), and a full table is swept for expired ids at most
// once a second — Saw runs on every batch, and costs a lookup.
#ifndef OPMAP_COLLECTOR_RECENT_AGENTS_H_
#define OPMAP_COLLECTOR_RECENT_AGENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace opmap::collector {

class RecentAgents {
 public:
  RecentAgents(absl::Duration window, size_t max_ids) : window_(window), max_ids_(max_ids) {}

  // `agent_id` sent a batch at `now`.
  void Saw(std::string_view agent_id, absl::Time now);
  // Distinct ids seen in (now - window, now]; at most max_ids.
  int64_t Count(absl::Time now) const;

  absl::Duration window() const { return window_; }
  size_t max_ids() const { return max_ids_; }

 private:
  // Drops the ids last seen at or before `now - window_`.
  void ForgetOldLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  static constexpr absl::Duration kFullSweepEvery = absl::Seconds(1);

  const absl::Duration window_;
  const size_t max_ids_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, absl::Time> last_seen_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time last_swept_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_RECENT_AGENTS_H_
