// Store queries beyond latency on both engines — counters, sign-offs — and the two
// engines side by side on the same input (QueryTest fixture: query_fixture.h).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collector/store/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/store/query_fixture.h"
#include "tests/unit/store/store_engines.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using testing::BatchSpec;
using testing::MakeBatch;

class EngineQueryTest : public testing::QueryTest {};

TEST_P(EngineQueryTest, CountersDropsAndUnavailable) {
  opmap::v1::CountersRequest q;
  opmap::v1::CountersResponse none = store_->QueryCounters(q).value();
  EXPECT_EQ(none.rows_size(), 0);
  ASSERT_EQ(none.unavailable_size(), 1);
  EXPECT_EQ(none.unavailable(0).reason(), "the selected sessions carried no counter samples");

  analysis::SessionRollup rollup;
  SessionTelemetry t;
  t.counters.push_back({"cycles", opmap::v1::COUNTER_SOURCE_PAPI, 7, 2, 1000, 10, 5});
  t.counters.push_back({"task-clock", opmap::v1::COUNTER_SOURCE_PERF_EVENT, 7, 1, 30, 4, 4});
  t.drops.push_back({1, 2, "ring full", 5});
  t.unavailable.push_back({"counter PAPI_TOT_CYC", "no PMU"});
  BatchSpec spec;
  spec.session = "s5";
  spec.host = "host-c";
  spec.window_start_ns = 7000;
  spec.window_end_ns = 8000;
  spec.last = true;
  opmap::v1::Batch b = MakeBatch(spec);
  BatchCommit c{&b, "s5-1", 10, 1, 1, &rollup, &t};
  ASSERT_EQ(store_->CommitBatch(c).value(), CommitOutcome::kStored);

  q.add_group_by(opmap::v1::GROUP_BY_HOST);
  opmap::v1::CountersResponse r = store_->QueryCounters(q).value();
  ASSERT_EQ(r.rows_size(), 2);
  EXPECT_EQ(r.rows(0).key(0), "host-c");
  EXPECT_EQ(r.rows(0).name(), "cycles");
  EXPECT_EQ(r.rows(0).source(), "papi");
  EXPECT_EQ(r.rows(0).value(), 1000);
  EXPECT_EQ(r.rows(0).sessions(), 1u);
  EXPECT_DOUBLE_EQ(r.rows(0).scaled(), 2000);
  EXPECT_DOUBLE_EQ(r.rows(0).per_second(), 2000 * 1e9 / 1000);
  EXPECT_EQ(r.rows(1).source(), "perf_event");
  ASSERT_EQ(r.drops_size(), 1);
  EXPECT_EQ(r.drops(0).count(), 5u);
  EXPECT_EQ(r.drops(0).reason(), "ring full");
  ASSERT_EQ(r.unavailable_size(), 1);
  EXPECT_EQ(r.unavailable(0).what(), "counter PAPI_TOT_CYC");
  q.mutable_filter()->set_host("host-a");
  r = store_->QueryCounters(q).value();
  EXPECT_EQ(r.rows_size(), 0);
  q.clear_group_by();
  q.add_group_by(opmap::v1::GROUP_BY_KERNEL);
  EXPECT_EQ(store_->QueryCounters(q).status().code(), absl::StatusCode::kInvalidArgument);
}

