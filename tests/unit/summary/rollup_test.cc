// BuildRollup against Summarize on the real H100 traces: the collector's rollups must
// give `opmap analyze`'s counts and GPU times exactly (per operator, kernel name and
// layer type) and its percentiles within the sketch's relative accuracy α.
//
// Rank conventions differ: Summarize interpolates linearly between the order statistics
// x[floor h] and x[ceil h] (h = q·(n−1)); DDSketch reports the bin of x[floor h]. So the
// sketch is checked against x[floor h] within α, and Summarize's value is checked to lie
// in [x[floor h], x[ceil h]] of the same sorted values the test derives independently.
#include "analysis/summary/rollup.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using stats::DDSketch;

const char* const kH100Traces[] = {
    "traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz",
    "traces/tl_h100_Falconsai_nsfw_image_detection__1016002.json.gz",
    "traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "traces/tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz",
};

// Checks a sketch quantile and an exact (interpolated) percentile against the sorted
// values they both summarise.
void ExpectQuantile(const DDSketch& sketch, std::vector<double> values, double q,
                    double exact_interpolated, const std::string& what) {
  ASSERT_FALSE(values.empty()) << what;
  std::sort(values.begin(), values.end());
  const double h = q * static_cast<double>(values.size() - 1);  // DDSketch's expression
  const double lo = values[static_cast<size_t>(std::floor(h))];
  const double hi = values[static_cast<size_t>(std::ceil(h))];
  const double alpha = DDSketch::kRelativeAccuracy;
  const double got = sketch.Quantile(q);
  EXPECT_LE(std::fabs(got - lo), alpha * lo * (1 + 1e-12)) << what << " q=" << q;
  EXPECT_GE(exact_interpolated, lo * (1 - 1e-12)) << what << " q=" << q;
  EXPECT_LE(exact_interpolated, hi * (1 + 1e-12)) << what << " q=" << q;
  // Hence the sketch is within α of Summarize's figure up to the neighbouring order
  // statistic: what a reader comparing the two reports sees.
  EXPECT_GE(got, lo * (1 - alpha) - 1e-9) << what;
  EXPECT_LE(got, hi * (1 + alpha) + 1e-9) << what;
}

class RollupOnH100 : public ::testing::TestWithParam<const char*> {};

