#include "analysis/import/capture_import.h"

#include <algorithm>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "analysis/import/capture_file_parser.h"
#include "analysis/import/capture_trace.h"

namespace opmap::analysis {
const char* ComponentName(uint16_t c) {
  switch (c) {
    case ring::kComponentNvtx: return "nvtx";
    case ring::kComponentCupti: return "cupti";
    case ring::kComponentPcSampling: return "pc_sampling";
    case ring::kComponentGraphNodes: return "graph_nodes";
  }
  return "component";
}

const char* DropCounterName(int cause) {
  switch (cause) {
    case ring::kRingFull: return "drops.ring_full";
    case ring::kNestingTooDeep: return "drops.nesting_too_deep";
    case ring::kUnmatchedPop: return "drops.unmatched_pop";
    case ring::kCuptiBufferQueue: return "drops.cupti_buffer_queue";
    case ring::kCuptiDropped: return "drops.cupti_dropped";
    case ring::kBadRecord: return "drops.bad_record";
    case ring::kTooManyStrings: return "drops.too_many_strings";
    case ring::kGraphTableFull: return "drops.graph_table_full";
  }
  return nullptr;
}

bool LooksLikeCaptureFile(std::string_view head) {
  return head.size() >= sizeof(capfile::kMagic) &&
         std::memcmp(head.data(), capfile::kMagic, sizeof(capfile::kMagic)) == 0;
}

absl::StatusOr<Trace> ImportCaptureFile(std::string_view bytes) {
  absl::StatusOr<CaptureFile> file = ParseCaptureFile(bytes);
  if (!file.ok()) return absl::InvalidArgumentError(file.status().message());
  CaptureTraceBuilder builder(file->header.pid);
  for (const std::string& record : file->records) builder.Add(record);
  Trace trace = FinishCaptureTrace(std::move(builder).Finish());
  TraceInfo& info = trace.info;
  if (file->trailer) {
    for (int c = 0; c < static_cast<int>(ring::kDropCauseCount); ++c) {
      if (const char* name = DropCounterName(c)) {
        info.counters.emplace_back(name, static_cast<int64_t>(file->trailer->drops[c]));
      }
    }
    info.counters.emplace_back("names_truncated",
                               static_cast<int64_t>(file->trailer->names_truncated));
    info.counters.emplace_back("write_errors", static_cast<int64_t>(file->trailer->write_errors));
  } else {
    info.unavailable.emplace_back(
        "drop counters", file->cut_short ? "the capture file ends inside a record (the process "
                                           "died mid-write)"
                                         : "the capture file has no trailer (still being written?)");
  }
  return trace;
}

Trace FinishCaptureTrace(CaptureResult r) {
  Trace trace = std::move(r.trace);
  TraceInfo& info = trace.info;
  // The latest status of each component is the one that holds: a window opened before the
  // first NVTX call says "no NVTX call has attached the library yet", then "attached" a
  // moment later, and its ranges are there.
  std::vector<const CaptureStatus*> latest;
  for (const CaptureStatus& s : r.statuses) {
    auto same = std::find_if(latest.begin(), latest.end(), [&](const CaptureStatus* l) {
      return l->component == s.component;
    });
    if (same == latest.end()) {
      latest.push_back(&s);
    } else {
      *same = &s;
    }
  }
  for (const CaptureStatus* s : latest) {
    if (s->code != ring::kStatusOk) info.unavailable.emplace_back(ComponentName(s->component), s->message);
  }
  for (const CaptureWindow& w : r.windows) {
    if (w.begin_ns != 0 && (info.window_start_ns == kNone || w.begin_ns < info.window_start_ns)) {
      info.window_start_ns = w.begin_ns;
    }
    if (w.end_ns != 0 && w.end_ns > info.window_end_ns) info.window_end_ns = w.end_ns;
  }
  info.counters.emplace_back("records", r.records);
  info.counters.emplace_back("open_ranges", r.open_ranges);
  info.counters.emplace_back("unmatched_ends", r.unmatched_ends);
  info.counters.emplace_back("bad_records", r.bad_records);
  if (r.output_markers > 0) info.counters.emplace_back("nvtx_output_markers", r.output_markers);
  info.counters.emplace_back("stall_samples_rows", static_cast<int64_t>(r.trace.stalls.size()));
  // Only where the library recorded graph nodes (OPMAP_GRAPH_NODES): what the live graph
  // capture merge placed, and why the rest of the graph kernels were not.
  if (const GraphNodeCounts& g = r.graph_nodes; g.records > 0) {
    info.counters.emplace_back("graph_nodes.records", g.records);
    info.counters.emplace_back("graph_nodes.graph_events", g.graph_events);
    info.counters.emplace_back("graph_nodes.placed", g.placed);
    info.counters.emplace_back("graph_nodes.unknown_node", g.unknown_node);
    info.counters.emplace_back("graph_nodes.no_ranges", g.no_ranges);
    info.counters.emplace_back("graph_nodes.no_launch", g.no_launch);
    info.counters.emplace_back("graph_nodes.unplaceable", g.unplaceable);
    info.counters.emplace_back("graph_nodes.held_over_bound", g.held_over_bound);
  }
  return trace;
}

}  // namespace opmap::analysis