// Power rows: per device over the sessions, absent figures absent (never 0), the
// reasons beside them, the average time-weighted across windows.
TEST_P(EngineQueryTest, PowerPerDeviceWithUnavailableReasons) {
  opmap::v1::PowerRequest q;
  opmap::v1::PowerResponse none = store_->QueryPower(q).value();
  EXPECT_EQ(none.rows_size(), 0);
  ASSERT_EQ(none.unavailable_size(), 1);
  // The fixture's sessions carry none.
  EXPECT_THAT(none.unavailable(0).reason(),
              ::testing::StartsWith("the selected sessions carried no power rows"));

  auto gpu = [](int64_t start, int64_t end, uint64_t mj, uint32_t limit_mw) {
    opmap::v1::PowerSample p;
    p.set_domain(opmap::v1::POWER_DOMAIN_GPU);
    p.set_device("GPU-aaaa");
    p.set_name("NVIDIA H200");
    p.set_start_ns(start);
    p.set_end_ns(end);
    p.set_covered_ns(end - start);
    p.set_energy_mj(mj);
    p.set_method(opmap::v1::ENERGY_METHOD_COUNTER);
    p.set_reads(2);
    p.set_power_limit_mw(limit_mw);
    p.set_sm_clock_mhz(1755);
    p.set_throttle_reasons(0x4);
    p.set_temperature_c(50);
    p.set_persistence(true);
    return p;
  };
  struct Window {
    const char* session;
    const char* revision;
    int64_t start, end;
    uint64_t mj;
    uint32_t limit_mw;
  };
  // 2 s at 300 W, then 1 s at 600 W on the same GPU: 1200 J over 3 s = 400 W.
  const Window windows[] = {{"p1", "r1", 1'000'000'000, 3'000'000'000, 600'000, 700'000},
                            {"p2", "r2", 5'000'000'000, 6'000'000'000, 600'000, 500'000}};
  for (const Window& w : windows) {
    analysis::SessionRollup rollup;
    SessionTelemetry t;
    t.power.push_back(gpu(w.start, w.end, w.mj, w.limit_mw));
    opmap::v1::PowerSample dram;
    dram.set_domain(opmap::v1::POWER_DOMAIN_DRAM);
    dram.set_device("intel-rapl:0:1");
    dram.set_name("dram");
    dram.set_start_ns(w.start);
    dram.set_end_ns(w.start);
    dram.set_reads(1);
    t.power.push_back(dram);
    t.unavailable.push_back({"power intel-rapl:0:1 energy_mj", "energy needs two reads"});
    BatchSpec spec;
    spec.session = w.session;
    spec.revision = w.revision;
    spec.window_start_ns = w.start;
    spec.window_end_ns = w.end;
    spec.last = true;
    opmap::v1::Batch b = MakeBatch(spec);
    BatchCommit c{&b, std::string(w.session) + "-1", 10, 1, 1, &rollup, &t};
    ASSERT_EQ(store_->CommitBatch(c).value(), CommitOutcome::kStored);
  }
  opmap::v1::PowerResponse r = store_->QueryPower(q).value();
  ASSERT_EQ(r.rows_size(), 2) << r.DebugString();
  const opmap::v1::PowerRow& g = r.rows(0);  // GPU (domain 1) before DRAM (3)
  EXPECT_EQ(g.device(), "GPU-aaaa");
  EXPECT_EQ(g.name(), "NVIDIA H200");
  EXPECT_EQ(g.windows(), 2u);
  EXPECT_EQ(g.windows_with_energy(), 2u);
  EXPECT_EQ(g.energy_mj(), 1'200'000u);
  EXPECT_EQ(g.covered_ns(), 3'000'000'000);
  EXPECT_DOUBLE_EQ(g.average_w(), 400.0);
  EXPECT_EQ(g.method(), "energy_counter");
  EXPECT_EQ(g.power_limit_min_mw(), 500'000u);
  EXPECT_EQ(g.power_limit_max_mw(), 700'000u);
  EXPECT_EQ(g.throttle_reasons(), 0x4u);
  EXPECT_EQ(g.temperature_max_c(), 50u);
  EXPECT_EQ(g.mode(), "persistence=on");
  EXPECT_EQ(g.first_start_ns(), 1'000'000'000);
  EXPECT_EQ(g.last_end_ns(), 6'000'000'000);
  const opmap::v1::PowerRow& d = r.rows(1);
  EXPECT_EQ(d.domain(), opmap::v1::POWER_DOMAIN_DRAM);
  EXPECT_EQ(d.windows_with_energy(), 0u);
  EXPECT_FALSE(d.has_average_w());  // unavailable, not 0 W
  EXPECT_FALSE(d.has_power_limit_min_mw());
  ASSERT_EQ(r.unavailable_size(), 1) << r.DebugString();
  EXPECT_EQ(r.unavailable(0).what(), "power intel-rapl:0:1 energy_mj");

  q.add_group_by(opmap::v1::GROUP_BY_REVISION);
  r = store_->QueryPower(q).value();
  ASSERT_EQ(r.rows_size(), 4);
  EXPECT_EQ(r.rows(0).key(0), "r1");
  EXPECT_DOUBLE_EQ(r.rows(0).average_w(), 300.0);
  EXPECT_EQ(r.rows(2).key(0), "r2");
  EXPECT_DOUBLE_EQ(r.rows(2).average_w(), 600.0);
  q.mutable_filter()->set_revision("r2");
  r = store_->QueryPower(q).value();
  ASSERT_EQ(r.rows_size(), 2);
  EXPECT_EQ(r.rows(0).power_limit_max_mw(), 500'000u);
  q.clear_group_by();
  q.add_group_by(opmap::v1::GROUP_BY_KERNEL);
  EXPECT_EQ(store_->QueryPower(q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(EngineQueryTest, SignoffsAreRecordedOnce) {
  opmap::v1::Signoff s;
  s.set_report_sha256("ab12");
  s.set_kind("release");
  s.set_baseline("r1");
  s.set_candidate("r2");
  s.set_verdict("ship");
  s.set_owner("ana");
  s.set_role("runtime systems engineer");
  s.set_signed_ns(100);
  s.set_principal("token:ana");
  Store::SignoffOutcome first = store_->RecordSignoff(s).value();
  EXPECT_FALSE(first.already);
  EXPECT_EQ(first.stored.signed_ns(), 100);
  opmap::v1::Signoff again = s;
  again.set_signed_ns(200);
  again.set_verdict("hold");
  Store::SignoffOutcome second = store_->RecordSignoff(again).value();
  EXPECT_TRUE(second.already);
  EXPECT_EQ(second.stored.signed_ns(), 100);
  EXPECT_EQ(second.stored.verdict(), "ship");
  opmap::v1::Signoff other = s;
  other.set_owner("bo");
  other.set_signed_ns(300);
  EXPECT_FALSE(store_->RecordSignoff(other).value().already);
  opmap::v1::ListSignoffsRequest list;
  list.set_kind("release");
  list.set_baseline("r1");
  list.set_candidate("r2");
  std::vector<opmap::v1::Signoff> all = store_->ListSignoffs(list).value();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].owner(), "ana");
  EXPECT_EQ(all[1].owner(), "bo");
  list.set_candidate("r3");
  EXPECT_TRUE(store_->ListSignoffs(list).value().empty());
}

// The engines side by side on the same input: every query's answer is identical,
// quantiles (from the merged sketches) and sketches included.
TEST_P(EngineQueryTest, SameAnswersOnBothEngines) {
  if (!clickhouse()) GTEST_SKIP() << "compares ClickHouse with SQLite: runs in the clickhouse instance";
  absl::StatusOr<std::unique_ptr<Store>> sqlite = OpenStore("sqlite:" + dir_.File("ref.db"));
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  AddAll(**sqlite);
  using G = opmap::v1::GroupBy;
  const std::vector<std::vector<G>> groupings = {
      {},
      {opmap::v1::GROUP_BY_LAYER_TYPE},
      {opmap::v1::GROUP_BY_KERNEL, opmap::v1::GROUP_BY_HOST},
      {opmap::v1::GROUP_BY_REVISION, opmap::v1::GROUP_BY_LAYER_TYPE, opmap::v1::GROUP_BY_OPERATOR},
      {opmap::v1::GROUP_BY_MODULE, opmap::v1::GROUP_BY_MODULE_TYPE},
      {opmap::v1::GROUP_BY_REVISION, opmap::v1::GROUP_BY_SESSION},
      {opmap::v1::GROUP_BY_REQUEST}};
  const std::vector<opmap::v1::LatencySubject> subjects = {
      opmap::v1::LATENCY_SUBJECT_KERNEL, opmap::v1::LATENCY_SUBJECT_OPERATOR_GPU,
      opmap::v1::LATENCY_SUBJECT_UNSPECIFIED, opmap::v1::LATENCY_SUBJECT_OPERATOR_CPU};
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 0}, {1500, 2500}, {1999, 5001}};
  int compared = 0;
  for (const auto& group_by : groupings) {
    for (auto subject : subjects) {
      for (auto [start, end] : ranges) {
        opmap::v1::LatencyRequest q;
        q.set_subject(subject);
        for (G g : group_by) q.add_group_by(g);
        q.mutable_range()->set_start_ns(start);
        q.mutable_range()->set_end_ns(end);
        q.add_quantiles(0.5);
        q.add_quantiles(0.9);
        q.add_quantiles(0.999);
        q.set_include_sketch(true);
        absl::StatusOr<opmap::v1::LatencyResponse> want = (*sqlite)->QueryLatency(q);
        absl::StatusOr<opmap::v1::LatencyResponse> got = store_->QueryLatency(q);
        ASSERT_EQ(want.status().code(), got.status().code()) << q.ShortDebugString();
        if (!want.ok()) continue;
        EXPECT_EQ(got->ShortDebugString(), want->ShortDebugString()) << q.ShortDebugString();
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 50);
  opmap::v1::TopKernelsRequest top;
  EXPECT_EQ(store_->QueryTopKernels(top)->ShortDebugString(),
            (*sqlite)->QueryTopKernels(top)->ShortDebugString());
  top.mutable_filter()->set_host("host-b");
  EXPECT_EQ(store_->QueryTopKernels(top)->ShortDebugString(),
            (*sqlite)->QueryTopKernels(top)->ShortDebugString());
  opmap::v1::TimeBreakdownRequest tb;
  EXPECT_EQ(store_->QueryTimeBreakdown(tb)->ShortDebugString(),
            (*sqlite)->QueryTimeBreakdown(tb)->ShortDebugString());
  (*tb.mutable_filter()->mutable_labels())["team"] = "b";
  EXPECT_EQ(store_->QueryTimeBreakdown(tb)->ShortDebugString(),
            (*sqlite)->QueryTimeBreakdown(tb)->ShortDebugString());
}

// Ingest figure per engine: 200 batches of 10,000 kernels (payloads as the agent sends
// them), one session each of 20 batches, committed one after another.
TEST_P(EngineQueryTest, DISABLED_CommitThroughput) {
  constexpr int kSessions = 10, kBatches = 20, kKernels = 10000;
  int64_t bytes = 0;
  const absl::Time t0 = absl::Now();
  for (int s = 0; s < kSessions; ++s) {
    for (int seq = 1; seq <= kBatches; ++seq) {
      opmap::v1::Batch b = testing::MakeKernelBatch("bench", "b" + std::to_string(s), seq,
                                                    kKernels, 42);
      BatchCommit c;
      c.batch = &b;
      c.payload = b.SerializeAsString();
      bytes += static_cast<int64_t>(c.payload.size());
      c.record_count = kKernels;
      c.string_count_after = 61;
      ASSERT_EQ(store_->CommitBatch(c).value(), CommitOutcome::kStored);
    }
  }
  const double s = absl::ToDoubleSeconds(absl::Now() - t0);
  const int n = kSessions * kBatches;
  std::printf("%s: %d commits in %.2f s: %.0f commits/s, %.2f M records/s, %.1f MB/s\n",
              GetParam().c_str(), n, s, n / s, n * double{kKernels} / s / 1e6, bytes / s / 1e6);
}

OPMAP_INSTANTIATE_ENGINES(EngineQueryTest);

}  // namespace
}  // namespace opmap::collector
