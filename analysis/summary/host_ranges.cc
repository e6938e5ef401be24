#include "analysis/summary/host_ranges.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace opmap::analysis {

// On each (process, thread), ranges sorted by start (longer first on ties) are swept with a
// stack of open ranges; the innermost open range that wholly contains the next one is its
// parent.
std::vector<int32_t> RangeParents(const Trace& trace, int64_t* thread_count,
                                  std::vector<uint32_t>* sorted) {
  const std::vector<Range>& ranges = trace.ranges;
  std::vector<int32_t> parent(ranges.size(), -1);
  // No sort of every index through the ranges (the collector nests every session's ranges:
  // that sort cost as much as the rest of the sweep). Each range's thread as a small id in first-seen order (one lookup per range), then the
  // ids renumbered by (process, thread).
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint32_t> thread_id;
  std::vector<uint32_t> rank_of(ranges.size());
  for (uint32_t i = 0; i < ranges.size(); ++i) {
    rank_of[i] = thread_id
                     .try_emplace({ranges[i].process, ranges[i].thread},
                                  static_cast<uint32_t>(thread_id.size()))
                     .first->second;
  }
  {
    std::vector<std::pair<std::pair<int64_t, int64_t>, uint32_t>> threads(thread_id.begin(),
                                                                          thread_id.end());
    std::sort(threads.begin(), threads.end());
    std::vector<uint32_t> rank(threads.size());
    for (uint32_t r = 0; r < threads.size(); ++r) rank[threads[r].second] = r;
    for (uint32_t& t : rank_of) t = rank[t];
  }
  // Ranges by thread rank (a stable counting sort: index order within a thread), then each
  // thread's slice by (start, longer first, index) — usually in order already, as traces
  // and sessions list a thread's ranges by start: checked, sorted only where not.
  std::vector<uint32_t> first(thread_id.size() + 1, 0);
  for (uint32_t t : rank_of) ++first[t + 1];
  for (size_t t = 1; t < first.size(); ++t) first[t] += first[t - 1];
  std::vector<uint32_t> order(ranges.size());
  {
    std::vector<uint32_t> next(first.begin(), first.end() - 1);
    for (uint32_t i = 0; i < ranges.size(); ++i) order[next[rank_of[i]]++] = i;
  }
  const auto before = [&](uint32_t a, uint32_t b) {
    const Range& x = ranges[a];
    const Range& y = ranges[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
    return a < b;
  };
  for (size_t t = 0; t + 1 < first.size(); ++t) {
    const auto b = order.begin() + first[t], e = order.begin() + first[t + 1];
    if (!std::is_sorted(b, e, before)) std::sort(b, e, before);
  }
  std::vector<uint32_t> open;
  *thread_count = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const Range& r = ranges[order[k]];
    if (k == 0 || ranges[order[k - 1]].thread != r.thread ||
        ranges[order[k - 1]].process != r.process) {
      open.clear();
      ++*thread_count;
    }
    while (!open.empty() && ranges[open.back()].end_ns() <= r.start_ns) open.pop_back();
    // Start/end ranges may overlap without nesting: those are skipped over.
    for (size_t j = open.size(); j-- > 0;) {
      if (r.end_ns() <= ranges[open[j]].end_ns()) {
        parent[order[k]] = static_cast<int32_t>(open[j]);
        break;
      }
    }
    open.push_back(order[k]);
  }
  if (sorted != nullptr) *sorted = std::move(order);
  return parent;
}

void HostRangeAccumulator::Add(const Trace& part, const PartRanges* ranges) {
  int64_t threads = 0;
  const std::vector<int32_t> parent = RangeParents(part, &threads);
  Add(part, ranges, parent, threads);
}

