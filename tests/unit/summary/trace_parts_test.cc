// A summary built from time-ordered parts of a trace (trace_parts.h + summary_accumulator.h)
// equals the whole trace's: the rendered analysis JSON, every count, sum and exact
// percentile, byte for byte, on every real trace beside the tests, cut into 40 parts (400
// for one), with ranges and launches carried across the cuts.
#include <string>
#include <vector>

#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/stats/value_counts.h"
#include "analysis/summary/summary_accumulator.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/trace_parts.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

struct PartsCase {
  const char* path;  // under ../shared
  int parts;         // about this many parts (target = events / parts)
  int min_parts;     // the trace must really be cut (a windowed trace is one part)
};

TraceSummary InParts(Trace& trace, size_t target, TracePartsStats* stats,
                     stats::ValueBudget* budget = nullptr) {
  SummaryAccumulator acc(budget);
  TraceInfo info = trace.info;
  Trace last_part_info;  // for the stall sections' reason
  *stats = ForEachTracePart(trace, target, [&](const Trace& part, const PartRanges& ranges) {
    acc.Add(part, MapGpuEvents(part), &ranges);
  });
  TraceSummary s = acc.Finish(info);
  last_part_info.info = info;
  AddStallSections(last_part_info, MapGpuEvents(last_part_info), &s);
  return s;
}

// The same through StreamingParts: every event of the trace in start order (ties: ranges,
// then calls, then GPU events, each kind in trace order), as a time-sorted source gives them.
TraceSummary Streamed(Trace& trace, size_t target, StreamingPartsStats* stats) {
  SummaryAccumulator acc;
  TraceInfo info = trace.info;
  if (info.window_start_ns != kNone) info.first_correlation = FirstCorrelations(trace);
  StringTable strings = std::move(trace.strings);
  StreamingParts parts(info, &strings, {.target_events = target},
                       [&](const Trace& part, const PartRanges& ranges) {
                         acc.Add(part, MapGpuEvents(part), &ranges);
                       });
  // The strings go to the parts: the trace's own table is empty meanwhile.
  AddTraceInStartOrder(trace, &parts);
  *stats = parts.stats();
  trace.strings = std::move(strings);
  TraceSummary s = acc.Finish(trace.info);
  Trace no_stalls;
  no_stalls.info = trace.info;
  AddStallSections(no_stalls, MapGpuEvents(no_stalls), &s);
  return s;
}

absl::StatusOr<Trace> LoadSharedTrace(const std::string& relative) {
  std::string bytes = ::opmap::testing::ReadFileOrDie(::opmap::testing::SharedPath(relative));
  if (relative.ends_with(".sqlite")) return ImportNsysSqlite(std::move(bytes));
  return ImportKinetoBytes(std::move(bytes));
}

class TraceParts : public ::testing::TestWithParam<PartsCase> {};

