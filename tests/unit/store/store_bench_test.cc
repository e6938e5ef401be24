// Store figures, run on demand (disabled in ctest):
//   build/tests/store_test --gtest_also_run_disabled_tests --gtest_filter='*Bench*'
// OPMAP_BENCH_DIR picks the folder for the SQLite file (default: the test temp dir),
// e.g. a real disk rather than tmpfs.
//   - commit throughput: kernel records/s for 10k-kernel batches whose payload is a
//     serialized Batch shaped like the agent's;
//   - latency-by-layer query time over rollups of 10 M kernels (1000 sessions × 10k
//     kernels, 30 rollup rows each). Target: p99 ≤ 100 ms.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "collector/store/sqlite/sqlite_store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector {
namespace {

using analysis::RollupSubject;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

std::string BenchFile(const testing::TempDir& dir, const std::string& name) {
  const char* env = std::getenv("OPMAP_BENCH_DIR");
  std::string path = env != nullptr ? std::string(env) + "/" + name : dir.File(name);
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  return path;
}

void CommitThroughput(bool synchronous_full) {
  testing::TempDir dir;
  const std::string path = BenchFile(dir, "commit_bench.db");
  auto store = SqliteStore::Open(path, {.synchronous_full = synchronous_full});
  ASSERT_TRUE(store.ok()) << store.status();
  constexpr int kKernels = 10'000;
  constexpr int kBatchesPerSession = 50;
  const int kBatches = synchronous_full ? 100 : 400;
  // Payloads are prepared up front: the collector hands the store bytes it received.
  std::vector<std::string> payloads;
  for (int i = 0; i < 8; ++i) {
    payloads.push_back(
        testing::MakeKernelBatch("a", "s", 2 + i, kKernels, 42).SerializeAsString());
  }
  const double bytes_per_kernel = static_cast<double>(payloads[0].size()) / kKernels;
  analysis::SessionRollup rollup;
  rollup.rows.push_back(testing::Row(RollupSubject::kKernel, "matmul", "aten::mm", "gemm", {1}));

  const auto t0 = Clock::now();
  for (int i = 0; i < kBatches; ++i) {
    testing::BatchSpec spec;
    spec.session = "s" + std::to_string(i / kBatchesPerSession);
    spec.seq = static_cast<uint64_t>(i % kBatchesPerSession) + 1;
    spec.last = spec.seq == kBatchesPerSession;
    opmap::v1::Batch header = testing::MakeBatch(spec);
    BatchCommit c{&header, payloads[i % payloads.size()], i, 100, kKernels,
                  spec.last ? &rollup : nullptr};
    ASSERT_EQ((*store)->CommitBatch(c).value(), CommitOutcome::kStored);
  }
  const double s = Seconds(Clock::now() - t0);
  std::printf("commit (synchronous=%s): %d batches x %d kernels (%.1f B/kernel) in %.3f s: "
              "%.2f M kernel records/s, %.1f MB/s, %.0f commits/s\n",
              synchronous_full ? "FULL" : "NORMAL", kBatches, kKernels, bytes_per_kernel, s,
              kBatches * kKernels / s / 1e6, kBatches * payloads[0].size() / s / 1e6,
              kBatches / s);
}

TEST(StoreBench, DISABLED_CommitThroughput) {
  CommitThroughput(false);
  CommitThroughput(true);
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::ceil(q * v.size())) - 1];
}

