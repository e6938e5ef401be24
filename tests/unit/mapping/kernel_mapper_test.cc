// MapGpuEvents on hand-built traces: each rule of DESIGN.md ("Kernel -> operator mapping"),
// the unmapped reasons, range-nesting edge cases, and the tallies. A randomized check
// compares the sweep that finds the innermost enclosing range with a brute-force one.
#include "analysis/mapping/kernel_mapper.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

constexpr int64_t kPid = 100;

class MapperTraceBuilder {
 public:
  int32_t AddRange(RangeKind kind, const std::string& name, int64_t start, int64_t dur,
                   int64_t thread, int64_t external_id = kNone, int64_t process = kPid) {
    Range r;
    r.kind = kind;
    r.name = t_.strings.Intern(name);
    r.start_ns = start;
    r.dur_ns = dur;
    r.thread = thread;
    r.process = process;
    r.external_id = external_id;
    t_.ranges.push_back(r);
    return static_cast<int32_t>(t_.ranges.size() - 1);
  }
  int32_t Op(const std::string& name, int64_t start, int64_t dur, int64_t thread = 1,
             int64_t external_id = kNone) {
    return AddRange(RangeKind::kCpuOp, name, start, dur, thread, external_id);
  }
  int32_t Api(const std::string& name, int64_t start, int64_t dur, int64_t correlation,
              int64_t thread = 1, int64_t external_id = kNone, int64_t process = kPid) {
    ApiCall a;
    a.name = t_.strings.Intern(name);
    a.start_ns = start;
    a.dur_ns = dur;
    a.correlation = correlation;
    a.thread = thread;
    a.process = process;
    a.external_id = external_id;
    t_.api_calls.push_back(a);
    return static_cast<int32_t>(t_.api_calls.size() - 1);
  }
  int32_t Launch(int64_t start, int64_t correlation, int64_t thread = 1, int64_t dur = 5) {
    return Api("cudaLaunchKernel", start, dur, correlation, thread);
  }
  int32_t Kernel(int64_t correlation, int64_t external_id = kNone,
                 GpuEventKind kind = GpuEventKind::kKernel) {
    GpuEvent g;
    g.kind = kind;
    g.name = t_.strings.Intern("kernel");
    g.start_ns = 1000000 + 10 * static_cast<int64_t>(t_.gpu_events.size());
    g.dur_ns = 3;
    g.stream = 7;
    g.correlation = correlation;
    g.external_id = external_id;
    t_.gpu_events.push_back(g);
    return static_cast<int32_t>(t_.gpu_events.size() - 1);
  }
  Trace& trace() { return t_; }

 private:
  Trace t_;
};

// by_rule / unmapped_by_reason must agree with the per-event rules, for every test.
void ExpectTalliesConsistent(const Trace& t, const MappingResult& m) {
  ASSERT_EQ(m.events.size(), t.gpu_events.size());
  std::array<int64_t, kMappingRuleCount> by_rule = {};
  std::array<int64_t, kUnmappedReasonCount> by_reason = {};
  for (const EventMapping& e : m.events) {
    ++by_rule[static_cast<int>(e.rule)];
    if (e.rule == MappingRule::kUnmapped) {
      ++by_reason[static_cast<int>(e.reason)];
      EXPECT_EQ(e.range, -1);
      EXPECT_NE(e.reason, UnmappedReason::kNone);
    } else {
      EXPECT_GE(e.range, 0);
      EXPECT_LT(e.range, static_cast<int32_t>(t.ranges.size()));
      EXPECT_EQ(e.reason, UnmappedReason::kNone);
      EXPECT_TRUE(IsOperatorRange(t.ranges[e.range].kind));
    }
  }
  EXPECT_EQ(by_rule, m.by_rule);
  EXPECT_EQ(by_reason, m.unmapped_by_reason);
  std::vector<int32_t> launch = m.LaunchApiIndex();
  ASSERT_EQ(launch.size(), m.events.size());
  for (size_t i = 0; i < launch.size(); ++i) EXPECT_EQ(launch[i], m.events[i].launch_api);
}

