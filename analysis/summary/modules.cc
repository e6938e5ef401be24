#include "analysis/summary/modules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/stalls/stall_reasons.h"
#include "analysis/summary/host_ranges.h"
#include "analysis/summary/rollup.h"

namespace opmap::analysis {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

// (This Abseil's string_view is not std::string_view: plain helpers instead.)
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}

bool IsModulePath(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '.';
  });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "model.layers.0.mlp (LlamaMLP)" → "LlamaMLP": a module path and its class, as
// opmap_torch.annotate names a module (import/nvtx_names.h); nullopt for other names.
std::optional<std::string_view> ClassOfPath(std::string_view name) {
  const size_t open = name.rfind(" (");
  if (open == std::string_view::npos || !name.ends_with(')')) return std::nullopt;
  const std::string_view inside = name.substr(open + 2, name.size() - open - 3);
  if (!IsModulePath(name.substr(0, open)) || !IsModulePath(inside) ||
      inside.find('.') != std::string_view::npos) {
    return std::nullopt;
  }
  return inside;
}

std::string ModuleType(std::string_view name) {
  if (std::optional<std::string_view> cls = ClassOfPath(name)) return std::string(*cls);
  std::string type;
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = std::min(name.find('.', begin), name.size());
    std::string_view part = name.substr(begin, end - begin);
    if (!AllDigits(part) && !part.empty() && part.front() != '_') {
      if (!type.empty()) type.push_back('.');
      type.append(part);
    }
    begin = end + 1;
  }
  if (type.empty()) type = std::string(name);
  size_t underscore = type.rfind('_');
  if (underscore != std::string::npos && underscore > 0 &&
      AllDigits(std::string_view(type).substr(underscore + 1))) {
    type.resize(underscore);
  }
  return type;
}

template <typename T>
void SortByGpuTime(std::vector<T>& rows, std::string T::*key) {
  std::sort(rows.begin(), rows.end(), [key](const T& a, const T& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.*key < b.*key;
  });
}

// For every range, the index of its module range (itself when it is one), or -1; and
// the number of module ranges. Operator ranges and module candidates of one thread are
// swept in nesting order (start ascending, end descending, candidates first on equal
// extents so a module encloses an operator of the same extent); a range's parent is the
// innermost open range that wholly contains it — ranges that overlap without nesting
// are skipped over, as in host_ranges.cc. `order` is RangeParents' sweep order (by
// thread, start, longer first, index), so no sort of its own: only the candidate-first
// tie rule is applied on top.
std::vector<int32_t> ModuleOfRange(const Trace& trace,
                                   const std::vector<std::optional<ModuleName>>& names,
                                   const std::vector<uint32_t>& sweep,
                                   int64_t* module_range_count) {
  const std::vector<Range>& ranges = trace.ranges;
  std::vector<int32_t> parent(ranges.size(), -1);
  std::vector<bool> is_module(ranges.size(), false);
  std::vector<int32_t> module_of(ranges.size(), -1);
  std::vector<bool> encloses_operator(ranges.size(), false);
  std::vector<int32_t> order;
  std::vector<int32_t> open;
  for (size_t k = 0; k < sweep.size();) {
    const Range& first = ranges[sweep[k]];
    order.clear();
    size_t j = k;
    for (; j < sweep.size() && ranges[sweep[j]].thread == first.thread &&
           ranges[sweep[j]].process == first.process;
         ++j) {
      const int32_t r = static_cast<int32_t>(sweep[j]);
      if (names[r].has_value() || IsOperatorRange(ranges[r].kind)) order.push_back(r);
    }
    k = j;
    for (size_t a = 0; a < order.size();) {
      size_t b = a + 1;
      while (b < order.size() && ranges[order[b]].start_ns == ranges[order[a]].start_ns &&
             ranges[order[b]].dur_ns == ranges[order[a]].dur_ns) {
        ++b;
      }
      if (b - a > 1) {
        std::stable_partition(order.begin() + a, order.begin() + b,
                              [&](int32_t x) { return names[x].has_value(); });
      }
      a = b;
    }
    open.clear();
    for (int32_t r : order) {
      while (!open.empty() && ranges[open.back()].end_ns() <= ranges[r].start_ns) {
        open.pop_back();
      }
      for (size_t q = open.size(); q-- > 0;) {
        if (ranges[r].end_ns() <= ranges[open[q]].end_ns()) {
          parent[r] = open[q];
          break;
        }
      }
      open.push_back(r);
    }
    // nn.Module ranges are modules by name; an NVTX candidate becomes one when it
    // encloses an operator range (walk up from each operator, stopping at a marked one).
    for (int32_t r : order) {
      if (names[r].has_value() && ranges[r].kind == RangeKind::kPythonFunction) {
        is_module[r] = true;
      }
    }
    for (int32_t r : order) {
      if (!IsOperatorRange(ranges[r].kind)) continue;
      for (int32_t p = parent[r]; p >= 0 && !encloses_operator[p]; p = parent[p]) {
        encloses_operator[p] = true;
        if (names[p].has_value() && ranges[p].kind == RangeKind::kNvtx) is_module[p] = true;
      }
    }
    // Parents precede children in `order`, so one pass resolves the innermost module.
    for (int32_t r : order) {
      if (is_module[r]) {
        module_of[r] = r;
        ++*module_range_count;
      } else if (parent[r] >= 0) {
        module_of[r] = module_of[parent[r]];
      }
    }
  }
  return module_of;
}

}  // namespace

