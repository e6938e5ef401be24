#include "collector/recent_agents.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/base/absl_view.h"

namespace opmap::collector {

void RecentAgents::ForgetOldLocked(absl::Time now) const {
  const absl::Time cutoff = now - window_;
  absl::erase_if(last_seen_, [&](const auto& entry) { return entry.second <= cutoff; });
}

void RecentAgents::Saw(std::string_view agent_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (auto it = last_seen_.find(base::AbslView(agent_id)); it != last_seen_.end()) {
    it->second = std::max(it->second, now);
    return;
  }
  if (last_seen_.size() >= max_ids_) {
    ForgetOldLocked(now);
    if (last_seen_.size() >= max_ids_) {
      // Still full: the id seen longest ago makes room (a scan, only when a collector
      // hears from more than max_ids agents within one window).
      auto oldest = std::min_element(
          last_seen_.begin(), last_seen_.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      last_seen_.erase(oldest);
    }
  }
  last_seen_.emplace(std::string(agent_id), now);
}

int64_t RecentAgents::Count(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  ForgetOldLocked(now);
  return static_cast<int64_t>(last_seen_.size());
}

}  // namespace opmap::collector