MappingResult Map(MapperTraceBuilder& b) {
  MappingResult m = MapGpuEvents(b.trace());
  ExpectTalliesConsistent(b.trace(), m);
  return m;
}

TEST(MappingNamesTest, RuleAndReasonNames) {
  EXPECT_EQ(MappingRuleName(MappingRule::kGraphNode), "graph_node");
  EXPECT_EQ(MappingRuleName(MappingRule::kExternalId), "external_id");
  EXPECT_EQ(MappingRuleName(MappingRule::kLaunchNesting), "launch_nesting");
  EXPECT_EQ(MappingRuleName(MappingRule::kGraphLaunch), "graph_launch");
  EXPECT_EQ(MappingRuleName(MappingRule::kUnmapped), "unmapped");
  EXPECT_EQ(UnmappedReasonName(UnmappedReason::kNone), "none");
  EXPECT_EQ(UnmappedReasonName(UnmappedReason::kNoLaunchRecord), "no_launch_record");
  EXPECT_EQ(UnmappedReasonName(UnmappedReason::kLaunchOutsideRanges), "launch_outside_ranges");
  EXPECT_EQ(UnmappedReasonName(UnmappedReason::kLaunchOutsideWindow), "launch_outside_window");
  EXPECT_TRUE(IsOperatorRange(RangeKind::kCpuOp));
  EXPECT_TRUE(IsOperatorRange(RangeKind::kUserAnnotation));
  EXPECT_TRUE(IsOperatorRange(RangeKind::kNvtx));
  EXPECT_FALSE(IsOperatorRange(RangeKind::kPythonFunction));
}

TEST(KernelMapperTest, EmptyTrace) {
  MapperTraceBuilder b;
  MappingResult m = Map(b);
  EXPECT_TRUE(m.events.empty());
  EXPECT_EQ(m.by_rule, (std::array<int64_t, kMappingRuleCount>{}));
}

TEST(KernelMapperTest, LaunchNestingPicksTheInnermostOperator) {
  MapperTraceBuilder b;
  const int32_t step = b.AddRange(RangeKind::kUserAnnotation, "ProfilerStep#6", 0, 1000, 1);
  const int32_t linear = b.Op("aten::linear", 100, 200);
  const int32_t addmm = b.Op("aten::addmm", 120, 50);
  const int32_t api = b.Launch(130, 8368);
  b.Kernel(8368);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, addmm);
  EXPECT_NE(m.events[0].range, linear);
  EXPECT_NE(m.events[0].range, step);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[0].launch_api, api);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kLaunchNesting)], 1);
}

TEST(KernelMapperTest, MemcpyAndMemsetAreMappedToo) {
  MapperTraceBuilder b;
  const int32_t copy = b.Op("aten::copy_", 0, 100);
  b.Api("cudaMemcpyAsync", 10, 5, 1);
  b.Api("cudaMemsetAsync", 20, 5, 2);
  b.Kernel(1, kNone, GpuEventKind::kMemcpy);
  b.Kernel(2, kNone, GpuEventKind::kMemset);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, copy);
  EXPECT_EQ(m.events[1].range, copy);
}

TEST(KernelMapperTest, SiblingOperatorsAndThreads) {
  MapperTraceBuilder b;
  const int32_t a = b.Op("a", 0, 100, 1);
  const int32_t c = b.Op("c", 200, 100, 1);
  const int32_t x = b.Op("x", 0, 1000, 2);
  b.Launch(50, 1, 1);
  b.Launch(250, 2, 1);
  b.Launch(500, 3, 2);
  b.Launch(150, 4, 1);  // between siblings on thread 1
  for (int64_t corr : {1, 2, 3, 4}) b.Kernel(corr);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, a);
  EXPECT_EQ(m.events[1].range, c);
  EXPECT_EQ(m.events[2].range, x);
  EXPECT_EQ(m.events[3].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[3].reason, UnmappedReason::kLaunchOutsideRanges);
  EXPECT_EQ(m.events[3].launch_api, 3);
}

