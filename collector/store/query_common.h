// What every Store engine shares — the commit checks, and for the queries, so SQLite and ClickHouse give the same answers
// from the same input: request validation and planning (which rollup subject, which key
// columns, which groupings are refused or unavailable), the per-group accumulator
// (exact count/sum/min/max and the merged sketch), and the finishing steps (ordering,
// limits, quantiles, the Unavailable entries and their wording) of the latency, top-kernel,
// time-breakdown and counters queries. An engine only selects and merges rows.
// Private to collector/store.
#ifndef OPMAP_COLLECTOR_STORE_QUERY_COMMON_H_
#define OPMAP_COLLECTOR_STORE_QUERY_COMMON_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/stats/ddsketch.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/rollup.h"
#include "collector/store/rollup_buckets.h"
#include "collector/store/sketch_columns.h"
#include "collector/store/store.h"
#include "opmap/v1/query.pb.h"

namespace opmap::collector::query_common {

// CommitBatch's checks of a commit (batch set, identity, seq): InvalidArgument naming
// the field. The same for every engine.
absl::Status ValidateCommit(const BatchCommit& commit);

// InvalidArgument unless the range is 0/0 (everything) or end > start.
absl::Status ValidateRange(const opmap::v1::TimeRange& range);

opmap::v1::Unavailable MakeUnavailable(std::string what, std::string reason);
inline constexpr char kNoSessions[] = "no complete session matches the range and filter";
// Sessions rolled up by an older collector (SQLite schema before v3 / v4).
opmap::v1::Unavailable BeforeV3(int64_t sessions);
opmap::v1::Unavailable BeforeV4(int64_t sessions);

// Complete sessions a range and filter select, and how many of them an older collector
// rolled up without host subjects and counters (before v3) or without modules (before v4).
struct SessionCount {
  int64_t complete = 0;
  int64_t before_v3 = 0;
  int64_t before_v4 = 0;
};
using CountSessionsFn = absl::FunctionRef<absl::StatusOr<SessionCount>()>;

// Exact count/sum/min/max plus the merged sketch of one output group.
struct Accumulator {
  ExactStats exact;  // the same merge as a bucket row's, so buckets change no answer
  SketchAccumulator sketch;

  // `what` names the row in the error of a damaged sketch (called only then).
  absl::Status Add(int64_t count, int64_t sum_ns, int64_t min_ns, int64_t max_ns,
                   const StoredSketch& s, absl::FunctionRef<std::string()> what);
  // The same for bins already decoded (or merged by the engine): bins[k] counts index
  // offset + k.
  absl::Status AddBins(int64_t count, int64_t sum_ns, int64_t min_ns, int64_t max_ns, int scale,
                       int64_t offset, const std::vector<uint64_t>& bins, uint64_t zero_count,
                       double sum, double min, double max, absl::FunctionRef<std::string()> what);
  absl::StatusOr<stats::DDSketch> Sketch() const;
};

// A grouping column; kModuleType is analysis::ModuleTypeOf(module).
enum class KeyColumn {
  kHost, kRevision, kLayerType, kOperator, kKernel, kModule, kModuleType, kSession
};

struct LatencyPlan {
  analysis::RollupSubject subject = analysis::RollupSubject::kKernel;
  std::vector<double> quantiles;
  std::vector<KeyColumn> columns;
  bool host_subject = false;  // kRequest / kOperatorCpu
  bool is_request = false;
  bool is_component = false;  // kRequestComponent / kRequestExemplar (tail_buckets.h)
  bool by_module = false;     // a kModule or kModuleType column
  bool by_session = false;
};

// Validates `request` (range, quantiles, subject, group_by: InvalidArgument naming the
// field) and plans it. A grouping that can be named but not answered (REQUEST for
// non-request subjects) is added to `response` as unavailable: the caller then returns
// `response` as it is, without rows.
absl::StatusOr<LatencyPlan> PlanLatency(const opmap::v1::LatencyRequest& request,
                                        opmap::v1::LatencyResponse& response);

struct LatencyGroup {
  std::vector<std::string> key;  // one per plan column
  Accumulator acc;
  int64_t window_start_ns = 0, window_end_ns = 0;  // output with a session column
};

// Orders (largest sum first, then key), limits and writes the rows, with the Unavailable
// entries for sessions an older collector rolled up (`count_sessions` is called only when
// needed) and for empty answers.
absl::Status FinishLatency(const opmap::v1::LatencyRequest& request, const LatencyPlan& plan,
                           std::vector<LatencyGroup> groups, CountSessionsFn count_sessions,
                           opmap::v1::LatencyResponse& response);

struct KernelGroup {
  std::string name;
  Accumulator acc;
  analysis::LayerTimes layer_time = {};
};
// Top kernels by total time; `total_ns` is the time of every selected kernel.
absl::Status FinishTopKernels(const opmap::v1::TopKernelsRequest& request,
                              std::vector<KernelGroup> kernels, int64_t total_ns,
                              opmap::v1::TopKernelsResponse& response);

// Per (host, GPU) device time. A GPU whose UUID the agent did not report is keyed, and
// reported, as "device:<ordinal>" of its process.
class DeviceTimes {
 public:
  void Add(std::string_view host, int64_t device, std::string_view uuid, std::string_view name,
           int64_t span_ns, int64_t busy_ns, int64_t idle_ns, int64_t compute_ns,
           int64_t non_compute_ns, int64_t event_count);
  void Finish(opmap::v1::TimeBreakdownResponse& response);

 private:
  std::map<std::pair<std::string, std::string>, opmap::v1::DeviceTime> devices_;
};

// Counters: group_by keys (HOST, REVISION or PID; InvalidArgument otherwise).
enum class CounterKey { kHost, kRevision, kPid };
absl::StatusOr<std::vector<CounterKey>> PlanCounters(const opmap::v1::CountersRequest& request);

// Counter totals per (key, name, source); rows of one session must come together (the
// group counts a session and its window when the session changes).
class CounterTotals {
 public:
  explicit CounterTotals(std::vector<CounterKey> keys) : keys_(std::move(keys)) {}
  void AddCounter(std::string_view session, std::string_view host, std::string_view revision,
                  int64_t window_start_ns, int64_t window_end_ns, std::string_view name,
                  int source, int64_t pid, int64_t samples, int64_t value,
                  int64_t time_enabled_ns, int64_t time_running_ns);
  void AddDrop(int stage, int kind, std::string_view reason, int64_t count);
  // Distinct (what, reason) pairs, in order; at most limit + 1 are needed.
  void AddUnavailable(std::string_view what, std::string_view reason);
  absl::Status Finish(const opmap::v1::CountersRequest& request, CountSessionsFn count_sessions,
                      opmap::v1::CountersResponse& response);

 private:
  struct Group {
    std::vector<std::string> key;
    std::string name;
    int source = 0;
    int64_t samples = 0, value = 0, enabled = 0, running = 0;
    int64_t sessions = 0, window_ns = 0;
    std::string last_session;
  };
  std::vector<CounterKey> keys_;
  std::vector<Group> groups_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::map<std::tuple<int, int, std::string>, int64_t> drops_;
  std::vector<std::pair<std::string, std::string>> unavailable_;
};

inline constexpr uint32_t kDefaultLatencyLimit = 1000;
inline constexpr uint32_t kDefaultTopKernels = 20;
inline constexpr uint32_t kDefaultCounterRows = 1000;

// Appends `part` length-prefixed, so no name can collide with another key.
void AppendKeyPart(std::string& key, std::string_view part);

}  // namespace opmap::collector::query_common

#endif  // OPMAP_COLLECTOR_STORE_QUERY_COMMON_H_
