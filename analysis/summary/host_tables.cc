#include "analysis/summary/host_tables.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/summary/modules.h"
#include "common/base/saturating.h"

namespace opmap::analysis {
namespace {

template <typename T>
void ByTimeDescending(std::vector<T>& rows) {
  std::sort(rows.begin(), rows.end(), [](const T& a, const T& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.count > b.count;
  });
}

}  // namespace

HostTables SummarizeHostTables(const Trace& trace) {
  const std::vector<bool> operators = OperatorRanges(trace);
  absl::flat_hash_map<std::pair<StringId, StringId>, size_t> op_index;
  absl::flat_hash_map<std::string, size_t> type_index;
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> names_of_type;
  HostTables out;
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    if (std::optional<ModuleName> m = ParseModuleName(r.kind, trace.strings.Get(r.name))) {
      auto [it, added] = type_index.try_emplace(m->module_type, out.module_types.size());
      if (added) out.module_types.push_back({m->module_type});
      HostModuleType& t = out.module_types[it->second];
      ++t.count;
      t.total_ns = base::SaturatingAdd(t.total_ns, r.dur_ns);
      names_of_type[m->module_type].insert(m->name);
      continue;
    }
    if (!operators[i]) continue;
    auto [it, added] = op_index.try_emplace(std::make_pair(r.name, r.input_dims), out.operators.size());
    if (added) {
      out.operators.push_back({std::string(trace.strings.Get(r.name)),
                               std::string(trace.strings.Get(r.input_dims))});
    }
    HostOperatorShape& o = out.operators[it->second];
    ++o.count;
    o.total_ns = base::SaturatingAdd(o.total_ns, r.dur_ns);
  }
  for (HostModuleType& t : out.module_types) {
    t.modules = static_cast<int64_t>(names_of_type[t.module_type].size());
  }
  ByTimeDescending(out.operators);
  ByTimeDescending(out.module_types);
  return out;
}

}  // namespace opmap::analysis
