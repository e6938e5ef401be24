// The live graph capture merge (analysis/import/capture_graphs.h) on records built with
// abi/ring_records.h's structs, as libopmap_inject writes them: kGraphNode records for
// nodes captured under NVTX ranges (before the window), then the window's graph launch
// call and the kernels CUPTI reports with those nodes' ids, in CUPTI's order (kernels
// before their launch). The real kernel mapper must place each kernel in its capture-time
// range by the `graph_node` rule.
#include <algorithm>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/ring_records.h"
#include "agent/transport/capture_file.h"
#include "analysis/import/capture_import.h"
#include "analysis/import/capture_trace.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/wire/batch_codec.h"
#include "gtest/gtest.h"
#include "tests/unit/capture/ring_record_bytes.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis::capture_graphs_test {
namespace {

using namespace opmap::ring;  // NOLINT
using analysis::MappingRule;

using test_records::Api;
using test_records::Record;

struct Level {
  uint64_t key;
  uint64_t first;
  uint64_t last;  // 0 = still open
  std::string name;
};

struct Node {
  uint64_t id;
  uint64_t original = 0;
  uint64_t sequence;
  uint32_t graph = 5;
  uint64_t graph_first = 1;
  uint64_t graph_last = 4;
  std::vector<Level> levels;  // outermost first
};

std::string GraphNode(const Node& n) {
  GraphNodeRecord r{};
  r.node_id = n.id;
  r.original_node_id = n.original;
  r.correlation_id = 0;
  r.sequence = n.sequence;
  r.graph_first = n.graph_first;
  r.graph_last = n.graph_last;
  r.graph_id = n.graph;
  r.tid = 77;
  r.depth = static_cast<uint16_t>(n.levels.size());
  std::string tail;
  std::string names;
  for (const Level& l : n.levels) {
    GraphNodeLevel g{};
    g.range_key = l.key;
    g.first = l.first;
    g.last = l.last;
    g.name_len = static_cast<uint16_t>(l.name.size());
    tail.append(reinterpret_cast<const char*>(&g), sizeof(g));
    names += l.name;
  }
  r.names_len = static_cast<uint32_t>(names.size());
  return Record(kGraphNode, r, tail + names);
}

std::string Kernel(int64_t start, int64_t end, uint64_t correlation, uint64_t node,
                   std::string_view name) {
  KernelRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.correlation_id = correlation;
  r.graph_node_id = node;
  r.graph_id = node != 0 ? 9 : 0;
  r.stream_id = 7;
  r.name_len = static_cast<uint16_t>(name.size());
  return Record(kKernel, r, name);
}

// A graph captured under decoder_layer.0 > {qkv_linear: nodes 1, 2; mlp: node 3}, node 4
// under the layer only; instantiation cloned each node i as 100 + i.
std::vector<Node> CapturedGraph() {
  const Level layer{11, 1, 4, "decoder_layer.0"};
  const Level qkv{12, 1, 2, "demo::qkv_linear{flops=2097152,bytes=196608}"};
  const Level mlp{13, 3, 3, "demo::mlp"};
  std::vector<Node> nodes;
  for (uint64_t i = 1; i <= 4; ++i) {
    Node n{.id = 100 + i, .original = i, .sequence = i, .levels = {}};
    n.levels.push_back(layer);
    if (i <= 2) n.levels.push_back(qkv);
    if (i == 3) n.levels.push_back(mlp);
    nodes.push_back(n);
  }
  return nodes;
}

std::string_view RangeName(const analysis::Trace& t, const analysis::MappingResult& m,
                           size_t event) {
  const int32_t r = m.events[event].range;
  return r < 0 ? "<unmapped>" : t.strings.Get(t.ranges[r].name);
}

int64_t Counter(const analysis::Trace& t, std::string_view name) {
  for (const auto& [n, v] : t.info.counters) {
    if (n == name) return v;
  }
  return -1;
}

TEST(CaptureGraphs, ReplayedKernelsMapToTheirCaptureTimeRangesByGraphNode) {
  CaptureTraceBuilder b(4242);
  for (const Node& n : CapturedGraph()) b.Add(GraphNode(n));
  // Two replays of the graph on thread 77; CUPTI delivers the kernels before the launch
  // calls. Node 102 (a qkv kernel) and 103 (mlp) in the first launch, all four in the
  // second; a kernel outside any graph stays with its eager launch.
  b.Add(Kernel(50'000, 51'000, 500, 102, "qkv_gemm"));
  b.Add(Kernel(51'000, 52'000, 500, 103, "mlp_gemm"));
  for (uint64_t i = 1; i <= 4; ++i) {
    b.Add(Kernel(60'000 + 1000 * i, 60'500 + 1000 * i, 501, 100 + i, "k" + std::to_string(i)));
  }
  b.Add(Kernel(70'000, 71'000, 502, 0, "eager"));
  b.Add(Api(10'000, 20'000, 77, 500, "cudaGraphLaunch"));
  b.Add(Api(30'000, 30'003, 77, 501, "cudaGraphLaunch"));  // shorter than its 4 positions
  b.Add(Api(40'000, 41'000, 77, 502, "cudaLaunchKernel"));
  CaptureResult r = std::move(b).Finish();
  ASSERT_EQ(r.bad_records, 0) << r.first_bad_record;
  EXPECT_EQ(r.graph_nodes.records, 4);
  EXPECT_EQ(r.graph_nodes.graph_events, 6);
  EXPECT_EQ(r.graph_nodes.placed, 6);
  // Per launch each range once: the layer and qkv and mlp for the first (3), all three
  // for the second.
  EXPECT_EQ(r.graph_nodes.ranges_added, 6);
  EXPECT_EQ(r.graph_nodes.launches_added, 6);

  const analysis::Trace t = FinishCaptureTrace(std::move(r));
  ASSERT_EQ(t.gpu_events.size(), 7u);
  const analysis::MappingResult m = analysis::MapGpuEvents(t);
  std::vector<std::string> placed;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < t.gpu_events.size(); ++i) {
    const std::string kernel(t.strings.Get(t.gpu_events[i].name));
    index[kernel] = i;
    if (kernel == "eager") {
      EXPECT_EQ(m.events[i].rule, MappingRule::kUnmapped);  // no range around its launch
      continue;
    }
    EXPECT_EQ(m.events[i].rule, MappingRule::kGraphNode) << kernel;
    const analysis::Range& range = t.ranges[m.events[i].range];
    EXPECT_EQ(range.thread, analysis::ReplayThread(77));
    EXPECT_EQ(range.process, 4242);
    placed.push_back(kernel + "@" + std::string(RangeName(t, m, i)));
  }
  EXPECT_EQ(placed, (std::vector<std::string>{"qkv_gemm@demo::qkv_linear", "mlp_gemm@demo::mlp",
                                              "k1@demo::qkv_linear", "k2@demo::qkv_linear",
                                              "k3@demo::mlp", "k4@decoder_layer.0"}));
  // The shape payload survives on the copies; the two qkv kernels of the second launch
  // share one range copy (one operator call), distinct from the first launch's.
  const int32_t qkv1 = m.events[index["qkv_gemm"]].range;
  const int32_t k1 = m.events[index["k1"]].range, k2 = m.events[index["k2"]].range;
  EXPECT_EQ(t.ranges[k1].flops, 2097152);
  EXPECT_EQ(k1, k2);
  EXPECT_NE(qkv1, k1);
  // Copies lie inside their launch call where it is long enough (10 µs for 4 positions).
  EXPECT_GE(t.ranges[qkv1].start_ns, 10'000);
  EXPECT_LE(t.ranges[qkv1].end_ns(), 20'000);
  EXPECT_EQ(Counter(t, "graph_nodes.placed"), 6);
  EXPECT_EQ(Counter(t, "graph_nodes.unknown_node"), 0);
}

// What the agent sends and the collector assembles: the copies cross the wire as any
// ranges and calls (replay thread ids, fresh correlations near 2^32), and the collector's
// mapping places the kernels by graph_node.
TEST(CaptureGraphs, CopiesCrossTheWireAndTheCollectorMapsByGraphNode) {
  CaptureTraceBuilder b(4242);
  for (const Node& n : CapturedGraph()) b.Add(GraphNode(n));
  for (uint64_t i = 1; i <= 4; ++i) {
    b.Add(Kernel(60'000 + 1000 * i, 60'500 + 1000 * i, 900, 100 + i, "k" + std::to_string(i)));
  }
  b.Add(Api(30'000, 40'000, 77, 900, "cudaGraphLaunch"));
  const analysis::Trace t = FinishCaptureTrace(std::move(b).Finish());
  analysis::BatchingOptions options;
  options.agent_id = "agent";
  options.session_id = "session";
  options.resource.set_pid(4242);
  options.max_records_per_batch = 3;
  absl::StatusOr<std::vector<v1::Batch>> batches = analysis::TraceToBatches(t, options);
  ASSERT_TRUE(batches.ok()) << batches.status();
  analysis::SessionAssembler assembler;
  for (const v1::Batch& batch : *batches) {
    std::string field;
    ASSERT_TRUE(assembler.Append(batch, analysis::BatchLimits{}, &field).ok()) << field;
  }
  const analysis::Trace& got = assembler.trace();
  const analysis::MappingResult m = analysis::MapGpuEvents(got);
  ASSERT_EQ(m.events.size(), 4u);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kGraphNode)], 4);
  for (size_t i = 0; i < m.events.size(); ++i) {
    EXPECT_EQ(m.events[i].rule, MappingRule::kGraphNode) << i;
  }
  std::vector<std::string> ranges;
  for (size_t i = 0; i < m.events.size(); ++i) ranges.emplace_back(RangeName(got, m, i));
  std::sort(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges, (std::vector<std::string>{"decoder_layer.0", "demo::mlp",
                                              "demo::qkv_linear", "demo::qkv_linear"}));
}

