// The graph capture merge on small traces built here: what each match rule accepts, the
// reason a replayed graph matches nothing, and what the merged trace maps to.
#include "analysis/graphs/capture_merge.h"

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/graphs/captured_graphs.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/modules.h"
#include "gtest/gtest.h"

namespace opmap::analysis::capture_merge_test {
namespace {

constexpr int64_t kPid = 7, kTid = 7;

void AddRange(Trace& t, const std::string& name, RangeKind kind, int64_t start, int64_t end,
              const std::string& dims = "") {
  Range r;
  r.name = t.strings.Intern(name);
  r.kind = kind;
  r.start_ns = start;
  r.dur_ns = end - start;
  r.process = kPid;
  r.thread = kTid;
  if (!dims.empty()) r.input_dims = t.strings.Intern(dims);
  t.ranges.push_back(r);
}

void AddCall(Trace& t, const std::string& name, int64_t start, int64_t end, int64_t corr,
             const std::string& kernel = "") {
  ApiCall a;
  a.name = t.strings.Intern(name);
  a.start_ns = start;
  a.dur_ns = end - start;
  a.process = kPid;
  a.thread = kTid;
  a.correlation = corr;
  if (!kernel.empty()) a.kernel = t.strings.Intern(kernel);
  t.api_calls.push_back(a);
}

void AddKernel(Trace& t, const std::string& name, int64_t start, int64_t corr, int64_t stream = 3) {
  GpuEvent g;
  g.name = t.strings.Intern(name);
  g.start_ns = start;
  g.dur_ns = 10;
  g.correlation = corr;
  g.stream = stream;
  t.gpu_events.push_back(g);
}

// A capture of a two-layer step: per layer, nn.Module Layer_i > aten::mm (gemm kernel) and
// aten::add (add kernel); `names` false leaves the launches without kernel names (CUDA).
Trace Capture(bool names = true, int64_t bs = 8) {
  Trace t;
  AddRange(t, "capture_" + std::to_string(bs) + "_FULL", RangeKind::kUserAnnotation, 0, 1000);
  AddCall(t, "cudaStreamBeginCapture", 10, 20, 1);
  for (int layer = 0; layer < 2; ++layer) {
    int64_t base = 100 + layer * 400;
    AddRange(t, "nn.Module: Layer_" + std::to_string(layer), RangeKind::kPythonFunction, base, base + 300);
    AddRange(t, "aten::mm", RangeKind::kCpuOp, base + 10, base + 100, "[[8, 64], [64, 64]]");
    AddCall(t, "cudaLaunchKernel", base + 20, base + 30, 10 + layer * 2, names ? "gemm_kernel" : "");
    AddRange(t, "aten::add", RangeKind::kCpuOp, base + 150, base + 250);
    AddCall(t, "cudaLaunchKernel", base + 160, base + 170, 11 + layer * 2, names ? "add_kernel" : "");
  }
  AddCall(t, "cudaStreamEndCapture", 950, 960, 2);
  return t;
}

// A replay: one step annotation with one graph launch whose four kernels follow.
Trace Replay(const std::string& step = "step[DECODE bs=8]",
             std::vector<std::string> kernels = {"gemm_kernel", "add_kernel", "gemm_kernel", "add_kernel"}) {
  Trace t;
  AddRange(t, step, RangeKind::kUserAnnotation, 5000, 9000);
  AddCall(t, "cudaGraphLaunch", 5100, 5200, 500);
  int64_t start = 6000;
  for (const std::string& k : kernels) {
    AddKernel(t, k, start, 500);
    start += 100;
  }
  return t;
}

std::vector<std::string> OperatorNames(const Trace& t, const MappingResult& m) {
  std::vector<std::string> out;
  for (const EventMapping& e : m.events) {
    out.push_back(e.range < 0 ? "" : std::string(t.strings.Get(t.ranges[e.range].name)));
  }
  return out;
}

TEST(CaptureMergeTest, ReplayedKernelsTakeTheirCaptureTimeOperatorsShapesAndModules) {
  Trace capture = Capture();
  Trace replay = Replay();
  CaptureInput in{&capture, "bs_8.json", 8, "FULL"};
  absl::StatusOr<CaptureMergeReport> report = MergeGraphCaptures(replay, {&in, 1});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->captured_graphs, 1);
  EXPECT_EQ(report->matched_launches, 1);
  EXPECT_EQ(report->matched_events, 4);
  EXPECT_EQ(report->by_method[static_cast<int>(MatchMethod::kExact)], 1);
  EXPECT_EQ(report->unverified_events, 0);
  EXPECT_EQ(report->launches_added, 4);
  EXPECT_EQ(report->ranges_added, 6);  // 2 modules, 4 operators; not the capture annotation

