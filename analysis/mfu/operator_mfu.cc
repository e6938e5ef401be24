#include "analysis/mfu/operator_mfu.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/mfu/op_flops.h"
#include "analysis/roofline/range_context.h"
#include "analysis/summary/rollup.h"

namespace opmap::analysis {
namespace {

constexpr char kConvention[] =
    "per operator: FLOPs / (its kernels' GPU time x peak of its precision); per request or "
    "iteration: FLOPs of the operators inside it / (wall time x devices x peak). FLOPs from "
    "NVTX payloads, else the recorded shapes (matmul 2*M*N*K, conv from Concrete Inputs, "
    "attention 4*B*H*Sq*Sk*D with no causal discount: model FLOPs), counted once per "
    "kernel-owning operator.";

// One kernel-owning operator instance.
struct Owner {
  int32_t range = -1;
  int64_t gpu_time_ns = 0;
  int kernel_votes[5] = {0, 0, 0, 0, 0};  // per Precision, from kernel names
  std::optional<double> flops;
  std::string formula;
  std::optional<Precision> precision;
  const char* precision_source = "";
  std::optional<double> peak;             // of its precision on the envelope
};

}  // namespace

std::optional<Precision> PrecisionFromInputTypes(std::string_view json) {
  // Walk the quoted strings in order; the first floating type decides.
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string_view::npos) {
    const size_t end = json.find('"', i + 1);
    if (end == std::string_view::npos) break;
    if (auto p = PrecisionFromInputType(json.substr(i + 1, end - i - 1))) return p;
    i = end + 1;
  }
  return std::nullopt;
}

std::optional<Precision> PrecisionFromKernelName(std::string_view name_in) {
  const std::string n = absl::AsciiStrToLower(absl::string_view(name_in.data(), name_in.size()));
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("e4m3") || has("e5m2") || has("fp8")) return Precision::kFp8;
  if (has("bf16") || has("bfloat16")) return Precision::kBf16;
  if (has("tf32")) return Precision::kTf32;
  if (has("fp16") || has("f16") || has("half") || has("h884") || has("h1688") ||
      has("h16816")) {
    return Precision::kFp16;
  }
  if (has("sgemm") || has("fp32") || has("f32")) return Precision::kFp32;
  return std::nullopt;
}

FlopsEstimate RangeFlops(const Trace& trace, const Range& range) {
  return ModelFlops(RangeCost(trace, range));
}

