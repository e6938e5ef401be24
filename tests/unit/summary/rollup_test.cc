// BuildRollup against Summarize on the real H100 traces: the collector's rollups must
// give `opmap analyze`'s counts and GPU times exactly (per operator, kernel name and
// layer type, and per module as its modules[]) and its percentiles within the sketch's
// relative accuracy α. Rows are also keyed by module, so one operator or kernel name may
// have several rows: the checks merge them first.
//
// Rank conventions differ: Summarize interpolates linearly between the order statistics
// x[floor h] and x[ceil h] (h = q·(n−1)); DDSketch reports the bin of x[floor h]. So the
// sketch is checked against x[floor h] within α, and Summarize's value is checked to lie
// in [x[floor h], x[ceil h]] of the same sorted values the test derives independently.
#include "analysis/summary/rollup.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/import/kineto_importer.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/trace_summary.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

using stats::DDSketch;

const char* const kRollupTraces[] = {
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
  std::map<std::string, Totals> by_kernel, by_layer, kernels_by_operator, kernels_by_module;
  std::map<std::string, RollupRow> operator_rows;  // merged over modules
  std::map<std::string, int64_t> operator_time_by_module;
  for (const RollupRow& row : rollup.rows) {
    ASSERT_EQ(static_cast<int64_t>(row.sketch.count()), row.count);
    ASSERT_EQ(static_cast<int64_t>(row.sketch.min()), row.min_ns);
    ASSERT_EQ(static_cast<int64_t>(row.sketch.max()), row.max_ns);
    if (row.subject == RollupSubject::kRequest || row.subject == RollupSubject::kOperatorCpu ||
        row.subject == RollupSubject::kRequestComponent ||
        row.subject == RollupSubject::kRequestExemplar) {
      continue;  // host subjects and request breakdowns: checked below and in their tests
    }
    if (row.subject == RollupSubject::kOperatorGpu) {
      EXPECT_TRUE(row.kernel_name.empty());
      auto [it, inserted] = operator_rows.try_emplace(row.operator_name);
      RollupRow& merged = it->second;
      if (inserted) {
        merged.layer_type = row.layer_type;
        merged.min_ns = row.min_ns;
        merged.max_ns = row.max_ns;
      }
      EXPECT_EQ(merged.layer_type, row.layer_type) << row.operator_name;
      merged.count += row.count;
      merged.sum_ns += row.sum_ns;
      merged.min_ns = std::min(merged.min_ns, row.min_ns);
      merged.max_ns = std::max(merged.max_ns, row.max_ns);
      ASSERT_TRUE(merged.sketch.Merge(row.sketch).ok());
      operator_time_by_module[row.module] += row.sum_ns;
      continue;
    }
    for (Totals* t : {&by_kernel[row.kernel_name], &by_layer[row.layer_type],
                      &kernels_by_operator[row.operator_name], &kernels_by_module[row.module]}) {
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
    const RollupRow& row = operator_rows[op.name];
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

  // Per module, as analyze's modules[] (the same attribution): kernel rows give each
  // module's events and GPU time; "" holds the events outside modules and the unmapped.
  const ModuleSummary modules = SummarizeModules(trace, mapping);
  int64_t module_events = 0;
  for (const ModuleStats& m : modules.modules) {
    SCOPED_TRACE("module " + m.name);
    ASSERT_TRUE(kernels_by_module.count(m.name));
    EXPECT_EQ(kernels_by_module[m.name].count, m.event_count);
    EXPECT_EQ(kernels_by_module[m.name].sum, m.gpu_time_ns);
    EXPECT_EQ(operator_time_by_module[m.name], m.gpu_time_ns);
    module_events += kernels_by_module[m.name].count;
  }
  EXPECT_EQ(kernels_by_module[""].count, modules.events_without_module + modules.events_unmapped);
  EXPECT_EQ(kernels_by_module[""].sum,
            modules.gpu_time_without_module_ns + modules.gpu_time_unmapped_ns);
  EXPECT_EQ(operator_time_by_module[""], modules.gpu_time_without_module_ns);
  EXPECT_EQ(kernels_by_module.size(), modules.modules.size() + 1);
  EXPECT_EQ(module_events, modules.events_with_module);

  // Host subjects against the ranges themselves: exact count, sum, min, max per key.
  std::map<std::pair<int, std::string>, std::vector<int64_t>> host_values;
  for (const Range& range : trace.ranges) {
    const std::string name(trace.strings.Get(range.name));
    const std::string_view request = RequestKey(name);
    if (!request.empty()) {
      host_values[{static_cast<int>(RollupSubject::kRequest), std::string(request)}].push_back(
          range.dur_ns);
    } else if (IsOperatorRange(range.kind)) {
      host_values[{static_cast<int>(RollupSubject::kOperatorCpu), name}].push_back(range.dur_ns);
    }
  }
  // Merged over modules: (subject, name) → count, sum, min, max.
  std::map<std::pair<int, std::string>, RollupRow> host_rows_by_key;
  for (const RollupRow& row : rollup.rows) {
    if (row.subject != RollupSubject::kRequest && row.subject != RollupSubject::kOperatorCpu) {
      continue;
    }
    if (row.subject == RollupSubject::kRequest) {
      EXPECT_EQ(row.module, "");
    }
    auto [it, inserted] =
        host_rows_by_key.try_emplace({static_cast<int>(row.subject), row.operator_name}, row);
    if (!inserted) {
      it->second.count += row.count;
      it->second.sum_ns += row.sum_ns;
      it->second.min_ns = std::min(it->second.min_ns, row.min_ns);
      it->second.max_ns = std::max(it->second.max_ns, row.max_ns);
    }
  }
  size_t host_rows = 0;
  for (const auto& [key, row] : host_rows_by_key) {
    ++host_rows;
    const auto it = host_values.find(key);
    ASSERT_NE(it, host_values.end()) << row.operator_name;
    const std::vector<int64_t>& v = it->second;
    EXPECT_EQ(row.count, static_cast<int64_t>(v.size())) << row.operator_name;
    int64_t sum = 0;
    for (int64_t x : v) sum += x;
    EXPECT_EQ(row.sum_ns, sum) << row.operator_name;
    EXPECT_EQ(row.min_ns, *std::min_element(v.begin(), v.end())) << row.operator_name;
    EXPECT_EQ(row.max_ns, *std::max_element(v.begin(), v.end())) << row.operator_name;
  }
  EXPECT_EQ(host_rows, host_values.size());
  EXPECT_GT(host_values.count({static_cast<int>(RollupSubject::kRequest), "ProfilerStep"}), 0u);

  ASSERT_EQ(by_layer.size(), summary.layer_types.size());
  for (const LayerTypeStats& l : summary.layer_types) {
    const std::string name(LayerTypeName(l.layer_type));
    ASSERT_TRUE(by_layer.count(name)) << name;
    EXPECT_EQ(by_layer[name].count, l.count) << name;
    EXPECT_EQ(by_layer[name].sum, l.gpu_time_ns) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RollupOnH100, ::testing::ValuesIn(kRollupTraces),
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
  EXPECT_EQ(rollup.range_count, 0);
  EXPECT_EQ(rollup.request_count, 0);
}


// ---- host-side subjects: operator ranges' host durations and requests ----

// A range of `kind` on thread 1.
void AddRange(Trace& t, std::string_view name, int64_t start, int64_t dur,
              RangeKind kind = RangeKind::kNvtx, int64_t thread = 1) {
  Range r;
  r.name = t.strings.Intern(name);
  r.start_ns = start;
  r.dur_ns = dur;
  r.kind = kind;
  r.process = 100;
  r.thread = thread;
  t.ranges.push_back(r);
}

struct Exact {
  int64_t count = 0, sum = 0, min = 0, max = 0;
  std::vector<double> values;
};

// The row of (subject, operator) merged over its modules; null when there is none.
const RollupRow* Find(const SessionRollup& r, RollupSubject subject, std::string_view op) {
  static std::deque<RollupRow> merged;  // keeps the returned rows alive
  RollupRow* found = nullptr;
  for (const RollupRow& row : r.rows) {
    if (row.subject != subject || row.operator_name != op) continue;
    if (found == nullptr) {
      found = &merged.emplace_back(row);
      continue;
    }
    EXPECT_EQ(found->layer_type, row.layer_type) << op;
    found->count += row.count;
    found->sum_ns += row.sum_ns;
    found->min_ns = std::min(found->min_ns, row.min_ns);
    found->max_ns = std::max(found->max_ns, row.max_ns);
    EXPECT_TRUE(found->sketch.Merge(row.sketch).ok());
  }
  return found;
}

// The count of (subject, operator, module)'s row; 0 when there is none.
int64_t CountOf(const SessionRollup& r, RollupSubject subject, std::string_view op,
                std::string_view module) {
  for (const RollupRow& row : r.rows) {
    if (row.subject == subject && row.operator_name == op && row.module == module) {
      return row.count;
    }
  }
  return 0;
}

void ExpectRow(const RollupRow* row, const std::vector<int64_t>& values) {
  ASSERT_NE(row, nullptr);
  int64_t sum = 0;
  for (int64_t v : values) sum += v;
  EXPECT_EQ(row->count, static_cast<int64_t>(values.size()));
  EXPECT_EQ(row->sum_ns, sum);
  EXPECT_EQ(row->min_ns, *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(row->max_ns, *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(static_cast<int64_t>(row->sketch.count()), row->count);
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 0.5, 0.95, 0.99, 1.0}) {
    const double want = sorted[static_cast<size_t>(std::floor(q * (sorted.size() - 1)))];
    EXPECT_NEAR(row->sketch.Quantile(q), want, DDSketch::kRelativeAccuracy * want + 1e-9)
        << "q=" << q;
  }
}

TEST(Rollup, RequestKeyRule) {
  EXPECT_EQ(RequestKey("request"), "request");
  EXPECT_EQ(RequestKey("Request"), "request");
  EXPECT_EQ(RequestKey("ITERATION"), "iteration");
  EXPECT_EQ(RequestKey("ProfilerStep#0"), "ProfilerStep");
  EXPECT_EQ(RequestKey("ProfilerStep#123"), "ProfilerStep");
  EXPECT_EQ(RequestKey("ProfilerStep"), "");   // no '#'
  EXPECT_EQ(RequestKey("profilerstep#1"), "");  // the profiler's own spelling only
  EXPECT_EQ(RequestKey("requests"), "");
  EXPECT_EQ(RequestKey("request.1"), "");
  EXPECT_EQ(RequestKey(""), "");
}

// A capture of NVTX ranges only (the CPU demo workload, a machine without a GPU): request
// and operator-CPU rows, nothing else, and the session's hull from its ranges.
TEST(Rollup, HostRangesWithoutGpuEvents) {
  Trace t;
  const int64_t base = 1'700'000'000'000'000'000;
  std::vector<int64_t> requests, mm, norm, custom;
  for (int i = 0; i < 40; ++i) {
    const int64_t start = base + i * 1'000'000;
    const int64_t req = 500'000 + 7'919 * i;  // distinct, ascending
    AddRange(t, i % 2 == 0 ? "request" : "Request", start, req, RangeKind::kNvtx, 1 + i % 3);
    requests.push_back(req);
    AddRange(t, "aten::linear", start + 10, 100'000 + 13 * i);
    mm.push_back(100'000 + 13 * i);
    AddRange(t, "layer_norm", start + 200'000, 20'000 + i);
    norm.push_back(20'000 + i);
    if (i % 4 == 0) {
      AddRange(t, "my_custom_op", start + 300'000, 5'000, RangeKind::kCpuOp);
      custom.push_back(5'000);
    }
    // Not operators: a Python frame.
    AddRange(t, "nn.Module: Block", start, 900, RangeKind::kPythonFunction);
  }
  std::vector<int64_t> steps = {3'000, 4'000};
  AddRange(t, "ProfilerStep#7", base - 10'000, 3'000, RangeKind::kUserAnnotation);
  AddRange(t, "ProfilerStep#8", base + 100'000'000, 4'000, RangeKind::kUserAnnotation);

  const SessionRollup r = BuildRollup(t, MapGpuEvents(t));
  EXPECT_EQ(r.gpu_event_count, 0);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_EQ(r.range_count, static_cast<int64_t>(t.ranges.size()));
  EXPECT_EQ(r.request_count, 42);
  EXPECT_EQ(r.first_start_ns, base - 10'000);
  EXPECT_EQ(r.last_end_ns, base + 100'004'000);

  ExpectRow(Find(r, RollupSubject::kRequest, "request"), requests);
  ExpectRow(Find(r, RollupSubject::kRequest, "ProfilerStep"), steps);
  ExpectRow(Find(r, RollupSubject::kOperatorCpu, "aten::linear"), mm);
  ExpectRow(Find(r, RollupSubject::kOperatorCpu, "layer_norm"), norm);
  ExpectRow(Find(r, RollupSubject::kOperatorCpu, "my_custom_op"), custom);
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "request"), nullptr);
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "nn.Module: Block"), nullptr);
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "ProfilerStep#7"), nullptr);
  EXPECT_EQ(Find(r, RollupSubject::kRequest, "request")->layer_type, "");
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "aten::linear")->layer_type, "matmul");
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "layer_norm")->layer_type, "norm");
  EXPECT_EQ(Find(r, RollupSubject::kOperatorCpu, "my_custom_op")->layer_type, "other");
  // Nothing but these five (subject, name) keys, and the requests' breakdown rows
  // (tail_buckets.h): every request once in an extent row of its key.
  std::set<std::pair<RollupSubject, std::string>> keys;
  std::map<std::string, int64_t> extents, exemplars;
  for (const RollupRow& row : r.rows) {
    if (row.subject == RollupSubject::kRequestComponent) {
      if (row.layer_type == "extent") extents[row.operator_name] += row.count;
      continue;
    }
    if (row.subject == RollupSubject::kRequestExemplar) {
      ++exemplars[row.operator_name];
      continue;
    }
    keys.emplace(row.subject, row.operator_name);
    EXPECT_TRUE(row.kernel_name.empty());
  }
  EXPECT_EQ(keys.size(), 5u);
  EXPECT_EQ(extents, (std::map<std::string, int64_t>{{"request", 40}, {"ProfilerStep", 2}}));
  // The slowest of each key, at most kExemplarsPerWindow.
  EXPECT_EQ(exemplars, (std::map<std::string, int64_t>{{"request", 10}, {"ProfilerStep", 2}}));
  // Modules as `opmap analyze` attributes them (modules.h): the request ranges on thread 1
  // enclose operators but are requests, not modules (modules.cc ParseModuleName), and the
  // short nn.Module frame encloses none: every operator is outside any module.
  EXPECT_EQ(CountOf(r, RollupSubject::kOperatorCpu, "aten::linear", ""), 40);
  EXPECT_EQ(CountOf(r, RollupSubject::kOperatorCpu, "my_custom_op", ""), 10);
  EXPECT_EQ(CountOf(r, RollupSubject::kRequest, "request", ""), 40);
}

