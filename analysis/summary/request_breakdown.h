// RequestBreakdown: where each request's time went — every instant of a request range
// (serving/request_key.h) given to exactly one component, so that a request's components
// sum to its duration (docs/metrics.md, "Tail latency"):
//   queue          before the request's service began: from its `arrival` mark (an NVTX
//                  mark or range named `arrival` with the request's payload, before its
//                  range) to its range's start, or within a request range joined by
//                  payload to the ranges serving it (below) until the first of them;
//   gpu / copy     a kernel / a memcpy or memset the request launched was running: layer
//                  type and module of the event's operator (kernel name's type when it has
//                  none). Concurrent events count once, for the one that started first;
//   gpu_wait       none ran though the next one was already launched (launch latency,
//                  stream dependencies, synchronization);
//   host_operator  none ran and none was launched yet, and the service thread was inside an
//                  operator range (CPU-bound: its layer type by the operator-name rule and
//                  its module); a request with no GPU events is all host time;
//   host_gap       the same outside every operator range (a module's own code, between
//                  ranges, after the service ended), by the innermost module.
// Which work is a request's: GPU events whose launch call lies on a service thread inside a
// service interval. A request range whose NVTX payload is an integer P is served by the
// outermost ranges inside it that carry P (e.g. a `request` start/end range from arrival
// to completion, payload = request id, and the worker's `forward` push/pop range with the
// same payload); any other request range serves itself, on its own thread. A request range
// inside another of the same key and payload (or none) on its thread is part of it, not a
// request. A request lasts until the later of its range's end and its last GPU event's end
// (a step range that only launches a graph ends before the graph runs; its caller waits for
// the GPU): that extent, not the range's duration, is what its components sum to. A trace given in parts
// (part_ranges.h) gives each request its time in every part it overlaps.
#ifndef OPMAP_ANALYSIS_SUMMARY_REQUEST_BREAKDOWN_H_
#define OPMAP_ANALYSIS_SUMMARY_REQUEST_BREAKDOWN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/part_ranges.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {

enum class RequestComponentKind : uint8_t {
  kQueue = 0,
  kGpu = 1,
  kCopy = 2,
  kGpuWait = 3,
  kHostOperator = 4,
  kHostGap = 5,
};
inline constexpr int kRequestComponentKinds = 6;
// "queue", "gpu", "copy", "gpu_wait", "host_operator", "host_gap".
std::string_view RequestComponentKindName(RequestComponentKind kind);

struct RequestComponent {
  RequestComponentKind kind = RequestComponentKind::kHostGap;
  LayerType layer_type = LayerType::kOther;  // gpu, copy, host_operator; else other
  std::string module;                        // innermost module; "" when none
};

struct RequestRecord {
  std::string key;   // RequestKey of its name
  std::string name;
  int64_t start_ns = 0;   // the range's start, or its arrival mark's when marked
  int64_t dur_ns = 0;     // the range's
  int64_t extent_ns = 0;  // to the later of the range's end and its GPU work's (≥ dur_ns)
  int64_t process = kNone;
  int64_t thread = kNone;
  int64_t payload = kNone;
  bool joined = false;  // served by payload-joined ranges (else by itself)
  bool arrival_marked = false;  // start_ns is its `arrival` mark's (before its range)
  int64_t gpu_events = 0;
  // (index into RequestBreakdowns::components, ns), ns > 0; the ns sum to extent_ns.
  std::vector<std::pair<int32_t, int64_t>> parts;
};

struct RequestBreakdowns {
  int64_t arrival_marks_dropped = 0;  // waiting past kMaxWaitingArrivals
  std::vector<RequestComponent> components;
  std::vector<RequestRecord> requests;  // by start time
};

// A stretch of one thread's time and the innermost range open over it (a range index, or
// a component key once resolved): what host time is attributed by.
struct RangeSegment {
  int64_t start, end;
  int32_t range;
};

class RequestBreakdownAccumulator {
 public:
  // `mapping` is MapGpuEvents(part); `ranges` nullptr when the part is the whole trace.
  void Add(const Trace& part, const MappingResult& mapping, const PartRanges* ranges = nullptr);
  // The same with the part's RangeParents (and its sweep order) and AttributeModules
  // already computed.
  void Add(const Trace& part, const MappingResult& mapping, const PartRanges* ranges,
           const std::vector<int32_t>& parent, const std::vector<uint32_t>& order,
           const ModuleAttribution& modules);
  // `operator_type` gives the layer type of a GPU event's operator by name (the summary's
  // rule: the name rule, else its kernels' majority), known only once every part is in.
  // Requests still open (never ended) are left out.
  RequestBreakdowns Finish(const std::function<LayerType(std::string_view)>& operator_type);

 private:
  // What a request keeps until it ends, for one way of serving it (by itself, or by the
  // ranges its payload joins): a trace given in parts lends each part only once.
  struct Service {
    int64_t process, thread, start, end;
  };
  struct HeldRange {  // a range on a service thread, with its host component
    int64_t start, end;
    int32_t key;
  };
  struct HeldEvent {  // a GPU event it launched, with its component and launch time
    int64_t start, end, launch;
    int32_t key;
  };
  struct Served {
    std::vector<Service> services;
    absl::flat_hash_set<int64_t> service_ids;  // range ids in the whole trace
    // By (process, thread) of the service thread.
    absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<HeldRange>> ranges;
    std::vector<HeldEvent> events;
  };
  struct State {
    RequestRecord record;
    Served own, joined;
    bool ending = false;  // its range ends in the part being added
    std::vector<std::pair<int32_t, int64_t>> ns;  // internal component key, ns
  };
  // The innermost range at each instant, per (process, thread): disjoint, in time order.
  using ThreadSegments =
      absl::flat_hash_map<std::pair<int64_t, int64_t>, std::vector<RangeSegment>>;
  // `shared`: the part's segments (a trace given whole), their ranges keyed by `range_key`
  // (`known_keys`: those keyed so far, -1 for the rest); null: built from the ranges the
  // request holds.
  void Close(State& state, const ThreadSegments* shared, const std::vector<int32_t>& known_keys,
             const std::function<int32_t(int32_t)>& range_key);
  // A component before operator layer types are known: `what` is "op:" + operator name for
  // an event typed by its operator, else a layer type name.
  struct Key {
    RequestComponentKind kind;
    std::string what;
    std::string module;
    bool operator==(const Key& o) const {
      return kind == o.kind && what == o.what && module == o.module;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.kind, k.what, k.module);
    }
  };
  int32_t KeyIndex(RequestComponentKind kind, std::string_view what, std::string_view module);

  // By the request range's id in the whole trace; node map: Add holds pointers to states.
  absl::node_hash_map<int64_t, State> open_;
  // Arrival marks waiting for their request, by (process, payload): at most
  // kMaxWaitingArrivals (more are dropped and counted).
  static constexpr size_t kMaxWaitingArrivals = size_t{1} << 16;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> arrivals_;
  int64_t arrivals_dropped_ = 0;
  std::vector<State> done_;
  std::vector<Key> keys_;
  int32_t no_range_ = -1, queue_ = -1, wait_ = -1;  // keys every request may use
  absl::flat_hash_map<Key, int32_t> key_index_;
};

// The request whose range carries NVTX payload `request_id` (the first by start when
// several do), with its extent: what `opmap export --request` cuts a session to. NotFound
// naming the id when no request range carries it.
absl::StatusOr<RequestRecord> FindRequest(const Trace& trace, uint64_t request_id);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_REQUEST_BREAKDOWN_H_
