// The analysis pipeline (import → map → summarize) on real GPU traces, checked against
// what HolisticTraceAnalysis and TraceLens computed on the same files
// (../shared/reference). Definitions: docs/metrics.md.
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::ReadCsv;
using ::opmap::testing::SharedPath;
using ::opmap::testing::ToDouble;

struct Analyzed {
  Trace trace;
  MappingResult mapping;
  TraceSummary summary;
};

Analyzed AnalyzeShared(const std::string& relative) {
  absl::StatusOr<Trace> trace =
      ImportKinetoBytes(::opmap::testing::ReadFileOrDie(SharedPath(relative)));
  EXPECT_TRUE(trace.ok()) << relative << ": " << trace.status();
  Analyzed a{std::move(trace).value(), {}, {}};
  a.mapping = MapGpuEvents(a.trace);
  a.summary = Summarize(a.trace, a.mapping);
  return a;
}

// The four H100 inference traces, with the names of their reference outputs.
struct H100Case {
  const char* trace;
  const char* hta_job;    // reference/hta/<job>_noround
  const char* tracelens;  // reference/tracelens/<dir>
  const char* helper;     // reference/helper_op_breakdown_<..>.csv, or nullptr
};
const H100Case kH100[] = {
    {"tl_h100_gaunernst_bert-small-uncased__1016001.json.gz", "h100_bert_small",
     "h100_gaunernst_bert-small-uncased__1016001",
     "helper_op_breakdown_h100_gaunernst_bert-small-uncased__1016001.csv"},
    {"tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz", "h100_falconsai",
     "h100_Falconsai_nsfw_image_detection__1016002", nullptr},
    {"tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "h100_qwen",
     "h100_Qwen_Qwen1.5-0.5B-Chat__1016005",
     "helper_op_breakdown_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.csv"},
    {"tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz", "h100_timesformer",
     "h100_facebook_timesformer-base-finetuned-k400__1016002", nullptr},
};

class H100Reference : public ::testing::TestWithParam<H100Case> {};

std::string CaseName(const ::testing::TestParamInfo<H100Case>& info) {
  return info.param.hta_job;
}

// Within 0.1% (the bar), with a small absolute floor for values near zero.
void ExpectWithinPermille(double expected_us, double actual_ns, const std::string& what) {
  double actual_us = actual_ns / 1000.0;
  EXPECT_NEAR(actual_us, expected_us, std::max(1e-3 * std::fabs(expected_us), 0.002)) << what;
}

TEST_P(H100Reference, DeviceBreakdownEqualsHtaNoround) {
  const H100Case& c = GetParam();
  OPMAP_REQUIRE_SHARED(std::string("traces/") + c.trace);
  std::string job = std::string("reference/hta/") + c.hta_job + "_noround/temporal_breakdown.csv";
  OPMAP_REQUIRE_SHARED(job);
  Analyzed a = AnalyzeShared(std::string("traces/") + c.trace);
  std::vector<::opmap::testing::CsvRow> rows = ReadCsv(SharedPath(job));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(a.summary.devices.size(), 1u);
  const DeviceBreakdown& d = a.summary.devices[0];
  ExpectWithinPermille(ToDouble(rows[0]["kernel_time(us)"]), d.span_ns, "span");
  ExpectWithinPermille(ToDouble(rows[0]["idle_time(us)"]), d.idle_ns, "idle");
  ExpectWithinPermille(ToDouble(rows[0]["compute_time(us)"]), d.compute_ns, "compute");
  ExpectWithinPermille(ToDouble(rows[0]["non_compute_time(us)"]), d.non_compute_ns,
                       "non_compute");
  EXPECT_EQ(d.busy_ns, d.compute_ns + d.non_compute_ns);
  EXPECT_EQ(d.span_ns, d.busy_ns + d.idle_ns);
}