std::optional<ModuleName> ParseModuleName(RangeKind kind, std::string_view range_name) {
  if (kind == RangeKind::kPythonFunction) {
    if (!range_name.starts_with(kModulePrefix)) return std::nullopt;
    std::string_view name = Trim(range_name.substr(kModulePrefix.size()));
    if (name.empty()) return std::nullopt;
    return ModuleName{std::string(name), ModuleType(name)};
  }
  if (kind != RangeKind::kNvtx) return std::nullopt;
  std::string_view name = Trim(range_name);
  // record_function names of the framework itself: steps ("ProfilerStep#3",
  // "Optimizer.step#SGD.step") and the collectives' wrapper; and request / iteration ranges
  // (rollup.h RequestKey): they enclose operators but are the requests, not layers.
  if (name.empty() || name.find('#') != std::string_view::npos ||
      name == "record_param_comms" || !RequestKey(name).empty()) {
    return std::nullopt;
  }
  size_t open = name.rfind(" (");
  if (name.ends_with(')') && open != std::string_view::npos) {
    std::string_view inside = name.substr(open + 2, name.size() - open - 3);
    // A module path and its class (opmap_torch.annotate): the name as it is; ModuleType
    // reads the class.
    if (ClassOfPath(name)) return ModuleName{std::string(name), ModuleType(name)};
    // A hook range naming its module: "FSDP::pre_forward (blocks.12._checkpoint_wrapped_module)".
    if (IsModulePath(inside)) return ModuleName{std::string(inside), ModuleType(inside)};
  }
  if (name.find(':') != std::string_view::npos) return std::nullopt;  // an operator
  return ModuleName{std::string(name), ModuleType(name)};
}

std::optional<ModuleName> TensorRtLayerModule(std::string_view range_name) {
  std::string_view name = Trim(range_name);
  // A fused layer names each part: the first names the module that owns the fusion.
  if (size_t plus = name.find(" + "); plus != std::string_view::npos) name = name.substr(0, plus);
  name = Trim(name);
  if (name.size() < 3 || name.front() != '/') return std::nullopt;
  const size_t op = name.rfind('/');
  if (op == 0) return std::nullopt;  // "/Conv": an op with no module around it
  std::string_view path = name.substr(1, op - 1);
  std::string dotted(path);
  for (char& c : dotted) {
    if (c == '/') c = '.';
  }
  if (!IsModulePath(dotted)) return std::nullopt;
  return ModuleName{std::string(path), ModuleType(dotted)};
}

