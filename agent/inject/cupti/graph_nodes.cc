#include "agent/inject/cupti/graph_nodes.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace opmap::inject {
namespace {

template <typename T>
T Load(const T& v, std::memory_order order = std::memory_order_relaxed) {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(order);
}
template <typename T>
void Store(T& v, T value, std::memory_order order = std::memory_order_relaxed) {
  std::atomic_ref<T>(v).store(value, order);
}

// CUPTI node ids hold the graph id in their high half: mix before masking.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

uint32_t SlotsFor(uint32_t entries) {
  uint32_t n = 16;
  while (n < 2 * entries) n <<= 1;
  return n;
}

template <typename T>
T* Reserve(size_t n) {
  return static_cast<T*>(std::calloc(n, sizeof(T)));
}

}  // namespace

GraphNodeTable::~GraphNodeTable() {
  std::free(nodes_);
  std::free(node_slots_);
  std::free(ranges_);
  std::free(graphs_);
  std::free(graph_slots_);
  std::free(names_);
}

bool GraphNodeTable::Init(const GraphTableLimits& limits, ring::RingWriter* drops) {
  limits_ = limits;
  drops_ = drops;
  const uint32_t node_slots = SlotsFor(limits.max_nodes);
  const uint32_t graph_slots = SlotsFor(limits.max_graphs);
  nodes_ = Reserve<Node>(limits.max_nodes);
  node_slots_ = Reserve<uint32_t>(node_slots);
  ranges_ = Reserve<Range>(size_t{limits.max_ranges} + 1);
  graphs_ = Reserve<Graph>(limits.max_graphs);
  graph_slots_ = Reserve<uint32_t>(graph_slots);
  names_ = Reserve<char>(limits.name_bytes > 0 ? limits.name_bytes : 1);
  node_mask_ = node_slots - 1;
  graph_mask_ = graph_slots - 1;
  return nodes_ != nullptr && node_slots_ != nullptr && ranges_ != nullptr &&
         graphs_ != nullptr && graph_slots_ != nullptr && names_ != nullptr;
}

void GraphNodeTable::CountDrop() {
  if (drops_ != nullptr && drops_->valid()) drops_->CountDrop(ring::kGraphTableFull);
}

int64_t GraphNodeTable::FindNode(uint64_t id) const {
  if (node_slots_ == nullptr || id == 0) return -1;
  for (uint32_t i = static_cast<uint32_t>(Mix(id)) & node_mask_;; i = (i + 1) & node_mask_) {
    const uint32_t slot = Load(node_slots_[i], std::memory_order_acquire);
    if (slot == 0) return -1;  // slots fill at most half: a probe always ends
    if (nodes_[slot - 1].id == id) return slot - 1;
  }
}

bool GraphNodeTable::InsertNode(const Node& node) {
  const uint32_t n = node_count_.load(std::memory_order_relaxed);
  if (n >= limits_.max_nodes) return false;
  uint32_t i = static_cast<uint32_t>(Mix(node.id)) & node_mask_;
  while (true) {
    const uint32_t slot = node_slots_[i];
    if (slot == 0) break;
    // CUPTI does not reuse a node id; if it did, the newer entry would be the truth.
    if (nodes_[slot - 1].id == node.id) return true;
    i = (i + 1) & node_mask_;
  }
  nodes_[n] = node;
  node_count_.store(n + 1, std::memory_order_relaxed);
  Store(node_slots_[i], n + 1, std::memory_order_release);  // publishes the entry
  return true;
}

int64_t GraphNodeTable::GraphIndex(uint32_t id) {
  uint32_t i = static_cast<uint32_t>(Mix(id)) & graph_mask_;
  while (true) {
    const uint32_t slot = graph_slots_[i];
    if (slot == 0) break;
    if (graphs_[slot - 1].id == id) return slot - 1;
    i = (i + 1) & graph_mask_;
  }
  const uint32_t n = graph_count_.load(std::memory_order_relaxed);
  if (n >= limits_.max_graphs) return -1;
  graphs_[n].id = id;
  graph_count_.store(n + 1, std::memory_order_relaxed);
  Store(graph_slots_[i], n + 1, std::memory_order_release);
  return n;
}

uint32_t GraphNodeTable::NewRange(uint32_t parent, const GraphStackLevel& level,
                                  uint64_t sequence) {
  const uint32_t n = range_count_.load(std::memory_order_relaxed);
  if (n >= limits_.max_ranges) return 0;
  const bool cut = level.name_len > kMaxGraphRangeName;
  const uint32_t len = cut ? kMaxGraphRangeName : level.name_len;
  if (len > limits_.name_bytes - names_used_) return 0;
  if (len > 0) std::memcpy(names_ + names_used_, level.name, len);
  Range& r = ranges_[n + 1];
  r.first = sequence;
  r.last = sequence;
  r.parent = parent;
  r.name_offset = names_used_;
  r.name_len = static_cast<uint16_t>(len);
  r.flags = (cut || level.truncated) ? ring::kFlagNameTruncated : 0;
  names_used_ += len;
  range_count_.store(n + 1, std::memory_order_relaxed);
  return n + 1;
}