TEST(KernelMapperTest, SameThreadIdInAnotherProcessDoesNotCount) {
  MapperTraceBuilder b;
  b.AddRange(RangeKind::kCpuOp, "other process", 0, 1000, 1, kNone, /*process=*/200);
  b.Launch(10, 1, 1);
  b.Kernel(1);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[0].reason, UnmappedReason::kLaunchOutsideRanges);
}

TEST(KernelMapperTest, ExternalIdNamingARangeThatEnclosesTheLaunch) {
  MapperTraceBuilder b;
  const int32_t linear = b.Op("aten::linear", 100, 200, 1, /*external_id=*/48);
  const int32_t addmm = b.Op("aten::addmm", 120, 50, 1, /*external_id=*/49);
  b.Launch(130, 8368);
  b.Kernel(8368, /*external_id=*/49);
  // External id outranks nesting: naming the outer op maps to it, by external_id.
  b.Launch(135, 8369);
  b.Kernel(8369, /*external_id=*/48);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, addmm);
  EXPECT_EQ(m.events[0].rule, MappingRule::kExternalId);
  EXPECT_EQ(m.events[0].launch_api, 0);
  EXPECT_EQ(m.events[1].range, linear);
  EXPECT_EQ(m.events[1].rule, MappingRule::kExternalId);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kExternalId)], 2);
}

TEST(KernelMapperTest, ExternalIdWithoutAnyLaunchRecord) {
  MapperTraceBuilder b;
  const int32_t op = b.Op("aten::mm", 0, 100, 1, 7);
  b.Kernel(/*correlation=*/kNone, /*external_id=*/7);
  b.Kernel(/*correlation=*/555, /*external_id=*/7);  // correlation no API has
  MappingResult m = Map(b);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(m.events[i].range, op);
    EXPECT_EQ(m.events[i].rule, MappingRule::kExternalId);
    EXPECT_EQ(m.events[i].launch_api, -1);
  }
}

// 2022 Kineto writes the correlation id as the kernel's "External id" in some versions;
// here 8368 is also the External id of an unrelated op on another thread.
TEST(KernelMapperTest, ExternalIdCollidingWithCorrelationOnAnotherThreadIsNotTrusted) {
  MapperTraceBuilder b;
  const int32_t unrelated = b.Op("aten::unrelated", 0, 10000, /*thread=*/2, /*external_id=*/8368);
  const int32_t addmm = b.Op("aten::addmm", 100, 100, /*thread=*/1, /*external_id=*/49);
  b.Launch(120, 8368, 1);
  b.Kernel(8368, /*external_id=*/8368);
  MappingResult m = Map(b);
  EXPECT_NE(m.events[0].range, unrelated);
  EXPECT_EQ(m.events[0].range, addmm);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
}

TEST(KernelMapperTest, ExternalIdOfASameThreadRangeNotEnclosingTheLaunchIsNotTrusted) {
  MapperTraceBuilder b;
  const int32_t earlier = b.Op("aten::earlier", 0, 50, 1, /*external_id=*/900);
  const int32_t addmm = b.Op("aten::addmm", 100, 100, 1, 49);
  b.Launch(120, 900, 1);
  b.Kernel(900, /*external_id=*/900);
  MappingResult m = Map(b);
  EXPECT_NE(m.events[0].range, earlier);
  EXPECT_EQ(m.events[0].range, addmm);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
}

TEST(KernelMapperTest, ExternalIdOnTwoRangesIsIgnored) {
  MapperTraceBuilder b;
  b.Op("first", 0, 50, 1, /*external_id=*/5);
  b.Op("second", 1000, 50, 2, /*external_id=*/5);
  const int32_t outer = b.Op("outer", 0, 10000, 3);
  b.Launch(20, 1, /*thread=*/3);
  b.Kernel(1, /*external_id=*/5);
  b.Kernel(kNone, /*external_id=*/5);
  // Three ranges with one id: still ignored.
  b.Op("third", 2000, 50, 4, /*external_id=*/6);
  b.Op("fourth", 3000, 50, 4, /*external_id=*/6);
  b.Op("fifth", 4000, 50, 4, /*external_id=*/6);
  b.Kernel(kNone, /*external_id=*/6);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, outer);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[1].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[1].reason, UnmappedReason::kNoLaunchRecord);
  EXPECT_EQ(m.events[2].rule, MappingRule::kUnmapped);
}

