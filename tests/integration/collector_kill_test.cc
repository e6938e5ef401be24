// The collector SIGKILLed mid-import, alone and under concurrent imports whose batches
// share group-commit transactions: restarted on the same file and port, it stores every
// trace exactly (nothing lost, nothing twice).

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
#include "tests/integration/collector_test_fixture.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;
using collector_it::CollectorTest;
using collector_it::kQuantileNames;

TEST_F(CollectorTest, ConcurrentImportsSurviveKillsMidGroupCommit) {
  const std::string name = "hta_alexnet_a100.json.gz";
  OPMAP_REQUIRE_SHARED("traces/" + name);
  const std::string path = SharedPath("traces/" + name);
  Expected e = Analyze(path);
  // A group waits 20 ms for more batches: light load still makes groups of several.
  collector_->Kill();
  CollectorProcess::Options options;
  options.dir = dir_.File("grouped");
  ASSERT_EQ(mkdir(options.dir.c_str(), 0700), 0);
  options.extra = {"--group-commit-delay", "20ms"};
  collector_ = std::make_unique<CollectorProcess>(options);
  ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();
  constexpr int kImports = 4;
  std::vector<std::unique_ptr<Child>> imports;
  for (int i = 0; i < kImports; ++i) {
    std::vector<std::string> argv = {OpmapBin(), "import", path, "--batch-records", "20",
                                     "--retry-for", "60s", "--label",
                                     absl::StrCat("group=", i)};
    for (auto& a : Conn(kAgentToken)) argv.push_back(a);
    imports.push_back(std::make_unique<Child>());
    ASSERT_TRUE(imports.back()
                    ->Start(argv, dir_.File(absl::StrCat("import", i, ".out")),
                            dir_.File(absl::StrCat("import", i, ".err")))
                    .ok());
  }
  auto running = [&] {
    int n = 0;
    for (auto& c : imports) n += c->running() ? 1 : 0;
    return n;
  };
  for (int after : {10, 25}) {
    absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline &&
           collector_->Metric("opmap_collector_batches_total") < after) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_GE(running(), 2) << "the imports ended before the kill: too small to kill mid-way";
    collector_->Kill();
    ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  }
  for (int i = 0; i < kImports; ++i) {
    std::optional<int> code = imports[i]->Wait(absl::Seconds(120));
    const std::string err = ReadFileOrEmpty(dir_.File(absl::StrCat("import", i, ".err")));
    ASSERT_TRUE(code.has_value()) << "import " << i << " did not finish:\n" << err;
    ASSERT_EQ(*code, 0) << err;
  }
  int reconnected = 0;
  for (int i = 0; i < kImports; ++i) {
    reconnected += absl::StrContains(
        ReadFileOrEmpty(dir_.File(absl::StrCat("import", i, ".err"))), "reconnecting");
  }
  EXPECT_GE(reconnected, 2) << "the kills reached too few imports mid-way";
  // Some transaction held batches of more than one stream (since the last restart).
  EXPECT_GT(collector_->Metric("opmap_collector_group_commit_batches_total"),
            collector_->Metric("opmap_collector_group_commits_total"));
  for (int i = 0; i < kImports; ++i) {
    LatencyResult all = Latency("kernel", {}, absl::StrCat("group=", i));
    ASSERT_EQ(all.rows.size(), 1u) << i;
    EXPECT_EQ(all.rows[0].count, e.summary.gpu_event_count) << i;
    EXPECT_EQ(all.rows[0].sum_ns, e.summary.gpu_time_ns) << i;
  }
}