ModuleAttribution AttributeModules(const Trace& trace) {
  int64_t threads = 0;
  std::vector<uint32_t> order;
  RangeParents(trace, &threads, &order);
  return AttributeModules(trace, order);
}

ModuleAttribution AttributeModules(const Trace& trace, const std::vector<uint32_t>& order) {
  ModuleAttribution out;
  out.names.resize(trace.ranges.size());
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    out.names[i] =
        ParseModuleName(trace.ranges[i].kind, trace.strings.Get(trace.ranges[i].name));
  }
  out.module_of = ModuleOfRange(trace, out.names, order, &out.module_range_count);
  // TensorRT layer ranges launch their kernels themselves and enclose no operator: the
  // module is named in the layer's own path. Only where no enclosing range names one.
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    if (out.module_of[i] >= 0 || trace.ranges[i].kind != RangeKind::kNvtx) continue;
    if (std::optional<ModuleName> m = TensorRtLayerModule(trace.strings.Get(trace.ranges[i].name))) {
      out.names[i] = std::move(m);
      out.module_of[i] = static_cast<int32_t>(i);
      ++out.module_range_count;
    }
  }
  return out;
}

std::string ModuleTypeOf(std::string_view module_name) {
  if (module_name.empty()) return {};
  return ModuleType(module_name);
}

void ModuleAccumulator::Add(const Trace& part, const MappingResult& mapping,
                            const PartRanges* ranges) {
  Add(part, mapping, ranges, AttributeModules(part));
}

void ModuleAccumulator::Add(const Trace& part, const MappingResult& mapping,
                            const PartRanges* ranges, const ModuleAttribution& attribution) {
  const std::vector<int32_t>& module_of = attribution.module_of;
  // This part's module instances, by range index of the part.
  absl::flat_hash_map<int32_t, Instance> instances;
  for (size_t r = 0; r < part.ranges.size(); ++r) {
    if (module_of[r] != static_cast<int32_t>(r)) continue;
    Instance& inst = instances[static_cast<int32_t>(r)];
    inst.name = *attribution.names[r];
    inst.module = true;
  }
  for (size_t i = 0; i < part.gpu_events.size(); ++i) {
    const int64_t dur = part.gpu_events[i].dur_ns;
    const int32_t op = mapping.events[i].range;
    if (op < 0) {
      ++totals_.events_unmapped;
      totals_.gpu_time_unmapped_ns += dur;
      continue;
    }
    const int32_t m = module_of[op];
    if (m < 0) {
      ++totals_.events_without_module;
      totals_.gpu_time_without_module_ns += dur;
      continue;
    }
    ++totals_.events_with_module;
    totals_.gpu_time_with_module_ns += dur;
    Instance& inst = instances[m];
    inst.gpu_time_ns += dur;
    ++inst.events;
  }
  // Instances go on into the next part or end here, with what earlier parts added.
  for (auto& [r, inst] : instances) {
    const int64_t id = PartRanges::IdOf(ranges, static_cast<size_t>(r));
    auto [it, inserted] = open_.try_emplace(id);
    Instance& held = it->second;
    if (inserted) held.name = std::move(inst.name);
    held.module = true;
    held.gpu_time_ns += inst.gpu_time_ns;
    held.events += inst.events;
  }
  for (size_t r = 0; r < part.ranges.size(); ++r) {
    if (!PartRanges::EndsHere(ranges, r)) continue;
    auto it = open_.find(PartRanges::IdOf(ranges, r));
    if (it == open_.end()) continue;
    Close(std::move(it->second));
    open_.erase(it);
  }
}

void ModuleAccumulator::Close(Instance inst) {
  if (inst.module) ++totals_.module_range_count;
  if (inst.events == 0) return;
  auto [it, inserted] = index_.try_emplace(inst.name.name, rows_.size());
  if (inserted) {
    Row& row = rows_.emplace_back(Row{{}, stats::ValueCounts(budget_)});
    row.stats.name = inst.name.name;
    row.stats.module_type = inst.name.module_type;
  }
  Row& row = rows_[it->second];
  ++row.stats.count;
  row.stats.event_count += inst.events;
  row.stats.gpu_time_ns += inst.gpu_time_ns;
  row.times.Add(inst.gpu_time_ns);
}

