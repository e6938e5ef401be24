// Scale-out: two stateless collector replicas in front of the 2-shard ClickHouse
// cluster (shard 1 with two replicas). A shared H100 trace goes in as an agent's batches,
// alternating between the two collectors; mid-import one collector and one ClickHouse
// replica are SIGKILLed, the batches meant for the dead collector fail over to the other,
// and batches already acked are resent to the other replica (as an agent does after a
// broken stream). Then: nothing lost, nothing twice — the stored GPU-event count equals the
// trace's — and every query answer equals the answer of a SQLite collector fed the same
// batches in order. Then the same for many one-batch windows from concurrent agents, whose
// batches share group commits, with a collector killed mid-group.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/import/kineto_importer.h"
#include "analysis/wire/batch_codec.h"
#include "collector/clickhouse_client/http_client.h"
#include "gtest/gtest.h"
#include "opmap/v1/ingest.grpc.pb.h"
#include "tests/integration/clickhouse_cluster_fixture.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"
#include "tests/testing/shared_data.h"

namespace opmap::testing {
namespace {

constexpr char kTrace[] = "traces/tl_h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";

// Sends one batch on a stream of its own and waits for its ack: true when the collector
// says it is durable (stored now or before).
bool Send(const std::string& address, const opmap::v1::Batch& batch, std::string* error) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = opmap::v1::Ingest::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kAgentToken);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub->Ingest(&ctx);
  if (!stream->Write(batch)) {
    *error = "write failed";
    stream->WritesDone();
    stream->Finish();
    return false;
  }
  stream->WritesDone();
  opmap::v1::Ack ack;
  bool durable = false;
  while (stream->Read(&ack)) {
    if (ack.rejected_size() > 0) *error = ack.rejected(0).message();
    if (ack.durable_seq() >= batch.seq()) durable = true;
  }
  grpc::Status st = stream->Finish();
  if (!st.ok() && error->empty()) *error = st.error_message();
  return durable;
}

