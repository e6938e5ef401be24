#include "analysis/graphs/node_id_merge.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "analysis/graphs/captured_graphs.h"
#include "analysis/graphs/replayed_graphs.h"
#include "analysis/graphs/transplanter.h"

namespace opmap::analysis {
namespace {

using NodeKey = std::pair<int64_t, int64_t>;  // (process, node id): ids are per process

// Clone chains are one link per instantiation (a clone of a clone when a graph is
// re-instantiated from an executable one); longer is a damaged or hostile export.
constexpr int kMaxCloneChain = 64;

// Where each captured node's launch call sits, per thread, to find the call a creation
// event happened in.
struct NodeCall {
  int64_t start_ns, end_ns;
  int32_t graph, node;
};

class NodeResolver {
 public:
  NodeResolver(const Trace& t, const std::vector<CapturedGraph>& graphs) {
    for (const GraphNodeEvent& e : t.graph_nodes) {
      if (e.node_id == kNone) continue;
      NodeKey key{e.process, e.node_id};
      if (e.original_node_id == kNone) {
        created_.emplace(key, &e);  // a node is created once; the first event stands
      } else {
        original_.emplace(key, e.original_node_id);
      }
    }
    for (int32_t g = 0; g < static_cast<int32_t>(graphs.size()); ++g) {
      const CapturedGraph& c = graphs[g];
      for (int32_t n = 0; n < static_cast<int32_t>(c.nodes.size()); ++n) {
        const ApiCall& a = t.api_calls[c.nodes[n].api];
        calls_[{a.process, a.thread}].push_back({a.start_ns, a.end_ns(), g, n});
      }
    }
    for (auto& [thread, calls] : calls_) {
      std::sort(calls.begin(), calls.end(),
                [](const NodeCall& a, const NodeCall& b) { return a.start_ns < b.start_ns; });
    }
  }

  // The (graph, node) of a replayed event, or why there is none.
  std::pair<std::optional<std::pair<int32_t, int32_t>>, std::string> Resolve(
      const GpuEvent& g) const {
    if (g.graph_node_id == kNone) {
      return {std::nullopt, "a graph event without a node id (graph-level tracing: export "
                            "with --cuda-graph-trace=node)"};
    }
    NodeKey key{g.process, g.graph_node_id};
    for (int hops = 0; !created_.contains(key); ++hops) {
      auto it = original_.find(key);
      if (it == original_.end()) {
        return {std::nullopt, "a node with no creation event in the export (the graph was "
                              "captured before the profiled range)"};
      }
      if (hops == kMaxCloneChain) {
        return {std::nullopt, absl::StrFormat("a node clone chain longer than %d (cyclic?)",
                                              kMaxCloneChain)};
      }
      key.second = it->second;
    }
    const GraphNodeEvent& e = *created_.at(key);
    auto calls = calls_.find({e.process, e.thread});
    if (calls != calls_.end()) {
      const std::vector<NodeCall>& v = calls->second;
      auto it = std::upper_bound(v.begin(), v.end(), e.time_ns,
                                 [](int64_t t, const NodeCall& c) { return t < c.start_ns; });
      if (it != v.begin() && std::prev(it)->end_ns >= e.time_ns) {
        return {std::make_pair(std::prev(it)->graph, std::prev(it)->node), ""};
      }
    }
    return {std::nullopt, "a node created outside every stream capture in the export "
                          "(explicit graph building, or a capture the export did not see)"};
  }

 private:
  absl::flat_hash_map<NodeKey, const GraphNodeEvent*> created_;
  absl::flat_hash_map<NodeKey, int64_t> original_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<NodeCall>> calls_;
};

}  // namespace

CaptureMergeReport MergeGraphNodeIds(Trace& t) {
  CaptureMergeReport report;
  const std::vector<CapturedGraph> graphs = FindCapturedGraphs(t, 0);
  report.captured_graphs = static_cast<int64_t>(graphs.size());
  const CaptureInput self{&t, "this export", kNone, ""};
  const NodeResolver resolver(t, graphs);
  auto find = [&](const ReplayedGraph& r) -> std::pair<std::optional<GraphMatch>, std::string> {
    GraphMatch m;
    m.method = MatchMethod::kNodeId;
    for (size_t i = 0; i < r.events.size(); ++i) {
      auto [node, why] = resolver.Resolve(t.gpu_events[r.events[i]]);
      if (!node) return {std::nullopt, why};
      if (m.graph >= 0 && node->first != m.graph) {
        return {std::nullopt, "one launch runs nodes of two captured graphs"};
      }
      m.graph = node->first;
      m.alignment.push_back(node->second);
    }
    return {std::move(m), ""};
  };
  TransplantMatches(t, absl::MakeConstSpan(&self, 1), graphs, find, report);
  return report;
}

}  // namespace opmap::analysis
