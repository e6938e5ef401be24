// Store queries over synthetic rollups with known values (query_fixture.h), on both
// engines (SQLite and ClickHouse: store_engines.h): exact counts and sums, quantiles
// within α, group-by combinations, filters, time ranges, top kernels, the device
// breakdown and the raw-batch scan. Counters, sign-offs and the side-by-side comparison
// of the engines are in store_engines_query_test.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collector/store/store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/query_fixture.h"
#include "tests/unit/store/store_engines.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using analysis::RollupSubject;
using opmap::v1::GroupBy;
using stats::DDSketch;
using testing::BatchSpec;
using testing::ExpectWithinAlpha;
using testing::kKernel;
using testing::kOp;
using testing::LowerRank;
using testing::MakeBatch;
using testing::QueryTest;
using testing::Row;

TEST_P(QueryTest, ByLayerTypeHasExactTotalsAndQuantilesWithinAlpha) {
  opmap::v1::LatencyResponse r = Latency({opmap::v1::GROUP_BY_LAYER_TYPE});
  ASSERT_EQ(r.rows_size(), 4);
  EXPECT_FALSE(r.truncated());
  int64_t big_sum = 0;
  for (int64_t v : big_) big_sum += v;
  // Largest sum first.
  EXPECT_EQ(r.rows(0).key(0), "norm");
  EXPECT_EQ(r.rows(0).count(), 3000u);
  EXPECT_EQ(r.rows(0).sum_ns(), big_sum);
  EXPECT_EQ(r.rows(0).min_ns(), *std::min_element(big_.begin(), big_.end()));
  EXPECT_EQ(r.rows(0).max_ns(), *std::max_element(big_.begin(), big_.end()));
  ASSERT_EQ(r.rows(0).quantile_ns_size(), 3);  // default 0.5, 0.95, 0.99
  ExpectWithinAlpha(r.rows(0).quantile_ns(0), LowerRank(big_, 0.5), "p50");
  ExpectWithinAlpha(r.rows(0).quantile_ns(1), LowerRank(big_, 0.95), "p95");
  ExpectWithinAlpha(r.rows(0).quantile_ns(2), LowerRank(big_, 0.99), "p99");
  EXPECT_DOUBLE_EQ(r.rows(0).relative_accuracy(), DDSketch::kRelativeAccuracy);

  EXPECT_EQ(r.rows(1).key(0), "attention");
  EXPECT_EQ(r.rows(1).count(), 3u);
  EXPECT_EQ(r.rows(1).sum_ns(), 3050);
  EXPECT_EQ(r.rows(1).min_ns(), 50);
  EXPECT_EQ(r.rows(2).key(0), "matmul");
  EXPECT_EQ(r.rows(2).count(), 7u);
  EXPECT_EQ(r.rows(2).sum_ns(), 100 + 200 + 300 + 400 + 500 + 600 + 700);
  EXPECT_EQ(r.rows(2).min_ns(), 100);
  EXPECT_EQ(r.rows(2).max_ns(), 700);
  ExpectWithinAlpha(r.rows(2).quantile_ns(0), 400, "matmul p50");
  EXPECT_EQ(r.rows(3).key(0), "elementwise");
  EXPECT_EQ(r.rows(3).sum_ns(), 10);
}