// With GPU events the hull stays theirs (ranges around them do not widen it), and the
// host subjects sit beside the GPU ones.
TEST(Rollup, HostSubjectsBesideGpuEvents) {
  Trace t;
  AddRange(t, "iteration", 1'000, 10'000, RangeKind::kUserAnnotation);
  AddRange(t, "aten::mm", 2'000, 3'000, RangeKind::kCpuOp);
  ApiCall launch;
  launch.start_ns = 2'100;
  launch.dur_ns = 50;
  launch.name = t.strings.Intern("cudaLaunchKernel");
  launch.process = 100;
  launch.thread = 1;
  launch.correlation = 7;
  t.api_calls.push_back(launch);
  GpuEvent k;
  k.start_ns = 2'500;
  k.dur_ns = 400;
  k.name = t.strings.Intern("sm90_gemm");
  k.correlation = 7;
  k.process = 100;
  t.gpu_events.push_back(k);
  const SessionRollup r = BuildRollup(t, MapGpuEvents(t));
  EXPECT_EQ(r.first_start_ns, 2'500);
  EXPECT_EQ(r.last_end_ns, 2'900);
  ExpectRow(Find(r, RollupSubject::kRequest, "iteration"), {10'000});
  ExpectRow(Find(r, RollupSubject::kOperatorCpu, "aten::mm"), {3'000});
  ExpectRow(Find(r, RollupSubject::kOperatorGpu, "aten::mm"), {400});
  // + the kernel row, and the request's breakdown: its extent and four components (host
  // gap, host operator until the launch, gpu wait, the kernel) in one latency bucket.
  EXPECT_EQ(r.rows.size(), 4u + 5u + 1u);  // and the one exemplar
}

}  // namespace
}  // namespace opmap::analysis