TEST(KernelMapperTest, ExternalIdOnPythonFunctionIsIgnored) {
  MapperTraceBuilder b;
  b.AddRange(RangeKind::kPythonFunction, "nn.Module: Linear_0", 0, 100, 1, /*external_id=*/3);
  b.Kernel(kNone, 3);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[0].reason, UnmappedReason::kNoLaunchRecord);
}

TEST(KernelMapperTest, LaunchOnlyInsideUserAnnotation) {
  MapperTraceBuilder b;
  const int32_t region = b.AddRange(RangeKind::kUserAnnotation, "my_region", 0, 1000, 1);
  b.Op("aten::other", 500, 100, 1);
  b.Launch(100, 1);
  b.Kernel(1);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, region);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
}

// Steps and requests are subjects, never operators (docs/metrics.md): a launch under
// nothing else is unmapped, and so takes its kernel name's layer type.
TEST(KernelMapperTest, StepAndRequestRangesOwnNoKernel) {
  for (const char* name : {"ProfilerStep#1", "request", "step[DECODE bs=32]",
                           "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"}) {
    SCOPED_TRACE(name);
    MapperTraceBuilder b;
    b.AddRange(RangeKind::kUserAnnotation, name, 0, 1000, 1);
    const int32_t op = b.Op("aten::mm", 500, 100, 1);
    b.Launch(100, 1);
    b.Launch(510, 2);
    b.Kernel(1);
    b.Kernel(2);
    MappingResult m = Map(b);
    EXPECT_EQ(m.events[0].rule, MappingRule::kUnmapped);
    EXPECT_EQ(m.events[0].reason, UnmappedReason::kLaunchOutsideRanges);
    EXPECT_EQ(m.events[1].range, op);
  }
}

TEST(KernelMapperTest, NvtxRangesAreOperators) {
  MapperTraceBuilder b;
  b.AddRange(RangeKind::kUserAnnotation, "step", 0, 1000, 1);
  const int32_t nvtx = b.AddRange(RangeKind::kNvtx, "layer3.attention", 100, 100, 1);
  b.Launch(150, 1);
  b.Kernel(1);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, nvtx);
}

TEST(KernelMapperTest, LaunchOnAnotherThreadThanTheRanges) {
  MapperTraceBuilder b;
  b.Op("aten::mm", 0, 1000, /*thread=*/1);
  b.Launch(100, 1, /*thread=*/2);
  b.Kernel(1);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[0].reason, UnmappedReason::kLaunchOutsideRanges);
  EXPECT_EQ(m.events[0].launch_api, 0);  // the launch is still known
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kLaunchOutsideRanges)], 1);
}

TEST(KernelMapperTest, CorrelationNoApiHas) {
  MapperTraceBuilder b;
  b.Op("aten::mm", 0, 1000);
  b.Launch(100, 1);
  b.Kernel(2);
  b.Kernel(kNone);
  MappingResult m = Map(b);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(m.events[i].rule, MappingRule::kUnmapped);
    EXPECT_EQ(m.events[i].reason, UnmappedReason::kNoLaunchRecord);
    EXPECT_EQ(m.events[i].launch_api, -1);
  }
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kNoLaunchRecord)], 2);
}

TEST(KernelMapperTest, LaunchFromAnotherProcessIsNotTheLaunch) {
  MapperTraceBuilder b;
  b.Op("aten::mm", 0, 1000);
  b.Launch(100, 1);
  b.Kernel(1);
  b.trace().gpu_events[0].process = kPid + 1;
  b.Kernel(1);
  b.trace().gpu_events[1].process = kPid;
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].launch_api, -1);
  EXPECT_EQ(m.events[0].reason, UnmappedReason::kNoLaunchRecord);
  EXPECT_EQ(m.events[1].launch_api, 0);
  EXPECT_EQ(m.events[1].rule, MappingRule::kLaunchNesting);
}

