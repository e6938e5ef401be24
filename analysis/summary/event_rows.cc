#include "analysis/summary/event_rows.h"

#include <algorithm>

#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/rollup.h"
#include "analysis/taxonomy/layer_taxonomy.h"

namespace opmap::analysis {
namespace {

// Request ranges by start, to find the one holding a host time.
class RequestIndex {
 public:
  explicit RequestIndex(const Trace& trace) {
    for (size_t r = 0; r < trace.ranges.size(); ++r) {
      if (!RequestKey(trace.strings.Get(trace.ranges[r].name)).empty()) {
        requests_.push_back(&trace.ranges[r]);
      }
    }
    std::stable_sort(requests_.begin(), requests_.end(),
                     [](const Range* a, const Range* b) { return a->start_ns < b->start_ns; });
  }

  // 1 + the index of the latest-starting request range with start <= t < end; 0 for none.
  // Requests rarely overlap; when they do the innermost (latest start) one is named.
  uint32_t Find(int64_t t) const {
    auto it = std::upper_bound(requests_.begin(), requests_.end(), t,
                               [](int64_t v, const Range* r) { return v < r->start_ns; });
    // Back over earlier starts while they could still hold t (bounded: requests are few
    // and at most a handful overlap).
    for (int steps = 0; it != requests_.begin() && steps < 8; ++steps) {
      --it;
      if (t < (*it)->end_ns()) return static_cast<uint32_t>(it - requests_.begin()) + 1;
    }
    return 0;
  }

 private:
  std::vector<const Range*> requests_;
};

}  // namespace

EventRows BuildEventRows(const Trace& trace, const MappingResult& mapping) {
  const EventLayerTypes types = ClassifyGpuEvents(trace, mapping);
  EventRows out;
  out.modules = AttributeModules(trace);
  const ModuleAttribution& attribution = out.modules;
  auto module_of_range = [&](int32_t r) -> std::string_view {
    if (r < 0) return {};
    const int32_t m = attribution.module_of[r];
    return m >= 0 ? std::string_view(attribution.names[m]->name) : std::string_view();
  };
  const RequestIndex requests(trace);
  const size_t n = trace.gpu_events.size();
  std::vector<EventRow>& rows = out.rows;
  rows.reserve(n + trace.ranges.size() + trace.api_calls.size());
  // The first GPU event of each launch call, for the call's own row.
  std::vector<int32_t> launched(trace.api_calls.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    const EventMapping& m = mapping.events[i];
    EventRow& row = rows.emplace_back();
    row.kind = static_cast<EventRowKind>(g.kind);
    row.start_ns = g.start_ns;
    row.dur_ns = g.dur_ns;
    row.name = trace.strings.Get(g.name);
    row.operator_name = m.range >= 0 ? trace.strings.Get(trace.ranges[m.range].name) : "";
    row.layer_type = LayerTypeName(types.layer_type[i]);
    row.module = module_of_range(m.range);
    row.rule = MappingRuleName(m.rule);
    row.device = g.device;
    row.stream = g.stream;
    row.correlation = g.correlation;
    row.grid = g.grid;
    row.block = g.block;
    if (m.launch_api >= 0) {
      row.request = requests.Find(trace.api_calls[m.launch_api].start_ns);
      if (launched[m.launch_api] < 0) launched[m.launch_api] = static_cast<int32_t>(i);
    } else if (m.range >= 0) {
      row.request = requests.Find(trace.ranges[m.range].start_ns);
    }
  }
  LayerClassifier classifier;
  for (size_t r = 0; r < trace.ranges.size(); ++r) {
    const Range& range = trace.ranges[r];
    EventRow& row = rows.emplace_back();
    row.kind = EventRowKind::kRange;
    row.start_ns = range.start_ns;
    row.dur_ns = range.dur_ns;
    row.name = trace.strings.Get(range.name);
    if (IsOperatorRange(range.kind) && RequestKey(row.name).empty()) {
      row.operator_name = row.name;
      row.layer_type = LayerTypeName(
          classifier.ClassifyOperator(range.name, row.name).value_or(LayerType::kOther));
    }
    row.module = module_of_range(static_cast<int32_t>(r));
    row.request = requests.Find(range.start_ns);
  }
  for (size_t c = 0; c < trace.api_calls.size(); ++c) {
    const ApiCall& call = trace.api_calls[c];
    EventRow& row = rows.emplace_back();
    row.kind = EventRowKind::kLaunch;
    row.start_ns = call.start_ns;
    row.dur_ns = call.dur_ns;
    row.name = trace.strings.Get(call.name);
    row.correlation = call.correlation;
    if (const int32_t i = launched[c]; i >= 0) {
      const int32_t r = mapping.events[i].range;
      row.operator_name = rows[i].operator_name;
      row.layer_type = rows[i].layer_type;
      row.module = module_of_range(r);
    }
    row.request = requests.Find(call.start_ns);
  }
  return out;
}

}  // namespace opmap::analysis
