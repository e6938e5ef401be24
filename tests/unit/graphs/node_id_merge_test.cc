// The node-id merge on a node-mode Nsight export written here (tests/testing): each
// replayed kernel follows its clone to the node created in a captured launch, and takes
// that launch's NVTX ranges by the graph_node rule; what resolves to nothing is counted
// with its reason.
#include "analysis/graphs/node_id_merge.h"

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "gtest/gtest.h"
#include "tests/testing/nsys_graph_export.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis::node_id_merge_test {
namespace {

Trace Import(const ::opmap::testing::NsysGraphExportOptions& options) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("opmap-node-id-" + std::to_string(::getpid()) + ".sqlite"))
                               .string();
  ::opmap::testing::WriteNsysGraphExport(path, options);
  absl::StatusOr<Trace> t = ImportNsysSqlite(::opmap::testing::ReadFileOrDie(path));
  std::filesystem::remove(path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : Trace();
}

// Per GPU event: "<kernel> <rule> <operator>".
std::vector<std::string> Mapped(const Trace& t) {
  MappingResult m = MapGpuEvents(t);
  std::vector<std::string> out;
  for (size_t i = 0; i < t.gpu_events.size(); ++i) {
    const EventMapping& e = m.events[i];
    out.push_back(std::string(t.strings.Get(t.gpu_events[i].name)) + " " +
                  std::string(MappingRuleName(e.rule)) + " " +
                  (e.range >= 0 ? std::string(t.strings.Get(t.ranges[e.range].name)) : "-"));
  }
  return out;
}

TEST(NodeIdMerge, TheExportsNodeEventsAreImported) {
  Trace t = Import({});
  ASSERT_EQ(t.graph_nodes.size(), 4u);
  EXPECT_EQ(t.graph_nodes[0].node_id, 11);
  EXPECT_EQ(t.graph_nodes[0].original_node_id, kNone);
  EXPECT_EQ(t.graph_nodes[0].process, 4242);
  EXPECT_EQ(t.graph_nodes[0].thread, 4243);
  EXPECT_EQ(t.graph_nodes[0].time_ns, 1105);
  EXPECT_EQ(t.graph_nodes[2].node_id, 21);
  EXPECT_EQ(t.graph_nodes[2].original_node_id, 11);
  EXPECT_EQ(t.gpu_events[0].graph_node_id, 21);
}

TEST(NodeIdMerge, ReplayedKernelsTakeTheirCaptureTimeRanges) {
  Trace t = Import({});
  // Before: the kernels sit under the graph launch, whose only range is the step range
  // (never an operator).
  EXPECT_EQ(Mapped(t), (std::vector<std::string>{
                           "gemm_kernel unmapped -", "rms_norm_kernel unmapped -",
                           "gemm_kernel unmapped -", "rms_norm_kernel unmapped -"}));
  CaptureMergeReport r = MergeGraphNodeIds(t);
  EXPECT_EQ(r.captured_graphs, 1);
  EXPECT_EQ(r.graph_launches, 2);
  EXPECT_EQ(r.matched_launches, 2);
  EXPECT_EQ(r.matched_events, 4);
  EXPECT_EQ(r.by_method[static_cast<int>(MatchMethod::kNodeId)], 2);
  EXPECT_TRUE(r.unmatched.empty());
  EXPECT_EQ(Mapped(t), (std::vector<std::string>{
                           "gemm_kernel graph_node aten::mm",
                           "rms_norm_kernel graph_node aten::rms_norm",
                           "gemm_kernel graph_node aten::mm",
                           "rms_norm_kernel graph_node aten::rms_norm"}));
}

TEST(NodeIdMerge, ANodeWithoutItsCreationIsCountedWithTheReason) {
  Trace t = Import({.foreign_replay = true});
  CaptureMergeReport r = MergeGraphNodeIds(t);
  EXPECT_EQ(r.matched_launches, 2);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].launches, 1);
  EXPECT_EQ(r.unmatched[0].kernels, 1);
  EXPECT_EQ(r.unmatched[0].gpu_time_ns, 80);
  EXPECT_EQ(r.unmatched[0].reason,
            "a node with no creation event in the export (the graph was captured before the "
            "profiled range)");
  EXPECT_EQ(Mapped(t).back(), "gemm_kernel unmapped -");
}

TEST(NodeIdMerge, WithoutNodeEventsNothingIsMatchedByGuess) {
  Trace t = Import({.without_node_events = true});
  EXPECT_TRUE(t.graph_nodes.empty());
  CaptureMergeReport r = MergeGraphNodeIds(t);
  EXPECT_EQ(r.matched_launches, 0);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].launches, 2);
}

// A clone chain that loops (a hostile export) ends in a reason, not a hang.
TEST(NodeIdMerge, ACyclicCloneChainIsRefused) {
  Trace t = Import({});
  t.graph_nodes.erase(t.graph_nodes.begin(), t.graph_nodes.begin() + 2);  // no creations
  t.graph_nodes.push_back({11, 21, 4242, 4243, 1560});                   // 21 → 11 → 21
  CaptureMergeReport r = MergeGraphNodeIds(t);
  EXPECT_EQ(r.matched_launches, 0);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].reason, "a node clone chain longer than 64 (cyclic?)");
}

}  // namespace
}  // namespace opmap::analysis::node_id_merge_test