TEST_P(H100Reference, OperatorsEqualTraceLensOpsSummary) {
  const H100Case& c = GetParam();
  OPMAP_REQUIRE_SHARED(std::string("traces/") + c.trace);
  std::string ops = std::string("reference/tracelens/") + c.tracelens + "/ops_summary.csv";
  OPMAP_REQUIRE_SHARED(ops);
  Analyzed a = AnalyzeShared(std::string("traces/") + c.trace);
  absl::flat_hash_map<std::string, const OperatorStats*> by_name;
  for (const OperatorStats& o : a.summary.operators) by_name[o.name] = &o;
  std::vector<::opmap::testing::CsvRow> rows = ReadCsv(SharedPath(ops));
  ASSERT_FALSE(rows.empty());
  // TraceLens attributes only kernels with a CPU launch: so do opmap's operators.
  EXPECT_EQ(rows.size(), a.summary.operators.size());
  for (auto& row : rows) {
    auto it = by_name.find(row["name"]);
    ASSERT_NE(it, by_name.end()) << "operator missing: " << row["name"];
    EXPECT_EQ(it->second->count, std::stoll(row["Count"])) << row["name"];
    // TraceLens sums float32 µs: allow its rounding noise.
    double expected = ToDouble(row["total_direct_kernel_time_sum"]);
    EXPECT_NEAR(it->second->gpu_time_ns / 1000.0, expected, 1e-5 * expected + 0.01)
        << row["name"];
  }
}

TEST_P(H100Reference, OperatorPercentilesEqualHelperBreakdown) {
  const H100Case& c = GetParam();
  if (c.helper == nullptr) GTEST_SKIP() << "no helper_op_breakdown for " << c.trace;
  OPMAP_REQUIRE_SHARED(std::string("traces/") + c.trace);
  OPMAP_REQUIRE_SHARED(std::string("reference/") + c.helper);
  Analyzed a = AnalyzeShared(std::string("traces/") + c.trace);
  absl::flat_hash_map<std::string, const OperatorStats*> by_name;
  for (const OperatorStats& o : a.summary.operators) by_name[o.name] = &o;
  int checked = 0;
  for (auto& row : ReadCsv(SharedPath(std::string("reference/") + c.helper))) {
    if (row["mode"] == "op") {
      auto it = by_name.find(row["name"]);
      ASSERT_NE(it, by_name.end()) << "operator missing: " << row["name"];
      const OperatorStats& o = *it->second;
      EXPECT_EQ(o.count, std::stoll(row["instances"])) << row["name"];
      // The reference prints µs to 3 decimals.
      EXPECT_NEAR(o.gpu_time_ns / 1000.0, ToDouble(row["gpu_time_sum_us"]), 0.0015) << row["name"];
      EXPECT_NEAR(o.instance_gpu_time_ns.p50 / 1000.0, ToDouble(row["p50_us"]), 0.0015) << row["name"];
      EXPECT_NEAR(o.instance_gpu_time_ns.p95 / 1000.0, ToDouble(row["p95_us"]), 0.0015) << row["name"];
      EXPECT_NEAR(o.instance_gpu_time_ns.p99 / 1000.0, ToDouble(row["p99_us"]), 0.0015) << row["name"];
      ++checked;
    } else if (row["mode"].rfind("unattributed", 0) == 0) {
      int64_t unmapped_ns = 0;
      for (size_t i = 0; i < a.trace.gpu_events.size(); ++i) {
        if (a.mapping.events[i].rule == MappingRule::kUnmapped) unmapped_ns += a.trace.gpu_events[i].dur_ns;
      }
      EXPECT_EQ(a.summary.by_rule[static_cast<int>(MappingRule::kUnmapped)],
                std::stoll(row["instances"]));
      EXPECT_NEAR(unmapped_ns / 1000.0, ToDouble(row["gpu_time_sum_us"]), 0.0015);
    }
  }
  EXPECT_EQ(checked, static_cast<int>(a.summary.operators.size()));
}