TEST(KernelMapperTest, GraphLaunchWithManyKernels) {
  MapperTraceBuilder b;
  const int32_t op = b.Op("CUDAGraph::replay", 0, 1000);
  const int32_t api = b.Api("cudaGraphLaunch", 100, 20, 77);
  b.Kernel(77);
  b.Kernel(77);
  b.Kernel(77);
  MappingResult m = Map(b);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.events[i].range, op);
    EXPECT_EQ(m.events[i].rule, MappingRule::kGraphLaunch);
    EXPECT_EQ(m.events[i].launch_api, api);
  }
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kGraphLaunch)], 3);
  EXPECT_EQ(m.duplicate_correlations, 0);
}

TEST(KernelMapperTest, GraphLaunchNameVariants) {
  MapperTraceBuilder b;
  b.Op("replay", 0, 1000);
  b.Api("cudaGraphLaunch_v10000", 100, 5, 1);
  b.Api("hipGraphLaunch", 200, 5, 2);
  b.Api("cuGraphLaunch", 300, 5, 3);
  b.Api("cudaLaunchKernelExC", 400, 5, 4);
  b.Api("cuLaunchKernel", 500, 5, 5);
  for (int64_t c = 1; c <= 5; ++c) b.Kernel(c);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].rule, MappingRule::kGraphLaunch);
  EXPECT_EQ(m.events[1].rule, MappingRule::kGraphLaunch);
  EXPECT_EQ(m.events[2].rule, MappingRule::kGraphLaunch);
  EXPECT_EQ(m.events[3].rule, MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[4].rule, MappingRule::kLaunchNesting);
}

TEST(KernelMapperTest, DuplicateCorrelationKeepsTheFirstApi) {
  MapperTraceBuilder b;
  const int32_t a = b.Op("a", 0, 100, 1);
  b.Op("b", 0, 100, 2);
  const int32_t first = b.Launch(10, 5, 1);
  b.Launch(10, 5, 2);
  b.Kernel(5);
  MappingResult m = Map(b);
  EXPECT_EQ(m.duplicate_correlations, 1);
  EXPECT_EQ(m.events[0].launch_api, first);
  EXPECT_EQ(m.events[0].range, a);
}

TEST(KernelMapperTest, IdenticalExtentsTheLaterRecordedIsInner) {
  MapperTraceBuilder b;
  b.Op("outer (recorded first)", 100, 100);
  const int32_t inner = b.Op("inner (recorded second)", 100, 100);
  b.Launch(150, 1);
  b.Kernel(1);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, inner);
}

TEST(KernelMapperTest, ImproperlyNestedRanges) {
  MapperTraceBuilder b;
  const int32_t a = b.Op("a", 0, 100);    // [0, 100]
  const int32_t x = b.Op("b", 50, 100);   // [50, 150], overlaps a's end
  b.Launch(20, 1);   // only a
  b.Launch(60, 2);   // both: b started later, so it is the inner one
  b.Launch(95, 3);   // [95, 100]: both
  b.Launch(97, 4);   // [97, 102]: only b holds it whole
  b.Launch(120, 5);  // only b
  b.Launch(149, 6);  // [149, 154]: neither
  for (int64_t c = 1; c <= 6; ++c) b.Kernel(c);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, a);
  EXPECT_EQ(m.events[1].range, x);
  EXPECT_EQ(m.events[2].range, x);
  EXPECT_EQ(m.events[3].range, x);
  EXPECT_EQ(m.events[4].range, x);
  EXPECT_EQ(m.events[5].reason, UnmappedReason::kLaunchOutsideRanges);
}

TEST(KernelMapperTest, ImproperNestingWithAFinishedRangeOnTop) {
  MapperTraceBuilder b;
  const int32_t a = b.Op("a", 0, 100);   // [0, 100]
  b.Op("b", 10, 10);                      // [10, 20]
  const int32_t c = b.Op("c", 30, 170);  // [30, 200] crosses a's end
  b.Launch(40, 1);
  b.Launch(99, 2, 1, /*dur=*/2);  // [99, 101]: a can't hold it, c can
  b.Launch(150, 3);
  b.Launch(15, 4);                // b
  for (int64_t k = 1; k <= 4; ++k) b.Kernel(k);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, c);
  EXPECT_EQ(m.events[1].range, c);
  EXPECT_EQ(m.events[2].range, c);
  EXPECT_EQ(m.events[3].range, 1);
  (void)a;
}