TEST(CaptureGraphs, ChunksKeepKernelsUntilTheirLaunchAndStillMap) {
  CaptureTraceBuilder b(1);
  for (const Node& n : CapturedGraph()) b.Add(GraphNode(n));
  b.Add(Kernel(50'000, 51'000, 600, 101, "k1"));
  // The agent converts while the window is open: the kernel waits for its launch call.
  analysis::Trace first = b.TakeCompleted();
  EXPECT_TRUE(first.gpu_events.empty());
  b.Add(Api(10'000, 20'000, 3, 600, "cudaGraphLaunch"));
  b.Add(Kernel(52'000, 53'000, 600, 103, "k3"));
  analysis::Trace second = b.TakeCompleted();
  EXPECT_EQ(second.gpu_events.size(), 2u);
  b.Add(Kernel(54'000, 55'000, 600, 102, "k2"));  // after the chunk that copied qkv
  CaptureResult r = std::move(b).Finish();
  // What the collector assembles: every chunk, then the rest.
  analysis::Trace all = std::move(r.trace);
  for (analysis::Trace* part : {&first, &second}) {
    all.gpu_events.insert(all.gpu_events.end(), part->gpu_events.begin(), part->gpu_events.end());
    all.api_calls.insert(all.api_calls.end(), part->api_calls.begin(), part->api_calls.end());
    all.ranges.insert(all.ranges.end(), part->ranges.begin(), part->ranges.end());
  }
  EXPECT_EQ(all.ranges.size(), 3u);  // layer, qkv, mlp: once for the one launch
  const analysis::MappingResult m = analysis::MapGpuEvents(all);
  for (size_t i = 0; i < all.gpu_events.size(); ++i) {
    const std::string_view kernel = all.strings.Get(all.gpu_events[i].name);
    EXPECT_EQ(m.events[i].rule, MappingRule::kGraphNode) << kernel;
    EXPECT_EQ(RangeName(all, m, i), kernel == "k3" ? "demo::mlp" : "demo::qkv_linear") << kernel;
  }
}

