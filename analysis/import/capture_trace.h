// CaptureTraceBuilder: turns the records libopmap_inject wrote (ring or capture file,
// abi/ring_records.h) into the analysis model, so a live capture is analyzed by the
// same mapping and summary code as a Kineto trace or an Nsight export.
//
//   CaptureTraceBuilder b(pid);
//   for (std::string_view record : records) b.Add(record);   // whole records, any order
//   CaptureResult result = std::move(b).Finish();
//
// Records are validated here as well as by the reader (sizes, name lengths, end ≥ start):
// a bad one is counted in `bad_records` with its first reason kept, never trusted.
// NVTX names go through ParseNvtxName: the `{flops=,bytes=}` shape payload becomes the
// range's flops/bytes and emit_nvtx decorations are dropped. External correlation ids
// are attached to the API call and GPU events of the same correlation id. kGraphNode
// records place the kernels of replayed CUDA graphs in the NVTX ranges that captured them
// (capture_graphs.h); such kernels may be held back until their graph launch call comes.
#ifndef OPMAP_ANALYSIS_IMPORT_CAPTURE_TRACE_H_
#define OPMAP_ANALYSIS_IMPORT_CAPTURE_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/import/capture_graphs.h"
#include "analysis/model/trace.h"

namespace opmap::analysis {

// A kStatus record: e.g. CUPTI "unavailable: no CUDA driver (...)".
struct CaptureStatus {
  uint16_t component = 0;  // ring::Component
  uint16_t code = 0;       // ring::StatusCode
  int64_t time_ns = 0;
  std::string message;
};

struct CaptureWindow {
  uint64_t window_id = 0;
  int64_t begin_ns = 0;  // 0 = no begin mark seen
  int64_t end_ns = 0;    // 0 = no end mark seen (window cut short or still open)
};

struct CaptureResult {
  Trace trace;  // PC-sampling stall records land in trace.stalls
  std::vector<CaptureStatus> statuses;
  std::vector<CaptureWindow> windows;
  absl::flat_hash_map<uint64_t, std::string> domains;  // NVTX domain id → name
  int64_t records = 0;
  int64_t open_ranges = 0;      // start/end ranges started but never ended
  int64_t unmatched_ends = 0;   // ends whose start was not captured
  int64_t output_markers = 0;   // layerwise output markers dropped (import/nvtx_names.h)
  int64_t bad_records = 0;
  std::string first_bad_record;  // why the first bad record was refused
  GraphNodeCounts graph_nodes;   // the live graph capture merge (capture_graphs.h)
};

class CaptureTraceBuilder {
 public:
  // Bounds on what a producer's records may make this builder keep besides events (a
  // record past one is counted bad): the producer is not trusted to be sane.
  static constexpr size_t kMaxWindows = 4096;
  static constexpr size_t kMaxOpenRanges = 1 << 20;
  static constexpr size_t kMaxExternalIds = 1 << 22;
  static constexpr size_t kMaxDomains = 4096;
  static constexpr size_t kMaxStatuses = 1024;

  explicit CaptureTraceBuilder(int64_t pid);

  // One whole record (header included). Padding and unknown types are skipped.
  void Add(std::string_view record);

  CaptureResult Finish() &&;

  // For a window converted while it is open: moves out the kernels, memory ops, API calls
  // and completed ranges added so far (start/end ranges still open, graph kernels waiting
  // for their launch call, stall samples and the statuses stay for Finish). Names are ids in strings(), which keeps growing. External
  // correlation ids known by now are applied; a kernel whose external-correlation record
  // only comes later keeps none and is mapped by its launch instead (DESIGN.md rule 3).
  Trace TakeCompleted();
  size_t completed_records() const {
    return result_.trace.gpu_events.size() + result_.trace.api_calls.size() +
           result_.trace.ranges.size();
  }
  const StringTable& strings() const { return result_.trace.strings; }

 private:
  void Bad(std::string reason);
  // The inline string of `len` bytes at `offset` past the fixed part; false when it
  // does not fit in the record.
  bool Inline(std::string_view record, uint32_t fixed, uint32_t offset, uint32_t len,
              std::string_view* out);
  void ApplyExternalIds();
  // A kernel, memcpy or memset: into the trace, or through the graph node placement.
  void AddGpuEvent(const GpuEvent& e);
  // Kernel and PC-sampling function names, demangled once per distinct symbol.
  StringId KernelName(std::string_view mangled);

  absl::flat_hash_map<std::string, StringId> kernel_names_;
  int64_t pid_;
  CaptureResult result_;
  absl::flat_hash_map<uint64_t, Range> starts_;  // start/end ranges still open
  // The name of a held start whose range is a layerwise output marker (dropped at its end).
  static constexpr StringId kOutputMarker = UINT32_MAX;
  absl::flat_hash_map<uint64_t, int64_t> external_ids_;  // correlation → external id
  absl::flat_hash_map<uint64_t, size_t> window_index_;   // window id → result_.windows[i]
  GraphNodePlacer graphs_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_CAPTURE_TRACE_H_
