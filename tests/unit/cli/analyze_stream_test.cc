// `opmap analyze`'s streamed path (cli/analyze_stream.h: file windows, EventSpill's
// external sort, StreamingParts, SummaryAccumulator) against the whole-trace path on every
// real Kineto trace and Nsight Systems export beside the tests, with a spill buffer small
// enough that every Kineto trace is sorted through several runs on disk: the analysis JSON
// is the same byte for byte, and nothing had to be done without (no launch let go, no late
// event).
#include <string>

#include "analysis/import/kineto_importer.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/report/analyze_report.h"
#include "analysis/summary/trace_summary.h"
#include "cli/analyze_stream.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::cli {
namespace {

struct Case {
  const char* path;  // under ../shared
  int min_runs;      // spilled runs the small buffer must produce (Nsight: none, SQLite sorts)
  int min_parts;
};

class AnalyzeStream : public ::testing::TestWithParam<Case> {};

TEST_P(AnalyzeStream, StreamedSummaryEqualsTheWholeTraceSummary) {
  const std::string relative = GetParam().path;
  OPMAP_REQUIRE_SHARED(relative);
  const std::string path = ::opmap::testing::SharedPath(relative);
  const bool nsys = relative.ends_with(".sqlite");
  absl::StatusOr<analysis::Trace> trace =
      nsys ? analysis::ImportNsysSqlite(::opmap::testing::ReadFileOrDie(path))
           : analysis::ImportKinetoBytes(::opmap::testing::ReadFileOrDie(path));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const std::string whole = analysis::RenderAnalyzeJson(
      analysis::Summarize(*trace, analysis::MapGpuEvents(*trace)), {.source = path});

  StreamAnalyzeOptions options;
  options.spill_buffer_bytes = 64 << 10;
  options.part_events = 2000;
  ASSERT_TRUE(StreamableTrace(path));
  absl::StatusOr<analysis::TraceSummary> streamed = StreamAnalyzeFile(path, options);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  const analysis::StreamingFacts facts = streamed->streaming;
  EXPECT_TRUE(facts.streamed);
  EXPECT_GE(facts.spill_runs, GetParam().min_runs) << "runs: " << facts.spill_runs;
  EXPECT_GE(facts.parts, GetParam().min_parts) << "parts: " << facts.parts;
  EXPECT_EQ(facts.launches_not_held, 0);
  EXPECT_EQ(facts.late_events, 0);
  EXPECT_EQ(facts.sketched_rows, 0);
  streamed->streaming = {};
  EXPECT_EQ(analysis::RenderAnalyzeJson(*streamed, {.source = path}), whole)
      << path << ": " << facts.parts << " parts, " << facts.spill_runs << " runs";
}

const Case kCases[] = {
    {"traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz", 2, 1},
    {"traces/tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz", 2, 1},
    {"traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 10, 1},
    {"traces/tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz", 10, 1},
    {"traces/tl_b200_eager_trace.json.gz", 2, 1},
    {"traces/hta_alexnet_a100.json.gz", 0, 1},
    {"traces/hta_mi250_rocm.json.gz", 0, 1},
    {"traces/hta_nccl_data_a100_rank0.json.gz", 2, 1},
    {"traces/hta_ns_resolution_v100_rank0.json.gz", 2, 1},
    {"traces/hta_sampled_rank-0.json.gz", 2, 1},
    {"traces/hta_triton_example_a100.json.gz", 0, 1},
    {"traces/kineto_resnet50_v100_2021.json.gz", 2, 1},
    {"traces/hta_call_stack_backward_thread.json", 0, 1},  // plain JSON, read a window at a time
    {"nsys/h100_2gpu_1s.sqlite", 0, 5},  // opened in place, tables merged by start
    {"nsys/mfu_2gpu_before.sqlite", 0, 5},
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return ::opmap::testing::SharedTestName(info.param.path);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, AnalyzeStream, ::testing::ValuesIn(kCases), CaseName);

TEST(AnalyzeStreamFile, MissingFileAndNonTraceSayWhy) {
  absl::StatusOr<analysis::TraceSummary> missing =
      StreamAnalyzeFile("/nonexistent/opmap-trace.json", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos)
      << missing.status();
  EXPECT_FALSE(StreamableTrace("/nonexistent/opmap-trace.json"));
  EXPECT_FALSE(StreamableTrace("/proc/self/status"));  // text that is not JSON
}

}  // namespace
}  // namespace opmap::cli