void GraphNodeTable::AddCreated(uint64_t node_id, uint32_t graph_id, uint64_t correlation,
                                uint32_t tid, GraphStackLevel* levels, uint32_t depth) {
  if (nodes_ == nullptr || node_id == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t sequence = ++sequence_;
  // The thread's open ranges: each push is interned once (its first node), then only its
  // last node moves. A range over the bound ends the chain: the node keeps the outer ones.
  uint32_t parent = 0;
  for (uint32_t i = 0; i < depth; ++i) {
    uint32_t r = *levels[i].table_index;
    if (r == 0) {
      r = NewRange(parent, levels[i], sequence);
      if (r == 0) {
        ranges_dropped_.fetch_add(1, std::memory_order_relaxed);
        CountDrop();
        break;
      }
      *levels[i].table_index = r;
    }
    Store(ranges_[r].last, sequence);
    parent = r;
  }
  const int64_t graph = GraphIndex(graph_id);
  const Node node{node_id, 0, correlation, sequence, static_cast<uint32_t>(graph), parent, tid, 0};
  if (graph < 0 || !InsertNode(node)) {
    nodes_dropped_.fetch_add(1, std::memory_order_relaxed);
    CountDrop();
    return;
  }
  Graph& g = graphs_[graph];
  if (Load(g.first) == 0) Store(g.first, sequence);
  Store(g.last, sequence);
}

void GraphNodeTable::AddClone(uint64_t clone_id, uint64_t original_id) {
  if (nodes_ == nullptr || clone_id == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t original = FindNode(original_id);
  if (original < 0) {
    unknown_originals_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Field by field: `emitted` belongs to the decoder and starts again at 0.
  const Node& o = nodes_[original];
  const Node clone{clone_id, original_id, o.correlation, o.sequence, o.graph, o.range, o.tid, 0};
  if (!InsertNode(clone)) {
    nodes_dropped_.fetch_add(1, std::memory_order_relaxed);
    CountDrop();
    return;
  }
  clones_.fetch_add(1, std::memory_order_relaxed);
}

GraphNodeTable::Emit GraphNodeTable::EmitNode(uint64_t node_id, ring::RingWriter* ring) {
  const int64_t index = FindNode(node_id);
  if (index < 0) return Emit::kUnknown;
  Node& node = nodes_[index];
  const uint32_t epoch = epoch_.load(std::memory_order_acquire);
  if (Load(node.emitted) == epoch) return Emit::kAlreadyWritten;
  // The chain innermost first; written outermost first.
  uint32_t chain[ring::kMaxGraphNodeLevels];
  uint32_t depth = 0;
  uint32_t names_len = 0;
  for (uint32_t r = node.range; r != 0 && depth < ring::kMaxGraphNodeLevels;
       r = ranges_[r].parent) {
    chain[depth++] = r;
    names_len += ranges_[r].name_len;
  }
  const uint32_t levels_bytes = depth * sizeof(ring::GraphNodeLevel);
  auto* rec = ring->Reserve<ring::GraphNodeRecord>(ring::kGraphNode, levels_bytes + names_len);
  if (rec == nullptr) return Emit::kRingFull;
  const Graph& graph = graphs_[node.graph];
  rec->node_id = node.id;
  rec->original_node_id = node.original;
  rec->correlation_id = node.correlation;
  rec->sequence = node.sequence;
  rec->graph_first = Load(graph.first);
  rec->graph_last = Load(graph.last);
  rec->graph_id = graph.id;
  rec->tid = node.tid;
  rec->depth = static_cast<uint16_t>(depth);
  rec->names_len = names_len;
  auto* levels = reinterpret_cast<ring::GraphNodeLevel*>(rec + 1);
  char* names = reinterpret_cast<char*>(levels + depth);
  for (uint32_t i = 0; i < depth; ++i) {
    const uint32_t r = chain[depth - 1 - i];
    const Range& range = ranges_[r];
    ring::GraphNodeLevel& l = levels[i];
    l.range_key = r;
    l.first = range.first;
    l.last = Load(range.last);
    l.name_len = range.name_len;
    l.flags = range.flags;
    std::memcpy(names, names_ + range.name_offset, range.name_len);
    names += range.name_len;
  }
  ring->Commit(&rec->h, sizeof(*rec) + levels_bytes + names_len);
  Store(node.emitted, epoch);
  return Emit::kWritten;
}

GraphTableCounts GraphNodeTable::counts() const {
  GraphTableCounts c;
  c.nodes = node_count_.load(std::memory_order_relaxed);
  c.clones = clones_.load(std::memory_order_relaxed);
  c.ranges = range_count_.load(std::memory_order_relaxed);
  c.graphs = graph_count_.load(std::memory_order_relaxed);
  c.execs = execs_.load(std::memory_order_relaxed);
  c.nodes_dropped = nodes_dropped_.load(std::memory_order_relaxed);
  c.ranges_dropped = ranges_dropped_.load(std::memory_order_relaxed);
  c.unknown_originals = unknown_originals_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace opmap::inject