TEST_P(QueryTest, GroupByCombinations) {
  opmap::v1::LatencyResponse all = Latency({});
  ASSERT_EQ(all.rows_size(), 1);
  EXPECT_EQ(all.rows(0).key_size(), 0);
  EXPECT_EQ(all.rows(0).count(), 3011u);

  opmap::v1::LatencyResponse kh =
      Latency({opmap::v1::GROUP_BY_KERNEL, opmap::v1::GROUP_BY_HOST});
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, int64_t>> got;
  for (const auto& row : kh.rows()) {
    ASSERT_EQ(row.key_size(), 2);
    got[{row.key(0), row.key(1)}] = {row.count(), row.sum_ns()};
  }
  EXPECT_EQ(got[std::make_pair(std::string("gemm"), std::string("host-a"))],
            std::make_pair(uint64_t{4}, int64_t{1300}));
  EXPECT_EQ(got[std::make_pair(std::string("gemm"), std::string("host-b"))],
            std::make_pair(uint64_t{4}, int64_t{1550}));
  EXPECT_EQ(got.size(), 6u);  // gemm×2, flash, add, ln×2

  opmap::v1::LatencyResponse rl =
      Latency({opmap::v1::GROUP_BY_REVISION, opmap::v1::GROUP_BY_LAYER_TYPE,
               opmap::v1::GROUP_BY_OPERATOR}, opmap::v1::LATENCY_SUBJECT_KERNEL);
  bool found = false;
  for (const auto& row : rl.rows()) {
    if (row.key(0) == "r2" && row.key(1) == "matmul" && row.key(2) == "aten::mm") {
      found = true;
      EXPECT_EQ(row.count(), 3u);  // s2's 400, 500 and s3's 700
      EXPECT_EQ(row.sum_ns(), 1600);
    }
  }
  EXPECT_TRUE(found);
}

