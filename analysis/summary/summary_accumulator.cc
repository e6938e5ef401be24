#include "analysis/summary/summary_accumulator.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "analysis/stalls/stall_summary.h"
#include "analysis/timeline/device_breakdown.h"

namespace opmap::analysis {
namespace {

const std::string& SortKey(const OperatorStats& row) { return row.name; }
const std::string& SortKey(const KernelStats& row) { return row.name; }
int SortKey(const LayerTypeStats& row) { return static_cast<int>(row.layer_type); }

template <typename T>
void SortByGpuTime(std::vector<T>& rows) {
  // Rows come out of hash maps: ties need a total order, or reports differ run to run.
  std::sort(rows.begin(), rows.end(), [](const T& a, const T& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    if (a.count != b.count) return a.count > b.count;
    return SortKey(a) < SortKey(b);
  });
}

// The row of a name (operators, kernels), made on first sight.
template <typename Row>
size_t RowOf(std::string_view name, absl::flat_hash_map<std::string, size_t>* index,
             std::vector<Row>* rows, stats::ValueBudget* budget) {
  auto [it, inserted] = index->try_emplace(std::string(name), rows->size());
  if (inserted) {
    Row& row = rows->emplace_back(Row{{}, stats::ValueCounts(budget)});
    row.stats.name = std::string(name);
  }
  return it->second;
}

}  // namespace

SummaryAccumulator::SummaryAccumulator(stats::ValueBudget* budget)
    : budget_(budget), idle_({}, budget), launches_({}, budget), host_(budget), modules_(budget) {}

size_t SummaryAccumulator::OperatorRowOf(std::string_view name) {
  return RowOf(name, &operator_index_, &operators_, budget_);
}

size_t SummaryAccumulator::KernelRowOf(std::string_view name) {
  return RowOf(name, &kernel_index_, &kernels_, budget_);
}

void SummaryAccumulator::CloseInstance(const Instance& instance) {
  OperatorRow& row = operators_[instance.row];
  row.stats.count += 1;
  row.stats.kernel_count += instance.kernels;
  row.stats.gpu_time_ns += instance.gpu_time_ns;
  row.instance_times.Add(instance.gpu_time_ns);
}

void SummaryAccumulator::Add(const Trace& part, const MappingResult& mapping,
                             const PartRanges* ranges) {
  gpu_event_count_ += static_cast<int64_t>(part.gpu_events.size());
  for (int i = 0; i < kMappingRuleCount; ++i) by_rule_[i] += mapping.by_rule[i];
  for (int i = 0; i < kUnmappedReasonCount; ++i) {
    unmapped_by_reason_[i] += mapping.unmapped_by_reason[i];
  }
  // Names resolve once per part; rows are keyed by the name's text across parts.
  absl::flat_hash_map<StringId, size_t> kernel_row_of, operator_row_of;
  absl::flat_hash_map<StringId, LayerType> kernel_type_of;
  absl::flat_hash_map<int32_t, Instance> instances;  // by range index of the part
  for (size_t i = 0; i < part.gpu_events.size(); ++i) {
    const GpuEvent& g = part.gpu_events[i];
    gpu_time_ns_ += g.dur_ns;
    auto [k, new_kernel] = kernel_row_of.try_emplace(g.name, 0);
    if (new_kernel) k->second = KernelRowOf(part.strings.Get(g.name));
    auto [t, new_type] = kernel_type_of.try_emplace(g.name, LayerType::kOther);
    if (new_type) t->second = classifier_.ClassifyKernel(part.strings.Get(g.name));
    const LayerType own_type = t->second;

    KernelRow& kernel = kernels_[k->second];
    KernelStats& ks = kernel.stats;
    if (ks.count == 0 || g.dur_ns < ks.min_ns) ks.min_ns = g.dur_ns;
    if (ks.count == 0 || g.dur_ns > ks.max_ns) ks.max_ns = g.dur_ns;
    ks.count += 1;
    ks.gpu_time_ns += g.dur_ns;
    kernel.durations.Add(g.dur_ns);

    const int32_t r = mapping.events[i].range;
    if (r < 0) {
      ++source_kernel_name_;
      kernel.unmapped_types[static_cast<int>(own_type)] += g.dur_ns;
      ++unmapped_count_[static_cast<int>(own_type)];
      unmapped_time_[static_cast<int>(own_type)] += g.dur_ns;
      continue;
    }
    ++source_operator_;
    const StringId op_name = part.ranges[r].name;
    auto [o, new_op] = operator_row_of.try_emplace(op_name, 0);
    if (new_op) o->second = OperatorRowOf(part.strings.Get(op_name));
    OperatorRow& op = operators_[o->second];
    op.kernel_types[static_cast<int>(own_type)] += g.dur_ns;
    ++op.event_count;
    op.event_time_ns += g.dur_ns;
    kernel_operator_time_[{k->second, o->second}] += g.dur_ns;
    Instance& inst = instances[r];
    inst.row = o->second;
    inst.gpu_time_ns += g.dur_ns;
    ++inst.kernels;
  }
  // Operator instances end here or go on into the next part with what they hold.
  for (const auto& [r, inst] : instances) {
    const int64_t id = PartRanges::IdOf(ranges, static_cast<size_t>(r));
    auto open = open_instances_.find(id);
    if (!PartRanges::EndsHere(ranges, static_cast<size_t>(r))) {
      if (open == open_instances_.end()) {
        open_instances_.emplace(id, inst);
      } else {
        open->second.gpu_time_ns += inst.gpu_time_ns;
        open->second.kernels += inst.kernels;
      }
      continue;
    }
    Instance whole = inst;
    if (open != open_instances_.end()) {
      whole.gpu_time_ns += open->second.gpu_time_ns;
      whole.kernels += open->second.kernels;
      open_instances_.erase(open);
    }
    CloseInstance(whole);
  }
  if (!open_instances_.empty()) {
    for (size_t r = 0; r < part.ranges.size(); ++r) {
      if (!PartRanges::EndsHere(ranges, r) || instances.contains(static_cast<int32_t>(r))) continue;
      auto open = open_instances_.find(PartRanges::IdOf(ranges, r));
      if (open == open_instances_.end()) continue;
      CloseInstance(open->second);
      open_instances_.erase(open);
    }
  }

  // The compute flag is the kernel name's alone (kept per name across parts).
  std::unique_ptr<bool[]> is_compute(new bool[part.gpu_events.size()]);
  absl::flat_hash_map<std::pair<StringId, bool>, bool> compute_of;
  for (size_t i = 0; i < part.gpu_events.size(); ++i) {
    const GpuEvent& g = part.gpu_events[i];
    const bool memory = g.kind != GpuEventKind::kKernel;
    auto [it, inserted] = compute_of.try_emplace({g.name, memory}, false);
    if (inserted) {
      auto [named, new_name] = compute_by_name_.try_emplace(
          std::make_pair(std::string(part.strings.Get(g.name)), memory), false);
      if (new_name) {
        named->second = ClassifyKernelType(named->first.first, memory) == KernelType::kComputation;
      }
      it->second = named->second;
    }
    is_compute[i] = it->second;
  }
  devices_.Add(part, absl::Span<const bool>(is_compute.get(), part.gpu_events.size()));
  const std::vector<int32_t> launches = mapping.LaunchApiIndex();
  idle_.Add(part, launches);
  launches_.Add(part, launches);
  // The part's range nesting and module tree, once for the three that read them.
  int64_t threads = 0;
  std::vector<uint32_t> order;
  const std::vector<int32_t> parent = RangeParents(part, &threads, &order);
  const ModuleAttribution modules = AttributeModules(part, order);
  host_.Add(part, ranges, parent, threads);
  modules_.Add(part, mapping, ranges, modules);
  requests_.Add(part, mapping, ranges, parent, order, modules);
}

TraceSummary SummaryAccumulator::Finish(TraceInfo info) {
  TraceSummary s;
  s.info = std::move(info);
  s.gpu_event_count = gpu_event_count_;
  s.gpu_time_ns = gpu_time_ns_;
  s.by_rule = by_rule_;
  s.unmapped_by_reason = unmapped_by_reason_;
  s.layer_type_source_operator = source_operator_;
  s.layer_type_source_kernel_name = source_kernel_name_;
  s.devices = devices_.Finish();

  // Operators' layer types: the name rule, else the majority of their kernels' time.
  std::array<int64_t, kNumLayerTypes> layer_count = unmapped_count_;
  LayerTimes layer_time = unmapped_time_;
  std::vector<LayerType> operator_type(operators_.size());
  for (size_t o = 0; o < operators_.size(); ++o) {
    OperatorRow& row = operators_[o];
    std::optional<LayerType> by_name = classifier_.ClassifyOperator(row.stats.name);
    row.stats.layer_type = by_name ? *by_name : HeaviestLayerType(row.kernel_types);
    row.stats.layer_type_from_name = by_name.has_value();
    operator_type[o] = row.stats.layer_type;
    layer_count[static_cast<int>(row.stats.layer_type)] += row.event_count;
    layer_time[static_cast<int>(row.stats.layer_type)] += row.event_time_ns;
    if (row.stats.count == 0) continue;  // its instances all still open: none ended
    OperatorStats& out = s.operators.emplace_back(row.stats);
    out.instance_gpu_time_ns = row.instance_times.ToPercentiles();
  }
  SortByGpuTime(s.operators);

  std::vector<LayerTimes> kernel_types(kernels_.size());
  for (size_t k = 0; k < kernels_.size(); ++k) kernel_types[k] = kernels_[k].unmapped_types;
  for (const auto& [key, time] : kernel_operator_time_) {
    kernel_types[key.first][static_cast<int>(operator_type[key.second])] += time;
  }
  for (size_t k = 0; k < kernels_.size(); ++k) {
    KernelStats& out = s.kernels.emplace_back(kernels_[k].stats);
    out.layer_type = HeaviestLayerType(kernel_types[k]);
    out.duration_ns = kernels_[k].durations.ToPercentiles();
  }
  SortByGpuTime(s.kernels);

  for (int t = 0; t < kNumLayerTypes; ++t) {
    if (layer_count[t] == 0) continue;
    LayerTypeStats row;
    row.layer_type = static_cast<LayerType>(t);
    row.count = layer_count[t];
    row.gpu_time_ns = layer_time[t];
    row.share = s.gpu_time_ns > 0 ? static_cast<double>(layer_time[t]) / s.gpu_time_ns : 0;
    s.layer_types.push_back(row);
  }
  SortByGpuTime(s.layer_types);

  s.idle_time = idle_.Finish();
  s.launch_stats = launches_.Finish();
  s.host_ranges = host_.Finish();
  s.modules = modules_.Finish();
  s.tail = ExplainTails(requests_.Finish([&](std::string_view op) {
    auto it = operator_index_.find(std::string(op));
    return it == operator_index_.end() ? LayerType::kOther : operator_type[it->second];
  }));
  return s;
}

}  // namespace opmap::analysis