// The collector is SIGKILLed three times while the largest shared trace is imported in
// small batches, and restarted on the same database and port each time.
TEST_F(CollectorTest, ImportSurvivesThreeCollectorKills) {
  const std::string name = "kineto_resnet50_v100_2021.json.gz";
  OPMAP_REQUIRE_SHARED("traces/" + name);
  const std::string path = SharedPath("traces/" + name);
  Expected e = Analyze(path);
  const int64_t records = static_cast<int64_t>(e.trace.gpu_events.size() +
                                               e.trace.api_calls.size() + e.trace.ranges.size());
  const int64_t batches = (records + 499) / 500;
  ASSERT_GT(batches, 60) << "the trace is too small to be killed three times mid-import";

  Child import;
  std::vector<std::string> argv = {OpmapBin(), "import", path, "--batch-records", "500",
                                   "--retry-for", "60s", "--label", "trace=kill"};
  for (auto& a : Conn(kAgentToken)) argv.push_back(a);
  ASSERT_TRUE(import.Start(argv, dir_.File("import.out"), dir_.File("import.err")).ok());

  // Kill once this collector process has stored `after` batches: staggered moments,
  // and staggered downtimes so the importer sees refused connections and backs off.
  const int after[3] = {5, 12, 20};
  const int down_ms[3] = {0, 300, 900};
  for (int k = 0; k < 3; ++k) {
    absl::Time deadline = absl::Now() + absl::Seconds(60);
    int64_t stored = 0;
    while (absl::Now() < deadline && import.running()) {
      stored = collector_->Metric("opmap_collector_batches_total");
      if (stored >= after[k]) break;
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_TRUE(import.running()) << "the import ended before kill " << k + 1 << ":\n"
                                  << ReadFileOrEmpty(dir_.File("import.err"));
    ASSERT_GE(stored, after[k]) << "no progress before kill " << k + 1;
    collector_->Kill();
    absl::SleepFor(absl::Milliseconds(down_ms[k]));
    ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  }
  std::optional<int> code = import.Wait(absl::Seconds(120));
  const std::string err = ReadFileOrEmpty(dir_.File("import.err"));
  ASSERT_TRUE(code.has_value()) << "import did not finish:\n" << err;
  ASSERT_EQ(*code, 0) << err;
  EXPECT_THAT(err, HasSubstr("reconnecting"));
  const std::string out = ReadFileOrEmpty(dir_.File("import.out"));
  EXPECT_THAT(out, HasSubstr(absl::StrCat(batches, " batches, ", e.trace.gpu_events.size(),
                                          " GPU events")));

  // Exactly the trace: nothing lost, nothing twice.
  LatencyResult all = Latency("kernel", {}, "trace=kill");
  ASSERT_EQ(all.rows.size(), 1u);
  EXPECT_EQ(all.rows[0].count, e.summary.gpu_event_count);
  EXPECT_EQ(all.rows[0].sum_ns, e.summary.gpu_time_ns);
  LatencyResult ops = Latency("operator", {}, "trace=kill");
  ASSERT_EQ(ops.rows.size(), 1u);
  EXPECT_EQ(ops.rows[0].count, e.operator_instance_count);
  EXPECT_EQ(ops.rows[0].sum_ns, e.operator_gpu_time_ns);
  LatencyResult kernels = Latency("kernel", {"kernel"}, "trace=kill");
  ASSERT_EQ(kernels.rows.size(), e.summary.kernels.size());
  for (const LatencyRow& r : kernels.rows) {
    ASSERT_TRUE(e.kernel_durations.count(r.key[0])) << r.key[0];
    EXPECT_EQ(r.count, static_cast<int64_t>(e.kernel_durations.at(r.key[0]).size())) << r.key[0];
  }
  // And the raw batches: the export holds every GPU event once.
  RunResult exp = Opmap({"export", "--collector", collector_->address(), "--token",
                         kAnalystToken, "--label", "trace=kill", "--out", dir_.File("kill.json")},
                        dir_.path());
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  absl::StatusOr<analysis::Trace> back =
      analysis::ImportKinetoBytes(ReadFileOrEmpty(dir_.File("kill.json")));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gpu_events.size(), e.trace.gpu_events.size());
}

}  // namespace
}  // namespace opmap::testing