MfuReport ComputeOperatorMfu(const Trace& trace, const MappingResult& mapping,
                             const MfuOptions& options) {
  MfuReport out;
  out.convention = kConvention;
  if (options.envelope != nullptr) {
    out.envelope_name = options.envelope->name;
  } else {
    out.unavailable = "no hardware envelope: the trace names no GPU with a built-in "
                      "envelope and none was given (--envelope FILE)";
  }

  // Kernel-owning instances, in range order.
  std::map<int32_t, Owner> owners;
  for (size_t i = 0; i < trace.gpu_events.size() && i < mapping.events.size(); ++i) {
    const int32_t r = mapping.events[i].range;
    if (r < 0) continue;
    const GpuEvent& e = trace.gpu_events[i];
    Owner& o = owners[r];
    o.range = r;
    o.gpu_time_ns += e.dur_ns;
    if (e.kind == GpuEventKind::kKernel) {
      if (auto p = PrecisionFromKernelName(trace.strings.Get(e.name))) {
        ++o.kernel_votes[static_cast<int>(*p)];
      }
    }
  }
  // Instances with the same recorded arguments and no payload share their FLOPs: one
  // parse per distinct (name, dims, types, concrete inputs).
  std::map<std::tuple<StringId, StringId, StringId, StringId>, FlopsEstimate> by_args;
  // Serving ops (paged attention, fused MoE) read the trace around them too (their step,
  // nested operators): costed one by one with their context, as the mapping sheet does.
  std::optional<RangeContexts> contexts;
  for (auto& [r, o] : owners) {
    const Range& range = trace.ranges[r];
    FlopsEstimate f;
    if (CostReadsTraceContext(trace.strings.Get(range.name))) {
      if (!contexts) contexts.emplace(trace);
      f = ModelFlops(RangeCost(trace, range, contexts->For(r)));
    } else if (range.flops == kNone) {
      const auto key = std::make_tuple(range.name, range.input_dims, range.input_types,
                                       range.concrete_inputs);
      auto it = by_args.find(key);
      if (it == by_args.end()) it = by_args.emplace(key, RangeFlops(trace, range)).first;
      f = it->second;
    } else {
      f = RangeFlops(trace, range);
    }
    o.flops = f.flops;
    o.formula = f.flops ? f.formula : f.reason;
    if (auto p = PrecisionFromInputTypes(trace.strings.Get(range.input_types))) {
      o.precision = p;
      o.precision_source = "Input type";
    } else {
      int best = -1;
      for (int k = 0; k < 5; ++k) {
        if (o.kernel_votes[k] > 0 && (best < 0 || o.kernel_votes[k] > o.kernel_votes[best])) best = k;
      }
      if (best >= 0) {
        o.precision = static_cast<Precision>(best);
        o.precision_source = "kernel name";
      } else if (options.default_precision) {
        o.precision = options.default_precision;
        o.precision_source = "default";
      }
    }
    if (options.envelope != nullptr && o.precision) {
      o.peak = options.envelope->PeakFlopsPerS(*o.precision);
    }
  }

  // Per operator name. peak_seconds = Σ t_i × peak_i, so mixed precisions weigh right.
  struct Acc {
    OperatorMfuRow row;
    double peak_flops_time = 0;  // Σ gpu seconds × peak over instances with FLOPs and peak
    bool peak_missing = false;
    int votes[5] = {0, 0, 0, 0, 0};
    std::string source;
  };
  std::map<std::string, Acc> by_name;
  for (const auto& [r, o] : owners) {
    const std::string name(trace.strings.Get(trace.ranges[r].name));
    Acc& a = by_name[name];
    a.row.name = name;
    ++a.row.instances;
    a.row.gpu_time_ns += o.gpu_time_ns;
    out.gpu_time_ns += o.gpu_time_ns;
    if (a.row.formula.empty() || (!a.row.instances_with_flops && o.flops)) a.row.formula = o.formula;
    if (!o.flops) continue;
    ++a.row.instances_with_flops;
    a.row.flops += *o.flops;
    a.row.gpu_time_with_flops_ns += o.gpu_time_ns;
    out.flops += *o.flops;
    out.gpu_time_with_flops_ns += o.gpu_time_ns;
    if (o.precision) {
      ++a.votes[static_cast<int>(*o.precision)];
      a.source = o.precision_source;
    }
    if (o.peak) {
      a.peak_flops_time += static_cast<double>(o.gpu_time_ns) * 1e-9 * *o.peak;
    } else {
      a.peak_missing = true;
    }
  }
  for (auto& [name, a] : by_name) {
    OperatorMfuRow& row = a.row;
    int best = -1;
    for (int k = 0; k < 5; ++k) {
      if (a.votes[k] > 0 && (best < 0 || a.votes[k] > a.votes[best])) best = k;
    }
    if (best >= 0) {
      row.precision = static_cast<Precision>(best);
      row.precision_source = a.source;
    }
    if (row.instances_with_flops == 0) {
      row.unavailable = row.formula;
    } else {
      if (row.gpu_time_with_flops_ns > 0) {
        row.achieved_flops_per_s = row.flops / (static_cast<double>(row.gpu_time_with_flops_ns) * 1e-9);
      }
      if (options.envelope == nullptr) {
        row.unavailable = "no hardware envelope";
      } else if (a.peak_missing) {
        row.unavailable = row.precision
                              ? "the envelope has no " +
                                    std::string(PrecisionName(*row.precision)) + " peak"
                              : "precision unknown (no Input type, no dtype in kernel names)";
      } else if (a.peak_flops_time > 0) {
        row.mfu = row.flops / a.peak_flops_time;
      }
    }
    out.operators.push_back(std::move(row));
  }
  std::sort(out.operators.begin(), out.operators.end(),
            [](const OperatorMfuRow& a, const OperatorMfuRow& b) {
              if (a.flops != b.flops) return a.flops > b.flops;
              if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
              return a.name < b.name;
            });

  // Requests: owners whose range starts inside the request range, in the same process.
  std::vector<const Owner*> by_start;
  for (const auto& [r, o] : owners) by_start.push_back(&o);
  std::sort(by_start.begin(), by_start.end(), [&](const Owner* a, const Owner* b) {
    return trace.ranges[a->range].start_ns < trace.ranges[b->range].start_ns;
  });
  double req_flops_over_peak = 0;  // Σ FLOPs / peak: seconds of peak-rate work
  double req_seconds = 0;
  bool req_mfu_ok = options.envelope != nullptr;
  for (const Range& req : trace.ranges) {
    if (RequestKey(trace.strings.Get(req.name)).empty()) continue;
    RequestMfuRow row;
    row.name = std::string(trace.strings.Get(req.name));
    row.start_ns = req.start_ns;
    row.dur_ns = req.dur_ns;
    double flops_over_peak = 0;
    bool peak_ok = options.envelope != nullptr;
    auto it = std::lower_bound(by_start.begin(), by_start.end(), req.start_ns,
                               [&](const Owner* o, int64_t t) {
                                 return trace.ranges[o->range].start_ns < t;
                               });
    for (; it != by_start.end() && trace.ranges[(*it)->range].start_ns < req.end_ns(); ++it) {
      const Owner& o = **it;
      if (req.process != kNone && trace.ranges[o.range].process != req.process) continue;
      row.gpu_time_ns += o.gpu_time_ns;
      if (!o.flops) continue;
      row.flops += *o.flops;
      row.gpu_time_with_flops_ns += o.gpu_time_ns;
      if (o.peak && *o.peak > 0) {
        flops_over_peak += *o.flops / *o.peak;
      } else {
        peak_ok = false;
      }
    }
    if (peak_ok && row.dur_ns > 0 && row.flops > 0) {
      row.mfu = flops_over_peak / (static_cast<double>(row.dur_ns) * 1e-9 * options.devices);
      req_flops_over_peak += flops_over_peak;
      req_seconds += static_cast<double>(row.dur_ns) * 1e-9 * options.devices;
    } else {
      req_mfu_ok = false;
    }
    out.requests.push_back(std::move(row));
  }
  std::sort(out.requests.begin(), out.requests.end(),
            [](const RequestMfuRow& a, const RequestMfuRow& b) { return a.start_ns < b.start_ns; });
  if (req_mfu_ok && req_seconds > 0) out.mfu_over_requests = req_flops_over_peak / req_seconds;
  return out;
}

}  // namespace opmap::analysis
