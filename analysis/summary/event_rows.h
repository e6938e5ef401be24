// A session's events as flat rows — one per GPU event (kernel, memcpy, memset), host range
// and launch API call — each carrying what the mapping and the rollup attribute to it:
// the operator that launched it, its layer type, its module, the mapping rule, and the
// request range it ran under. What a column store keeps so that analysts can ask their
// own questions in SQL (the collector's ClickHouse `events` table, docs/scale-out.md).
//
// Attribution is BuildRollup's (rollup.h), so per-key counts and sums over the rows equal
// the rollup's exactly:
//   - GPU event: operator = the range the mapping placed it in ("" unmapped), layer type
//     and module as its kKernel rollup row has them, rule = MappingRuleName;
//   - range: its own name as operator when it is an operator range (request ranges
//     excepted, as in kOperatorCpu rows), layer type by the operator-name rule ("other"
//     when none matches; "" for ranges that are not operators), its module;
//   - launch API call: the operator and module of the kernel it launched (the first GPU
//     event the mapping links to it), "" when none.
// request: 1 + the index (in start order) of the request range (RequestKey) whose host
// interval holds the row's host time (a GPU event's launch call, or its operator range
// when the launch is unknown; a range's or call's own start), 0 for none.
// Thread-compatible: reads the trace and the mapping. The rows' views point into
// trace.strings and into the module names the result owns (EventRows::modules), so they
// live as long as both.
#ifndef OPMAP_ANALYSIS_SUMMARY_EVENT_ROWS_H_
#define OPMAP_ANALYSIS_SUMMARY_EVENT_ROWS_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/summary/modules.h"

namespace opmap::analysis {

// Stored as integers (ClickHouse Enum8): never renumber.
enum class EventRowKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kRange = 3,
                                    kLaunch = 4 };

struct EventRow {
  EventRowKind kind = EventRowKind::kKernel;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  std::string_view name;
  std::string_view operator_name;
  std::string_view layer_type;  // docs/metrics.md name; "" where none applies
  std::string_view module;
  std::string_view rule;        // MappingRuleName for GPU events, "" otherwise
  int32_t device = -1;          // GPU events only
  int64_t stream = -1;
  int64_t correlation = kNone;
  std::array<int32_t, 3> grid = {0, 0, 0};
  std::array<int32_t, 3> block = {0, 0, 0};
  uint32_t request = 0;
};

struct EventRows {
  ModuleAttribution modules;  // owns the module names the rows name
  std::vector<EventRow> rows;
};

// Rows in a fixed order: GPU events, then ranges, then launch calls, each in trace order.
EventRows BuildEventRows(const Trace& trace, const MappingResult& mapping);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_EVENT_ROWS_H_