TEST_P(TraceParts, SummaryFromPartsEqualsTheWholeTrace) {
  const PartsCase& c = GetParam();
  OPMAP_REQUIRE_SHARED(c.path);
  absl::StatusOr<Trace> trace = LoadSharedTrace(c.path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const MappingResult mapping = MapGpuEvents(*trace);
  const std::string whole = RenderAnalyzeJson(Summarize(*trace, mapping), {.source = c.path});

  const size_t events =
      trace->gpu_events.size() + trace->api_calls.size() + trace->ranges.size();
  TracePartsStats stats;
  const TraceSummary parts = InParts(*trace, events / c.parts + 1, &stats);
  EXPECT_GE(stats.parts, c.min_parts);
  const std::string from_parts = RenderAnalyzeJson(parts, {.source = c.path});
  size_t at = 0;
  while (at < whole.size() && at < from_parts.size() && whole[at] == from_parts[at]) ++at;
  const size_t from = at > 300 ? at - 300 : 0;
  EXPECT_EQ(from_parts.size(), whole.size());
  EXPECT_EQ(at, whole.size()) << "first difference at byte " << at << "\nwhole: ..."
      << whole.substr(from, 400) << "\nparts: ..." << from_parts.substr(from, 400) << "\n"
      << c.path << " in " << stats.parts << " parts (largest " << stats.largest_part_events
      << " events, " << stats.carried << " carried)";
  {
    StreamingPartsStats streamed;
    const std::string from_stream =
        RenderAnalyzeJson(Streamed(*trace, events / c.parts + 1, &streamed), {.source = c.path});
    size_t at2 = 0;
    while (at2 < whole.size() && at2 < from_stream.size() && whole[at2] == from_stream[at2]) ++at2;
    const size_t from2 = at2 > 300 ? at2 - 300 : 0;
    EXPECT_EQ(at2, whole.size()) << "streamed: first difference at byte " << at2 << "\nwhole: ..."
        << whole.substr(from2, 400) << "\nstream: ..." << from_stream.substr(from2, 400);
    EXPECT_EQ(from_stream.size(), whole.size());
    EXPECT_GE(streamed.parts, c.min_parts);
    EXPECT_EQ(streamed.launches_not_held, 0);
    EXPECT_EQ(streamed.late_events, 0);
  }
  // The strings were lent and given back: the trace still names its events.
  EXPECT_FALSE(trace->strings.Get(trace->gpu_events.front().name).empty());
}

const PartsCase kPartsCases[] = {
    {"traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz", 40, 20},
    {"traces/tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz", 40, 20},
    {"traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 400, 200},
    {"traces/tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz", 40, 20},
    {"traces/tl_b200_eager_trace.json.gz", 40, 20},
    {"traces/hta_alexnet_a100.json.gz", 40, 20},
    {"traces/hta_mi250_rocm.json.gz", 40, 20},
    {"traces/hta_nccl_data_a100_rank0.json.gz", 40, 20},
    {"traces/hta_ns_resolution_v100_rank0.json.gz", 40, 20},
    {"traces/hta_sampled_rank-0.json.gz", 40, 20},
    {"traces/hta_triton_example_a100.json.gz", 40, 5},
    {"traces/kineto_resnet50_v100_2021.json.gz", 40, 20},
    {"traces/hta_call_stack_backward_thread.json", 4, 2},
    // Graph replays under serving step annotations, which own no kernel.
    {"traces/inference/vllm_decode_full/graph_execution.json.gz", 40, 20},
    {"traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", 40, 20},
    {"nsys/h100_2gpu_1s.sqlite", 40, 20},
    {"nsys/mfu_2gpu_before.sqlite", 40, 20},
};

std::string PartsCaseName(const ::testing::TestParamInfo<PartsCase>& info) {
  return ::opmap::testing::SharedTestName(info.param.path);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, TraceParts, ::testing::ValuesIn(kPartsCases), PartsCaseName);

// Past the value budget, rows turn into sketches: counts and sums stay exact, percentiles
// within the sketch's accuracy, and the rows say they were sketched.
TEST(TracePartsBudget, RowsPastTheBudgetAreSketchedCountsStayExact) {
  const char* path = "traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
  OPMAP_REQUIRE_SHARED(path);
  absl::StatusOr<Trace> trace = LoadSharedTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const TraceSummary whole = Summarize(*trace, MapGpuEvents(*trace));
  stats::ValueBudget budget(200);
  TracePartsStats stats;
  const TraceSummary parts = InParts(*trace, 2000, &stats, &budget);
  EXPECT_GT(budget.rows_sketched(), 0);
  ASSERT_EQ(parts.kernels.size(), whole.kernels.size());
  int sketched = 0;
  for (size_t i = 0; i < whole.kernels.size(); ++i) {
    const KernelStats& a = whole.kernels[i];
    const KernelStats& b = parts.kernels[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.gpu_time_ns, b.gpu_time_ns);
    EXPECT_FALSE(a.duration_ns.sketched);
    if (!b.duration_ns.sketched) {
      EXPECT_EQ(a.duration_ns.p99, b.duration_ns.p99) << a.name;
      continue;
    }
    ++sketched;
    // The sketch's rank convention differs from the interpolation: allow α plus the gap
    // between neighbouring values, bounded here by the row's own range.
    EXPECT_GE(b.duration_ns.p99, a.min_ns * (1 - stats::DDSketch::kRelativeAccuracy));
    EXPECT_LE(b.duration_ns.p99, a.max_ns * (1 + stats::DDSketch::kRelativeAccuracy));
    EXPECT_NEAR(b.duration_ns.p50, a.duration_ns.p50,
                a.duration_ns.p50 * 0.0055 + (a.max_ns - a.min_ns) * 0.05 + 1);
  }
  EXPECT_GT(sketched, 0);
  EXPECT_EQ(parts.gpu_time_ns, whole.gpu_time_ns);
  EXPECT_EQ(parts.gpu_event_count, whole.gpu_event_count);
}

}  // namespace
}  // namespace opmap::analysis
