#include "analysis/mapping/kernel_mapper.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/serving/request_key.h"
#include "common/text/text_util.h"

namespace opmap::analysis {
namespace {

// Operator ranges of one thread, sorted so that an enclosing range precedes what it
// encloses: by start ascending, then end descending.
struct ThreadRanges {
  std::vector<int32_t> order;
};

using ThreadKey = std::pair<int64_t, int64_t>;  // (process, thread)

// Sorts ranges so that an enclosing range precedes what it encloses: by start ascending,
// then end descending; identical extents keep their recorded order (later = inner).
void SortOuterFirst(const Trace& trace, std::vector<int32_t>& ranges) {
  std::sort(ranges.begin(), ranges.end(), [&](int32_t x, int32_t y) {
    const Range& a = trace.ranges[x];
    const Range& b = trace.ranges[y];
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns() != b.end_ns()) return a.end_ns() > b.end_ns();
    return x < y;
  });
}

}  // namespace

bool IsGraphLaunchCall(std::string_view api_name) {
  return text::Contains(api_name, "GraphLaunch");
}

// A user annotation around a graph launch is the step of a serving engine no name rule
// knows: a replayed graph's kernels have their operators inside the graph, not around
// its launch.
std::vector<bool> OperatorRanges(const Trace& trace) {
  std::vector<bool> op(trace.ranges.size(), false);
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> annotations;
  for (int32_t i = 0; i < static_cast<int32_t>(trace.ranges.size()); ++i) {
    const Range& r = trace.ranges[i];
    op[i] = IsOperatorRange(r.kind) && RequestKey(trace.strings.Get(r.name)).empty();
    if (op[i] && (r.kind == RangeKind::kUserAnnotation || r.kind == RangeKind::kNvtx)) {
      annotations[{r.process, r.thread}].push_back(i);
    }
  }
  if (annotations.empty()) return op;
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> launches;
  for (int32_t i = 0; i < static_cast<int32_t>(trace.api_calls.size()); ++i) {
    const ApiCall& a = trace.api_calls[i];
    if (annotations.contains({a.process, a.thread}) && IsGraphLaunchCall(trace.strings.Get(a.name))) {
      launches[{a.process, a.thread}].push_back(i);
    }
  }
  for (auto& [key, calls] : launches) {
    std::vector<int32_t>& ranges = annotations[key];
    SortOuterFirst(trace, ranges);
    std::sort(calls.begin(), calls.end(), [&](int32_t x, int32_t y) {
      return trace.api_calls[x].start_ns < trace.api_calls[y].start_ns;
    });
    std::vector<int32_t> open;
    size_t next = 0;
    for (int32_t c : calls) {
      const ApiCall& api = trace.api_calls[c];
      while (next < ranges.size() && trace.ranges[ranges[next]].start_ns <= api.start_ns) {
        open.push_back(ranges[next++]);
      }
      for (int32_t r : open) {
        if (api.end_ns() <= trace.ranges[r].end_ns()) op[r] = false;
      }
      open.erase(std::remove_if(open.begin(), open.end(),
                                [&](int32_t r) { return trace.ranges[r].end_ns() < api.start_ns; }),
                 open.end());
    }
  }
  return op;
}

