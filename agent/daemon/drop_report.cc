#include "agent/daemon/drop_report.h"

#include <algorithm>
#include <utility>

namespace opmap::agent {

void DropReport::Add(Counts& into, const Counts& counts) {
  for (size_t c = 0; c < into.size(); ++c) into[c] += counts[c];
}

DropReport::Counts DropReport::Take(const Counts& totals,
                                    const std::function<bool(const OutboxKey&)>& held) {
  std::lock_guard<std::mutex> lock(mu_);
  auto lost = std::remove_if(pending_.begin(), pending_.end(), [&](const Carrier& c) {
    if (held(c.key)) return false;
    Add(returned_, c.counts);
    return true;
  });
  pending_.erase(lost, pending_.end());
  Counts out = returned_;
  returned_ = {};
  for (size_t c = 0; c < out.size(); ++c) {
    // Totals never fall (the outbox only counts up); a restart's smaller totals add none.
    if (totals[c] > attached_[c]) out[c] += totals[c] - attached_[c];
    attached_[c] = std::max(attached_[c], totals[c]);
  }
  return out;
}

void DropReport::Untake(const Counts& counts) {
  std::lock_guard<std::mutex> lock(mu_);
  Add(returned_, counts);
}

void DropReport::Carried(OutboxKey key, const Counts& counts) {
  if (std::all_of(counts.begin(), counts.end(), [](uint64_t n) { return n == 0; })) return;
  std::lock_guard<std::mutex> lock(mu_);
  pending_.push_back(Carrier{std::move(key), counts});
}

void DropReport::Settled(std::string_view session, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(pending_, [&](const Carrier& c) {
    return c.key.session_id == session && c.key.seq <= seq;
  });
}

size_t DropReport::pending_carriers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

}  // namespace opmap::agent
