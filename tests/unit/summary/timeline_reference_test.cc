// Idle-time categories and CUDA launch statistics on the H100 traces, against
// HolisticTraceAnalysis' own output with its timestamp rounding off
// (../shared/reference/hta/<job>_noround/).
#include <string>
#include <vector>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/timeline/idle_time.h"
#include "analysis/timeline/launch_stats.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::ReadCsv;
using ::opmap::testing::SharedPath;
using ::opmap::testing::ToDouble;

struct Case {
  const char* trace;
  const char* job;
};
const Case kCases[] = {
    {"tl_h100_gaunernst_bert-small-uncased__1016001.json.gz", "h100_bert_small_noround"},
    {"tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz", "h100_falconsai_noround"},
    {"tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "h100_qwen_noround"},
    {"tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz",
     "h100_timesformer_noround"},
};

class HtaTimeline : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    if (!::opmap::testing::SharedFileExists(std::string("traces/") + c.trace)) {
      GTEST_SKIP() << "shared data not found: " << SharedPath(std::string("traces/") + c.trace);
    }
    absl::StatusOr<Trace> trace = ImportKinetoBytes(
        ::opmap::testing::ReadFileOrDie(SharedPath(std::string("traces/") + c.trace)));
    ASSERT_TRUE(trace.ok()) << trace.status();
    trace_ = std::move(trace).value();
    launches_ = MapGpuEvents(trace_).LaunchApiIndex();
  }
  std::string Ref(const char* file) {
    return SharedPath(std::string("reference/hta/") + GetParam().job + "/" + file);
  }
  Trace trace_;
  std::vector<int32_t> launches_;
};

TEST_P(HtaTimeline, IdleCategoriesEqualHta) {
  // HTA pairs GPU events that have no CPU launch with the file's first event (its
  // DataFrame row 0): in these traces the ProfilerStep annotation. Reproduce that here;
  // opmap's own report leaves such events without a launch (IdleTimeOptions default).
  IdleTimeOptions options;
  for (const Range& r : trace_.ranges) {
    if (trace_.strings.Get(r.name).rfind("ProfilerStep#", 0) == 0) {
      options.unlaunched_launch_start_ns = r.start_ns;
    }
  }
  std::vector<StreamIdleTime> idle = ComputeIdleTime(trace_, launches_, options);
  int checked = 0;
  for (auto& row : ReadCsv(Ref("idle_time_breakdown.csv"))) {
    const StreamIdleTime* stream = nullptr;
    for (const StreamIdleTime& s : idle) {
      if (s.stream == std::stoll(row["stream"])) stream = &s;
    }
    ASSERT_NE(stream, nullptr) << "stream " << row["stream"];
    IdleCategory category = row["idle_category"] == "host_wait"     ? IdleCategory::kHostWait
                            : row["idle_category"] == "kernel_wait" ? IdleCategory::kKernelWait
                                                                    : IdleCategory::kOther;
    // HTA prints µs with 2 decimals.
    EXPECT_NEAR(stream->ns(category) / 1000.0, ToDouble(row["idle_time"]), 0.006)
        << row["stream"] << " " << row["idle_category"];
    EXPECT_NEAR(stream->ratio[static_cast<int>(category)], ToDouble(row["idle_time_ratio"]), 0.006);
    ++checked;
  }
  EXPECT_GE(checked, 2);
  for (auto& row : ReadCsv(Ref("idle_interval_stats.csv"))) {
    if (row["count"] == "0.0") continue;
    for (const StreamIdleTime& s : idle) {
      if (s.stream != std::stoll(row["stream"])) continue;
      IdleCategory category = row["idle_category"] == "host_wait" ? IdleCategory::kHostWait
                              : row["idle_category"] == "kernel_wait"
                                  ? IdleCategory::kKernelWait
                                  : IdleCategory::kOther;
      EXPECT_EQ(s.count(category), std::llround(ToDouble(row["count"])));
      const DescriptiveStats& d = s.interval_stats[static_cast<int>(category)];
      EXPECT_NEAR(d.mean / 1000.0, ToDouble(row["mean"]), 0.006);
      EXPECT_NEAR(d.p50 / 1000.0, ToDouble(row["50%"]), 0.006);
      EXPECT_NEAR(d.max / 1000.0, ToDouble(row["max"]), 0.006);
    }
  }
}

TEST_P(HtaTimeline, LaunchStatsEqualHta) {
  LaunchStatsSummary launch = ComputeLaunchStats(trace_, launches_);
  int checked = 0;
  for (auto& row : ReadCsv(Ref("launch_stats_summary_rank0.csv"))) {
    const DescriptiveStats& d = row["metric"] == "cpu_duration"   ? launch.cpu_duration_ns
                                : row["metric"] == "gpu_duration" ? launch.gpu_duration_ns
                                                                  : launch.launch_delay_ns;
    SCOPED_TRACE(row["metric"]);
    EXPECT_EQ(d.count, std::llround(ToDouble(row["count"])));
    // HTA works in float µs: its launch delays carry ~1e-4 relative noise.
    auto near = [](double ns, const std::string& ref) {
      double expected = ToDouble(ref);
      EXPECT_NEAR(ns / 1000.0, expected, 1e-3 * std::fabs(expected) + 1e-3);
    };
    near(d.mean, row["mean"]);
    near(d.min, row["min"]);
    near(d.p50, row["50%"]);
    near(d.p95, row["95%"]);
    near(d.p99, row["99%"]);
    near(d.max, row["max"]);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, HtaTimeline, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.job); });

}  // namespace
}  // namespace opmap::analysis
