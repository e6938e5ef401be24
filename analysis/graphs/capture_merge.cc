#include "analysis/graphs/capture_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/graphs/captured_graphs.h"
#include "analysis/graphs/replayed_graphs.h"
#include "analysis/mapping/kernel_mapper.h"
#include "common/text/text_util.h"

namespace opmap::analysis {
namespace {

bool NodeMatches(const Trace& replay, const GpuEvent& g, const CapturedNode& node) {
  switch (node.kind) {
    case NodeKind::kMemcpy: return g.kind == GpuEventKind::kMemcpy;
    case NodeKind::kMemset:
      // ROCm runs some memsets as a fill kernel.
      return g.kind == GpuEventKind::kMemset ||
             text::Contains(replay.strings.Get(g.name), "fillBuffer");
    case NodeKind::kKernel:
      return g.kind == GpuEventKind::kKernel &&
             (node.kernel.empty() || node.kernel == replay.strings.Get(g.name));
  }
  return false;
}

// Alignment: for each replayed event (by position in ReplayedGraph::events), the node.
using Alignment = std::vector<int32_t>;

std::optional<Alignment> AlignExact(const Trace& replay, const ReplayedGraph& r,
                                    const CapturedGraph& c) {
  if (r.events.size() != c.nodes.size()) return std::nullopt;
  Alignment a(r.events.size());
  for (size_t i = 0; i < r.events.size(); ++i) {
    if (!NodeMatches(replay, replay.gpu_events[r.events[i]], c.nodes[i])) return std::nullopt;
    a[i] = static_cast<int32_t>(i);
  }
  return a;
}

// Several streams: GPU order interleaves them, capture order is program order. Each node
// in program order takes the head of the first stream queue it matches; a tie goes to the
// stream whose queue matches the longest run of the following nodes.
std::optional<Alignment> AlignPerStream(const Trace& replay, const ReplayedGraph& r,
                                        const CapturedGraph& c) {
  std::map<int64_t, std::vector<int32_t>> queues;  // stream -> positions, GPU order
  for (size_t i = 0; i < r.events.size(); ++i) {
    queues[replay.gpu_events[r.events[i]].stream].push_back(static_cast<int32_t>(i));
  }
  if (queues.size() < 2) return std::nullopt;
  std::map<int64_t, size_t> head;
  Alignment a(r.events.size(), -1);
  auto matches = [&](int64_t stream, size_t offset, size_t node) {
    const std::vector<int32_t>& q = queues[stream];
    size_t at = head[stream] + offset;
    return at < q.size() &&
           NodeMatches(replay, replay.gpu_events[r.events[q[at]]], c.nodes[node]);
  };
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    int64_t best = 0;
    int64_t best_run = -1;
    for (const auto& [stream, q] : queues) {
      if (!matches(stream, 0, n)) continue;
      int64_t run = 1;
      while (n + run < c.nodes.size() && matches(stream, run, n + run)) ++run;
      if (run > best_run) {
        best_run = run;
        best = stream;
      }
    }
    if (best_run < 0) continue;  // a node the replay lacks
    a[queues[best][head[best]++]] = static_cast<int32_t>(n);
  }
  for (int32_t x : a) {
    if (x < 0) return std::nullopt;
  }
  return a;
}

// The capture holds launches the replay lacks: each replayed event takes the next node
// that matches it.
std::optional<Alignment> AlignSkippingExtra(const Trace& replay, const ReplayedGraph& r,
                                            const CapturedGraph& c) {
  // Profiler loss is a few records, not a different graph: at most a tenth of the nodes
  // (at least one) may go unmatched.
  if (c.nodes.size() <= r.events.size() ||
      c.nodes.size() - r.events.size() > std::max<size_t>(1, c.nodes.size() / 10)) {
    return std::nullopt;
  }
  Alignment a(r.events.size());
  size_t n = 0;
  for (size_t i = 0; i < r.events.size(); ++i) {
    while (n < c.nodes.size() && !NodeMatches(replay, replay.gpu_events[r.events[i]], c.nodes[n])) ++n;
    if (n == c.nodes.size()) return std::nullopt;
    a[i] = static_cast<int32_t>(n++);
  }
  return a;
}

struct Match {
  int32_t graph = -1;  // index into the captured graphs
  MatchMethod method = MatchMethod::kExact;
  Alignment alignment;
};

class Matcher {
 public:
  Matcher(const Trace& replay, absl::Span<const CaptureInput> captures,
          const std::vector<CapturedGraph>& graphs)
      : replay_(replay), captures_(captures), graphs_(graphs) {
    for (const CapturedGraph& g : graphs) {
      if (int64_t bs = BatchSize(g); bs != kNone) captured_sizes_.insert(bs);
    }
  }

