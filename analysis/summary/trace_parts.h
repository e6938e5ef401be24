// Cuts a trace in time into parts that SummaryAccumulator adds one at a time, so that a
// summary built from the parts equals the whole trace's (tests/unit/summary/
// trace_parts_test.cc checks it on every real trace beside the tests). The in-memory
// reference for the streaming analysis (analysis/summary/streaming_parts.h), which
// applies the same rules to events as they come.
//
// The rules, for cuts anywhere in time:
//   - GPU events and API calls belong to the part their start falls in; a GPU event may
//     run past the cut (device unions and idle gaps carry their state across parts);
//   - a range is in every part it overlaps (part_ranges.h), and the accumulators count it
//     in the last;
//   - the API call that launched a GPU event is also in the event's part, and so are the
//     operator range the event is mapped to and every range enclosing that one, so that
//     each part joins launches, nests ranges and finds modules as the whole trace does;
//   - an external id that names two operator ranges names neither (kernel_mapper.h): the
//     parts get it cleared, so that a part holding only one of the two does not map by it.
//
// Parts hold about `target_events` events (GPU events, API calls and ranges by start). A
// windowed trace's parts carry the whole trace's first launch correlation per process
// (TraceInfo::first_correlation). A trace with stall samples or measured work (indices into
// the whole trace) is one part.
#ifndef OPMAP_ANALYSIS_SUMMARY_TRACE_PARTS_H_
#define OPMAP_ANALYSIS_SUMMARY_TRACE_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "analysis/model/trace.h"
#include "analysis/summary/part_ranges.h"

namespace opmap::analysis {

struct TracePartsStats {
  int64_t parts = 0;
  int64_t largest_part_events = 0;  // GPU events + API calls + ranges
  int64_t carried = 0;  // ranges and API calls held by more than one part, per extra part
};

// The smallest launch correlation per process among the trace's calls: what a part of a
// windowed trace carries in TraceInfo::first_correlation.
std::vector<std::pair<int64_t, int64_t>> FirstCorrelations(const Trace& trace);

// Calls `fn` for every part in time order. The trace's string table is lent to each part
// for the call (trace.strings is empty meanwhile) and given back before this returns.
TracePartsStats ForEachTracePart(Trace& trace, size_t target_events,
                                 const std::function<void(const Trace&, const PartRanges&)>& fn);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_SUMMARY_TRACE_PARTS_H_
