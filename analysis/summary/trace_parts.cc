#include "analysis/summary/trace_parts.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/host_ranges.h"

namespace opmap::analysis {
namespace {

// Operator ranges' external ids that name two ranges (and so name neither), over the same
// ranges the mapper treats as operators.
absl::flat_hash_map<int64_t, bool> AmbiguousExternalIds(const Trace& trace) {
  absl::flat_hash_map<int64_t, bool> out;  // id -> named more than once
  const std::vector<bool> is_operator = OperatorRanges(trace);
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    if (r.external_id == kNone || !is_operator[i]) continue;
    auto [it, inserted] = out.emplace(r.external_id, false);
    if (!inserted) it->second = true;
  }
  return out;
}

// Cut times, ascending: after every `target_events` starts of events of any kind.
std::vector<int64_t> ChooseCuts(const Trace& trace, size_t target_events) {
  std::vector<int64_t> starts;
  starts.reserve(trace.gpu_events.size() + trace.api_calls.size() + trace.ranges.size());
  for (const GpuEvent& g : trace.gpu_events) starts.push_back(g.start_ns);
  for (const ApiCall& a : trace.api_calls) starts.push_back(a.start_ns);
  for (const Range& r : trace.ranges) starts.push_back(r.start_ns);
  std::sort(starts.begin(), starts.end());
  std::vector<int64_t> cuts;
  for (size_t i = target_events; i < starts.size(); i += target_events) {
    if (cuts.empty() || starts[i] > cuts.back()) cuts.push_back(starts[i]);
  }
  return cuts;
}

size_t PartOf(const std::vector<int64_t>& cuts, int64_t t) {
  return static_cast<size_t>(std::upper_bound(cuts.begin(), cuts.end(), t) - cuts.begin());
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> FirstCorrelations(const Trace& trace) {
  absl::flat_hash_map<int64_t, int64_t> first;
  for (const ApiCall& a : trace.api_calls) {
    if (a.correlation == kNone) continue;
    auto [it, inserted] = first.emplace(a.process, a.correlation);
    if (!inserted) it->second = std::min(it->second, a.correlation);
  }
  return {first.begin(), first.end()};
}

TracePartsStats ForEachTracePart(Trace& trace, size_t target_events,
                                 const std::function<void(const Trace&, const PartRanges&)>& fn) {
  TracePartsStats stats;
  std::vector<int64_t> cuts;
  if (trace.stalls.empty() && trace.measured.empty()) {
    cuts = ChooseCuts(trace, std::max<size_t>(target_events, 1));
  }
  TraceInfo info = trace.info;
  if (!cuts.empty() && info.window_start_ns != kNone && info.first_correlation.empty()) {
    info.first_correlation = FirstCorrelations(trace);
  }
  const size_t n = cuts.size() + 1;
  // Each range and API call is held from the part its start falls in to the last part
  // that needs it: its end's, or the part of a GPU event it launched or owns.
  std::vector<size_t> range_last(trace.ranges.size()), api_last(trace.api_calls.size());
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    range_last[i] = r.dur_ns > 0 ? PartOf(cuts, r.end_ns() - 1) : PartOf(cuts, r.start_ns);
  }
  for (size_t i = 0; i < trace.api_calls.size(); ++i) {
    api_last[i] = PartOf(cuts, trace.api_calls[i].start_ns);
  }
  if (n > 1) {
    const MappingResult mapping = MapGpuEvents(trace);
    int64_t threads = 0;
    const std::vector<int32_t> parent = RangeParents(trace, &threads);
    for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
      const size_t p = PartOf(cuts, trace.gpu_events[i].start_ns);
      const EventMapping& m = mapping.events[i];
      if (m.launch_api >= 0) api_last[m.launch_api] = std::max(api_last[m.launch_api], p);
      for (int32_t r = m.range; r >= 0 && range_last[r] < p; r = parent[r]) range_last[r] = p;
    }
  }
  std::vector<std::vector<uint32_t>> gpu(n), api(n), ranges(n);
  for (uint32_t i = 0; i < trace.gpu_events.size(); ++i) {
    gpu[PartOf(cuts, trace.gpu_events[i].start_ns)].push_back(i);
  }
  for (uint32_t i = 0; i < trace.api_calls.size(); ++i) {
    const size_t first = PartOf(cuts, trace.api_calls[i].start_ns);
    for (size_t p = first; p <= api_last[i]; ++p) api[p].push_back(i);
    stats.carried += static_cast<int64_t>(api_last[i] - first);
  }
  for (uint32_t i = 0; i < trace.ranges.size(); ++i) {
    const size_t first = PartOf(cuts, trace.ranges[i].start_ns);
    for (size_t p = first; p <= range_last[i]; ++p) ranges[p].push_back(i);
    stats.carried += static_cast<int64_t>(range_last[i] - first);
  }
  const absl::flat_hash_map<int64_t, bool> ambiguous =
      n > 1 ? AmbiguousExternalIds(trace) : absl::flat_hash_map<int64_t, bool>();

  for (size_t p = 0; p < n; ++p) {
    Trace part;
    part.info = info;
    part.strings = std::move(trace.strings);
    part.gpu_events.reserve(gpu[p].size());
    for (uint32_t i : gpu[p]) part.gpu_events.push_back(trace.gpu_events[i]);
    part.api_calls.reserve(api[p].size());
    for (uint32_t i : api[p]) part.api_calls.push_back(trace.api_calls[i]);
    PartRanges held;
    part.ranges.reserve(ranges[p].size());
    for (uint32_t i : ranges[p]) {
      Range r = trace.ranges[i];
      if (r.external_id != kNone) {
        if (auto it = ambiguous.find(r.external_id); it != ambiguous.end() && it->second) {
          r.external_id = kNone;
        }
      }
      part.ranges.push_back(r);
      held.id.push_back(i);
      held.ends_here.push_back(range_last[i] == p ? 1 : 0);
    }
    if (n == 1) {
      part.stalls = std::move(trace.stalls);
      part.measured = std::move(trace.measured);
    }
    ++stats.parts;
    stats.largest_part_events =
        std::max<int64_t>(stats.largest_part_events,
                          static_cast<int64_t>(gpu[p].size() + api[p].size() + ranges[p].size()));
    fn(part, held);
    trace.strings = std::move(part.strings);
    if (n == 1) {
      trace.stalls = std::move(part.stalls);
      trace.measured = std::move(part.measured);
    }
  }
  return stats;
}

}  // namespace opmap::analysis