  // The captured graphs in the order they are tried for `r`: the step's batch size,
  // then the smallest larger one, then the rest; within each, the graph at the replay's
  // position among its step's launches first.
  std::vector<int32_t> Candidates(const ReplayedGraph& r) const {
    int64_t preferred = kNone;
    if (r.batch_size != kNone) {
      auto it = captured_sizes_.lower_bound(r.batch_size);
      if (it != captured_sizes_.end()) preferred = *it;
    }
    std::vector<int32_t> order(graphs_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    auto rank = [&](int32_t g) {
      int64_t bs = BatchSize(graphs_[g]);
      int tier = bs == r.batch_size && bs != kNone ? 0 : bs == preferred && bs != kNone ? 1 : 2;
      return std::make_tuple(tier, graphs_[g].ordinal == r.position ? 0 : 1,
                             graphs_[g].all_named ? 0 : 1, g);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t x, int32_t y) { return rank(x) < rank(y); });
    // A step of known batch size ran the graph of its size or the next larger captured
    // one (engines pad up to a captured size); graphs of other known sizes hold other
    // shapes even where their kernels are the same.
    if (r.batch_size != kNone && !captured_sizes_.empty()) {
      order.erase(std::remove_if(order.begin(), order.end(),
                                 [&](int32_t g) {
                                   int64_t bs = BatchSize(graphs_[g]);
                                   return bs != kNone && bs != preferred;
                                 }),
                  order.end());
    }
    return order;
  }

  // A match, or the reason there is none.
  std::pair<std::optional<Match>, std::string> Find(const ReplayedGraph& r) const {
    if (graphs_.empty()) {
      return {std::nullopt,
              "no capture trace holds a graph capture (a StreamBeginCapture and "
              "StreamEndCapture pair on one thread)"};
    }
    std::vector<int32_t> order = Candidates(r);
    if (order.empty()) return {std::nullopt, Reason(r, order)};
    for (int32_t g : order) {
      if (auto a = AlignExact(replay_, r, graphs_[g])) return {Match{g, MatchMethod::kExact, *a}, ""};
    }
    for (int32_t g : order) {
      if (!graphs_[g].all_named) continue;
      if (auto a = AlignPerStream(replay_, r, graphs_[g])) {
        return {Match{g, MatchMethod::kPerStream, *a}, ""};
      }
    }
    for (int32_t g : order) {
      if (!graphs_[g].all_named) continue;
      if (auto a = AlignSkippingExtra(replay_, r, graphs_[g])) {
        return {Match{g, MatchMethod::kSkipExtra, *a}, ""};
      }
    }
    return {std::nullopt, Reason(r, order)};
  }

 private:
  // A graph's own capture annotation, else its file's (execution_details.json, name).
  int64_t BatchSize(const CapturedGraph& g) const {
    return g.batch_size > 0 ? g.batch_size : captures_[g.capture].batch_size;
  }

