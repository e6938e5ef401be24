#include "analysis/bottleneck/mitigations.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "analysis/bottleneck/evidence_format.h"
#include "analysis/report/report_fields.h"
#include "common/text/printable.h"

namespace opmap::analysis {
namespace {

using bottleneck_format::UsText;

struct Plan {
  const char* action;
  OwnerRole owner;
  const char* validation;  // "%s" = subject
  const char* rollback;
};

// docs/metrics.md "Mitigations by class (owner)".
Plan PlanFor(BottleneckClass c) {
  switch (c) {
    case BottleneckClass::kLaunchOverhead:
      return {"CUDA graphs / torch.compile", OwnerRole::kRuntimeSystemsEngineer,
              "re-run the validation matrix on the same load: p50/p95/p99 latency, throughput, "
              "MFU and error rate; quality on the eval set (compiled kernels change numerics); "
              "%s's launch count and launch gaps must drop",
              "revert the compile flag / graph capture for %s only"};
    case BottleneckClass::kHostStarved:
      return {"async host pipeline", OwnerRole::kRuntimeSystemsEngineer,
              "re-run the validation matrix on the same load: p50/p95/p99 latency, throughput "
              "and error rate; host-wait idle before %s's kernels must drop",
              "revert the host pipeline change (prefetch / pinned buffers / async copies) "
              "feeding %s only"};
    case BottleneckClass::kMemoryBound:
      return {"fusion / quantized weights or KV / larger decode batch",
              OwnerRole::kMlCompilerEngineer,
              "re-run the validation matrix on the same load: p50/p95/p99 latency, throughput, "
              "MBU and memory-stall share of %s; quality on the eval set for any quantization",
              "revert the fusion pass, quantized weights/KV or batch size for %s only"};
    case BottleneckClass::kComputeBound:
      return {"FP8 / GEMM tuning", OwnerRole::kMlCompilerEngineer,
              "re-run the validation matrix on the same load: p50/p95/p99 latency, throughput "
              "and MFU of %s; quality on the eval set (FP8 numerics)",
              "revert %s to its previous precision and GEMM configuration only"};
    case BottleneckClass::kCommunication:
      return {"overlap or fewer collectives", OwnerRole::kRuntimeSystemsEngineer,
              "re-run the validation matrix on the same load and world size: p50/p95/p99 "
              "latency, throughput; non-overlapped communication of %s; loss/quality on the "
              "eval set",
              "revert the bucketing / overlap setting for %s only"};
    case BottleneckClass::kLatencyOccupancy:
      return {"split-K / persistent kernels", OwnerRole::kMlCompilerEngineer,
              "re-run the validation matrix on the same load at every batch size served: "
              "p50/p95/p99 latency and throughput; %s's kernel time and waves per SM",
              "revert the split-K / persistent-kernel selection for %s only"};
    case BottleneckClass::kUnclassified:
      break;
  }
  return {"measure the missing figures", OwnerRole::kPerformanceModelingOwner,
          "measure what the evidence lists as missing for %s (DRAM bytes from Nsight Compute, "
          "FLOPs, warp stalls), then classify again",
          "nothing to revert: measurement only (%s unchanged)"};
}

struct Bound {
  std::optional<int64_t> ns;
  std::string basis;
};

// The roofline floor of an operator's time at its current work: max(FLOPs / peak,
// bytes / bandwidth) over the terms that are known (each alone is already a floor).
std::optional<double> RooflineNs(const OperatorFigures& f, const HardwareEnvelope* env,
                                 std::string* terms) {
  if (env == nullptr) return std::nullopt;
  std::optional<double> floor;
  const auto peak = PathPeak(f, env);
  if (f.flops && peak) {
    floor = *f.flops / *peak * 1e9;
    *terms = absl::StrCat("FLOPs/peak ", UsText(*floor));
  }
  if (f.bytes && env->hbm_bytes_per_s > 0) {
    const double mem = *f.bytes / env->hbm_bytes_per_s * 1e9;
    absl::StrAppend(terms, terms->empty() ? "" : ", ", "bytes/bandwidth ", UsText(mem));
    floor = std::max(floor.value_or(0), mem);
  }
  return floor;
}

Bound BoundFor(const MitigationInput& in, const HardwareEnvelope* env) {
  const OperatorFigures& f = in.figures;
  const int64_t t = f.gpu_time_ns;
  switch (in.classification.cls) {
    case BottleneckClass::kLaunchOverhead:
      if (!f.idle_ns) return {std::nullopt, "no idle figure before its kernels"};
      // Graphs remove at most the gaps before its kernels; fusing its small kernels saves at
      // most their whole GPU time.
      return {*f.idle_ns + f.small_kernel_time_ns,
              absl::StrCat("idle before its kernels ", UsText(*f.idle_ns),
                           " + time of its kernels < 10 µs ", UsText(f.small_kernel_time_ns))};
    case BottleneckClass::kHostStarved:
      if (!f.host_wait_idle_ns) return {std::nullopt, "no host-wait figure"};
      return {*f.host_wait_idle_ns, "host-wait idle before its kernels (all an async pipeline "
                                    "can hide)"};
    case BottleneckClass::kCommunication:
      if (!f.non_overlapped_comm_ns) return {std::nullopt, "no non-overlapped communication figure"};
      return {*f.non_overlapped_comm_ns,
              "non-overlapped communication (overlapped time is already hidden)"};
    case BottleneckClass::kComputeBound: {
      // FP8 at most doubles the math rate and tuning at best reaches the peak, so the time
      // cannot fall below FLOPs / FP8 peak (bytes fall with FP8, so they are no floor).
      if (env == nullptr) return {std::nullopt, "no hardware envelope"};
      if (!f.flops) return {std::nullopt, "no FLOPs figure"};
      auto peak = env->PeakFlopsPerS(Precision::kFp8);
      const char* which = "FP8";
      if (!peak) {
        peak = env->PeakFlopsPerS(f.precision);
        which = "its precision's (no FP8 path)";
      }
      if (!peak) return {std::nullopt, "no peak for its precision"};
      const double floor = *f.flops / *peak * 1e9;
      return {std::max<int64_t>(0, t - static_cast<int64_t>(std::ceil(floor))),
              absl::StrCat("GPU time ", UsText(t), " − FLOPs ÷ ", which, " peak ",
                           UsText(floor))};
    }
    case BottleneckClass::kMemoryBound:
    case BottleneckClass::kLatencyOccupancy: {
      std::string terms;
      const auto floor = RooflineNs(f, env, &terms);
      if (!floor) {
        return {std::nullopt, env == nullptr ? "no hardware envelope" : "no FLOPs or bytes"};
      }
      std::string basis = absl::StrCat("GPU time ", UsText(t), " − roofline time max(", terms,
                                       ")");
      if (in.classification.cls == BottleneckClass::kMemoryBound) {
        absl::StrAppend(&basis, " at the current bytes; a change that cuts bytes "
                                "(quantization, fusion) needs a new bound on its byte count");
      }
      return {std::max<int64_t>(0, t - static_cast<int64_t>(std::ceil(*floor))), basis};
    }
    case BottleneckClass::kUnclassified:
      break;
  }
  return {std::nullopt, "no class, so no bound: measure the missing figures first"};
}

}  // namespace

std::string_view OwnerRoleName(OwnerRole r) {
  switch (r) {
    case OwnerRole::kMlCompilerEngineer:
      return "ML compiler engineer";
    case OwnerRole::kRuntimeSystemsEngineer:
      return "runtime systems engineer";
    case OwnerRole::kPerformanceModelingOwner:
      return "performance modeling owner";
  }
  return "performance modeling owner";
}

std::optional<OwnerRole> ParseOwnerRole(std::string_view text) {
  const std::string t = absl::AsciiStrToLower(std::string(text));
  for (OwnerRole r : {OwnerRole::kMlCompilerEngineer, OwnerRole::kRuntimeSystemsEngineer,
                      OwnerRole::kPerformanceModelingOwner}) {
    if (t == absl::AsciiStrToLower(std::string(OwnerRoleName(r)))) return r;
  }
  if (t == "compiler") return OwnerRole::kMlCompilerEngineer;
  if (t == "runtime") return OwnerRole::kRuntimeSystemsEngineer;
  if (t == "modeling") return OwnerRole::kPerformanceModelingOwner;
  return std::nullopt;
}

ClassPlan PlanForClass(BottleneckClass cls, std::string_view subject) {
  const Plan plan = PlanFor(cls);
  const std::string s(subject);
  return {plan.action, plan.owner, absl::StrReplaceAll(plan.validation, {{"%s", s}}),
          absl::StrReplaceAll(plan.rollback, {{"%s", s}})};
}

std::vector<Mitigation> ProposeMitigations(const std::vector<MitigationInput>& subjects,
                                           int64_t total_ns, const HardwareEnvelope* envelope,
                                           int top) {
  std::vector<const MitigationInput*> order;
  for (const MitigationInput& s : subjects) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->figures.gpu_time_ns > b->figures.gpu_time_ns;
  });
  order.resize(report_fields::Rows(order.size(), top));

  std::vector<Mitigation> out;
  std::vector<int64_t> gpu_time;
  for (const MitigationInput* in : order) {
    const std::string& subject = in->figures.name;
    ClassPlan plan = PlanForClass(in->classification.cls, subject);
    Mitigation m;
    m.subject = subject;
    m.cls = in->classification.cls;
    m.action = std::move(plan.action);
    m.owner = plan.owner;
    Bound b = BoundFor(*in, envelope);
    m.gain_basis = std::move(b.basis);
    if (b.ns) {
      m.gain_bound_ns = *b.ns;
      if (total_ns > 0) {
        // A bound that includes idle can exceed a GPU-time denominator: never above 1.
        m.gain_bound_fraction = std::min(1.0, static_cast<double>(*b.ns) / total_ns);
      } else {
        absl::StrAppend(&m.gain_basis, " (no total time, so no fraction)");
      }
    }
    m.validation_scope = std::move(plan.validation_scope);
    m.rollback_boundary = std::move(plan.rollback_boundary);
    m.evidence = in->classification.evidence;
    out.push_back(std::move(m));
  }
  // Largest bound first; proposals without a bound last, in GPU-time order (stable).
  std::stable_sort(out.begin(), out.end(), [](const Mitigation& a, const Mitigation& b) {
    if (a.gain_bound_ns.has_value() != b.gain_bound_ns.has_value()) {
      return a.gain_bound_ns.has_value();
    }
    return a.gain_bound_ns.value_or(0) > b.gain_bound_ns.value_or(0);
  });
  return out;
}

