// The moving parts of ingest_bench (bench/ingest_bench.cc): push a batched session template
// through one or more real `opmap-collector` processes and time the acks; time a
// latency-percentile query; run the ClickHouse test cluster (scripts/clickhouse_cluster.sh)
// for the scale-out figures.
#ifndef OPMAP_BENCH_INGEST_RUNNER_H_
#define OPMAP_BENCH_INGEST_RUNNER_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/collector_channel.h"
#include "opmap/v1/telemetry.pb.h"
#include "tests/integration/collector_fixture.h"

namespace opmap::bench {

std::string Commas(int64_t v);
// CPU seconds (user + system) a process has used so far, from /proc/PID/stat; -1 when
// unreadable. Load-independent, unlike throughput on a shared machine.
double ProcessCpuSeconds(pid_t pid);
double SelfCpuSeconds();

// One channel per collector, with the agent token the test collectors accept.
absl::StatusOr<std::vector<std::unique_ptr<opmap::client::CollectorChannel>>> AgentChannels(
    const std::vector<opmap::testing::CollectorProcess*>& collectors);

struct IngestPlan {
  const std::vector<opmap::v1::Batch>* batches = nullptr;  // one session, batched
  int64_t sessions = 0;
  int session_kernels = 0;
  int streams = 2;         // concurrent Ingest streams, dealt round-robin to the collectors
  size_t window = 64;      // unacknowledged batches per stream
  int agents = 16;         // session i belongs to agent "bench-agent-<i % agents>"
  std::string label;       // prefix of session ids (unique per run)
};

struct IngestResult {
  double seconds = 0;
  double client_cpu = 0;               // this process, seconds
  std::vector<double> collector_cpu;   // per collector, seconds
};

// Sessions are dealt to the streams as they pull them; stream s talks to collector
// s % collectors.size(). Waits for every ack.
absl::StatusOr<IngestResult> RunIngest(
    const IngestPlan& plan, const std::vector<opmap::testing::CollectorProcess*>& collectors);

struct QueryResult {
  std::vector<double> ms;        // sorted
  uint64_t counted = 0;          // kernels the answer counted
  size_t groups = 0;
  double collector_cpu_ms = 0;   // per query
  double Pct(double q) const { return ms[static_cast<size_t>(q * (ms.size() - 1))]; }
};

// LatencyPercentiles of kernel durations (p50/p95/p99) grouped by layer type, `runs` timed
// calls after untimed warm-ups. The warm-ups repeat (up to `settle`) until the answer
// counts `expect_kernels`: a ClickHouse replica may lag its peer for a few seconds.
absl::StatusOr<QueryResult> RunLatencyQuery(opmap::testing::CollectorProcess& collector,
                                            int runs, bool range_cut, int64_t range_start_ns,
                                            uint64_t expect_kernels, double settle_seconds);

// The 2-shard test cluster: the one OPMAP_CLICKHOUSE_ENV names, or one started in a temp
// dir with scripts/clickhouse_cluster.sh and stopped at destruction. `Url(suffix)` names a
// database of its own, `database() + suffix` (every one handed out is dropped at
// destruction), so a shared cluster is left as found.
class BenchCluster {
 public:
  static absl::StatusOr<std::unique_ptr<BenchCluster>> Acquire(const std::string& script);
  ~BenchCluster();

  std::string Url(const std::string& suffix = "") const;
  std::string database(const std::string& suffix = "") const { return database_ + suffix; }
  bool owned() const { return owned_; }
  std::vector<pid_t> ServerPids() const;  // clickhouse-server processes (CH_PIDS)
  const std::string& Env(const std::string& key) const;
  // Runs a statement on the cluster (first server that answers); the body.
  absl::StatusOr<std::string> Query(const std::string& sql) const;

 private:
  BenchCluster() = default;
  std::unique_ptr<opmap::testing::TempDir> temp_;
  std::string script_, dir_, url_head_, url_tail_, database_;
  mutable std::vector<std::string> handed_out_;
  bool owned_ = false;
  std::map<std::string, std::string> env_;
};

}  // namespace opmap::bench

#endif  // OPMAP_BENCH_INGEST_RUNNER_H_