  MappingResult m = MapGpuEvents(replay);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kGraphNode)], 4);
  EXPECT_EQ(OperatorNames(replay, m),
            (std::vector<std::string>{"aten::mm", "aten::add", "aten::mm", "aten::add"}));
  EXPECT_EQ(replay.strings.Get(replay.ranges[m.events[0].range].input_dims), "[[8, 64], [64, 64]]");
  for (const EventMapping& e : m.events) {
    EXPECT_TRUE(IsReplayThread(replay.ranges[e.range].thread));
    // The copies lie inside the graph launch call.
    EXPECT_GE(replay.ranges[e.range].start_ns, 5100);
    EXPECT_LE(replay.ranges[e.range].end_ns(), 5200);
  }
  ModuleSummary modules = SummarizeModules(replay, m);
  ASSERT_EQ(modules.module_types.size(), 1u);
  EXPECT_EQ(modules.module_types[0].module_type, "Layer");
  EXPECT_EQ(modules.module_types[0].event_count, 4);
  EXPECT_EQ(modules.modules.size(), 2u);
}

TEST(CaptureMergeTest, WithoutAMergeTheStepOwnsNoKernel) {
  Trace replay = Replay();
  MappingResult m = MapGpuEvents(replay);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kUnmapped)], 4);
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kLaunchOutsideRanges)], 4);
  // An annotation no name rule knows is a step too when it encloses a graph launch.
  Trace custom = Replay("my_engine_forward");
  MappingResult mc = MapGpuEvents(custom);
  EXPECT_EQ(mc.by_rule[static_cast<int>(MappingRule::kUnmapped)], 4);
}

TEST(CaptureMergeTest, LaunchesWithoutKernelNamesMatchByPositionAndAreCountedUnverified) {
  Trace capture = Capture(/*names=*/false);
  Trace replay = Replay();
  CaptureInput in{&capture, "c.json", kNone, ""};
  absl::StatusOr<CaptureMergeReport> report = MergeGraphCaptures(replay, {&in, 1});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->matched_events, 4);
  EXPECT_EQ(report->unverified_events, 4);
}

TEST(CaptureMergeTest, PrefersTheCaptureOfTheStepsBatchSize) {
  Trace small = Capture(true, 4);
  Trace large = Capture(true, 8);
  // Same kernels, other shapes: only the batch size tells them apart.
  large.ranges[2].input_dims = large.strings.Intern("[[8, 64], [64, 64]] bs8");
  Trace replay = Replay("step[DECODE bs=8]");
  CaptureInput in[] = {{&small, "bs_4.json", kNone, ""}, {&large, "bs_8.json", kNone, ""}};
  ASSERT_TRUE(MergeGraphCaptures(replay, in).ok());
  MappingResult m = MapGpuEvents(replay);
  EXPECT_EQ(replay.strings.Get(replay.ranges[m.events[0].range].input_dims),
            "[[8, 64], [64, 64]] bs8");
}

TEST(CaptureMergeTest, UnmatchedGraphsSayWhy) {
  Trace capture = Capture();
  CaptureInput in{&capture, "bs_8.json", 8, ""};
  {
    Trace replay = Replay("step[DECODE bs=16]");
    absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {&in, 1});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->unmatched.size(), 1u);
    EXPECT_EQ(r->unmatched[0].reason, "no capture for batch size 16 (captured: 8)");
    EXPECT_EQ(r->unmatched[0].kernels, 4);
    EXPECT_EQ(MapGpuEvents(replay).by_rule[static_cast<int>(MappingRule::kGraphNode)], 0);
  }
  {
    Trace replay = Replay("step[DECODE bs=8]", {"gemm_kernel", "add_kernel", "softmax_kernel", "add_kernel"});
    absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {&in, 1});
    ASSERT_EQ(r->unmatched.size(), 1u);
    EXPECT_EQ(r->unmatched[0].reason,
              "sequence differs at kernel 3 of 4: replay `softmax_kernel`, capture `gemm_kernel` "
              "(closest: graph 0 of bs_8.json)");
  }
  {
    Trace replay = Replay("step[DECODE bs=8]", {"gemm_kernel", "add_kernel"});
    absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {&in, 1});
    ASSERT_EQ(r->unmatched.size(), 1u);
    EXPECT_EQ(r->unmatched[0].reason, "kernel count differs: replay 2, capture 4 (closest: graph 0 of bs_8.json)");
  }
  {
    Trace replay = Replay();
    absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {});
    ASSERT_EQ(r->unmatched.size(), 1u);
    EXPECT_NE(r->unmatched[0].reason.find("no capture trace holds a graph capture"), std::string::npos);
  }
}