namespace {

// For every API call, the innermost operator range on its thread that encloses it
// [range.start <= api.start && api.end <= range.end], found by one sweep per thread.
std::vector<int32_t> InnermostEnclosing(const Trace& trace, const std::vector<bool>& is_operator) {
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> ranges_by_thread;
  for (int32_t i = 0; i < static_cast<int32_t>(trace.ranges.size()); ++i) {
    const Range& r = trace.ranges[i];
    if (!is_operator[i]) continue;
    ranges_by_thread[{r.process, r.thread}].push_back(i);
  }
  absl::flat_hash_map<ThreadKey, std::vector<int32_t>> apis_by_thread;
  for (int32_t i = 0; i < static_cast<int32_t>(trace.api_calls.size()); ++i) {
    const ApiCall& a = trace.api_calls[i];
    apis_by_thread[{a.process, a.thread}].push_back(i);
  }
  std::vector<int32_t> enclosing(trace.api_calls.size(), -1);
  for (auto& [key, apis] : apis_by_thread) {
    auto it = ranges_by_thread.find(key);
    if (it == ranges_by_thread.end()) continue;
    std::vector<int32_t>& ranges = it->second;
    SortOuterFirst(trace, ranges);
    std::sort(apis.begin(), apis.end(), [&](int32_t x, int32_t y) {
      return trace.api_calls[x].start_ns < trace.api_calls[y].start_ns;
    });
    // Sweep: `open` holds ranges that started at or before the current API call and may
    // still enclose it, outermost first.
    std::vector<int32_t> open;
    size_t next = 0;
    for (int32_t api_index : apis) {
      const ApiCall& api = trace.api_calls[api_index];
      while (next < ranges.size() && trace.ranges[ranges[next]].start_ns <= api.start_ns) {
        const Range& incoming = trace.ranges[ranges[next]];
        // Ranges that ended before this one starts can't enclose anything later.
        while (!open.empty() && trace.ranges[open.back()].end_ns() < incoming.start_ns) {
          open.pop_back();
        }
        open.push_back(ranges[next++]);
      }
      while (!open.empty() && trace.ranges[open.back()].end_ns() < api.start_ns) {
        open.pop_back();
      }
      // Improperly nested ranges may leave a non-enclosing range on top: walk down.
      for (auto r = open.rbegin(); r != open.rend(); ++r) {
        const Range& range = trace.ranges[*r];
        if (range.start_ns <= api.start_ns && api.end_ns() <= range.end_ns()) {
          enclosing[api_index] = *r;
          break;
        }
      }
    }
  }
  return enclosing;
}

}  // namespace

std::string_view MappingRuleName(MappingRule rule) {
  switch (rule) {
    case MappingRule::kGraphNode: return "graph_node";
    case MappingRule::kExternalId: return "external_id";
    case MappingRule::kLaunchNesting: return "launch_nesting";
    case MappingRule::kGraphLaunch: return "graph_launch";
    case MappingRule::kUnmapped: return "unmapped";
  }
  return "unmapped";
}

std::string_view UnmappedReasonName(UnmappedReason reason) {
  switch (reason) {
    case UnmappedReason::kNone: return "none";
    case UnmappedReason::kNoLaunchRecord: return "no_launch_record";
    case UnmappedReason::kLaunchOutsideRanges: return "launch_outside_ranges";
    case UnmappedReason::kLaunchOutsideWindow: return "launch_outside_window";
  }
  return "none";
}

bool IsOperatorRange(RangeKind kind) {
  return kind == RangeKind::kCpuOp || kind == RangeKind::kUserAnnotation ||
         kind == RangeKind::kNvtx;
}

std::vector<int32_t> MappingResult::LaunchApiIndex() const {
  std::vector<int32_t> out(events.size());
  for (size_t i = 0; i < events.size(); ++i) out[i] = events[i].launch_api;
  return out;
}

