#include "analysis/summary/host_ranges.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace opmap::analysis {
namespace {

// Self time per range: on each (process, thread), ranges sorted by start (longer first
// on ties) are swept with a stack of open ranges; the innermost open range that wholly
// contains the next one is its parent.
std::vector<int64_t> SelfTimes(const Trace& trace, int64_t* thread_count) {
  const std::vector<Range>& ranges = trace.ranges;
  std::vector<int64_t> self(ranges.size());
  std::vector<uint32_t> order(ranges.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    self[i] = ranges[i].dur_ns;
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Range& x = ranges[a];
    const Range& y = ranges[b];
    if (x.process != y.process) return x.process < y.process;
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
    return a < b;
  });
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
    // The parent is the innermost open range that wholly contains this one (start/end
    // ranges may overlap without nesting: those are skipped over).
    for (size_t j = open.size(); j-- > 0;) {
      if (r.end_ns() <= ranges[open[j]].end_ns()) {
        self[open[j]] -= r.dur_ns;
        break;
      }
    }
    open.push_back(order[k]);
  }
  return self;
}

}  // namespace

HostRangeSummary SummarizeHostRanges(const Trace& trace) {
  HostRangeSummary out;
  out.range_count = static_cast<int64_t>(trace.ranges.size());
  if (trace.ranges.empty()) return out;
  const std::vector<int64_t> self = SelfTimes(trace, &out.thread_count);

  absl::flat_hash_map<StringId, size_t> index;
  std::vector<std::vector<double>> durations;
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    auto [it, inserted] = index.try_emplace(r.name, out.ranges.size());
    if (inserted) {
      HostRangeStats& s = out.ranges.emplace_back();
      s.name = std::string(trace.strings.Get(r.name));
      s.layer_type = ClassifyOperatorName(s.name).value_or(LayerType::kOther);
      durations.emplace_back();
    }
    HostRangeStats& s = out.ranges[it->second];
    ++s.count;
    s.total_ns += r.dur_ns;
    s.self_ns += self[i];
    out.self_ns += self[i];
    durations[it->second].push_back(static_cast<double>(r.dur_ns));
    if (r.flops != kNone) s.flops = (s.flops == kNone ? 0 : s.flops) + r.flops;
    if (r.bytes != kNone) s.bytes = (s.bytes == kNone ? 0 : s.bytes) + r.bytes;
  }
  std::array<HostLayerTypeStats, kNumLayerTypes> by_type;
  for (size_t i = 0; i < out.ranges.size(); ++i) {
    HostRangeStats& s = out.ranges[i];
    s.duration_ns = stats::ExactPercentiles(std::move(durations[i]));
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

}  // namespace opmap::analysis
