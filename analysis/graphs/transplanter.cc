#include "analysis/graphs/transplanter.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace opmap::analysis {
namespace {

// What a match copies into the replay for every launch of the graph: the captured
// graph's ranges and one launch call per replayed event, names already in the replay's
// string table, times as ranks (every distinct capture-time endpoint in order, from 0).
struct PreparedCopy {
  GraphMatch match;
  std::vector<Range> ranges;
  std::vector<ApiCall> launches;  // parallel to ReplayedGraph::events
  int64_t points = 0;             // distinct endpoints
  int64_t unverified = 0;         // launches that name no kernel
};

// Lays the prepared copies out inside each graph launch call on its replay thread (see
// capture_merge.h) and points each replayed event at its launch copy.
class Transplanter {
 public:
  Transplanter(Trace& replay, absl::Span<const CaptureInput> captures)
      : replay_(replay), captures_(captures), interned_(captures.size()) {
    for (const ApiCall& a : replay.api_calls) next_correlation_ = std::max(next_correlation_, a.correlation + 1);
    for (const GpuEvent& g : replay.gpu_events) next_correlation_ = std::max(next_correlation_, g.correlation + 1);
  }

  PreparedCopy Prepare(const CapturedGraph& c, GraphMatch match) {
    const Trace& capture = *captures_[c.capture].trace;
    PreparedCopy out;
    std::vector<int64_t> points;
    points.reserve(2 * (c.ranges.size() + match.alignment.size()));
    for (int32_t i : c.ranges) {
      points.push_back(capture.ranges[i].start_ns);
      points.push_back(capture.ranges[i].end_ns());
    }
    for (int32_t n : match.alignment) {
      points.push_back(capture.api_calls[c.nodes[n].api].start_ns);
      points.push_back(capture.api_calls[c.nodes[n].api].end_ns());
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    out.points = static_cast<int64_t>(points.size());
    auto rank = [&](int64_t t) {
      return std::lower_bound(points.begin(), points.end(), t) - points.begin();
    };
    auto prepare = [&](auto& copy) {
      int64_t start = rank(copy.start_ns);
      copy.dur_ns = rank(copy.end_ns()) - start;
      copy.start_ns = start;
      copy.external_id = kNone;
      copy.name = Intern(capture, c.capture, copy.name);
    };
    for (int32_t i : c.ranges) {
      Range& copy = out.ranges.emplace_back(capture.ranges[i]);
      prepare(copy);
      copy.input_dims = Intern(capture, c.capture, copy.input_dims);
      copy.input_types = Intern(capture, c.capture, copy.input_types);
      copy.concrete_inputs = Intern(capture, c.capture, copy.concrete_inputs);
      copy.input_strides = Intern(capture, c.capture, copy.input_strides);
    }
    for (int32_t n : match.alignment) {
      ApiCall& copy = out.launches.emplace_back(capture.api_calls[c.nodes[n].api]);
      prepare(copy);
      copy.kernel = Intern(capture, c.capture, copy.kernel);
      if (c.nodes[n].kind == NodeKind::kKernel && c.nodes[n].kernel.empty()) ++out.unverified;
    }
    out.match = std::move(match);
    return out;
  }

  void Copy(const PreparedCopy& prepared, const ReplayedGraph& r, CaptureMergeReport* report) {
    const ApiCall graph_launch = replay_.api_calls[r.api];
    const int64_t step = std::max<int64_t>(1, graph_launch.dur_ns / (prepared.points + 1));
    const int64_t thread = ReplayThread(graph_launch.thread);
    auto place = [&](auto copy) {
      int64_t end = graph_launch.start_ns + (copy.end_ns() + 1) * step;
      copy.start_ns = graph_launch.start_ns + (copy.start_ns + 1) * step;
      copy.dur_ns = end - copy.start_ns;
      copy.process = graph_launch.process;
      copy.thread = thread;
      return copy;
    };
    for (const Range& range : prepared.ranges) replay_.ranges.push_back(place(range));
    for (size_t k = 0; k < prepared.launches.size(); ++k) {
      ApiCall& copy = replay_.api_calls.emplace_back(place(prepared.launches[k]));
      copy.correlation = next_correlation_++;
      GpuEvent& g = replay_.gpu_events[r.events[k]];
      g.correlation = copy.correlation;
      g.external_id = kNone;
    }
    report->ranges_added += static_cast<int64_t>(prepared.ranges.size());
    report->launches_added += static_cast<int64_t>(prepared.launches.size());
    report->unverified_events += prepared.unverified;
  }

 private:
  StringId Intern(const Trace& capture, int32_t index, StringId id) {
    if (id == kEmptyString) return kEmptyString;
    auto [it, inserted] = interned_[index].emplace(id, kEmptyString);
    if (inserted) it->second = replay_.strings.Intern(capture.strings.Get(id));
    return it->second;
  }

  Trace& replay_;
  absl::Span<const CaptureInput> captures_;
  std::vector<absl::flat_hash_map<StringId, StringId>> interned_;
  int64_t next_correlation_ = 1;
};

// What makes two replayed graphs match the same way: the step's batch size, the position
// in the step, and their events' names, kinds, streams and graph node ids.
std::vector<int64_t> MatchKey(const Trace& t, const ReplayedGraph& r) {
  std::vector<int64_t> key = {r.batch_size, r.position};
  key.reserve(2 + 3 * r.events.size());
  for (int32_t i : r.events) {
    const GpuEvent& g = t.gpu_events[i];
    key.push_back((static_cast<int64_t>(g.name) << 2) | static_cast<int64_t>(g.kind));
    key.push_back(g.stream);
    key.push_back(g.graph_node_id);
  }
  return key;
}

}  // namespace

void TransplantMatches(Trace& replay, absl::Span<const CaptureInput> captures,
                       const std::vector<CapturedGraph>& graphs, const GraphMatchFinder& find,
                       CaptureMergeReport& report) {
  std::vector<ReplayedGraph> replayed = FindReplayedGraphs(replay);
  Transplanter transplanter(replay, captures);
  // Per distinct replayed graph: the prepared copy, or the reason there is none.
  absl::flat_hash_map<std::vector<int64_t>, std::pair<std::optional<PreparedCopy>, std::string>> cache;
  std::map<std::string, UnmatchedGraphs> unmatched;
  for (const ReplayedGraph& r : replayed) {
    int64_t gpu_time = 0;
    for (int32_t i : r.events) gpu_time += replay.gpu_events[i].dur_ns;
    ++report.graph_launches;
    report.graph_events += static_cast<int64_t>(r.events.size());
    report.graph_gpu_time_ns += gpu_time;
    std::vector<int64_t> key = MatchKey(replay, r);
    auto it = cache.find(key);
    if (it == cache.end()) {
      auto [match, reason] = find(r);
      std::optional<PreparedCopy> prepared;
      if (match) prepared = transplanter.Prepare(graphs[match->graph], std::move(*match));
      it = cache.emplace(std::move(key), std::make_pair(std::move(prepared), std::move(reason))).first;
    }
    const auto& [prepared, reason] = it->second;
    if (!prepared) {
      UnmatchedGraphs& u = unmatched[reason];
      if (u.launches == 0) {
        u.reason = reason;
        u.first_launch_ns = replay.api_calls[r.api].start_ns;
      }
      ++u.launches;
      u.kernels += static_cast<int64_t>(r.events.size());
      u.gpu_time_ns += gpu_time;
      continue;
    }
    transplanter.Copy(*prepared, r, &report);
    ++report.matched_launches;
    ++report.by_method[static_cast<int>(prepared->match.method)];
    report.matched_events += static_cast<int64_t>(r.events.size());
    report.matched_gpu_time_ns += gpu_time;
  }
  for (auto& [reason, u] : unmatched) report.unmatched.push_back(std::move(u));
  std::sort(report.unmatched.begin(), report.unmatched.end(),
            [](const UnmatchedGraphs& a, const UnmatchedGraphs& b) {
              return a.gpu_time_ns != b.gpu_time_ns ? a.gpu_time_ns > b.gpu_time_ns
                                                    : a.reason < b.reason;
            });
  // What the merge did travels with the trace (reports' source counters, the wire).
  auto& counters = replay.info.counters;
  counters.emplace_back("graph_merge.captured_graphs", report.captured_graphs);
  counters.emplace_back("graph_merge.graph_launches", report.graph_launches);
  counters.emplace_back("graph_merge.matched_launches", report.matched_launches);
  counters.emplace_back("graph_merge.graph_events", report.graph_events);
  counters.emplace_back("graph_merge.matched_events", report.matched_events);
  counters.emplace_back("graph_merge.unverified_events", report.unverified_events);
  for (const UnmatchedGraphs& u : report.unmatched) {
    counters.emplace_back("graph_merge.unmatched_launches: " + u.reason, u.launches);
  }
}

}  // namespace opmap::analysis
