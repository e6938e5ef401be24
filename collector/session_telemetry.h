// What one capture session's batches carry besides events — CounterSamples, PowerSamples
// and DropCounters — summed over the session, for the store to keep beside its rollup
// (SessionTelemetry in store/store.h; the Counters query reads it).
//
// Counter rows are increments (telemetry.proto), so sums over a session's batches are
// the session's totals and need no state but the sums. Names are ids into the session's
// string table: the accumulator mirrors the wire ids of every string-table delta the
// SessionAssembler applied (4 bytes per string), so it must see every batch the
// assembler took, in the same order — including a rejected batch's stored remainder
// (its delta, no events).
//
// Bounded: at most kMaxCounters distinct (name, source, pid), kMaxDrops distinct
// (stage, kind, reason) and kMaxUnavailable distinct (what, reason) per session; what
// does not fit is not lost silently: drops beyond the limit are summed under one reason
// "other (...)", and counter samples and unavailable entries beyond it are counted and
// reported as unavailable entries.
//
// Thread-compatible (the ingest service holds it under the session's lock).
#ifndef OPMAP_COLLECTOR_SESSION_TELEMETRY_H_
#define OPMAP_COLLECTOR_SESSION_TELEMETRY_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/model/string_table.h"
#include "analysis/wire/batch_codec.h"
#include "collector/store/store.h"
#include "opmap/v1/telemetry.pb.h"

namespace opmap::collector {

class TelemetryAccumulator {
 public:
  static constexpr size_t kMaxCounters = 4096;
  static constexpr size_t kMaxDrops = 1024;
  static constexpr size_t kMaxUnavailable = 256;
  static constexpr size_t kMaxPowerDevices = 256;

  // `stored` was just appended to `assembler` (SessionAssembler::Append succeeded).
  void Add(const opmap::v1::Batch& stored, const analysis::SessionAssembler& assembler);

  // Totals in a stable order: counters by (name, source, pid), drops by (stage, kind,
  // reason), unavailable in the order first reported.
  // `strings`: the assembler's table (the ids Add mirrored).
  SessionTelemetry Finish(const analysis::StringTable& strings) const;

 private:
  struct Sums {
    int64_t samples = 0, value = 0, enabled = 0, running = 0;
  };
  using CounterKey = std::tuple<analysis::StringId, int, uint32_t>;
  using DropKey = std::tuple<int, int, std::string>;

  std::vector<analysis::StringId> wire_to_model_;  // session wire id -> assembler's id
  absl::flat_hash_map<CounterKey, Sums> counters_;
  absl::flat_hash_map<DropKey, int64_t> drops_;
  std::map<std::pair<int, std::string>, opmap::v1::PowerSample> power_;  // (domain, device)
  int64_t power_over_limit_ = 0;
  std::vector<std::pair<std::string, std::string>> unavailable_;
  absl::flat_hash_set<std::pair<std::string, std::string>> seen_unavailable_;
  int64_t counters_over_limit_ = 0;  // rows whose key did not fit
  int64_t unavailable_over_limit_ = 0;

  void AddUnavailable(std::string what, std::string reason);
  void AddPower(const opmap::v1::PowerSample& row);
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_SESSION_TELEMETRY_H_