TEST_P(RollupOnH100, TotalsEqualSummarizeAndQuantilesWithinAlpha) {
  OPMAP_REQUIRE_SHARED(GetParam());
  absl::StatusOr<Trace> imported =
      ImportKinetoBytes(::opmap::testing::ReadFileOrDie(::opmap::testing::SharedPath(GetParam())));
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Trace& trace = *imported;
  const MappingResult mapping = MapGpuEvents(trace);
  const TraceSummary summary = Summarize(trace, mapping);
  const SessionRollup rollup = BuildRollup(trace, mapping);
  ASSERT_GT(summary.gpu_event_count, 0);
  ASSERT_FALSE(summary.operators.empty());
  ASSERT_FALSE(summary.kernels.empty());

  EXPECT_EQ(rollup.gpu_event_count, summary.gpu_event_count);
  EXPECT_EQ(rollup.gpu_time_ns, summary.gpu_time_ns);
  EXPECT_EQ(rollup.by_rule, summary.by_rule);
  ASSERT_EQ(rollup.devices.size(), summary.devices.size());
  for (size_t i = 0; i < rollup.devices.size(); ++i) {
    const DeviceBreakdown& a = rollup.devices[i];
    const DeviceBreakdown& b = summary.devices[i];
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.event_count, b.event_count);
    EXPECT_EQ(a.span_ns, b.span_ns);
    EXPECT_EQ(a.busy_ns, b.busy_ns);
    EXPECT_EQ(a.idle_ns, b.idle_ns);
    EXPECT_EQ(a.compute_ns, b.compute_ns);
    EXPECT_EQ(a.non_compute_ns, b.non_compute_ns);
  }
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const GpuEvent& g : trace.gpu_events) {
    first = std::min(first, g.start_ns);
    last = std::max(last, g.end_ns());
  }
  EXPECT_EQ(rollup.first_start_ns, first);
  EXPECT_EQ(rollup.last_end_ns, last);

  // The raw values each row summarises, derived here from the trace and the mapping.
  std::map<std::string, std::vector<double>> durations_by_kernel;
  std::map<int32_t, int64_t> instance_time;
  for (size_t i = 0; i < trace.gpu_events.size(); ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    durations_by_kernel[std::string(trace.strings.Get(g.name))].push_back(g.dur_ns);
    if (mapping.events[i].range >= 0) instance_time[mapping.events[i].range] += g.dur_ns;
  }
  std::map<std::string, std::vector<double>> instances_by_operator;
  for (const auto& [r, t] : instance_time) {
    instances_by_operator[std::string(trace.strings.Get(trace.ranges[r].name))].push_back(t);
  }

  // Kernel rows, summed the ways analyze reports them.
  struct Totals {
    int64_t count = 0, sum = 0, min = INT64_MAX, max = INT64_MIN;
    DDSketch sketch;
  };
  std::map<std::string, Totals> by_kernel, by_layer, kernels_by_operator;
  std::map<std::string, const RollupRow*> operator_rows;
  for (const RollupRow& row : rollup.rows) {
    ASSERT_EQ(static_cast<int64_t>(row.sketch.count()), row.count);
    ASSERT_EQ(static_cast<int64_t>(row.sketch.min()), row.min_ns);
    ASSERT_EQ(static_cast<int64_t>(row.sketch.max()), row.max_ns);
    if (row.subject == RollupSubject::kOperatorGpu) {
      EXPECT_TRUE(row.kernel_name.empty());
      EXPECT_TRUE(operator_rows.emplace(row.operator_name, &row).second)
          << "two operator rows for " << row.operator_name;
      continue;
    }
    for (Totals* t : {&by_kernel[row.kernel_name], &by_layer[row.layer_type],
                      &kernels_by_operator[row.operator_name]}) {
      t->count += row.count;
      t->sum += row.sum_ns;
      t->min = std::min(t->min, row.min_ns);
      t->max = std::max(t->max, row.max_ns);
      ASSERT_TRUE(t->sketch.Merge(row.sketch).ok());
    }
  }

  ASSERT_EQ(operator_rows.size(), summary.operators.size());
  for (const OperatorStats& op : summary.operators) {
    SCOPED_TRACE("operator " + op.name);
    ASSERT_TRUE(operator_rows.count(op.name));
    const RollupRow& row = *operator_rows[op.name];
    EXPECT_EQ(row.layer_type, LayerTypeName(op.layer_type));
    EXPECT_EQ(row.count, op.count);
    EXPECT_EQ(row.sum_ns, op.gpu_time_ns);
    EXPECT_EQ(kernels_by_operator[op.name].count, op.kernel_count);
    EXPECT_EQ(kernels_by_operator[op.name].sum, op.gpu_time_ns);
    const std::vector<double>& values = instances_by_operator[op.name];
    ExpectQuantile(row.sketch, values, 0.5, op.instance_gpu_time_ns.p50, op.name);
    ExpectQuantile(row.sketch, values, 0.95, op.instance_gpu_time_ns.p95, op.name);
    ExpectQuantile(row.sketch, values, 0.99, op.instance_gpu_time_ns.p99, op.name);
  }

  ASSERT_EQ(by_kernel.size(), summary.kernels.size());
  for (const KernelStats& k : summary.kernels) {
    SCOPED_TRACE("kernel " + k.name);
    ASSERT_TRUE(by_kernel.count(k.name));
    const Totals& t = by_kernel[k.name];
    EXPECT_EQ(t.count, k.count);
    EXPECT_EQ(t.sum, k.gpu_time_ns);
    EXPECT_EQ(t.min, k.min_ns);
    EXPECT_EQ(t.max, k.max_ns);
    const std::vector<double>& values = durations_by_kernel[k.name];
    ExpectQuantile(t.sketch, values, 0.5, k.duration_ns.p50, k.name);
    ExpectQuantile(t.sketch, values, 0.95, k.duration_ns.p95, k.name);
    ExpectQuantile(t.sketch, values, 0.99, k.duration_ns.p99, k.name);
  }

  ASSERT_EQ(by_layer.size(), summary.layer_types.size());
  for (const LayerTypeStats& l : summary.layer_types) {
    const std::string name(LayerTypeName(l.layer_type));
    ASSERT_TRUE(by_layer.count(name)) << name;
    EXPECT_EQ(by_layer[name].count, l.count) << name;
    EXPECT_EQ(by_layer[name].sum, l.gpu_time_ns) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RollupOnH100, ::testing::ValuesIn(kH100Traces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return "trace" + std::to_string(info.index);
                         });

TEST(Rollup, EmptyTraceHasNoRowsAndZeroWindow) {
  Trace trace;
  const SessionRollup rollup = BuildRollup(trace, MapGpuEvents(trace));
  EXPECT_TRUE(rollup.rows.empty());
  EXPECT_TRUE(rollup.devices.empty());
  EXPECT_EQ(rollup.gpu_event_count, 0);
  EXPECT_EQ(rollup.first_start_ns, 0);
  EXPECT_EQ(rollup.last_end_ns, 0);
}

}  // namespace
}  // namespace opmap::analysis