  std::string Reason(const ReplayedGraph& r, const std::vector<int32_t>& order) const {
    if (r.batch_size != kNone && !captured_sizes_.empty() &&
        captured_sizes_.lower_bound(r.batch_size) == captured_sizes_.end()) {
      return absl::StrFormat("no capture for batch size %d (captured: %s)", r.batch_size,
                             absl::StrJoin(captured_sizes_, ", "));
    }
    if (order.empty()) return "no captured graph fits the step's batch size";
    // The closest graph: the longest common prefix, in candidate order.
    int32_t best = order.front();
    size_t best_prefix = 0;
    for (int32_t g : order) {
      size_t k = 0;
      const CapturedGraph& c = graphs_[g];
      while (k < r.events.size() && k < c.nodes.size() &&
             NodeMatches(replay_, replay_.gpu_events[r.events[k]], c.nodes[k])) {
        ++k;
      }
      if (k > best_prefix) {
        best_prefix = k;
        best = g;
      }
    }
    const CapturedGraph& c = graphs_[best];
    std::string where = absl::StrFormat("closest: graph %d of %s", c.ordinal,
                                        captures_[c.capture].source);
    if (best_prefix == r.events.size() || best_prefix == c.nodes.size()) {
      return absl::StrFormat("kernel count differs: replay %d, capture %d (%s)",
                             r.events.size(), c.nodes.size(), where);
    }
    std::string_view replayed = replay_.strings.Get(replay_.gpu_events[r.events[best_prefix]].name);
    std::string_view captured = c.nodes[best_prefix].kernel;
    return absl::StrFormat("sequence differs at kernel %d of %d: replay `%s`, capture `%s` (%s)",
                           best_prefix + 1, r.events.size(), replayed.substr(0, 60),
                           captured.substr(0, 60), where);
  }

  const Trace& replay_;
  absl::Span<const CaptureInput> captures_;
  const std::vector<CapturedGraph>& graphs_;
  std::set<int64_t> captured_sizes_;
};



// What a match copies into the replay for every launch of the graph: the captured
// graph's ranges and one launch call per replayed event, names already in the replay's
// string table, times as ranks (every distinct capture-time endpoint in order, from 0).
struct PreparedCopy {
  Match match;
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

  PreparedCopy Prepare(const CapturedGraph& c, Match match) {
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
// in the step, and their events' names, kinds and streams.
std::vector<int64_t> MatchKey(const Trace& t, const ReplayedGraph& r) {
  std::vector<int64_t> key = {r.batch_size, r.position};
  key.reserve(2 + 2 * r.events.size());
  for (int32_t i : r.events) {
    const GpuEvent& g = t.gpu_events[i];
    key.push_back((static_cast<int64_t>(g.name) << 2) | static_cast<int64_t>(g.kind));
    key.push_back(g.stream);
  }
  return key;
}

}  // namespace

std::string_view MatchMethodName(MatchMethod method) {
  switch (method) {
    case MatchMethod::kExact: return "exact";
    case MatchMethod::kPerStream: return "per_stream";
    case MatchMethod::kSkipExtra: return "skip_extra";
  }
  return "exact";
}

absl::StatusOr<CaptureMergeReport> MergeGraphCaptures(Trace& replay,
                                                      absl::Span<const CaptureInput> captures) {
  CaptureMergeReport report;
  std::vector<CapturedGraph> graphs;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (captures[i].trace == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("capture %d (%s) has no trace", i, captures[i].source));
    }
    std::vector<CapturedGraph> found = FindCapturedGraphs(*captures[i].trace, static_cast<int32_t>(i));
    for (CapturedGraph& g : found) graphs.push_back(std::move(g));
  }
  report.capture_files = static_cast<int64_t>(captures.size());
  report.captured_graphs = static_cast<int64_t>(graphs.size());

  std::vector<ReplayedGraph> replayed = FindReplayedGraphs(replay);
  Matcher matcher(replay, captures, graphs);
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
      auto [match, reason] = matcher.Find(r);
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
  return report;
}

}  // namespace opmap::analysis
