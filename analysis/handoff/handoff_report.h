// The handoff packet for one trace (`opmap analyze TRACE --report md|json|html`): MFU per
// request/iteration and per operator (FLOPs from shapes or NVTX payloads, and from the
// workload profile for whole steps), MBU for decode, memory-stall fraction by layer type,
// the bottleneck class per operator and per layer type with its evidence, the
// operator-to-kernel mapping sheet with fusion candidates, and mitigations with owners.
// Pure computation over the trace; the CLI reads the files and writes the output.
#ifndef OPMAP_ANALYSIS_HANDOFF_HANDOFF_REPORT_H_
#define OPMAP_ANALYSIS_HANDOFF_HANDOFF_REPORT_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bottleneck/bottleneck_class.h"
#include "analysis/bottleneck/mapping_sheet.h"
#include "analysis/bottleneck/mitigations.h"
#include "analysis/mapping/kernel_mapper.h"
#include "analysis/mfu/hardware_envelope.h"
#include "analysis/mfu/operator_mfu.h"
#include "analysis/workload/workload_profile.h"
#include "analysis/report/document.h"
#include "analysis/summary/trace_summary.h"
#include "analysis/summary/host_tables.h"

namespace opmap::analysis {

struct HandoffOptions {
  std::string source;                          // the trace file, as given
  const HardwareEnvelope* envelope = nullptr;
  std::string envelope_source;                 // "built-in for 'NVIDIA H100 80GB HBM3'", ...
  const WorkloadProfile* profile = nullptr;
  std::string profile_source;
  int top = 20;                                // rows per table
  std::string opmap_version;                   // the build that made it (reproducibility)
};

// Whole-step figures from the workload profile (docs/metrics.md: prefill 2·N·P + 2·L·d·P²,
// decode 2·N + 4·L·d·t), over the trace's request / iteration ranges.
struct ProfileMfu {
  std::optional<double> flops_per_request;
  std::string basis;                   // the formula with its numbers, or why unavailable
  std::optional<double> mfu;           // Σ FLOPs ÷ Σ (duration × devices × peak)
  std::optional<double> mbu;           // decode: bytes per step ÷ step time ÷ bandwidth
  std::string mbu_basis;               // how, or why unavailable
};

struct LayerBottleneck {
  OperatorFigures figures;             // summed over the layer type's operators
  Classification classification;
  BottleneckClass expected = BottleneckClass::kUnclassified;  // roofline of the sums
  // GPU time of the type's operator groups per observed class (index = BottleneckClass).
  std::array<int64_t, 7> class_time_ns = {0, 0, 0, 0, 0, 0, 0};
};

struct HandoffReport {
  MfuReport mfu;
  ProfileMfu profile_mfu;
  StallSummary stalls;
  MappingSheet sheet;
  std::vector<LayerBottleneck> layer_types;  // GPU time, descending
  std::vector<Mitigation> mitigations;
  int64_t total_ns = 0;                // the denominator of gain fractions, and its basis
  std::string total_basis;
  HostTables host;                     // host time by operator shape and module type
  RequestTailSummary tail;             // per-request breakdown and tail explanation
};

HandoffReport BuildHandoff(const Trace& trace, const MappingResult& mapping,
                           const TraceSummary& summary, const HandoffOptions& options);

ReportDocument HandoffDocument(const HandoffReport& report, const TraceSummary& summary,
                               const HandoffOptions& options);
// One JSON object (docs/handoff-json.md).
std::string HandoffJson(const HandoffReport& report, const HandoffOptions& options);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_HANDOFF_HANDOFF_REPORT_H_