TEST(CaptureGraphs, KernelsWithoutNodeOrLaunchStayAndAreCounted) {
  CaptureTraceBuilder b(1);
  for (const Node& n : CapturedGraph()) b.Add(GraphNode(n));
  b.Add(Kernel(50'000, 51'000, 700, 999, "unknown_node"));  // e.g. the table was full
  b.Add(Kernel(52'000, 53'000, 701, 101, "launched_before_window"));
  b.Add(Api(10'000, 20'000, 3, 700, "cudaGraphLaunch"));
  CaptureResult r = std::move(b).Finish();
  EXPECT_EQ(r.graph_nodes.unknown_node, 1);
  EXPECT_EQ(r.graph_nodes.no_launch, 1);
  EXPECT_EQ(r.graph_nodes.placed, 0);
  ASSERT_EQ(r.trace.gpu_events.size(), 2u);
  const analysis::MappingResult m = analysis::MapGpuEvents(r.trace);
  // As without the table: the graph launch's kernel has its launch but no range.
  EXPECT_EQ(m.events[0].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[0].reason, analysis::UnmappedReason::kLaunchOutsideRanges);
  EXPECT_EQ(m.events[1].reason, analysis::UnmappedReason::kNoLaunchRecord);
}

TEST(CaptureGraphs, MalformedGraphNodeRecordsAreCountedNotTrusted) {
  CaptureTraceBuilder b(1);
  Node n{.id = 1, .sequence = 2, .graph_first = 1, .graph_last = 3, .levels = {}};
  n.levels.push_back({1, 1, 3, "outer"});
  std::string cut = GraphNode(n);
  cut.resize(sizeof(GraphNodeRecord) + sizeof(GraphNodeLevel));  // names missing
  b.Add(cut);
  Node outside = n;
  outside.sequence = 9;  // beyond its graph
  b.Add(GraphNode(outside));
  Node range_after = n;
  range_after.levels[0].first = 3;  // the range began after the node it holds
  b.Add(GraphNode(range_after));
  Node zero = n;
  zero.id = 0;
  b.Add(GraphNode(zero));
  std::string lying = GraphNode(n);
  GraphNodeRecord fixed;
  std::memcpy(&fixed, lying.data(), sizeof(fixed));
  fixed.names_len = 2;  // the level says 5
  std::memcpy(lying.data(), &fixed, sizeof(fixed));
  b.Add(lying);
  b.Add(GraphNode(n));  // and a good one
  CaptureResult r = std::move(b).Finish();
  EXPECT_EQ(r.bad_records, 5);
  EXPECT_NE(r.first_bad_record.find("overrun"), std::string::npos) << r.first_bad_record;
  EXPECT_EQ(r.graph_nodes.records, 1);
}

