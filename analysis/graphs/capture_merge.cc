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
#include "analysis/graphs/transplanter.h"
#include "analysis/mapping/kernel_mapper.h"
#include "common/text/printable.h"
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
  std::pair<std::optional<GraphMatch>, std::string> Find(const ReplayedGraph& r) const {
    if (graphs_.empty()) {
      return {std::nullopt,
              "no capture trace holds a graph capture (a StreamBeginCapture and "
              "StreamEndCapture pair on one thread)"};
    }
    std::vector<int32_t> order = Candidates(r);
    if (order.empty()) return {std::nullopt, Reason(r, order)};
    for (int32_t g : order) {
      if (auto a = AlignExact(replay_, r, graphs_[g])) return {GraphMatch{g, MatchMethod::kExact, *a}, ""};
    }
    for (int32_t g : order) {
      if (!graphs_[g].all_named) continue;
      if (auto a = AlignPerStream(replay_, r, graphs_[g])) {
        return {GraphMatch{g, MatchMethod::kPerStream, *a}, ""};
      }
    }
    for (int32_t g : order) {
      if (!graphs_[g].all_named) continue;
      if (auto a = AlignSkippingExtra(replay_, r, graphs_[g])) {
        return {GraphMatch{g, MatchMethod::kSkipExtra, *a}, ""};
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
    // Kernel names are the workload's: shown printable (common/text/printable.h).
    return absl::StrFormat("sequence differs at kernel %d of %d: replay `%s`, capture `%s` (%s)",
                           best_prefix + 1, r.events.size(), text::PrintableCell(replayed, 60),
                           text::PrintableCell(captured, 60), where);
  }

  const Trace& replay_;
  absl::Span<const CaptureInput> captures_;
  const std::vector<CapturedGraph>& graphs_;
  std::set<int64_t> captured_sizes_;
};



}  // namespace

std::string_view MatchMethodName(MatchMethod method) {
  switch (method) {
    case MatchMethod::kExact: return "exact";
    case MatchMethod::kPerStream: return "per_stream";
    case MatchMethod::kSkipExtra: return "skip_extra";
    case MatchMethod::kNodeId: return "node_id";
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

  Matcher matcher(replay, captures, graphs);
  TransplantMatches(replay, captures, graphs,
                    [&](const ReplayedGraph& r) { return matcher.Find(r); }, report);
  return report;
}

}  // namespace opmap::analysis
