#include "analysis/import/capture_graphs.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "abi/ring_records.h"
#include "analysis/import/nvtx_names.h"

namespace opmap::analysis {
namespace {


// analysis/mapping's IsGraphLaunchCall, which this library does not link: the one test
// that tells cudaGraphLaunch, cuGraphLaunch and hipGraphLaunch from other calls.
bool IsGraphLaunch(std::string_view name) {
  return name.find("GraphLaunch") != std::string_view::npos;
}

}  // namespace

bool GraphNodePlacer::AddNode(std::string_view record, Trace& t, std::string* why) {
  ring::GraphNodeRecord r;
  std::memcpy(static_cast<void*>(&r), record.data(), sizeof(r));
  if (r.node_id == 0) {
    *why = "graph node id 0";
    return false;
  }
  if (r.depth > ring::kMaxGraphNodeLevels) {
    *why = absl::StrFormat("graph node with %d levels (at most %d)", r.depth,
                           ring::kMaxGraphNodeLevels);
    return false;
  }
  const uint64_t levels_at = sizeof(r);
  const uint64_t names_at = levels_at + uint64_t{r.depth} * sizeof(ring::GraphNodeLevel);
  if (names_at + r.names_len > record.size()) {
    *why = absl::StrFormat("graph node levels and names (%d bytes) overrun the record (%d bytes)",
                           names_at + r.names_len - sizeof(r), record.size());
    return false;
  }
  // Positions are sequence offsets in the graph; 2^31 keeps every layout sum in range.
  if (r.graph_first == 0 || r.sequence < r.graph_first || r.sequence > r.graph_last ||
      r.graph_last - r.graph_first >= (uint64_t{1} << 31)) {
    *why = absl::StrFormat("graph node sequence %d outside its graph [%d, %d]", r.sequence,
                           r.graph_first, r.graph_last);
    return false;
  }
  std::vector<ring::GraphNodeLevel> levels(r.depth);
  uint64_t name_bytes = 0;
  size_t new_levels = 0;
  for (uint16_t i = 0; i < r.depth; ++i) {
    ring::GraphNodeLevel& l = levels[i];
    std::memcpy(static_cast<void*>(&l), record.data() + levels_at + i * sizeof(l), sizeof(l));
    if (l.first == 0 || l.first > r.sequence || (l.last != 0 && l.last < r.sequence)) {
      *why = absl::StrFormat("graph node range %d [%d, %d] does not hold the node (%d)", i,
                             l.first, l.last, r.sequence);
      return false;
    }
    name_bytes += l.name_len;
    if (!levels_.contains(l.range_key)) ++new_levels;
  }
  if (name_bytes != r.names_len) {
    *why = absl::StrFormat("graph node names: levels say %d bytes, the record %d", name_bytes,
                           r.names_len);
    return false;
  }
  if (!nodes_.contains(r.node_id) && nodes_.size() >= kMaxNodes) {
    *why = absl::StrFormat("more than %d graph nodes in one window", kMaxNodes);
    return false;
  }
  if (levels_.size() + new_levels > kMaxRanges) {
    *why = absl::StrFormat("more than %d graph node ranges in one window", kMaxRanges);
    return false;
  }
  if (!graphs_.contains(r.graph_id) && graphs_.size() >= kMaxGraphs) {
    *why = absl::StrFormat("more than %d graphs in one window", kMaxGraphs);
    return false;
  }

  graphs_.try_emplace(r.graph_id, r.graph_first, r.graph_last);
  Node node;
  node.sequence = r.sequence;
  node.graph = r.graph_id;
  node.levels.reserve(r.depth);
  uint64_t offset = names_at;
  for (const ring::GraphNodeLevel& l : levels) {
    node.levels.push_back(l.range_key);
    const std::string_view text = record.substr(offset, l.name_len);
    offset += l.name_len;
    // The first record naming a range decides its extent, as for graphs.
    auto [it, added] = levels_.try_emplace(l.range_key);
    if (!added) continue;
    Range named;
    NameNvtxRange(text, t.strings, named);  // an output marker holds no node
    it->second = Level{l.first, l.last, named.name, named.flops, named.bytes, named.input_dims};
  }
  nodes_[r.node_id] = std::move(node);
  ++counts_.records;
  return true;
}

void GraphNodePlacer::AddCall(const ApiCall& call, Trace& t) {
  if (call.correlation == kNone) return;
  max_real_correlation_ = std::max(max_real_correlation_, call.correlation);
  if (!IsGraphLaunch(t.strings.Get(call.name))) return;
  // The runtime call and the driver call inside it may share the id: the outer one,
  // recorded first or not, encloses both.
  auto [it, added] = launches_.try_emplace(call.correlation);
  if (added && launches_.size() > kMaxLaunches) {
    launches_.erase(it);  // its events stay unplaced, counted at Flush
    return;
  }
  Launch& l = it->second;
  if (added || call.start_ns < l.start_ns) l = Launch{call.start_ns, call.dur_ns, call.thread};
  auto held = held_.find(call.correlation);
  if (held == held_.end()) return;
  std::vector<GpuEvent> events = std::move(held->second);
  held_.erase(held);
  held_count_ -= events.size();
  const Launch launch = it->second;
  for (GpuEvent& e : events) {
    const Node& node = nodes_.at(static_cast<uint64_t>(e.graph_node_id));
    Place(std::move(e), node, launch, call.correlation, t);
  }
}

void GraphNodePlacer::AddEvent(GpuEvent event, Trace& t) {
  ++counts_.graph_events;
  auto node = nodes_.find(static_cast<uint64_t>(event.graph_node_id));
  if (node == nodes_.end()) {
    ++counts_.unknown_node;
    t.gpu_events.push_back(std::move(event));
    return;
  }
  // Built outside every range: its graph launch's own ranges (graph_launch) say more than
  // a copy under none would.
  if (node->second.levels.empty()) {
    ++counts_.no_ranges;
    t.gpu_events.push_back(std::move(event));
    return;
  }
  if (event.correlation == kNone) {
    ++counts_.no_launch;
    t.gpu_events.push_back(std::move(event));
    return;
  }
  const int64_t correlation = event.correlation;
  if (auto launch = launches_.find(correlation); launch != launches_.end()) {
    Place(std::move(event), node->second, launch->second, correlation, t);
    return;
  }
  // Held until the launch call arrives. At the bound the oldest launch's events go out
  // as they are: a launch whose call has not come by now most likely preceded the window.
  while (held_count_ >= kMaxHeld && !held_order_.empty()) {
    auto oldest = held_.find(held_order_.front());
    held_order_.pop_front();
    if (oldest == held_.end()) continue;
    counts_.held_over_bound += static_cast<int64_t>(oldest->second.size());
    held_count_ -= oldest->second.size();
    for (GpuEvent& e : oldest->second) t.gpu_events.push_back(std::move(e));
    held_.erase(oldest);
  }
  while (!held_order_.empty() && !held_.contains(held_order_.front())) held_order_.pop_front();
  auto [group, added] = held_.try_emplace(correlation);
  if (added) held_order_.push_back(correlation);
  group->second.push_back(std::move(event));
  ++held_count_;
}

void GraphNodePlacer::Flush(Trace& t) {
  for (int64_t correlation : held_order_) {
    auto it = held_.find(correlation);
    if (it == held_.end()) continue;
    counts_.no_launch += static_cast<int64_t>(it->second.size());
    for (GpuEvent& e : it->second) t.gpu_events.push_back(std::move(e));
    held_.erase(it);
  }
  held_order_.clear();
  held_count_ = 0;
}

absl::flat_hash_set<uint64_t>& GraphNodePlacer::CopiedRanges(int64_t correlation) {
  auto it = copied_.find(correlation);
  if (it != copied_.end()) return it->second;
  // Kernels of one launch arrive close together; a launch forgotten here would only get
  // a second copy of its ranges if more of its kernels came after 4096 other launches.
  if (copied_.size() >= kMaxCopySets) {
    copied_.erase(copied_order_.front());
    copied_order_.pop_front();
  }
  copied_order_.push_back(correlation);
  return copied_[correlation];
}

void GraphNodePlacer::Place(GpuEvent event, const Node& node, const Launch& launch,
                            int64_t correlation, Trace& t) {
  // Not a structured binding: clang does not let a lambda capture one.
  const uint64_t first = graphs_.at(node.graph).first, last = graphs_.at(node.graph).second;
  const int64_t nodes = static_cast<int64_t>(last - first) + 1;
  const int64_t step = std::max<int64_t>(1, launch.dur_ns / (nodes + 1));
  auto at = [&](uint64_t s) {
    s = std::clamp(s, first, last);
    return launch.start_ns + static_cast<int64_t>(s - first + 1) * step;
  };
  if (node.sequence < first || node.sequence > last || next_fresh_ <= max_real_correlation_ ||
      at(last) > kMaxTimestampNs) {
    ++counts_.unplaceable;
    t.gpu_events.push_back(std::move(event));
    return;
  }
  const int64_t thread = ReplayThread(launch.thread);
  absl::flat_hash_set<uint64_t>& copied = CopiedRanges(correlation);
  for (uint64_t key : node.levels) {
    if (!copied.insert(key).second) continue;
    const Level& level = levels_.at(key);
    Range& r = t.ranges.emplace_back();
    r.start_ns = at(level.first);
    r.dur_ns = std::max<int64_t>(0, at(level.last == 0 ? last : level.last) - r.start_ns);
    r.name = level.name;
    r.kind = RangeKind::kNvtx;
    r.process = pid_;
    r.thread = thread;
    r.flops = level.flops;
    r.bytes = level.bytes;
    r.input_dims = level.input_dims;
    ++counts_.ranges_added;
  }
  if (launch_name_ == kEmptyString) launch_name_ = t.strings.Intern(kNodeLaunchName);
  ApiCall& copy = t.api_calls.emplace_back();
  copy.start_ns = at(node.sequence);
  copy.dur_ns = 0;
  copy.name = launch_name_;
  copy.process = pid_;
  copy.thread = thread;
  copy.correlation = next_fresh_--;
  event.correlation = copy.correlation;
  event.external_id = kNone;
  t.gpu_events.push_back(std::move(event));
  ++counts_.launches_added;
  ++counts_.placed;
}

}  // namespace opmap::analysis