TEST(CaptureGraphs, CaptureFileImportAppliesGraphNode) {
  const std::string path = ::testing::TempDir() + "/capture_graphs_test.opcap";
  absl::StatusOr<transport::CaptureFileWriter> w = transport::CaptureFileWriter::Create(path, 77, 1 << 20, "");
  ASSERT_TRUE(w.ok()) << w.status();
  auto append = [&](const std::string& r) {
    ASSERT_TRUE(w->Append(std::span<const uint8_t>(
                              reinterpret_cast<const uint8_t*>(r.data()), r.size()))
                    .ok());
  };
  for (const Node& n : CapturedGraph()) append(GraphNode(n));
  append(Kernel(50'000, 51'000, 800, 103, "mlp_gemm"));
  append(Api(10'000, 20'000, 5, 800, "cudaGraphLaunch"));
  ASSERT_TRUE(w->Finish(capfile::TrailerRecord{}).ok());
  absl::StatusOr<analysis::Trace> t = ImportCaptureFile(opmap::testing::ReadFileOrDie(path));
  ASSERT_TRUE(t.ok()) << t.status();
  const analysis::MappingResult m = analysis::MapGpuEvents(*t);
  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].rule, MappingRule::kGraphNode);
  EXPECT_EQ(RangeName(*t, m, 0), "demo::mlp");
  EXPECT_EQ(Counter(*t, "graph_nodes.records"), 4);
}

}  // namespace
}  // namespace opmap::analysis::capture_graphs_test