TEST(CaptureMergeTest, ExtraCaptureLaunchesAreSkipped) {
  Trace capture = Capture();
  // A launch the replay never ran (the profiler lost its kernel): between the two layers.
  AddCall(capture, "cudaLaunchKernel", 460, 470, 30, "lost_kernel");
  Trace replay = Replay();
  CaptureInput in{&capture, "c.json", 8, ""};
  absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {&in, 1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->by_method[static_cast<int>(MatchMethod::kSkipExtra)], 1);
  MappingResult m = MapGpuEvents(replay);
  EXPECT_EQ(OperatorNames(replay, m),
            (std::vector<std::string>{"aten::mm", "aten::add", "aten::mm", "aten::add"}));
}

TEST(CaptureMergeTest, KernelsOnTwoStreamsMatchPerStream) {
  Trace capture = Capture();
  Trace replay;
  AddRange(replay, "step[DECODE bs=8]", RangeKind::kUserAnnotation, 5000, 9000);
  AddCall(replay, "cudaGraphLaunch", 5100, 5200, 500);
  // Program order gemm, add, gemm, add; the adds ran on stream 4 ahead of the gemms.
  AddKernel(replay, "add_kernel", 6000, 500, 4);
  AddKernel(replay, "gemm_kernel", 6050, 500, 3);
  AddKernel(replay, "add_kernel", 6100, 500, 4);
  AddKernel(replay, "gemm_kernel", 6150, 500, 3);
  CaptureInput in{&capture, "c.json", 8, ""};
  absl::StatusOr<CaptureMergeReport> r = MergeGraphCaptures(replay, {&in, 1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->by_method[static_cast<int>(MatchMethod::kPerStream)], 1);
  MappingResult m = MapGpuEvents(replay);
  EXPECT_EQ(OperatorNames(replay, m),
            (std::vector<std::string>{"aten::add", "aten::mm", "aten::add", "aten::mm"}));
  // Layer_0's kernels are the first gemm and add in program order.
  auto module_of = [&](int e) {
    const Range& op = replay.ranges[m.events[e].range];
    for (const Range& r : replay.ranges) {
      if (r.kind == RangeKind::kPythonFunction && r.start_ns <= op.start_ns && op.end_ns() <= r.end_ns()) {
        return std::string(replay.strings.Get(r.name));
      }
    }
    return std::string();
  };
  EXPECT_EQ(module_of(0), "nn.Module: Layer_0");
  EXPECT_EQ(module_of(1), "nn.Module: Layer_0");
  EXPECT_EQ(module_of(2), "nn.Module: Layer_1");
}

// An operator nested in a copied operator comes along though it launches nothing (a
// MoE's weight views); one outside every copied operator does not.
TEST(CaptureMergeTest, OperatorsNestedInACopiedOperatorAreCopied) {
  Trace capture = Capture();
  AddRange(capture, "aten::view", RangeKind::kCpuOp, 140, 150, "[[64, 64]]");  // in aten::mm
  AddRange(capture, "aten::empty", RangeKind::kCpuOp, 210, 220);  // in a module, no operator
  std::vector<CapturedGraph> graphs = FindCapturedGraphs(capture, 0);
  ASSERT_EQ(graphs.size(), 1u);
  std::vector<std::string> names;
  for (int32_t r : graphs[0].ranges) names.emplace_back(capture.strings.Get(capture.ranges[r].name));
  EXPECT_EQ(std::count(names.begin(), names.end(), "aten::view"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "aten::empty"), 0);
  EXPECT_EQ(names.size(), 7u);
}

TEST(CaptureMergeTest, CaptureAnnotationsAndFileNamesGiveBatchSizes) {
  EXPECT_EQ(CaptureAnnotationBatchSize("capture_32_FULL"), 32);
  EXPECT_EQ(CaptureAnnotationBatchSize("capture_32_DECODE"), 32);
  EXPECT_EQ(CaptureAnnotationBatchSize("capture_FULL"), -1);
  EXPECT_EQ(CaptureAnnotationBatchSize("capture_99999999999_FULL"), -1);
  EXPECT_EQ(CaptureAnnotationBatchSize("capture_0_FULL"), -1);
  std::vector<CapturedGraph> graphs = FindCapturedGraphs(Capture(true, 16), 0);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0].batch_size, 16);
  EXPECT_EQ(graphs[0].nodes.size(), 4u);
}

}  // namespace
}  // namespace opmap::analysis::capture_merge_test