TEST(StoreBench, DISABLED_LatencyQueriesOver10MKernels) {
  testing::TempDir dir;
  const std::string path = BenchFile(dir, "query_bench.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  constexpr int kSessions = 1000;
  constexpr int kKernelRows = 25;   // (layer, operator, kernel) rows per session
  constexpr int kOperatorRows = 5;  // operator rows per session
  constexpr int kKernelsPerSession = 10'000;
  const char* kLayers[] = {"matmul", "attention", "norm", "elementwise", "memcpy"};
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.6);
  int64_t total_kernels = 0;
  const auto t0 = Clock::now();
  for (int s = 0; s < kSessions; ++s) {
    analysis::SessionRollup rollup;
    for (int j = 0; j < kKernelRows; ++j) {
      const int kernel = (s + j) % 60;
      const std::string layer = kLayers[kernel % 5];
      std::vector<int64_t> values(kKernelsPerSession / kKernelRows);
      const double median = 2000.0 * (1 + kernel % 17);
      for (int64_t& v : values) v = static_cast<int64_t>(median * std::exp(noise(rng)));
      total_kernels += static_cast<int64_t>(values.size());
      rollup.rows.push_back(testing::Row(RollupSubject::kKernel, layer, "aten::op" +
                                             std::to_string(kernel % 12),
                                         "kernel_" + std::to_string(kernel), values));
    }
    for (int j = 0; j < kOperatorRows; ++j) {
      std::vector<int64_t> values(200);
      for (int64_t& v : values) v = static_cast<int64_t>(50000 * std::exp(noise(rng)));
      rollup.rows.push_back(testing::Row(RollupSubject::kOperatorGpu, kLayers[j],
                                         "aten::op" + std::to_string(j), "", values));
    }
    analysis::DeviceBreakdown d;
    d.span_ns = 1'000'000;
    d.busy_ns = 800'000;
    d.idle_ns = 200'000;
    rollup.devices.push_back(d);
    testing::BatchSpec spec;
    spec.session = "s" + std::to_string(s);
    spec.host = "host-" + std::to_string(s % 16);
    spec.revision = s % 2 ? "r1" : "r2";
    spec.last = true;
    spec.window_start_ns = 1000 + s * 1000;
    spec.window_end_ns = 2000 + s * 1000;
    opmap::v1::Batch header = testing::MakeBatch(spec);
    BatchCommit c{&header, "", 1, 1, kKernelsPerSession, &rollup};
    ASSERT_EQ((*store)->CommitBatch(c).value(), CommitOutcome::kStored);
  }
  std::printf("setup: %d sessions, %lld kernels, %d rollup rows in %.2f s\n", kSessions,
              static_cast<long long>(total_kernels), kSessions * (kKernelRows + kOperatorRows),
              Seconds(Clock::now() - t0));

  // Wall and CPU time: on a shared machine the wall time includes waiting for a core.
  auto measure = [&](const std::string& what, const auto& run) {
    std::vector<double> ms, cpu_ms;
    for (int i = 0; i < 30; ++i) {
      const auto start = Clock::now();
      const double cpu_start = CpuSeconds();
      run();
      cpu_ms.push_back((CpuSeconds() - cpu_start) * 1e3);
      ms.push_back(Seconds(Clock::now() - start) * 1e3);
    }
    std::printf("%-44s wall p50 %6.1f p99 %6.1f ms | cpu p50 %6.1f p99 %6.1f ms\n",
                what.c_str(), Percentile(ms, 0.5), Percentile(ms, 0.99),
                Percentile(cpu_ms, 0.5), Percentile(cpu_ms, 0.99));
    return Percentile(cpu_ms, 0.99);
  };
  auto latency = [&](std::vector<opmap::v1::GroupBy> group_by, opmap::v1::LatencySubject subject,
                     int64_t end_ns = 0) {
    opmap::v1::LatencyRequest q;
    q.set_subject(subject);
    for (auto g : group_by) q.add_group_by(g);
    if (end_ns != 0) {
      q.mutable_range()->set_start_ns(1);
      q.mutable_range()->set_end_ns(end_ns);
    }
    auto r = (*store)->QueryLatency(q);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_GT(r->rows_size(), 0);
  };
  const double p99 = measure("latency by layer type (10M kernels)", [&] {
    latency({opmap::v1::GROUP_BY_LAYER_TYPE}, opmap::v1::LATENCY_SUBJECT_KERNEL);
  });
  // On CPU time: the wall time of a loaded, shared machine says little about the code.
  EXPECT_LE(p99, 100.0);
  measure("latency by kernel", [&] {
    latency({opmap::v1::GROUP_BY_KERNEL}, opmap::v1::LATENCY_SUBJECT_KERNEL);
  });
  measure("latency by host, layer type, operator", [&] {
    latency({opmap::v1::GROUP_BY_HOST, opmap::v1::GROUP_BY_LAYER_TYPE,
              opmap::v1::GROUP_BY_OPERATOR},
             opmap::v1::LATENCY_SUBJECT_KERNEL);
  });
  measure("latency by operator (operator GPU time)", [&] {
    latency({opmap::v1::GROUP_BY_OPERATOR}, opmap::v1::LATENCY_SUBJECT_UNSPECIFIED);
  });
  measure("latency by layer type, 10% of the time range", [&] {
    latency({opmap::v1::GROUP_BY_LAYER_TYPE}, opmap::v1::LATENCY_SUBJECT_KERNEL, 100'000);
  });
  measure("top kernels", [&] {
    auto r = (*store)->QueryTopKernels({});
    ASSERT_TRUE(r.ok()) << r.status();
  });
  measure("time breakdown", [&] {
    auto r = (*store)->QueryTimeBreakdown({});
    ASSERT_TRUE(r.ok()) << r.status();
  });
}

}  // namespace
}  // namespace opmap::collector
