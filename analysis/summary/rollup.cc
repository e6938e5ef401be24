#include "analysis/summary/rollup.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "analysis/summary/event_layer_types.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/modules.h"
#include "analysis/summary/request_breakdown.h"
#include "analysis/summary/tail_buckets.h"
#include "analysis/taxonomy/layer_taxonomy.h"
#include "common/base/wall_clock.h"

namespace opmap::analysis {
namespace {

using Accumulator = RollupValues;

RollupRow ToRow(RollupSubject subject, LayerType type, std::string_view op,
                std::string_view kernel, std::string_view module, Accumulator acc) {
  return std::move(acc).ToRow(subject, LayerTypeName(type), op, kernel, module);
}

}  // namespace

void RollupValues::Add(int64_t v) {
  if (count == 0 || v < min_ns) min_ns = v;
  if (count == 0 || v > max_ns) max_ns = v;
  ++count;
  sum_ns += v;
  sketch.Add(static_cast<double>(v));
}

RollupRow RollupValues::ToRow(RollupSubject subject, std::string_view layer_type,
                              std::string_view op, std::string_view kernel,
                              std::string_view module) && {
  RollupRow row;
  row.module = std::string(module);
  row.subject = subject;
  row.layer_type = std::string(layer_type);
  row.operator_name = std::string(op);
  row.kernel_name = std::string(kernel);
  row.count = count;
  row.sum_ns = sum_ns;
  row.min_ns = min_ns;
  row.max_ns = max_ns;
  row.sketch = std::move(sketch);
  return row;
}

SessionRollup BuildRollup(const Trace& trace, const MappingResult& mapping) {
  SessionRollup out;
  const size_t n = trace.gpu_events.size();
  out.by_rule = mapping.by_rule;
  out.gpu_event_count = static_cast<int64_t>(n);
  // The same per-event layer types and compute flags as Summarize, so totals agree.
  const EventLayerTypes types = ClassifyGpuEvents(trace, mapping);
  out.devices = ComputeDeviceBreakdown(trace, types.compute_flags());

  // Module of each range as a small id into `module_names` (0: none), by name: every
  // instance of a module is one key.
  // One nesting sweep of the ranges, for the modules and the request breakdown below.
  int64_t threads = 0;
  std::vector<uint32_t> order;
  const std::vector<int32_t> parent = RangeParents(trace, &threads, &order);
  const ModuleAttribution attribution = AttributeModules(trace, order);
  std::vector<std::string_view> module_names = {""};
  std::vector<int32_t> module_id(trace.ranges.size(), 0);
  {
    absl::flat_hash_map<std::string_view, int32_t> ids;
    for (size_t r = 0; r < trace.ranges.size(); ++r) {
      const int32_t m = attribution.module_of[r];
      if (m < 0) continue;
      const std::string_view name = attribution.names[m]->name;
      auto [it, inserted] = ids.try_emplace(name, static_cast<int32_t>(module_names.size()));
      if (inserted) module_names.push_back(name);
      module_id[r] = it->second;
    }
  }

  // (layer type, operator name, kernel name, module) → durations. Unmapped events have
  // the empty operator name (StringId 0) and no module.
  using KernelKey = std::tuple<LayerType, StringId, StringId, int32_t>;
  absl::flat_hash_map<KernelKey, Accumulator> kernels;
  // Operator instance (range index) → its kernels' summed GPU time.
  absl::flat_hash_map<int32_t, int64_t> instances;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < n; ++i) {
    const GpuEvent& g = trace.gpu_events[i];
    out.gpu_time_ns += g.dur_ns;
    first = std::min(first, g.start_ns);
    last = std::max(last, g.end_ns());
    const int32_t r = mapping.events[i].range;
    const StringId op = r >= 0 ? trace.ranges[r].name : kEmptyString;
    kernels[KernelKey(types.layer_type[i], op, g.name, r >= 0 ? module_id[r] : 0)].Add(
        g.dur_ns);
    if (r >= 0) instances[r] += g.dur_ns;
  }
  if (n > 0) {
    out.first_start_ns = first;
    out.last_end_ns = last;
  }

