// The fixture of the collector's end-to-end suites (collector_test.cc,
// collector_kill_test.cc): a real opmap-collector on a fresh SQLite file, the opmap CLI's
// import and query against it, and the checks of its answers against `opmap analyze`.
#ifndef OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_FIXTURE_H_
#define OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_FIXTURE_H_

#include <sys/stat.h>
#include <signal.h>
#include <simdjson.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include "absl/strings/str_cat.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/modules.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing::collector_it {

using ::testing::HasSubstr;

inline constexpr double kAlpha = stats::DDSketch::kRelativeAccuracy;
inline const std::vector<double> kQuantiles = {0.5, 0.95, 0.99};
inline const std::vector<std::string> kQuantileNames = {"p50", "p95", "p99"};

// One percentile from the collector against the exact values.
//
// The sketch estimates the value at the lower rank floor(q·(n−1)) of the sorted values
// and guarantees relative error α there (ddsketch.h). `opmap analyze` interpolates
// linearly between ranks floor(h) and ceil(h), h = q·(n−1) (numpy's default), so its
// value lies in [x_lo, x_hi]. Hence:
//  1. the strict check: |sketch − x_lo| ≤ α·x_lo — the sketch's own guarantee;
//  2. against analyze: sketch ∈ [(1−2α)·x_lo, (1+2α)·x_hi]. Where x_lo = x_hi (most
//     ranks of a large sample) this is "within 2α of analyze's exact value"; where a
//     percentile falls between two distinct values (small samples), the conventions
//     differ by up to that gap, which no sketch accuracy can close.
// JSON carries µs with 3 decimals: ±0.5 ns slack.
inline void ExpectPercentile(double got_ns, const std::vector<double>& sorted, double q,
                      double analyze_ns, const std::string& what) {
  ASSERT_FALSE(sorted.empty()) << what;
  const size_t n = sorted.size();
  const size_t lo = LowerRank(q, n);
  const size_t hi = std::min(n - 1, static_cast<size_t>(std::ceil(q * (n - 1))));
  const double x_lo = sorted[lo], x_hi = sorted[hi];
  const double slack = 0.5;
  EXPECT_LE(std::fabs(got_ns - x_lo), kAlpha * x_lo + slack)
      << what << " q=" << q << ": sketch " << got_ns << " ns vs exact lower-rank value "
      << x_lo << " ns (n=" << n << ", rank " << lo << ")";
  EXPECT_GE(got_ns, (1 - 2 * kAlpha) * x_lo - slack) << what << " q=" << q;
  EXPECT_LE(got_ns, (1 + 2 * kAlpha) * x_hi + slack) << what << " q=" << q;
  if (x_lo == x_hi) {
    EXPECT_LE(std::fabs(got_ns - analyze_ns), 2 * kAlpha * analyze_ns + slack)
        << what << " q=" << q << ": analyze " << analyze_ns << " ns";
  }
}

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CollectorProcess::Options options;
    options.dir = dir_.path();
    collector_ = std::make_unique<CollectorProcess>(options);
    ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "collector stderr:\n" << collector_->Log();
  }

  std::vector<std::string> Conn(const std::string& token) {
    return {"--collector", collector_->address(), "--token", token};
  }
  RunResult Import(const std::string& path, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"import", path, "--quiet"};
    for (auto& a : Conn(kAgentToken)) args.push_back(a);
    for (auto& a : extra) args.push_back(a);
    return Opmap(args, dir_.path());
  }
  RunResult Query(std::vector<std::string> args) {
    args.insert(args.begin(), "query");
    for (auto& a : Conn(kAnalystToken)) args.push_back(a);
    args.push_back("--format");
    args.push_back("json");
    return Opmap(args, dir_.path());
  }
  // `query latency --of OF [--group-by KEYS]` with the label filter; parsed.
  LatencyResult Latency(const std::string& of, const std::vector<std::string>& keys,
                        const std::string& label) {
    std::vector<std::string> args = {"latency", "--of", of, "--limit", "1000000", "--label",
                                     label};
    if (!keys.empty()) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ",") + k;
      args.push_back("--group-by");
      args.push_back(list);
    }
    RunResult r = Query(args);
    LatencyResult out;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code == 0) ParseLatencyJson(r.out, keys, kQuantileNames, &out);
    EXPECT_FALSE(out.truncated);
    return out;
  }

  // `query latency --group-by module` (and more) against `opmap analyze`'s modules[].
  void ExpectModulesMatch(const std::string& name);

  // Everything `opmap analyze` reports that the collector's rollups also hold.
  void ExpectQueriesMatch(const Expected& e, const std::string& label) {
    const analysis::TraceSummary& s = e.summary;

    // All GPU events: one row.
    LatencyResult all = Latency("kernel", {}, label);
    ASSERT_EQ(all.rows.size(), 1u);
    EXPECT_EQ(all.rows[0].count, s.gpu_event_count);
    EXPECT_EQ(all.rows[0].sum_ns, s.gpu_time_ns);
    EXPECT_NEAR(all.relative_accuracy, kAlpha, 1e-9);

    // Per kernel name: count, GPU time, min, max exactly; percentiles.
    LatencyResult kernels = Latency("kernel", {"kernel"}, label);
    ASSERT_EQ(kernels.rows.size(), s.kernels.size());
    std::map<std::string, const LatencyRow*> by_kernel;
    for (const LatencyRow& r : kernels.rows) by_kernel[r.key[0]] = &r;
    for (const analysis::KernelStats& k : s.kernels) {
      SCOPED_TRACE("kernel " + k.name);
      ASSERT_TRUE(by_kernel.count(k.name));
      const LatencyRow& r = *by_kernel[k.name];
      EXPECT_EQ(r.count, k.count);
      EXPECT_EQ(r.sum_ns, k.gpu_time_ns);
      EXPECT_EQ(r.min_ns, k.min_ns);
      EXPECT_EQ(r.max_ns, k.max_ns);
      const std::vector<double>& raw = e.kernel_durations.at(k.name);
      ExpectPercentile(r.quantile_ns[0], raw, 0.5, k.duration_ns.p50, "p50");
      ExpectPercentile(r.quantile_ns[1], raw, 0.95, k.duration_ns.p95, "p95");
      ExpectPercentile(r.quantile_ns[2], raw, 0.99, k.duration_ns.p99, "p99");
    }

    // Per operator: instances, GPU time; percentiles of per-instance GPU time.
    LatencyResult ops = Latency("operator", {"operator"}, label);
    ASSERT_EQ(ops.rows.size(), s.operators.size());
    std::map<std::string, const LatencyRow*> by_op;
    for (const LatencyRow& r : ops.rows) by_op[r.key[0]] = &r;
    for (const analysis::OperatorStats& o : s.operators) {
      SCOPED_TRACE("operator " + o.name);
      ASSERT_TRUE(by_op.count(o.name));
      const LatencyRow& r = *by_op[o.name];
      EXPECT_EQ(r.count, o.count);
      EXPECT_EQ(r.sum_ns, o.gpu_time_ns);
      const std::vector<double>& raw = e.operator_instances.at(o.name);
      ExpectPercentile(r.quantile_ns[0], raw, 0.5, o.instance_gpu_time_ns.p50, "p50");
      ExpectPercentile(r.quantile_ns[1], raw, 0.95, o.instance_gpu_time_ns.p95, "p95");
      ExpectPercentile(r.quantile_ns[2], raw, 0.99, o.instance_gpu_time_ns.p99, "p99");
    }

    // Per layer type: GPU events and GPU time.
    LatencyResult layers = Latency("kernel", {"layer_type"}, label);
    ASSERT_EQ(layers.rows.size(), s.layer_types.size());
    std::map<std::string, const LatencyRow*> by_layer;
    for (const LatencyRow& r : layers.rows) by_layer[r.key[0]] = &r;
    for (const analysis::LayerTypeStats& l : s.layer_types) {
      std::string name(analysis::LayerTypeName(l.layer_type));
      SCOPED_TRACE("layer type " + name);
      ASSERT_TRUE(by_layer.count(name));
      EXPECT_EQ(by_layer[name]->count, l.count);
      EXPECT_EQ(by_layer[name]->sum_ns, l.gpu_time_ns);
    }

    // Device breakdown: interval unions, equal as a multiset of devices.
    RunResult b = Query({"breakdown", "--label", label});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    std::vector<DeviceRow> got;
    ASSERT_TRUE(ParseBreakdownJson(b.out, &got));
    std::vector<DeviceRow> want;
    for (const analysis::DeviceBreakdown& d : s.devices) {
      want.push_back({d.span_ns, d.busy_ns, d.idle_ns, d.compute_ns, d.non_compute_ns,
                      d.event_count});
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_TRUE(got == want) << "breakdown differs: " << b.out;

    // Top kernels: each row's count and total equal analyze's for that name.
    RunResult top = Query({"kernels", "--top", "5", "--label", label});
    ASSERT_EQ(top.exit_code, 0) << top.err;
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(top.out);
    size_t rows = 0;
    for (simdjson::dom::element row : simdjson::dom::array(doc["rows"])) {
      std::string name{std::string_view(row["name"])};
      auto it = std::find_if(s.kernels.begin(), s.kernels.end(),
                             [&](const analysis::KernelStats& k) { return k.name == name; });
      ASSERT_NE(it, s.kernels.end()) << name;
      EXPECT_EQ(int64_t(row["count"]), it->count) << name;
      EXPECT_EQ(UsToNs(double(row["total_us"])), it->gpu_time_ns) << name;
      // The heaviest rows come first: none outside the top-5 by GPU time.
      EXPECT_GE(it->gpu_time_ns, s.kernels[std::min<size_t>(4, s.kernels.size() - 1)].gpu_time_ns);
      ++rows;
    }
    EXPECT_EQ(rows, std::min<size_t>(5, s.kernels.size()));
  }

  TempDir dir_;
  std::unique_ptr<CollectorProcess> collector_;
};

}  // namespace opmap::testing::collector_it

#endif  // OPMAP_TESTS_INTEGRATION_COLLECTOR_TEST_FIXTURE_H_