ModuleSummary ModuleAccumulator::Finish() const {
  ModuleSummary out = totals_;
  if (out.module_range_count == 0) {
    out.unavailable = "the trace has no nn.Module or enclosing NVTX module ranges";
    return out;
  }
  struct TypeAccumulator {
    ModuleTypeStats stats;
    stats::ValueCounts times;
  };
  absl::flat_hash_map<std::string, TypeAccumulator> types;
  for (const Row& row : rows_) {
    // Transient rows, built from the module rows: no budget (a sketched module row makes
    // its type's row a sketch when merged).
    auto [it, inserted] =
        types.try_emplace(row.stats.module_type, TypeAccumulator{{}, stats::ValueCounts()});
    TypeAccumulator& t = it->second;
    ++t.stats.modules;
    t.stats.count += row.stats.count;
    t.stats.event_count += row.stats.event_count;
    t.stats.gpu_time_ns += row.stats.gpu_time_ns;
    t.times.Merge(row.times);
    ModuleStats& m = out.modules.emplace_back(row.stats);
    m.instance_gpu_time_ns = row.times.ToPercentiles();
  }
  for (auto& [type, acc] : types) {
    acc.stats.module_type = type;
    acc.stats.instance_gpu_time_ns = acc.times.ToPercentiles();
    out.module_types.push_back(std::move(acc.stats));
  }
  SortByGpuTime(out.modules, &ModuleStats::name);
  SortByGpuTime(out.module_types, &ModuleTypeStats::module_type);
  return out;
}

ModuleSummary SummarizeModules(const Trace& trace, const MappingResult& mapping) {
  ModuleAccumulator acc;
  acc.Add(trace, mapping, nullptr);
  return acc.Finish();
}

void SummarizeModuleStalls(const Trace& trace, const MappingResult& mapping,
                           StallSummary* stalls) {
  if (!stalls->unavailable.empty()) {
    stalls->modules_unavailable = stalls->unavailable;
    return;
  }
  const ModuleAttribution attribution = AttributeModules(trace);
  std::map<std::string, ModuleStallStats> by_module;  // ordered: deterministic ties
  int64_t without_event = 0;
  for (const StallSample& s : trace.stalls) {
    if (s.unit != stalls->unit) continue;
    if (s.event < 0 || static_cast<size_t>(s.event) >= mapping.events.size()) {
      ++without_event;
      continue;
    }
    const int32_t op = mapping.events[s.event].range;
    const int32_t m = op >= 0 ? attribution.module_of[op] : -1;
    const std::string name = m >= 0 && attribution.names[m] ? attribution.names[m]->name : "";
    ModuleStallStats& row = by_module[name];
    row.module = name;
    row.module_type = m >= 0 && attribution.names[m] ? attribution.names[m]->module_type : "";
    ++row.rows;
    const std::string reason = NormalizeStallReason(trace.strings.Get(s.reason));
    row.breakdown.Add(ClassifyStallReason(reason), s.value * s.weight);
  }
  if (by_module.empty()) {
    stalls->modules_unavailable =
        without_event > 0 ? "stall rows are per function (PC sampling), not per launch: no module"
                          : "no stall rows";
    return;
  }
  if (attribution.module_range_count == 0) {
    stalls->modules_unavailable = "the trace has no nn.Module or enclosing NVTX module ranges";
    return;
  }
  for (auto& [name, row] : by_module) stalls->modules.push_back(std::move(row));
  std::stable_sort(stalls->modules.begin(), stalls->modules.end(),
                   [](const ModuleStallStats& a, const ModuleStallStats& b) {
                     return a.breakdown.stalled() > b.breakdown.stalled();
                   });
}

}  // namespace opmap::analysis