  // Host ranges: requests and operators' inclusive durations, no GPU event needed.
  // Keyed by name id; request keys are few fixed strings.
  absl::flat_hash_map<std::string_view, Accumulator> requests;
  using OperatorKey = std::pair<StringId, int32_t>;  // (operator name, module id)
  absl::flat_hash_map<OperatorKey, Accumulator> cpu_operators;
  int64_t range_first = std::numeric_limits<int64_t>::max();
  int64_t range_last = std::numeric_limits<int64_t>::min();
  for (size_t ri = 0; ri < trace.ranges.size(); ++ri) {
    const Range& r = trace.ranges[ri];
    range_first = std::min(range_first, r.start_ns);
    range_last = std::max(range_last, r.end_ns());
    const std::string_view request = RequestKey(trace.strings.Get(r.name));
    if (!request.empty()) {
      ++out.request_count;
      requests[request].Add(r.dur_ns);
    } else if (IsOperatorRange(r.kind) && !IsReplayThread(r.thread)) {
      // Copies of capture-time ranges (a graph capture merge) ran no host time here.
      cpu_operators[OperatorKey(r.name, module_id[ri])].Add(r.dur_ns);
    }
  }
  out.range_count = static_cast<int64_t>(trace.ranges.size());
  if (n == 0 && !trace.ranges.empty()) {
    out.first_start_ns = range_first;
    out.last_end_ns = range_last;
  }

  absl::flat_hash_map<OperatorKey, Accumulator> operators;
  for (const auto& [r, gpu_time_ns] : instances) {
    operators[OperatorKey(trace.ranges[r].name, module_id[r])].Add(gpu_time_ns);
  }

  out.rows.reserve(kernels.size() + operators.size() + requests.size() + cpu_operators.size());
  for (auto& [key, acc] : kernels) {
    const auto& [type, op, kernel, module] = key;
    out.rows.push_back(ToRow(RollupSubject::kKernel, type, trace.strings.Get(op),
                             trace.strings.Get(kernel), module_names[module], std::move(acc)));
  }
  for (auto& [key, acc] : operators) {
    const auto& [op, module] = key;
    out.rows.push_back(ToRow(RollupSubject::kOperatorGpu,
                             types.operator_types.at(op).layer_type, trace.strings.Get(op),
                             "", module_names[module], std::move(acc)));
  }
  for (auto& [key, acc] : requests) {
    RollupRow& row = out.rows.emplace_back(
        ToRow(RollupSubject::kRequest, LayerType::kOther, key, "", "", std::move(acc)));
    row.layer_type.clear();
  }
  LayerClassifier classifier;
  for (auto& [key, acc] : cpu_operators) {
    const auto& [op, module] = key;
    const std::string_view name = trace.strings.Get(op);
    out.rows.push_back(ToRow(RollupSubject::kOperatorCpu,
                             classifier.ClassifyOperator(op, name).value_or(LayerType::kOther),
                             name, "", module_names[module], std::move(acc)));
  }
  // Each request's breakdown, by latency bucket (tail_buckets.h).
  if (out.request_count > 0) {
    const int64_t cpu_start_ns = base::ThreadCpuNs();
    RequestBreakdownAccumulator breakdown;
    breakdown.Add(trace, mapping, nullptr, parent, order, attribution);
    absl::flat_hash_map<std::string_view, LayerType> operator_type;
    for (const auto& [id, t] : types.operator_types) {
      operator_type[trace.strings.Get(id)] = t.layer_type;
    }
    AddTailBucketRows(breakdown.Finish([&](std::string_view op) {
                        auto it = operator_type.find(op);
                        return it == operator_type.end() ? LayerType::kOther : it->second;
                      }),
                      &out.rows);
    out.request_breakdown_cpu_ns = base::ThreadCpuNs() - cpu_start_ns;
  }
  // Deterministic order (hash maps have none): subject, GPU time descending, then keys.
  std::sort(out.rows.begin(), out.rows.end(), [](const RollupRow& a, const RollupRow& b) {
    return std::tie(a.subject, b.sum_ns, a.layer_type, a.operator_name, a.kernel_name,
                    a.module) <
           std::tie(b.subject, a.sum_ns, b.layer_type, b.operator_name, b.kernel_name,
                    b.module);
  });
  return out;
}

}  // namespace opmap::analysis