TEST(KernelMapperTest, LaunchesAtTheExactRangeBoundaries) {
  MapperTraceBuilder b;
  const int32_t r = b.Op("r", 100, 100);  // [100, 200]
  b.Launch(100, 1, 1, 10);  // starts with r
  b.Launch(190, 2, 1, 10);  // ends with r
  b.Launch(100, 3, 1, 100); // exactly r
  b.Launch(200, 4, 1, 0);   // zero-length at r's end
  b.Launch(100, 5, 1, 0);   // zero-length at r's start
  b.Launch(99, 6, 1, 10);   // starts 1 ns early
  b.Launch(191, 7, 1, 10);  // ends 1 ns late
  b.Launch(201, 8, 1, 0);   // just after
  for (int64_t c = 1; c <= 8; ++c) b.Kernel(c);
  MappingResult m = Map(b);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(m.events[i].range, r) << "launch " << i + 1;
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(m.events[i].reason, UnmappedReason::kLaunchOutsideRanges) << "launch " << i + 1;
  }
}

TEST(KernelMapperTest, ZeroLengthRanges) {
  MapperTraceBuilder b;
  const int32_t parent = b.Op("parent", 100, 100);  // [100, 200]
  const int32_t z = b.Op("zero", 150, 0);           // [150, 150]
  const int32_t z0 = b.Op("zero at start", 100, 0); // [100, 100]
  b.Launch(150, 1, 1, 0);  // zero-length launch inside the zero-length range
  b.Launch(150, 2, 1, 1);  // longer than it: the parent
  b.Launch(100, 3, 1, 0);
  b.Launch(100, 4, 1, 1);
  for (int64_t c = 1; c <= 4; ++c) b.Kernel(c);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, z);
  EXPECT_EQ(m.events[1].range, parent);
  EXPECT_EQ(m.events[2].range, z0);
  EXPECT_EQ(m.events[3].range, parent);
}

TEST(KernelMapperTest, AdjacentRangesShareABoundary) {
  MapperTraceBuilder b;
  b.Op("first", 0, 100);                  // [0, 100]
  const int32_t second = b.Op("second", 100, 100);  // [100, 200]
  b.Launch(100, 1, 1, 0);                 // in both: the later-starting one is inner
  b.Launch(100, 2, 1, 5);                 // only second
  b.Kernel(1);
  b.Kernel(2);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, second);
  EXPECT_EQ(m.events[1].range, second);
}

TEST(KernelMapperTest, PythonFunctionRangesNeverOwnKernels) {
  MapperTraceBuilder b;
  const int32_t op = b.Op("aten::linear", 0, 1000);
  b.AddRange(RangeKind::kPythonFunction, "nn.Module: Linear_0", 100, 100, 1);
  b.AddRange(RangeKind::kPythonFunction, "torch/nn/functional.py(1): linear", 110, 50, 1);
  b.Launch(120, 1);
  b.AddRange(RangeKind::kPythonFunction, "only python", 5000, 100, 2);
  b.Launch(5050, 2, 2);
  b.Kernel(1);
  b.Kernel(2);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, op);
  EXPECT_EQ(m.events[0].rule, MappingRule::kLaunchNesting);
  EXPECT_EQ(m.events[1].rule, MappingRule::kUnmapped);
  EXPECT_EQ(m.events[1].reason, UnmappedReason::kLaunchOutsideRanges);
}