MappingResult MapGpuEvents(const Trace& trace) {
  MappingResult result;
  result.events.resize(trace.gpu_events.size());

  // Correlation ids are per process: several processes in one trace (one per GPU) reuse
  // them. Keyed by (process, id); a GPU event or launch of unknown process matches by id.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int32_t> api_by_correlation;
  absl::flat_hash_map<int64_t, int32_t> api_by_id;
  // The smallest launch correlation per process: a kernel of a windowed capture whose id
  // is below it was launched before the window began.
  absl::flat_hash_map<int64_t, int64_t> min_correlation;
  api_by_correlation.reserve(trace.api_calls.size());
  for (int32_t i = 0; i < static_cast<int32_t>(trace.api_calls.size()); ++i) {
    const ApiCall& a = trace.api_calls[i];
    if (a.correlation == kNone) continue;
    if (!api_by_correlation.emplace(std::make_pair(a.process, a.correlation), i).second) {
      ++result.duplicate_correlations;
    }
    api_by_id.emplace(a.correlation, i);
    auto [m, inserted] = min_correlation.emplace(a.process, a.correlation);
    if (!inserted && a.correlation < m->second) m->second = a.correlation;
  }
  if (!trace.info.first_correlation.empty()) {
    min_correlation.clear();
    for (const auto& [process, first] : trace.info.first_correlation) {
      min_correlation[process] = first;
    }
  }
  const bool windowed = trace.info.window_start_ns != kNone;
  const std::vector<bool> is_operator = OperatorRanges(trace);
  absl::flat_hash_map<int64_t, int32_t> range_by_external_id;
  for (int32_t i = 0; i < static_cast<int32_t>(trace.ranges.size()); ++i) {
    const Range& r = trace.ranges[i];
    if (r.external_id == kNone || !is_operator[i]) continue;
    auto [it, inserted] = range_by_external_id.emplace(r.external_id, i);
    // An id on two ranges names neither: leave such kernels to launch nesting.
    if (!inserted) it->second = -1;
  }
  std::vector<int32_t> enclosing = InnermostEnclosing(trace, is_operator);

  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    EventMapping& m = result.events[i];
    if (g.correlation != kNone) {
      auto it = api_by_correlation.find(std::make_pair(g.process, g.correlation));
      if (it != api_by_correlation.end()) {
        m.launch_api = it->second;
      } else if (auto id = api_by_id.find(g.correlation); id != api_by_id.end()) {
        const ApiCall& api = trace.api_calls[id->second];
        if (g.process == kNone || api.process == kNone) m.launch_api = id->second;
      }
    }
    // Rule 2: external id, cross-checked against the launch when we have one. Some
    // Kineto versions write the correlation id as "External id"; the check keeps such a
    // number from naming an unrelated operator.
    if (g.external_id != kNone) {
      auto it = range_by_external_id.find(g.external_id);
      if (it != range_by_external_id.end() && it->second >= 0) {
        const Range& r = trace.ranges[it->second];
        bool consistent = true;
        if (m.launch_api >= 0) {
          const ApiCall& api = trace.api_calls[m.launch_api];
          consistent = r.process == api.process && r.thread == api.thread &&
                       r.start_ns <= api.start_ns && api.end_ns() <= r.end_ns();
        }
        if (consistent) {
          m.range = it->second;
          m.rule = MappingRule::kExternalId;
        }
      }
    }
    if (m.range < 0 && m.launch_api >= 0) {
      int32_t r = enclosing[m.launch_api];
      if (r >= 0) {
        const ApiCall& launch = trace.api_calls[m.launch_api];
        m.range = r;
        m.rule = IsReplayThread(launch.thread)                  ? MappingRule::kGraphNode
                 : IsGraphLaunchCall(trace.strings.Get(launch.name)) ? MappingRule::kGraphLaunch
                                                                 : MappingRule::kLaunchNesting;
      } else {
        m.reason = UnmappedReason::kLaunchOutsideRanges;
      }
    } else if (m.range < 0) {
      m.reason = UnmappedReason::kNoLaunchRecord;
      if (windowed && g.correlation != kNone) {
        auto first = min_correlation.find(g.process);
        if (first == min_correlation.end() || g.correlation < first->second) {
          m.reason = UnmappedReason::kLaunchOutsideWindow;
        }
      }
    }
    ++result.by_rule[static_cast<int>(m.rule)];
    if (m.rule == MappingRule::kUnmapped) ++result.unmapped_by_reason[static_cast<int>(m.reason)];
  }
  result.operator_ranges = is_operator;
  return result;
}

}  // namespace opmap::analysis