void HostRangeAccumulator::Add(const Trace& part, const PartRanges* ranges,
                               const std::vector<int32_t>& parent, int64_t threads) {
  // Children that end in this part take their time off their parent, now or (a parent
  // that goes on into the next part) when it ends.
  std::vector<int64_t> children_ns(part.ranges.size(), 0);
  for (size_t i = 0; i < part.ranges.size(); ++i) {
    const int32_t p = parent[i];
    if (p < 0 || !PartRanges::EndsHere(ranges, i)) continue;
    if (PartRanges::EndsHere(ranges, p)) {
      children_ns[p] += part.ranges[i].dur_ns;
    } else {
      open_children_ns_[PartRanges::IdOf(ranges, p)] += part.ranges[i].dur_ns;
    }
  }
  absl::flat_hash_map<StringId, size_t> row_of;
  for (size_t i = 0; i < part.ranges.size(); ++i) {
    const Range& r = part.ranges[i];
    // Copies of capture-time ranges (a graph capture merge) ran no host time here.
    if (IsReplayThread(r.thread)) continue;
    threads_.emplace(r.process, r.thread);
    if (!PartRanges::EndsHere(ranges, i)) continue;
    auto [cached, missing] = row_of.try_emplace(r.name, 0);
    if (missing) {
      std::string name(part.strings.Get(r.name));
      auto [it, inserted] = index_.try_emplace(name, rows_.size());
      if (inserted) {
        Row& row = rows_.emplace_back(Row{{}, stats::ValueCounts(budget_)});
        row.stats.layer_type = ClassifyOperatorName(name).value_or(LayerType::kOther);
        row.stats.name = std::move(name);
      }
      cached->second = it->second;
    }
    int64_t self = r.dur_ns - children_ns[i];
    if (auto open = open_children_ns_.find(PartRanges::IdOf(ranges, i));
        open != open_children_ns_.end()) {
      self -= open->second;
      open_children_ns_.erase(open);
    }
    Row& row = rows_[cached->second];
    HostRangeStats& s = row.stats;
    ++s.count;
    s.total_ns += r.dur_ns;
    s.self_ns += self;
    self_ns_ += self;
    ++range_count_;
    row.durations.Add(r.dur_ns);
    if (r.flops != kNone) s.flops = (s.flops == kNone ? 0 : s.flops) + r.flops;
    if (r.bytes != kNone) s.bytes = (s.bytes == kNone ? 0 : s.bytes) + r.bytes;
  }
}

HostRangeSummary HostRangeAccumulator::Finish() const {
  HostRangeSummary out;
  out.range_count = range_count_;
  if (range_count_ == 0) return out;
  out.thread_count = static_cast<int64_t>(threads_.size());
  out.self_ns = self_ns_;
  std::array<HostLayerTypeStats, kNumLayerTypes> by_type;
  for (const Row& row : rows_) {
    HostRangeStats& s = out.ranges.emplace_back(row.stats);
    s.duration_ns = row.durations.ToPercentiles();
    s.self_share = out.self_ns > 0 ? static_cast<double>(s.self_ns) / out.self_ns : 0;
    HostLayerTypeStats& t = by_type[static_cast<int>(s.layer_type)];
    t.layer_type = s.layer_type;
    t.count += s.count;
    t.self_ns += s.self_ns;
  }
  std::sort(out.ranges.begin(), out.ranges.end(),
            [](const HostRangeStats& a, const HostRangeStats& b) {
              if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
              return a.name < b.name;
            });
  for (HostLayerTypeStats& t : by_type) {
    if (t.count == 0) continue;
    t.self_share = out.self_ns > 0 ? static_cast<double>(t.self_ns) / out.self_ns : 0;
    out.layer_types.push_back(t);
  }
  std::sort(out.layer_types.begin(), out.layer_types.end(),
            [](const HostLayerTypeStats& a, const HostLayerTypeStats& b) {
              if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
              return a.layer_type < b.layer_type;
            });
  return out;
}

HostRangeSummary SummarizeHostRanges(const Trace& trace) {
  HostRangeAccumulator acc;
  acc.Add(trace, nullptr);
  return acc.Finish();
}

}  // namespace opmap::analysis