TEST(KernelMapperTest, UnsortedInputOrder) {
  MapperTraceBuilder b;
  // Ranges and launches recorded out of time order (Kineto writes ops at their end).
  const int32_t inner = b.Op("inner", 500, 10);
  const int32_t late = b.Op("late", 2000, 100);
  const int32_t outer = b.Op("outer", 0, 1000);
  b.Launch(2050, 3);
  b.Launch(505, 1);
  b.Launch(700, 2);
  b.Kernel(1);
  b.Kernel(2);
  b.Kernel(3);
  MappingResult m = Map(b);
  EXPECT_EQ(m.events[0].range, inner);
  EXPECT_EQ(m.events[1].range, outer);
  EXPECT_EQ(m.events[2].range, late);
}

TEST(KernelMapperTest, TalliesMixOfRules) {
  MapperTraceBuilder b;
  b.Op("op", 0, 1000, 1, 42);
  b.Launch(10, 1);                              // launch_nesting
  b.Api("cudaGraphLaunch", 20, 5, 2);           // graph_launch x2
  b.Launch(5000, 3);                            // launch_outside_ranges
  b.Kernel(1);
  b.Kernel(2);
  b.Kernel(2);
  b.Kernel(3);
  b.Kernel(4);                                  // no_launch_record
  b.Kernel(kNone, 42);                          // external_id
  MappingResult m = Map(b);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kGraphNode)], 0);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kExternalId)], 1);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kLaunchNesting)], 1);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kGraphLaunch)], 2);
  EXPECT_EQ(m.by_rule[static_cast<int>(MappingRule::kUnmapped)], 2);
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kNoLaunchRecord)], 1);
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kLaunchOutsideRanges)], 1);
  EXPECT_EQ(m.unmapped_by_reason[static_cast<int>(UnmappedReason::kNone)], 0);
  EXPECT_EQ(m.LaunchApiIndex(), (std::vector<int32_t>{0, 1, 1, 2, -1, -1}));
}

// The last range in (start asc, end desc, index asc) order that holds the launch whole,
// among operator ranges on its (process, thread): the definition of "innermost".
int32_t BruteForceInnermost(const Trace& t, const ApiCall& api) {
  int32_t best = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(t.ranges.size()); ++i) {
    const Range& r = t.ranges[i];
    if (!IsOperatorRange(r.kind) || r.process != api.process || r.thread != api.thread) continue;
    if (!(r.start_ns <= api.start_ns && api.end_ns() <= r.end_ns())) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const Range& o = t.ranges[best];
    if (r.start_ns > o.start_ns || (r.start_ns == o.start_ns && r.end_ns() < o.end_ns()) ||
        (r.start_ns == o.start_ns && r.end_ns() == o.end_ns() && i > best)) {
      best = i;
    }
  }
  return best;
}

TEST(KernelMapperTest, SweepMatchesBruteForceOnRandomRanges) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 300; ++round) {
    MapperTraceBuilder b;
    const int n_ranges = 1 + static_cast<int>(rng() % 40);
    const int64_t span = 50 + static_cast<int64_t>(rng() % 500);
    for (int i = 0; i < n_ranges; ++i) {
      const int64_t start = static_cast<int64_t>(rng() % span);
      const int64_t dur = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % (span / 2 + 1));
      const RangeKind kind = static_cast<RangeKind>(rng() % 4);
      b.AddRange(kind, "r" + std::to_string(i), start, dur, 1 + static_cast<int64_t>(rng() % 2));
    }
    const int n_launches = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n_launches; ++i) {
      const int64_t start = static_cast<int64_t>(rng() % (span + 20));
      const int64_t dur = static_cast<int64_t>(rng() % 8);
      b.Api("cudaLaunchKernel", start, dur, i, 1 + static_cast<int64_t>(rng() % 2));
      b.Kernel(i);
    }
    MappingResult m = Map(b);
    const Trace& t = b.trace();
    for (int i = 0; i < n_launches; ++i) {
      const int32_t want = BruteForceInnermost(t, t.api_calls[i]);
      ASSERT_EQ(m.events[i].range, want) << "round " << round << ", launch " << i;
      ASSERT_EQ(m.events[i].rule,
                want >= 0 ? MappingRule::kLaunchNesting : MappingRule::kUnmapped);
    }
  }
}

}  // namespace
}  // namespace opmap::analysis