// Retries like an agent: the first address, then the others, until one acks.
void SendWithFailover(const std::vector<std::string>& addresses, const opmap::v1::Batch& batch) {
  std::string error;
  for (int attempt = 0; attempt < 60; ++attempt) {
    for (const std::string& a : addresses) {
      if (Send(a, batch, &error)) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ADD_FAILURE() << "batch seq " << batch.seq() << " never acked: " << error;
}

class ScaleOut : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = AcquireClickHouseCluster(/*fresh=*/true);
    OPMAP_REQUIRE_CLICKHOUSE(cluster);
    cluster_ = std::move(*cluster);
    // The cluster's URL with a database of this test's own.
    std::string url = cluster_->Url();
    const size_t slash = url.find('/', std::string("clickhouse://").size());
    const size_t query = url.find('?', slash);
    db_ = UniqueTableName("scaleout");
    url = url.substr(0, slash + 1) + db_ + url.substr(query);
    for (auto* c : {&a_, &b_}) {
      CollectorProcess::Options o;
      o.dir = dir_.path() + (c == &a_ ? "/a" : "/b");
      std::filesystem::create_directories(o.dir);
      o.store = url;
      // The traces' clocks are near 1970: the default retention would drop their events
      // when a collector (re)starts.
      o.extra = {"--raw-retention", "1000000h"};
      *c = std::make_unique<CollectorProcess>(o);
      ASSERT_TRUE((*c)->Start().ok()) << (*c)->Log();
    }
    CollectorProcess::Options o;
    o.dir = dir_.path() + "/sqlite";
    std::filesystem::create_directories(o.dir);
    sqlite_ = std::make_unique<CollectorProcess>(o);
    ASSERT_TRUE(sqlite_->Start().ok()) << sqlite_->Log();
  }

  std::string Query(const std::string& address, std::vector<std::string> args) {
    std::vector<std::string> argv = {OpmapBin(), "query"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--collector", address, "--format", "json"});
    RunResult r = opmap::testing::Run(argv, dir_.path(), {std::string("OPMAP_TOKEN=") + kAnalystToken},
                                      absl::Seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // The rows of the copy of each session that counts (docs/scale-out.md, analysts' SQL).
  std::string Counted() const {
    return absl::StrCat("(agent, session, flush) GLOBAL IN (SELECT agent, session, min(flush) "
                        "FROM ", db_, ".sessions GROUP BY agent, session)");
  }

  // A statement on the cluster: its TSV answer.
  std::string ClickHouse(const std::string& sql) {
    collector::clickhouse_client::HttpClient client(cluster_->Options());
    absl::StatusOr<std::string> body = client.Query(absl::StrCat(sql, " FORMAT TSV"));
    EXPECT_TRUE(body.ok()) << sql << ": " << body.status();
    return body.ok() ? *body : "";
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<ClickHouseCluster> cluster_;
  std::unique_ptr<CollectorProcess> a_, b_, sqlite_;
};

TEST_F(ScaleOut, AlternatingReplicasWithKillsStoreExactlyOnceAndAnswerLikeSqlite) {
  OPMAP_REQUIRE_SHARED(kTrace);
  absl::StatusOr<analysis::Trace> trace =
      analysis::ImportKinetoBytes(ReadFileOrDie(SharedPath(kTrace)));
  ASSERT_TRUE(trace.ok()) << trace.status();
  analysis::BatchingOptions options;
  options.agent_id = "scale-out-agent";
  options.session_id = "qwen-1";
  options.resource.set_host("h1");
  options.resource.set_model_name("qwen1.5-0.5b");
  options.resource.set_model_revision("r1");
  options.max_records_per_batch = 600;
  absl::StatusOr<std::vector<opmap::v1::Batch>> batches = analysis::TraceToBatches(*trace, options);
  ASSERT_TRUE(batches.ok()) << batches.status();
  const size_t n = batches->size();
  ASSERT_GE(n, 9u) << "the trace should make several batches";

  const std::string a = a_->address(), b = b_->address();
  for (size_t i = 0; i < n; ++i) {
    const opmap::v1::Batch& batch = (*batches)[i];
    if (i == n / 3) {
      // Mid-import: collector B and shard 1's second replica die.
      b_->Kill();
      ASSERT_TRUE(cluster_->KillReplica("shard1-replica2").ok());
      // The agent resends what B had acked to A: dropped as a duplicate.
      SendWithFailover({a}, (*batches)[i - 1]);
    }
    if (i == 2 * n / 3) {
      // B comes back while the ClickHouse replica is still down, then the replica.
      ASSERT_TRUE(b_->Restart().ok()) << b_->Log();
      ASSERT_TRUE(cluster_->RestartReplica("shard1-replica2").ok());
    }
    const bool to_b = i % 2 == 1;
    const bool b_down = i >= n / 3 && i < 2 * n / 3;
    if (to_b && !b_down) {
      SendWithFailover({b, a}, batch);
    } else if (to_b) {
      SendWithFailover({b, a}, batch);  // B is down: fails over to A
    } else {
      SendWithFailover({a, b}, batch);
    }
  }
  // After the restarts: the last two batches again, through the other replica each.
  SendWithFailover({b}, (*batches)[n - 2]);
  SendWithFailover({a}, (*batches)[n - 1]);
  for (const opmap::v1::Batch& batch : *batches) SendWithFailover({sqlite_->address()}, batch);

  // Nothing lost, nothing twice: one value per GPU event of the trace.
  const std::string total = Query(a, {"latency", "--subject", "kernel"});
  LatencyResult result;
  ASSERT_TRUE(ParseLatencyJson(total, {}, {"p50", "p95", "p99"}, &result)) << total;
  ASSERT_EQ(result.rows.size(), 1u) << total;
  EXPECT_EQ(result.rows[0].count, static_cast<int64_t>(trace->gpu_events.size()));

  // The session's events, each once (the copy of the least flush: docs/scale-out.md),
  // attributed as the rollup is: per layer type the SQLite collector's count and sum.
  std::map<analysis::GpuEventKind, int64_t> gpu_kinds;
  for (const analysis::GpuEvent& g : trace->gpu_events) ++gpu_kinds[g.kind];
  std::string want_kinds;
  const char* kKindNames[] = {"kernel", "memcpy", "memset"};
  for (const auto& [kind, count] : gpu_kinds) {
    absl::StrAppend(&want_kinds, kKindNames[static_cast<int>(kind)], "\t", count, "\n");
  }
  absl::StrAppend(&want_kinds, "range\t", trace->ranges.size(), "\nlaunch\t",
                  trace->api_calls.size(), "\n");
  EXPECT_EQ(ClickHouse(absl::StrCat("SELECT kind, count() FROM ", db_,
                                    ".events WHERE session = 'qwen-1' AND ", Counted(),
                                    " GROUP BY kind ORDER BY kind")),
            want_kinds);
  LatencyResult by_layer;
  const std::string layers =
      Query(sqlite_->address(), {"latency", "--subject", "kernel", "--group-by", "layer_type"});
  ASSERT_TRUE(ParseLatencyJson(layers, {"layer_type"}, {"p50", "p95", "p99"}, &by_layer));
  std::vector<std::string> want_layers;
  for (const LatencyRow& row : by_layer.rows) {
    want_layers.push_back(absl::StrCat(row.key[0], "\t", row.count, "\t", row.sum_ns));
  }
  std::sort(want_layers.begin(), want_layers.end());
  EXPECT_EQ(ClickHouse(absl::StrCat("SELECT layer_type, count(), sum(duration_ns) FROM ", db_,
                                    ".events WHERE kind IN ('kernel', 'memcpy', 'memset') AND ",
                                    Counted(), " GROUP BY layer_type ORDER BY layer_type")),
            absl::StrJoin(want_layers, "\n") + "\n");
  // One sessions row and one bucketed session, whichever replica wrote them.
  EXPECT_EQ(ClickHouse(absl::StrCat("SELECT count(), sum(bucketed) FROM ", db_, ".sessions")),
            "1\t1\n");

  // Every answer equals the SQLite collector's, from either ClickHouse replica.
  const std::vector<std::vector<std::string>> queries = {
      {"latency", "--subject", "kernel", "--group-by", "layer_type"},
      {"latency", "--subject", "kernel", "--group-by", "kernel"},
      {"latency", "--subject", "operator-gpu", "--group-by", "operator"},
      {"latency", "--subject", "operator-cpu", "--group-by", "module,operator"},
      {"latency", "--subject", "request"},
      {"latency", "--subject", "kernel", "--group-by", "revision,session"},
      {"kernels", "--top", "50"},
      {"breakdown"},
      {"counters"},
  };
  for (const auto& q : queries) {
    SCOPED_TRACE(absl::StrJoin(q, " "));
    const std::string want = Query(sqlite_->address(), q);
    EXPECT_EQ(Query(a, q), want);
    EXPECT_EQ(Query(b, q), want);
  }
}

// Many one-batch windows from concurrent agents, so that groups hold several sessions, and
// the collector they go to SIGKILLed mid-import: each window is resent to the other
// replica or to the restarted one, and every answer still counts each window once.
TEST_F(ScaleOut, SmallWindowsInGroupsSurviveACollectorKilledMidGroup) {
  constexpr char kSmall[] = "traces/hta_triton_example_a100.json.gz";
  OPMAP_REQUIRE_SHARED(kSmall);
  absl::StatusOr<analysis::Trace> trace = analysis::ImportKinetoBytes(ReadFileOrDie(SharedPath(kSmall)));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_GT(trace->gpu_events.size(), 0u);
  constexpr int kAgents = 6, kWindows = 8;  // per agent
  auto window = [&](int agent, int w) {
    analysis::BatchingOptions options;
    options.agent_id = absl::StrCat("fleet-agent-", agent);
    options.session_id = absl::StrCat("window-", w);
    options.resource.set_host(absl::StrCat("h", agent));
    options.resource.set_model_name("triton");
    options.resource.set_model_revision("r1");
    absl::StatusOr<std::vector<opmap::v1::Batch>> batches =
        analysis::TraceToBatches(*trace, options);
    EXPECT_TRUE(batches.ok()) << batches.status();
    return batches.ok() ? *batches : std::vector<opmap::v1::Batch>{};
  };
  ASSERT_EQ(window(0, 0).size(), 1u) << "a window should be one batch";
  const std::string a = a_->address(), b = b_->address();
  std::vector<std::thread> agents;
  for (int g = 0; g < kAgents; ++g) {
    agents.emplace_back([&, g] {
      for (int w = 0; w < kWindows; ++w) {
        for (const opmap::v1::Batch& batch : window(g, w)) SendWithFailover({a, b}, batch);
      }
    });
  }
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline && a_->Metric("opmap_collector_batches_total") < kAgents) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  const int64_t grouped_a = a_->Metric("opmap_collector_group_commit_batches_total") -
                            a_->Metric("opmap_collector_group_commits_total");
  a_->Kill();
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_TRUE(a_->Restart().ok()) << a_->Log();
  for (std::thread& t : agents) t.join();
  for (int g = 0; g < kAgents; ++g) {
    for (int w = 0; w < kWindows; ++w) {
      for (const opmap::v1::Batch& batch : window(g, w)) {
        SendWithFailover({sqlite_->address()}, batch);
      }
    }
  }
  EXPECT_GT(grouped_a + b_->Metric("opmap_collector_group_commit_batches_total") -
                b_->Metric("opmap_collector_group_commits_total") +
                a_->Metric("opmap_collector_group_commit_batches_total") -
                a_->Metric("opmap_collector_group_commits_total"),
            0)
      << "no group held more than one batch";

  const std::string total = Query(a, {"latency", "--subject", "kernel"});
  LatencyResult result;
  ASSERT_TRUE(ParseLatencyJson(total, {}, {"p50", "p95", "p99"}, &result)) << total;
  ASSERT_EQ(result.rows.size(), 1u) << total;
  EXPECT_EQ(result.rows[0].count,
            static_cast<int64_t>(trace->gpu_events.size()) * kAgents * kWindows);
  EXPECT_EQ(ClickHouse(absl::StrCat("SELECT count() FROM ", db_, ".events WHERE kind = "
                                    "'kernel' AND ", Counted())),
            absl::StrCat(std::count_if(trace->gpu_events.begin(), trace->gpu_events.end(),
                                       [](const analysis::GpuEvent& e) {
                                         return e.kind == analysis::GpuEventKind::kKernel;
                                       }) *
                             kAgents * kWindows,
                         "\n"));
  for (const std::vector<std::string>& q :
       std::vector<std::vector<std::string>>{
           {"latency", "--subject", "kernel", "--group-by", "host,layer_type"},
           {"latency", "--subject", "operator-gpu", "--group-by", "operator"},
           {"kernels", "--top", "20"},
           {"breakdown"}}) {
    SCOPED_TRACE(absl::StrJoin(q, " "));
    const std::string want = Query(sqlite_->address(), q);
    EXPECT_EQ(Query(a, q), want);
    EXPECT_EQ(Query(b, q), want);
  }
}

}  // namespace
}  // namespace opmap::testing
