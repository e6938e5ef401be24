#include "analysis/handoff/handoff_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace opmap::analysis {
namespace {

// Sums the operators' figures into their layer type's. A figure is kept only when every
// operator of the type has it: a partial sum would be presented as the whole.
std::vector<LayerBottleneck> LayerTypes(const MappingSheet& sheet, const StallSummary& stalls,
                                        const HardwareEnvelope* envelope) {
  std::map<LayerType, std::vector<const OperatorFigures*>> by_type;
  for (const SheetOperator& op : sheet.operators) by_type[op.layer_type].push_back(&op.figures);
  std::map<LayerType, std::array<int64_t, 7>> class_time;
  for (const SheetGroup& g : sheet.groups) {
    class_time[g.layer_type][static_cast<int>(g.observed.cls)] += g.gpu_time_ns;
  }
  std::vector<LayerBottleneck> out;
  for (const auto& [type, ops] : by_type) {
    LayerBottleneck lb;
    lb.class_time_ns = class_time[type];
    OperatorFigures& f = lb.figures;
    const OperatorFigures* largest = nullptr;
    f.name = std::string(LayerTypeName(type));
    f.layer_type = type;
    bool launch = true, wait = true, idle = true, flops = true, bytes = true, comm = true;
    int64_t flops_missing = 0;
    for (const OperatorFigures* o : ops) {
      f.instances += o->instances;
      f.gpu_time_ns += o->gpu_time_ns;
      f.kernel_count += o->kernel_count;
      f.small_kernel_count += o->small_kernel_count;
      f.small_kernel_time_ns += o->small_kernel_time_ns;
      f.collective |= o->collective;
      if (largest == nullptr || o->gpu_time_ns > largest->gpu_time_ns) largest = o;
      if (o->launch_call_ns) f.launch_call_ns = f.launch_call_ns.value_or(0) + *o->launch_call_ns; else launch = false;
      if (o->host_wait_idle_ns) f.host_wait_idle_ns = f.host_wait_idle_ns.value_or(0) + *o->host_wait_idle_ns; else wait = false;
      if (o->idle_ns) f.idle_ns = f.idle_ns.value_or(0) + *o->idle_ns; else idle = false;
      if (o->flops) f.flops = f.flops.value_or(0) + *o->flops; else { flops = false; ++flops_missing; }
      if (o->bytes) f.bytes = f.bytes.value_or(0) + *o->bytes; else bytes = false;
      if (o->non_overlapped_comm_ns) f.non_overlapped_comm_ns = f.non_overlapped_comm_ns.value_or(0) + *o->non_overlapped_comm_ns; else comm = false;
      if (o->iteration_ns) f.iteration_ns = o->iteration_ns;
      if (o->max_grid_blocks) f.max_grid_blocks = std::max(f.max_grid_blocks.value_or(0), *o->max_grid_blocks);
    }
    if (!launch) f.launch_call_ns.reset();
    if (!wait) f.host_wait_idle_ns.reset();
    if (!idle) f.idle_ns.reset();
    if (!comm) f.non_overlapped_comm_ns.reset();
    if (!flops) {
      f.flops.reset();
      f.flops_missing = absl::StrFormat("%d of %d operators of this type have no FLOPs figure",
                                        flops_missing, ops.size());
    }
    if (!bytes) {
      f.bytes.reset();
      f.bytes_missing = "not every operator of this type has a DRAM byte count";
    }
    for (const LayerTypeStallStats& s : stalls.layer_types) {
      if (s.layer_type == type) f.memory_stall_fraction = s.breakdown.MemoryFraction();
    }
    f.precision = largest->precision;
    f.vector_path = largest->vector_path;
    lb.classification = Classify(f, envelope);
    lb.expected = ExpectedClass(f, envelope, nullptr);
    out.push_back(std::move(lb));
  }
  std::sort(out.begin(), out.end(), [](const LayerBottleneck& a, const LayerBottleneck& b) {
    return a.figures.gpu_time_ns > b.figures.gpu_time_ns;
  });
  return out;
}

ProfileMfu FromProfile(const MfuReport& mfu, const HandoffOptions& o) {
  ProfileMfu p;
  if (o.profile == nullptr) {
    p.basis = "no workload profile (--profile FILE)";
    p.mbu_basis = p.basis;
    return p;
  }
  const WorkloadProfile& w = *o.profile;
  p.flops_per_request = ModelFlopsPerRequest(w, &p.basis);
  double seconds = 0;
  for (const RequestMfuRow& r : mfu.requests) seconds += static_cast<double>(r.dur_ns) * 1e-9;
  const double n = static_cast<double>(mfu.requests.size());
  const std::optional<double> peak =
      o.envelope != nullptr ? o.envelope->PeakFlopsPerS(w.precision) : std::nullopt;
  if (p.flops_per_request && seconds > 0 && peak && *peak > 0) {
    p.mfu = n * *p.flops_per_request / (seconds * static_cast<double>(w.devices) * *peak);
  } else if (p.flops_per_request) {
    absl::StrAppend(&p.basis, seconds <= 0 ? "; the trace has no request or iteration ranges"
                              : o.envelope == nullptr ? "; no hardware envelope"
                              : "; the envelope has no peak for the profile's precision");
  }
  // MBU is a decode figure: each iteration one decode step.
  const auto decode = w.phase_mix.find("decode");
  const bool decode_only = decode != w.phase_mix.end() && decode->second >= 1.0 - 1e-9;
  if (!decode_only) {
    p.mbu_basis = "the profile's phase_mix is not decode=1: iterations are not decode steps";
  } else if (seconds <= 0) {
    p.mbu_basis = "the trace has no request or iteration ranges";
  } else if (o.envelope == nullptr || o.envelope->hbm_bytes_per_s <= 0) {
    p.mbu_basis = "no hardware envelope (peak memory bandwidth)";
  } else {
    // Context at the middle of generation: prefill_tokens + decode_tokens / 2.
    const int64_t t = w.prefill_tokens.value_or(0) + w.decode_tokens.value_or(0) / 2;
    const double bytes = DecodeStepBytes(w, t);
    p.mbu = n * bytes / (seconds * o.envelope->hbm_bytes_per_s);
    p.mbu_basis = absl::StrFormat(
        "(weights + KV cache at context %d) = %.4g bytes per step over %d steps / %.4g s / "
        "%.4g TB/s",
        t, bytes, mfu.requests.size(), seconds, o.envelope->hbm_bytes_per_s * 1e-12);
  }
  return p;
}

}  // namespace

