// The store-query fixture both engines' query suites share: three complete sessions and
// one open one with known values (store_engines.h runs it on SQLite and ClickHouse).
#ifndef OPMAP_TESTS_UNIT_STORE_QUERY_FIXTURE_H_
#define OPMAP_TESTS_UNIT_STORE_QUERY_FIXTURE_H_

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "collector/store/store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_engines.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector::testing {

using analysis::RollupSubject;
using opmap::v1::GroupBy;
using stats::DDSketch;

inline constexpr RollupSubject kKernel = RollupSubject::kKernel;
inline constexpr RollupSubject kOp = RollupSubject::kOperatorGpu;

// The lower-rank order statistic DDSketch estimates (ddsketch.h).
inline double LowerRank(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<size_t>(std::floor(q * (v.size() - 1)))]);
}

inline void ExpectWithinAlpha(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), DDSketch::kRelativeAccuracy * want * (1 + 1e-12)) << what;
}

// The same sessions in every store; see AddAll.
class QueryTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    AddAll(*store_);
  }

  void AddAll(Store& store) {
    store_being_filled_ = &store;
    big_.clear();
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> dist(std::log(20000.0), 0.8);
    for (int i = 0; i < 3000; ++i) big_.push_back(static_cast<int64_t>(dist(rng)));

    // s1: host-a, r1, team=a zone=x, window [1000, 2000).
    AddSession("s1", "host-a", "r1", {{"team", "a"}, {"zone", "x"}}, 1000, 2000,
               {Row(kKernel, "matmul", "aten::mm", "gemm", {100, 200, 300}),
                Row(kKernel, "attention", "sdpa", "flash", {1000, 2000}),
                Row(kKernel, "elementwise", "", "add", {10}),
                Row(kKernel, "norm", "aten::layer_norm", "ln",
                    std::vector<int64_t>(big_.begin(), big_.begin() + 1000)),
                Row(kOp, "matmul", "aten::mm", "", {300, 300}),
                Row(kOp, "attention", "sdpa", "", {3000})},
               {{0, "GPU-a", "NVIDIA H200", 1000, 700}});
    // s2: host-b, r2, team=b, window [3000, 4000).
    AddSession("s2", "host-b", "r2", {{"team", "b"}}, 3000, 4000,
               {Row(kKernel, "matmul", "aten::mm", "gemm", {400, 500}),
                Row(kKernel, "matmul", "aten::linear", "gemm", {600}),
                Row(kKernel, "attention", "sdpa", "gemm", {50}),
                Row(kKernel, "norm", "aten::layer_norm", "ln",
                    std::vector<int64_t>(big_.begin() + 1000, big_.end())),
                Row(kOp, "matmul", "aten::mm", "", {900}),
                Row(kOp, "matmul", "aten::linear", "", {600})},
               {{0, "GPU-b", "NVIDIA H200", 1000, 900}, {1, "", "NVIDIA H200", 500, 100}});
    // s3: host-a again, same GPU as s1 (breakdowns add up), window [5000, 6000).
    AddSession("s3", "host-a", "r2", {}, 5000, 6000,
               {Row(kKernel, "matmul", "aten::mm", "gemm", {700})},
               {{0, "GPU-a", "NVIDIA H200", 2000, 300}});
    // s4: host-a, never completed: no rollup, invisible to rollup queries.
    BatchSpec open;
    open.session = "s4";
    open.host = "host-a";
    open.window_start_ns = 1500;
    opmap::v1::Batch b = MakeBatch(open);
    BatchCommit c{&b, "s4-1", 10, 1, 1, nullptr};
    ASSERT_TRUE(store.CommitBatch(c).ok());
  }

  struct Device {
    int32_t device;
    std::string uuid, name;
    int64_t span, busy;
  };
  void AddSession(const std::string& session, const std::string& host, const std::string& rev,
                  std::map<std::string, std::string> labels, int64_t start, int64_t end,
                  std::vector<analysis::RollupRow> rows, const std::vector<Device>& devices) {
    analysis::SessionRollup rollup;
    rollup.rows = std::move(rows);
    BatchSpec spec;
    spec.session = session;
    spec.host = host;
    spec.revision = rev;
    spec.labels = std::move(labels);
    spec.window_start_ns = start;
    spec.window_end_ns = end;
    spec.last = true;
    for (const Device& d : devices) {
      analysis::DeviceBreakdown b;
      b.device = d.device;
      b.event_count = 10;
      b.span_ns = d.span;
      b.busy_ns = d.busy;
      b.idle_ns = d.span - d.busy;
      b.compute_ns = d.busy / 2;
      b.non_compute_ns = d.busy - d.busy / 2;
      rollup.devices.push_back(b);
      if (!d.uuid.empty()) spec.gpus.push_back({static_cast<uint32_t>(d.device), d.uuid, d.name});
    }
    opmap::v1::Batch b = MakeBatch(spec);
    BatchCommit c{&b, session + "-1", 10, 1, 1, &rollup};
    ASSERT_EQ(store_being_filled_->CommitBatch(c).value(), CommitOutcome::kStored);
  }

  opmap::v1::LatencyResponse Latency(std::vector<GroupBy> group_by,
                                     opmap::v1::LatencySubject subject =
                                         opmap::v1::LATENCY_SUBJECT_KERNEL) {
    opmap::v1::LatencyRequest q = request_;
    q.set_subject(subject);
    for (GroupBy g : group_by) q.add_group_by(g);
    absl::StatusOr<opmap::v1::LatencyResponse> r = store_->QueryLatency(q);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : opmap::v1::LatencyResponse();
  }

  Store* store_being_filled_ = nullptr;
  std::vector<int64_t> big_;
  opmap::v1::LatencyRequest request_;
};


}  // namespace opmap::collector::testing

#endif  // OPMAP_TESTS_UNIT_STORE_QUERY_FIXTURE_H_