TEST_P(H100Reference, KernelTotalsEqualHtaKernelBreakdown) {
  const H100Case& c = GetParam();
  OPMAP_REQUIRE_SHARED(std::string("traces/") + c.trace);
  std::string csv =
      std::string("reference/hta/") + c.hta_job + "_noround/kernel_breakdown_all_kernels.csv";
  OPMAP_REQUIRE_SHARED(csv);
  Analyzed a = AnalyzeShared(std::string("traces/") + c.trace);
  absl::flat_hash_map<std::string, const KernelStats*> by_name;
  for (const KernelStats& k : a.summary.kernels) by_name[k.name] = &k;
  std::vector<::opmap::testing::CsvRow> rows = ReadCsv(SharedPath(csv));
  EXPECT_EQ(rows.size(), a.summary.kernels.size());
  for (auto& row : rows) {
    auto it = by_name.find(row["name"]);
    ASSERT_NE(it, by_name.end()) << "kernel missing: " << row["name"].substr(0, 100);
    const KernelStats& k = *it->second;
    double sum = ToDouble(row["sum (us)"]);
    EXPECT_NEAR(k.gpu_time_ns / 1000.0, sum, 0.0015) << row["name"].substr(0, 100);
    EXPECT_EQ(k.count, std::llround(sum / ToDouble(row["mean (us)"]))) << row["name"].substr(0, 100);
    EXPECT_NEAR(k.min_ns / 1000.0, ToDouble(row["min (us)"]), 0.0015);
    EXPECT_NEAR(k.max_ns / 1000.0, ToDouble(row["max (us)"]), 0.0015);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, H100Reference, ::testing::ValuesIn(kH100), CaseName);

// gpu_timeline_crosscheck.csv: span / busy / idle / compute union over all GPU events, for
// every trace it lists (A100, V100, B200 and the sampled ranks included).
TEST(GpuTimelineCrosscheck, AllListedTracesMatch) {
  OPMAP_REQUIRE_SHARED("reference/gpu_timeline_crosscheck.csv");
  int checked = 0;
  for (auto& row : ReadCsv(SharedPath("reference/gpu_timeline_crosscheck.csv"))) {
    if (row["mode"] != "all_gpu_events") continue;
    SCOPED_TRACE(row["trace"]);
    Analyzed a = AnalyzeShared("traces/" + row["trace"]);
    ASSERT_EQ(a.summary.devices.size(), 1u);
    const DeviceBreakdown& d = a.summary.devices[0];
    EXPECT_EQ(d.event_count, std::stoll(row["n_gpu_events"]));
    ExpectWithinPermille(ToDouble(row["span_us"]), d.span_ns, "span");
    ExpectWithinPermille(ToDouble(row["busy_us"]), d.busy_ns, "busy");
    ExpectWithinPermille(ToDouble(row["idle_us"]), d.idle_ns, "idle");
    ExpectWithinPermille(ToDouble(row["compute_kernels_union_us"]), d.compute_ns, "compute");
    ExpectWithinPermille(ToDouble(row["sum_of_gpu_event_durations_us"]), a.summary.gpu_time_ns,
                         "summed durations");
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

// Every trace in ../shared/traces imports and summarizes; counts match MANIFEST.csv.
TEST(SharedTraces, EveryTraceAnalyzesAndMatchesManifest) {
  OPMAP_REQUIRE_SHARED("traces/MANIFEST.csv");
  int checked = 0;
  for (auto& row : ReadCsv(SharedPath("traces/MANIFEST.csv"))) {
    SCOPED_TRACE(row["file"]);
    Analyzed a = AnalyzeShared("traces/" + row["file"]);
    EXPECT_EQ(a.summary.gpu_event_count, std::stoll(row["n_gpu_events"]));
    int64_t kernels = 0;
    for (const GpuEvent& g : a.trace.gpu_events) kernels += g.kind == GpuEventKind::kKernel;
    EXPECT_EQ(kernels, std::stoll(row["n_kernels"]));
    // "gpu_ev_with_launch_corr" = a/b: GPU events whose correlation finds a CPU launch.
    std::string with_launch = row["gpu_ev_with_launch_corr"];
    int64_t launched = 0;
    for (const EventMapping& m : a.mapping.events) launched += m.launch_api >= 0;
    EXPECT_EQ(launched, std::stoll(with_launch.substr(0, with_launch.find('/'))));
    int64_t mapped = 0;
    for (int r = 0; r < kMappingRuleCount; ++r) {
      if (r != static_cast<int>(MappingRule::kUnmapped)) mapped += a.summary.by_rule[r];
    }
    EXPECT_EQ(mapped + a.summary.by_rule[static_cast<int>(MappingRule::kUnmapped)],
              a.summary.gpu_event_count);
    ++checked;
  }
  EXPECT_EQ(checked, 14);  // MANIFEST.csv lists all 14 files
}

}  // namespace
}  // namespace opmap::analysis