void WriteMitigationsJson(const std::vector<Mitigation>& mitigations, text::JsonWriter& w) {
  w.BeginArray();
  for (const Mitigation& m : mitigations) {
    w.BeginObject();
    w.Field("subject", m.subject).Field("class", BottleneckClassName(m.cls));
    w.Field("action", m.action).Field("owner", OwnerRoleName(m.owner));
    bottleneck_format::OptionalDouble(w, "gain_bound_fraction", m.gain_bound_fraction, 6);
    w.Key("gain_bound_ns");
    if (m.gain_bound_ns) {
      w.Int(*m.gain_bound_ns);
    } else {
      w.Null();
    }
    w.Field("gain_basis", m.gain_basis);
    w.Field("validation_scope", m.validation_scope);
    w.Field("rollback_boundary", m.rollback_boundary);
    w.Key("evidence").BeginArray();
    for (const Evidence& e : m.evidence) bottleneck_format::WriteEvidenceJson(e, w);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

DocSection MitigationsSection(const std::vector<Mitigation>& mitigations) {
  DocSection s;
  s.heading = "Mitigations";
  s.paragraphs.push_back(
      "Gain bounds are Amdahl upper bounds on this trace's own figures, not predictions.");
  DocTable t;
  t.columns = {"subject", "class", "action", "owner", "gain bound", "basis", "validation",
               "rollback boundary", "evidence"};
  t.align_right = {false, false, false, false, true, false, false, false, false};
  for (const Mitigation& m : mitigations) {
    std::string gain = m.gain_bound_ns
                           ? absl::StrCat(UsText(static_cast<double>(*m.gain_bound_ns)),
                                          m.gain_bound_fraction
                                              ? absl::StrFormat(" (%.1f%%)",
                                                                100 * *m.gain_bound_fraction)
                                              : "")
                           : absl::StrCat("unavailable: ", m.gain_basis);
    std::vector<std::string> ev;
    for (const Evidence& e : m.evidence) ev.push_back(bottleneck_format::EvidenceLine(e));
    t.rows.push_back({text::PrintableCell(m.subject, 60), std::string(BottleneckClassName(m.cls)),
                      m.action, std::string(OwnerRoleName(m.owner)), gain, m.gain_basis,
                      m.validation_scope, m.rollback_boundary, absl::StrJoin(ev, "; ")});
  }
  if (mitigations.empty()) t.notes.push_back("no operators to propose mitigations for");
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace opmap::analysis
