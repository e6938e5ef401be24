// The fleet simulation of ingest_bench (--fleet N): N agent ids each sending capture
// windows of a realistic size mix, time-compressed (as fast as the collectors ack), each
// window its own Ingest stream as an agent's burst is. Prints what capacity planning
// needs (docs/capacity.md): windows/s sustained, the ack latency of a window (first batch
// sent to last ack) p50/p99, CPU per window and per kernel.
#ifndef OPMAP_BENCH_FLEET_SIM_H_
#define OPMAP_BENCH_FLEET_SIM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "opmap/v1/telemetry.pb.h"
#include "tests/integration/collector_fixture.h"

namespace opmap::bench {

// One size class of windows: its batches (one session) and how often it comes.
struct WindowClass {
  const std::vector<opmap::v1::Batch>* batches = nullptr;
  int kernels = 0;
  double weight = 0;
};

struct FleetPlan {
  std::vector<WindowClass> classes;
  int agents = 10'000;     // agent ids "fleet-agent-NNNNN"
  int64_t windows = 5'000;
  int streams = 32;        // windows in flight at once
  std::string label;       // prefix of session ids (unique per run)
  uint64_t seed = 7;
};

struct FleetResult {
  double seconds = 0;
  int64_t windows = 0, kernels = 0;
  std::vector<double> ack_ms;  // per window, sorted
  double client_cpu = 0;
  std::vector<double> collector_cpu;
  double AckPct(double q) const;
};

// The windows are dealt to `plan.streams` senders; sender s talks to collector
// s % collectors.size(). Waits for every ack.
absl::StatusOr<FleetResult> RunFleet(
    const FleetPlan& plan, const std::vector<opmap::testing::CollectorProcess*>& collectors);

// What the engine spent besides the collectors, and what it stores, for the printout.
struct EngineCost {
  double server_cpu = -1;  // ClickHouse servers, seconds; -1: not measured
  double zk_cpu = -1;      // ZooKeeper, seconds
  double store_bytes = -1; // SQLite file + WAL; ClickHouse: active parts of the database
};

// Prints the fleet figures of one engine: windows/s against the fleet's need at the
// default cadence, ack p50/p99, CPU per window and per M kernels, bytes per kernel.
void PrintFleet(const std::string& engine, const FleetPlan& plan, const FleetResult& r,
                const EngineCost& cost);

}  // namespace opmap::bench

#endif  // OPMAP_BENCH_FLEET_SIM_H_