TEST_P(QueryTest, OperatorGroupingUsesOperatorInstances) {
  opmap::v1::LatencyResponse r = Latency({opmap::v1::GROUP_BY_OPERATOR},
                                         opmap::v1::LATENCY_SUBJECT_UNSPECIFIED);
  ASSERT_EQ(r.rows_size(), 3);
  EXPECT_EQ(r.rows(0).key(0), "sdpa");
  EXPECT_EQ(r.rows(0).count(), 1u);
  EXPECT_EQ(r.rows(0).sum_ns(), 3000);
  EXPECT_EQ(r.rows(1).key(0), "aten::mm");
  EXPECT_EQ(r.rows(1).count(), 3u);  // instances, not kernels
  EXPECT_EQ(r.rows(1).sum_ns(), 1500);
  ExpectWithinAlpha(r.rows(1).quantile_ns(2), 300, "lower-rank p99 of {300,300,900}");
  EXPECT_EQ(r.rows(2).key(0), "aten::linear");

  opmap::v1::LatencyRequest bad;
  bad.set_subject(opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU);
  bad.add_group_by(opmap::v1::GROUP_BY_KERNEL);
  EXPECT_EQ(store_->QueryLatency(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(QueryTest, Filters) {
  request_.mutable_filter()->set_host("host-a");
  EXPECT_EQ(Latency({}).rows(0).count(), 3u + 2 + 1 + 1000 + 1);
  request_.mutable_filter()->set_revision("r2");
  EXPECT_EQ(Latency({}).rows(0).count(), 1u);  // s3 only
  request_.Clear();
  request_.mutable_filter()->set_model("llama");
  EXPECT_EQ(Latency({}).rows(0).count(), 3011u);
  request_.mutable_filter()->set_model("mistral");
  opmap::v1::LatencyResponse none = Latency({});
  EXPECT_EQ(none.rows_size(), 0);
  ASSERT_EQ(none.unavailable_size(), 1);
  EXPECT_EQ(none.unavailable(0).reason(), "no complete session matches the range and filter");
  request_.Clear();
  (*request_.mutable_filter()->mutable_labels())["team"] = "a";
  EXPECT_EQ(Latency({}).rows(0).count(), 1006u);
  (*request_.mutable_filter()->mutable_labels())["zone"] = "x";
  EXPECT_EQ(Latency({}).rows(0).count(), 1006u);
  (*request_.mutable_filter()->mutable_labels())["zone"] = "y";
  EXPECT_EQ(Latency({}).rows_size(), 0);
}

TEST_P(QueryTest, TimeRangeSelectsOverlappingSessions) {
  auto count_in = [&](int64_t start, int64_t end) {
    request_.mutable_range()->set_start_ns(start);
    request_.mutable_range()->set_end_ns(end);
    opmap::v1::LatencyResponse r = Latency({});
    return r.rows_size() == 0 ? uint64_t{0} : r.rows(0).count();
  };
  EXPECT_EQ(count_in(1500, 2500), 1006u);  // s1
  EXPECT_EQ(count_in(2000, 3000), 0u);     // half-open on both sides
  EXPECT_EQ(count_in(1999, 3001), 1006u + 2004);
  EXPECT_EQ(count_in(0, 0), 3011u);
  request_.mutable_range()->set_start_ns(10);
  request_.mutable_range()->set_end_ns(10);
  absl::Status st = store_->QueryLatency(request_).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("range.end_ns"), std::string::npos);
}

// One row per capture session with its window, whatever buckets the file keeps: the
// windows a release recommendation holds its triggers over.
TEST_P(QueryTest, GroupBySessionGivesEachWindow) {
  opmap::v1::LatencyResponse r = Latency({opmap::v1::GROUP_BY_REVISION, opmap::v1::GROUP_BY_SESSION});
  ASSERT_EQ(r.rows_size(), 3);
  struct Want {
    std::string rev, session;
    uint64_t count;
    int64_t start, end;
  };
  const Want want[] = {{"r2", "s2", 2004, 3000, 4000}, {"r1", "s1", 1006, 1000, 2000},
                       {"r2", "s3", 1, 5000, 6000}};
  for (const Want& w : want) {
    bool found = false;
    for (const auto& row : r.rows()) {
      if (row.key(1).size() < w.session.size() ||
          row.key(1).substr(row.key(1).size() - w.session.size()) != w.session) {
        continue;
      }
      found = true;
      EXPECT_EQ(row.key(0), w.rev);
      EXPECT_EQ(row.key(1).find('/') != std::string::npos, true) << row.key(1);
      EXPECT_EQ(row.count(), w.count) << w.session;
      EXPECT_EQ(row.window_start_ns(), w.start) << w.session;
      EXPECT_EQ(row.window_end_ns(), w.end) << w.session;
    }
    EXPECT_TRUE(found) << w.session;
  }
  // Without a session key the rows carry no window.
  opmap::v1::LatencyResponse plain = Latency({opmap::v1::GROUP_BY_REVISION});
  for (const auto& row : plain.rows()) EXPECT_EQ(row.window_start_ns(), 0);
}

TEST_P(QueryTest, UnavailableGroupingsAndSubjects) {
  // These sessions have no module ranges: every event is in the "" module.
  opmap::v1::LatencyResponse r =
      Latency({opmap::v1::GROUP_BY_LAYER_TYPE, opmap::v1::GROUP_BY_MODULE});
  EXPECT_GT(r.rows_size(), 0);
  EXPECT_EQ(r.unavailable_size(), 0);
  uint64_t module_count = 0;
  for (const opmap::v1::LatencyRow& row : r.rows()) {
    EXPECT_EQ(row.key(1), "");
    module_count += row.count();
  }
  EXPECT_EQ(module_count, Latency({}).rows(0).count());
  // Requests have no module.
  EXPECT_EQ(store_->QueryLatency([&] {
                  opmap::v1::LatencyRequest q = request_;
                  q.set_subject(opmap::v1::LATENCY_SUBJECT_REQUEST);
                  q.add_group_by(opmap::v1::GROUP_BY_MODULE);
                  return q;
                }()).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Sessions without request ranges: no rows, and the reason says which ranges count.
  r = Latency({}, opmap::v1::LATENCY_SUBJECT_REQUEST);
  EXPECT_EQ(r.rows_size(), 0);
  ASSERT_EQ(r.unavailable_size(), 1);
  EXPECT_EQ(r.unavailable(0).reason(),
            "the selected sessions hold no request ranges (ranges named request or iteration, "
            "or ProfilerStep#N)");
  // Kernels and operators are not attributed to requests: the grouping is unavailable.
  r = Latency({opmap::v1::GROUP_BY_REQUEST}, opmap::v1::LATENCY_SUBJECT_KERNEL);
  EXPECT_EQ(r.rows_size(), 0);
  ASSERT_EQ(r.unavailable_size(), 1);
  EXPECT_EQ(r.unavailable(0).what(), "group_by REQUEST");
  // Groupings that do not apply to requests are refused.
  EXPECT_EQ(store_->QueryLatency([&] {
                  opmap::v1::LatencyRequest q = request_;
                  q.set_subject(opmap::v1::LATENCY_SUBJECT_REQUEST);
                  q.add_group_by(opmap::v1::GROUP_BY_KERNEL);
                  return q;
                }()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(QueryTest, LimitQuantilesAndSketch) {
  request_.set_limit(2);
  request_.add_quantiles(0.0);
  request_.add_quantiles(1.0);
  request_.set_include_sketch(true);
  opmap::v1::LatencyResponse r = Latency({opmap::v1::GROUP_BY_KERNEL});
  ASSERT_EQ(r.rows_size(), 2);
  EXPECT_TRUE(r.truncated());
  const opmap::v1::LatencyRow& row = r.rows(1);
  EXPECT_EQ(row.key(0), "flash");
  EXPECT_EQ(row.quantile_ns(0), 1000);  // min and max are exact
  EXPECT_EQ(row.quantile_ns(1), 2000);
  EXPECT_EQ(row.sketch().count(), 2u);
  absl::StatusOr<DDSketch> rebuilt = DDSketch::FromBins(
      row.sketch().scale(), row.sketch().offset(),
      std::vector<uint64_t>(row.sketch().counts().begin(), row.sketch().counts().end()),
      row.sketch().zero_count(), row.sketch().sum(), row.sketch().min(), row.sketch().max());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(rebuilt->count(), 2u);

  request_.add_quantiles(1.5);
  EXPECT_EQ(store_->QueryLatency(request_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(QueryTest, TopKernels) {
  opmap::v1::TopKernelsRequest q;
  opmap::v1::TopKernelsResponse r = store_->QueryTopKernels(q).value();
  ASSERT_EQ(r.rows_size(), 4);
  EXPECT_EQ(r.rows(0).name(), "ln");
  EXPECT_EQ(r.rows(0).layer_type(), "norm");
  EXPECT_EQ(r.rows(1).name(), "flash");
  const opmap::v1::KernelRow& gemm = r.rows(2);
  EXPECT_EQ(gemm.name(), "gemm");
  EXPECT_EQ(gemm.layer_type(), "matmul");  // 2800 ns as matmul, 50 as attention
  EXPECT_EQ(gemm.count(), 8u);
  EXPECT_EQ(gemm.total_ns(), 2850);
  EXPECT_EQ(gemm.min_ns(), 50);
  EXPECT_EQ(gemm.max_ns(), 700);
  ExpectWithinAlpha(gemm.p50_ns(), 300, "gemm p50 (lower rank of 8)");
  ExpectWithinAlpha(gemm.p99_ns(), 600, "gemm p99 (lower rank of 8)");
  double share = 0;
  for (const auto& row : r.rows()) share += row.share_of_gpu_time();
  EXPECT_NEAR(share, 1.0, 1e-12);
  q.set_limit(1);
  EXPECT_EQ(store_->QueryTopKernels(q).value().rows_size(), 1);
  q.mutable_filter()->set_host("host-b");
  r = store_->QueryTopKernels(q).value();
  EXPECT_EQ(r.rows(0).name(), "ln");
  EXPECT_NEAR(r.rows(0).share_of_gpu_time(),
              static_cast<double>(r.rows(0).total_ns()) / (r.rows(0).total_ns() + 1550), 1e-12);
}

TEST_P(QueryTest, TimeBreakdownSumsPerHostAndGpu) {
  opmap::v1::TimeBreakdownRequest q;
  opmap::v1::TimeBreakdownResponse r = store_->QueryTimeBreakdown(q).value();
  ASSERT_EQ(r.devices_size(), 3);
  EXPECT_EQ(r.devices(0).host(), "host-a");
  EXPECT_EQ(r.devices(0).gpu_uuid(), "GPU-a");
  EXPECT_EQ(r.devices(0).gpu_name(), "NVIDIA H200");
  EXPECT_EQ(r.devices(0).span_ns(), 3000);  // s1 + s3
  EXPECT_EQ(r.devices(0).busy_ns(), 1000);
  EXPECT_EQ(r.devices(0).idle_ns(), 2000);
  EXPECT_EQ(r.devices(0).compute_ns() + r.devices(0).non_compute_ns(), 1000);
  EXPECT_EQ(r.devices(0).kernel_count(), 20u);
  EXPECT_EQ(r.devices(1).gpu_uuid(), "GPU-b");
  EXPECT_EQ(r.devices(2).gpu_uuid(), "device:1");  // no UUID reported
  q.mutable_filter()->set_host("host-b");
  EXPECT_EQ(store_->QueryTimeBreakdown(q).value().devices_size(), 2);
  q.mutable_filter()->set_host("nowhere");
  r = store_->QueryTimeBreakdown(q).value();
  EXPECT_EQ(r.devices_size(), 0);
  EXPECT_EQ(r.unavailable_size(), 1);
}

TEST_P(QueryTest, ForEachBatchVisitsSelectedSessionsInOrder) {
  std::vector<std::string> seen;
  auto collect = [&](std::string_view p) {
    seen.emplace_back(p);
    return absl::OkStatus();
  };
  ASSERT_TRUE(store_->ForEachBatch({}, {}, collect).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"s1-1", "s2-1", "s3-1", "s4-1"}));
  seen.clear();
  opmap::v1::TimeRange range;
  range.set_start_ns(1900);
  range.set_end_ns(3500);
  opmap::v1::Filter filter;
  filter.set_host("host-a");
  ASSERT_TRUE(store_->ForEachBatch(range, filter, collect).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"s1-1", "s4-1"}));  // s4 is still open
  absl::Status stop = store_->ForEachBatch({}, {}, [](std::string_view) {
    return absl::CancelledError("stop");
  });
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);
}

OPMAP_INSTANTIATE_ENGINES(QueryTest);


// Sums across sessions of valid rows (each session's ≤ 2^62 ns, as
// ingest checks) saturate at INT64_MAX on both engines, never wrap negative.
TEST_P(QueryTest, SumsOfExtremeValidValuesSaturate) {
  const std::vector<int64_t> extreme(1000, int64_t{1} << 52);  // 2^62 ns a session
  for (int i = 0; i < 3; ++i) {
    AddSession(absl::StrCat("x", i), "host-x", "r9", {}, 7000 + 1000 * i, 7500 + 1000 * i,
               {Row(kKernel, "matmul", "aten::mm", "huge", extreme)}, {});
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  opmap::v1::TopKernelsRequest q;
  q.mutable_filter()->set_host("host-x");
  opmap::v1::TopKernelsResponse k = store_->QueryTopKernels(q).value();
  ASSERT_EQ(k.rows_size(), 1);
  EXPECT_EQ(k.rows(0).count(), 3000u);
  EXPECT_EQ(k.rows(0).total_ns(), kMax);
  opmap::v1::LatencyRequest l;
  l.mutable_filter()->set_host("host-x");
  l.add_group_by(opmap::v1::GROUP_BY_KERNEL);
  opmap::v1::LatencyResponse r = store_->QueryLatency(l).value();
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).sum_ns(), kMax);
  EXPECT_EQ(r.rows(0).max_ns(), int64_t{1} << 52);
}

}  // namespace
}  // namespace opmap::collector
