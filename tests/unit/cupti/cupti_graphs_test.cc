// The CUDA graph recorder without a GPU: synthetic CUPTI resource callbacks (graph node
// created under NVTX ranges, cloned by instantiation, the exec created) drive
// RecordGraphCallback into a GraphNodeTable; hand-built CUDA 13.0 kernel activity records
// carrying the clones' node ids are decoded by the real libcupti into a ring, and what the
// ring holds goes through CaptureTraceBuilder and the kernel mapper, as the agent and the
// capture-file importer run them.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/inject/cupti/cupti_decode.h"
#include "agent/inject/cupti/cupti_graphs.h"
#include "agent/inject/cupti/graph_nodes.h"
#include "analysis/import/capture_trace.h"
#include "analysis/mapping/kernel_mapper.h"
#include "tests/unit/cupti/ring_test_reader.h"

namespace opmap::inject::cupti_graphs_test {
namespace {

using ::opmap::testing::HeapRing;

// The creating thread's NVTX stack as the hooks keep it: names and the table-index slot
// of each open push (a fresh push starts at 0).
struct FakeRange {
  std::string name;
  uint32_t table_index = 0;
};
std::vector<FakeRange>* g_stack = nullptr;

uint32_t FakeStack(GraphStackLevel* out, uint32_t max) {
  uint32_t n = 0;
  for (FakeRange& r : *g_stack) {
    if (n == max) break;
    out[n++] = GraphStackLevel{r.name.data(), static_cast<uint32_t>(r.name.size()), false,
                               &r.table_index};
  }
  return n;
}

// Handles are pointers to CUPTI's objects; here their values are the ids.
CUptiResult FakeNodeId(CUgraphNode node, uint64_t* id) {
  *id = reinterpret_cast<uintptr_t>(node);
  return CUPTI_SUCCESS;
}
CUptiResult FakeGraphId(CUgraph graph, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph));
  return CUPTI_SUCCESS;
}
constexpr GraphIdFns kIds{FakeNodeId, FakeGraphId};

template <typename T>
T Handle(uintptr_t v) {
  return reinterpret_cast<T>(v);
}

void Callback(GraphNodeTable* table, CUpti_CallbackId cbid, uintptr_t graph, uintptr_t node,
              uintptr_t original = 0) {
  CUpti_GraphData g{};
  g.graph = Handle<CUgraph>(graph);
  g.node = Handle<CUgraphNode>(node);
  g.originalNode = Handle<CUgraphNode>(original);
  CUpti_ResourceData data{};
  data.resourceDescriptor = &g;
  RecordGraphCallback(table, kIds, FakeStack, 77, cbid, &data);
}

// An 8-byte-aligned activity buffer of kernel records.
class Kernels {
 public:
  void Add(uint32_t correlation, uint64_t node, const char* name, uint64_t start) {
    words_.resize(words_.size() + sizeof(CUpti_ActivityKernel10) / 8, 0);
    auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(words_.data() + words_.size()) - 1;
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->correlationId = correlation;
    k->graphNodeId = node;
    k->graphId = node != 0 ? 9 : 0;
    k->name = name;
    k->start = start;
    k->end = start + 500;
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  size_t size() const { return words_.size() * 8; }

 private:
  std::vector<uint64_t> words_;
};

class CuptiGraphsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!LoadCuptiApi(&api_, &reason)) GTEST_SKIP() << "libcupti unavailable: " << reason;
    g_stack = &stack_;
  }
  void TearDown() override { g_stack = nullptr; }

  // At start-up, before any window: the graph is captured under decoder_layer.0 >
  // {qkv_linear: node 1, mlp: node 2}, then node 3 outside any range; instantiation
  // clones node i as 100 + i.
  void CaptureAndInstantiate(GraphNodeTable* table) {
    stack_ = {{"decoder_layer.0"}, {"demo::qkv_linear{flops=8,bytes=4}"}};
    Callback(table, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 5, 1);
    stack_.pop_back();
    stack_.push_back({"demo::mlp"});
    Callback(table, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 5, 2);
    stack_.clear();
    Callback(table, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 5, 3);
    Callback(table, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, 5, 0);
    for (uintptr_t i = 1; i <= 3; ++i) {
      Callback(table, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 6, 100 + i, i);
    }
  }

  // One window as the agent sees it: `decode` run by the decoder into a fresh ring, then
  // the graph launch call; returns the builder's trace.
  analysis::Trace Window(GraphNodeTable* table, Kernels& kernels, DecodeStats* stats) {
    HeapRing ring;
    DecodeContext ctx;
    ctx.graphs.store(table);
    *stats = DecodeActivityBuffer(kernels.data(), kernels.size(), api_, ring.writer(), &ctx);
    analysis::CaptureTraceBuilder b(4242);
    for (const HeapRing::Record& r : ring.ReadAll()) {
      b.Add(std::string_view(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()));
    }
    ring::ApiRecord launch{};
    launch.h.type = ring::kApi;
    launch.start_ns = 10'000;
    launch.end_ns = 20'000;
    launch.tid = 77;
    launch.correlation_id = 300;
    launch.name_len = 15;
    std::string rec(sizeof(launch) + 16, '\0');
    std::memcpy(rec.data(), &launch, sizeof(launch));
    std::memcpy(rec.data() + sizeof(launch), "cudaGraphLaunch", 15);
    b.Add(rec);
    analysis::CaptureResult r = std::move(b).Finish();
    EXPECT_EQ(r.bad_records, 0) << r.first_bad_record;
    return std::move(r.trace);
  }

  CuptiApi api_;
  std::vector<FakeRange> stack_;
};

