#include "collector/recent_agents.h"

#include <algorithm>

#include "common/base/absl_view.h"

namespace opmap::collector {

void RecentAgents::ForgetOldLocked(absl::Time now) const {
  const absl::Time cutoff = now - window_;
  absl::erase_if(last_seen_, [&](const auto& entry) { return entry.second <= cutoff; });
  last_swept_ = now;
}

void RecentAgents::Saw(std::string_view agent_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (auto it = last_seen_.find(base::AbslView(agent_id)); it != last_seen_.end()) {
    it->second = std::max(it->second, now);
    return;
  }
  if (last_seen_.size() >= max_ids_ && now - last_swept_ >= kFullSweepEvery) {
    ForgetOldLocked(now);
  }
  if (last_seen_.size() >= max_ids_) return;  // full of live ids: not counted
  last_seen_.emplace(std::string(agent_id), now);
}

int64_t RecentAgents::Count(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  ForgetOldLocked(now);
  return static_cast<int64_t>(last_seen_.size());
}

}  // namespace opmap::collector