HandoffReport BuildHandoff(const Trace& trace, const MappingResult& mapping,
                           const TraceSummary& summary, const HandoffOptions& options) {
  HandoffReport r;
  MfuOptions mfu;
  mfu.envelope = options.envelope;
  if (options.profile != nullptr) {
    mfu.default_precision = options.profile->precision;
    mfu.devices = static_cast<int32_t>(options.profile->devices);
  }
  r.mfu = ComputeOperatorMfu(trace, mapping, mfu);
  r.profile_mfu = FromProfile(r.mfu, options);
  r.stalls = summary.stalls;
  MappingSheetOptions sheet;
  sheet.envelope = options.envelope;
  r.sheet = BuildMappingSheet(trace, mapping, sheet);
  r.layer_types = LayerTypes(r.sheet, r.stalls, options.envelope);
  r.host = SummarizeHostTables(trace);
  r.tail = summary.tail;

  // Gain fractions are of the wall time the requests took when the trace has them (a
  // host-bound trace's GPU time understates what a host fix saves), else of GPU time.
  int64_t request_ns = 0;
  for (const RequestMfuRow& q : r.mfu.requests) request_ns += q.dur_ns;
  if (request_ns > 0) {
    r.total_ns = request_ns;
    r.total_basis = absl::StrFormat("wall time of %d request/iteration ranges", r.mfu.requests.size());
  } else {
    r.total_ns = summary.gpu_time_ns;
    r.total_basis = "summed GPU time (the trace has no request or iteration ranges)";
  }
  // Mitigations target operator groups: one operator's shapes can belong to different
  // classes, and each class has its own fix.
  std::vector<MitigationInput> inputs;
  for (const SheetGroup& g : r.sheet.groups) {
    MitigationInput in{g.figures, g.observed};
    if (!g.input_dims.empty()) in.figures.name = absl::StrCat(g.op, " ", g.input_dims);
    inputs.push_back(std::move(in));
  }
  r.mitigations = ProposeMitigations(inputs, r.total_ns, options.envelope, 5);
  return r;
}

}  // namespace opmap::analysis