std::string MappedRange(const analysis::Trace& t, const analysis::MappingResult& m, size_t i) {
  if (m.events[i].rule != analysis::MappingRule::kGraphNode) return "<not graph_node>";
  return std::string(t.strings.Get(t.ranges[m.events[i].range].name));
}

TEST_F(CuptiGraphsTest, NodesCapturedBeforeAnyWindowMapInEveryLaterWindow) {
  HeapRing drops;
  GraphNodeTable table;
  ASSERT_TRUE(table.Init(GraphTableLimits{}, drops.writer()));
  CaptureAndInstantiate(&table);
  const GraphTableCounts c = table.counts();
  EXPECT_EQ(c.nodes, 6u);
  EXPECT_EQ(c.clones, 3u);
  EXPECT_EQ(c.ranges, 3u);  // the layer once, qkv, mlp
  EXPECT_EQ(c.graphs, 1u);
  EXPECT_EQ(c.execs, 1u);
  EXPECT_EQ(stack_.size(), 0u);

  Kernels kernels;  // one replay: every clone's kernel, then node 101's again (a 2nd one)
  kernels.Add(300, 101, "qkv_gemm", 50'000);
  kernels.Add(300, 102, "mlp_gemm", 51'000);
  kernels.Add(300, 103, "copy_out", 52'000);
  kernels.Add(300, 101, "qkv_gemm", 53'000);
  for (int window = 1; window <= 2; ++window) {
    // Each window (and a reconnected agent's first) begins with BeginWindow.
    table.BeginWindow();
    DecodeStats stats;
    const analysis::Trace t = Window(&table, kernels, &stats);
    EXPECT_EQ(stats.graph_nodes, 3u) << "window " << window;  // once per node per window
    EXPECT_EQ(stats.kernels, 4u);
    const analysis::MappingResult m = analysis::MapGpuEvents(t);
    ASSERT_EQ(t.gpu_events.size(), 4u);
    std::vector<size_t> qkv;
    for (size_t i = 0; i < t.gpu_events.size(); ++i) {
      const std::string_view kernel = t.strings.Get(t.gpu_events[i].name);
      if (kernel == "qkv_gemm") {
        EXPECT_EQ(MappedRange(t, m, i), "demo::qkv_linear") << "window " << window;
        qkv.push_back(i);
      } else if (kernel == "mlp_gemm") {
        EXPECT_EQ(MappedRange(t, m, i), "demo::mlp") << "window " << window;
      } else {
        // Built outside every range: it stays with its graph launch (no range here).
        EXPECT_EQ(m.events[i].reason, analysis::UnmappedReason::kLaunchOutsideRanges);
        EXPECT_EQ(t.gpu_events[i].correlation, 300);
      }
    }
    ASSERT_EQ(qkv.size(), 2u);
    const int32_t range = m.events[qkv[0]].range;
    ASSERT_GE(range, 0);
    EXPECT_EQ(m.events[qkv[1]].range, range);  // one operator call, one range copy
    EXPECT_EQ(t.ranges[range].flops, 8);
    EXPECT_EQ(t.ranges[range].thread, analysis::ReplayThread(77));
  }
  // Without a new window nothing is written again.
  HeapRing ring;
  DecodeContext ctx;
  ctx.graphs.store(&table);
  const DecodeStats again = DecodeActivityBuffer(kernels.data(), kernels.size(), api_,
                                                 ring.writer(), &ctx);
  EXPECT_EQ(again.graph_nodes, 0u);
  EXPECT_EQ(drops.drops(ring::kGraphTableFull), 0u);
}

TEST_F(CuptiGraphsTest, GraphNodeRecordCarriesTheCloneItsOriginalAndItsRanges) {
  GraphNodeTable table;
  ASSERT_TRUE(table.Init(GraphTableLimits{}, nullptr));
  CaptureAndInstantiate(&table);
  table.BeginWindow();
  HeapRing ring;
  ASSERT_EQ(table.EmitNode(101, ring.writer()), GraphNodeTable::Emit::kWritten);
  EXPECT_EQ(table.EmitNode(101, ring.writer()), GraphNodeTable::Emit::kAlreadyWritten);
  EXPECT_EQ(table.EmitNode(42, ring.writer()), GraphNodeTable::Emit::kUnknown);
  const std::vector<HeapRing::Record> recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 1u);
  ASSERT_EQ(recs[0].type, ring::kGraphNode);
  const auto r = recs[0].As<ring::GraphNodeRecord>();
  EXPECT_EQ(r.node_id, 101u);
  EXPECT_EQ(r.original_node_id, 1u);
  EXPECT_EQ(r.sequence, 1u);
  EXPECT_EQ(r.graph_first, 1u);
  EXPECT_EQ(r.graph_last, 3u);
  EXPECT_EQ(r.graph_id, 5u);
  EXPECT_EQ(r.tid, 77u);
  ASSERT_EQ(r.depth, 2u);
  ring::GraphNodeLevel levels[2];
  std::memcpy(levels, recs[0].bytes.data() + sizeof(r), sizeof(levels));
  EXPECT_EQ(levels[0].first, 1u);  // decoder_layer.0 held nodes 1 and 2
  EXPECT_EQ(levels[0].last, 2u);
  EXPECT_EQ(levels[1].first, 1u);
  EXPECT_EQ(levels[1].last, 1u);
  const std::string names = recs[0].Inline<ring::GraphNodeRecord>(r.names_len, sizeof(levels));
  EXPECT_EQ(names, "decoder_layer.0demo::qkv_linear{flops=8,bytes=4}");
}

TEST_F(CuptiGraphsTest, TableBoundsAreCountedAndTheNodeKeepsItsOuterRanges) {
  HeapRing drops;
  GraphNodeTable table;
  GraphTableLimits limits;
  limits.max_nodes = 4;
  limits.max_ranges = 2;
  ASSERT_TRUE(table.Init(limits, drops.writer()));
  CaptureAndInstantiate(&table);
  // Ranges: layer and qkv fit; mlp does not (node 2 keeps the layer). Nodes: 1, 2, 3 and
  // the clone 101 fit; clones 102 and 103 do not.
  const GraphTableCounts c = table.counts();
  EXPECT_EQ(c.ranges, 2u);
  EXPECT_EQ(c.ranges_dropped, 1u);
  EXPECT_EQ(c.nodes, 4u);
  EXPECT_EQ(c.nodes_dropped, 2u);
  EXPECT_EQ(drops.drops(ring::kGraphTableFull), 3u);

  table.BeginWindow();
  HeapRing ring;
  EXPECT_EQ(table.EmitNode(2, ring.writer()), GraphNodeTable::Emit::kWritten);
  EXPECT_EQ(table.EmitNode(102, ring.writer()), GraphNodeTable::Emit::kUnknown);
  const std::vector<HeapRing::Record> recs = ring.ReadAll();
  ASSERT_EQ(recs.size(), 1u);
  const auto r = recs[0].As<ring::GraphNodeRecord>();
  EXPECT_EQ(r.depth, 1u);
  EXPECT_EQ(recs[0].Inline<ring::GraphNodeRecord>(r.names_len, sizeof(ring::GraphNodeLevel)),
            "decoder_layer.0");

  // A clone whose original the table lacks is counted, not guessed.
  Callback(&table, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, 6, 200, 199);
  EXPECT_EQ(table.counts().unknown_originals, 1u);
}

TEST_F(CuptiGraphsTest, ARecordTheRingHadNoRoomForIsWrittenAtTheNextKernel) {
  GraphNodeTable table;
  ASSERT_TRUE(table.Init(GraphTableLimits{}, nullptr));
  CaptureAndInstantiate(&table);
  table.BeginWindow();
  HeapRing ring(64 * 1024);
  // Fill the ring to its last few bytes.
  while (ring.writer()->Reserve<ring::WindowRecord>(ring::kWindow, 0) != nullptr) {
  }
  EXPECT_EQ(table.EmitNode(101, ring.writer()), GraphNodeTable::Emit::kRingFull);
  EXPECT_GT(ring.drops(ring::kRingFull), 0u);
  HeapRing roomy;
  EXPECT_EQ(table.EmitNode(101, roomy.writer()), GraphNodeTable::Emit::kWritten);
}

TEST_F(CuptiGraphsTest, CallbacksWithoutGraphDataOrOfOtherKindsAreIgnored) {
  GraphNodeTable table;
  ASSERT_TRUE(table.Init(GraphTableLimits{}, nullptr));
  CUpti_ResourceData empty{};
  RecordGraphCallback(&table, kIds, FakeStack, 1, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &empty);
  RecordGraphCallback(&table, kIds, FakeStack, 1, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, nullptr);
  Callback(&table, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, 5, 1);
  Callback(&table, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 5, 0);  // no id
  EXPECT_EQ(table.counts().nodes, 0u);
}

}  // namespace
}  // namespace opmap::inject::cupti_graphs_test
