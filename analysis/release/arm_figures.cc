#include "analysis/release/arm_figures.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/stats/ddsketch.h"

namespace opmap::analysis {
namespace {

std::optional<double> Quantile(const opmap::v1::LatencyRow& row, int i) {
  if (i >= row.quantile_ns_size()) return std::nullopt;
  return row.quantile_ns(i);
}

double Seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

std::vector<WeightedValue> SketchSamples(const opmap::v1::Sketch& sketch) {
  std::vector<WeightedValue> out;
  if (sketch.zero_count() > 0) out.push_back({0.0, sketch.zero_count()});
  absl::StatusOr<stats::DDSketch> shape = stats::DDSketch::WithScale(sketch.scale());
  if (!shape.ok()) return out;
  for (int k = 0; k < sketch.counts_size(); ++k) {
    if (sketch.counts(k) == 0) continue;
    double v = shape->BinValue(sketch.offset() + k);
    // The representative may fall outside the exact range at the ends; clamp as
    // Quantile does, so ranks agree with the percentiles shown.
    v = std::clamp(v, sketch.min(), sketch.max());
    out.push_back({v, sketch.counts(k)});
  }
  return out;
}

std::string GroupedReasons(
    const google::protobuf::RepeatedPtrField<opmap::v1::Unavailable>& list) {
  std::vector<std::pair<std::string, std::string>> groups;  // reason, whats
  for (const auto& u : list) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == u.reason(); });
    if (it == groups.end()) {
      groups.push_back({u.reason(), u.what()});
    } else {
      absl::StrAppend(&it->second, ", ", u.what());
    }
  }
  std::string out;
  for (const auto& [reason, whats] : groups) {
    if (!out.empty()) out += "; ";
    absl::StrAppend(&out, whats, ": ", reason);
  }
  return out;
}

void SetWindows(const opmap::v1::LatencyResponse& resp, Arm& arm) {
  if (resp.rows_size() == 0) {
    arm.unavailable["latency"] = resp.unavailable_size() > 0
                                     ? GroupedReasons(resp.unavailable())
                                     : "no complete session of this revision holds requests";
  }
  for (const auto& row : resp.rows()) {
    ArmWindow w;
    w.id = row.key_size() > 0 ? row.key(0) : "";
    w.start_ns = row.window_start_ns();
    w.end_ns = row.window_end_ns();
    w.requests = row.count();
    w.p50_ns = Quantile(row, 0);
    w.p95_ns = Quantile(row, 1);
    w.p99_ns = Quantile(row, 2);
    w.latencies_ns = SketchSamples(row.sketch());
    arm.windows.push_back(std::move(w));
  }
  std::sort(arm.windows.begin(), arm.windows.end(),
            [](const ArmWindow& a, const ArmWindow& b) { return a.start_ns < b.start_ns; });
}

void SetMergedLatency(const opmap::v1::LatencyResponse& resp, Arm& arm) {
  if (resp.rows_size() != 1) return;
  const auto& row = resp.rows(0);
  arm.requests = row.count();
  arm.p50_ns = Quantile(row, 0);
  arm.p95_ns = Quantile(row, 1);
  arm.p99_ns = Quantile(row, 2);
  arm.relative_accuracy = row.relative_accuracy();
  arm.latencies_ns = SketchSamples(row.sketch());
}

bool SetLayers(const opmap::v1::LatencyResponse& resp, bool by_module, bool gpu_time, Arm& arm) {
  std::set<std::string> modules;
  bool any_layer = false;
  for (const auto& row : resp.rows()) {
    if (row.key_size() < 2) return false;
    if (!row.key(0).empty()) any_layer = true;
    modules.insert(row.key(0));
  }
  if (!any_layer) return false;
  struct Acc {
    double ns = 0;
    std::string top;
    double top_ns = 0;
  };
  std::map<std::string, Acc> layers;
  for (const auto& row : resp.rows()) {
    const std::string& layer = row.key(0);
    const std::string& op = row.key(1);
    if (by_module && modules.count(op) > 0) continue;
    Acc& a = layers[layer.empty() ? "(outside modules)" : layer];
    a.ns += static_cast<double>(row.sum_ns());
    if (static_cast<double>(row.sum_ns()) > a.top_ns) {
      a.top_ns = static_cast<double>(row.sum_ns());
      a.top = op;
    }
  }
  const double requests = static_cast<double>(std::max<uint64_t>(arm.requests, 1));
  for (const auto& [name, a] : layers) {
    LayerTime t;
    t.layer = name;
    t.top_operator = a.top;
    t.ns_per_request = a.ns / requests;
    t.top_operator_ns_per_request = a.top_ns / requests;
    arm.layers.push_back(std::move(t));
  }
  arm.inputs["layers.basis"] =
      absl::StrCat(gpu_time ? "operator GPU time" : "operator host time (inclusive)", " by ",
                   by_module ? "module" : "layer type", ", per request");
  return true;
}

void SetThroughputAndMfu(const WorkloadProfile* profile, const HardwareEnvelope* envelope,
                         Arm& arm) {
  std::string flops_basis;
  std::optional<double> flops_per_request;
  if (profile != nullptr) flops_per_request = ModelFlopsPerRequest(*profile, &flops_basis);
  std::optional<double> peak;
  if (envelope != nullptr && profile != nullptr) {
    peak = envelope->PeakFlopsPerS(profile->PrecisionOf(ProfileRevision(arm)));
  }
  const double devices = profile != nullptr ? static_cast<double>(profile->devices) : 1;
  double window_seconds = 0;
  for (ArmWindow& w : arm.windows) {
    const double s = Seconds(w.end_ns - w.start_ns);
    if (s <= 0) continue;
    window_seconds += s;
    if (flops_per_request) {
      w.achieved_flops_per_s = static_cast<double>(w.requests) * *flops_per_request / s;
      if (peak) w.mfu = *w.achieved_flops_per_s / (devices * *peak);
    }
  }
  if (window_seconds > 0) {
    double requests = 0;
    for (const ArmWindow& w : arm.windows) requests += static_cast<double>(w.requests);
    arm.throughput_rps = requests / window_seconds;
    if (flops_per_request) {
      arm.achieved_flops_per_s = *arm.throughput_rps * *flops_per_request;
      if (peak) arm.mfu = *arm.achieved_flops_per_s / (devices * *peak);
    }
  } else if (!arm.windows.empty()) {
    arm.unavailable["throughput"] = "the sessions carry no capture window times";
  }
  if (profile == nullptr) {
    arm.unavailable["mfu"] = "no workload profile (--profile FILE): model FLOPs unknown";
    arm.unavailable["achieved_flops_per_s"] = arm.unavailable["mfu"];
  } else if (!flops_per_request) {
    arm.unavailable["mfu"] = flops_basis;
    arm.unavailable["achieved_flops_per_s"] = flops_basis;
  } else {
    arm.inputs["mfu.flops_per_request"] = flops_basis;
    if (envelope == nullptr) {
      arm.unavailable["mfu"] =
          "no hardware envelope (--envelope FILE or --gpu NAME): MFU needs the peak FLOP/s; "
          "the achieved FLOP/s is compared instead";
    } else if (!peak) {
      arm.unavailable["mfu"] =
          absl::StrCat("the envelope ", envelope->name, " has no ",
                       std::string(PrecisionName(profile->PrecisionOf(ProfileRevision(arm)))), " peak");
    }
  }
}

void SetStallShare(const opmap::v1::CountersResponse& resp, Arm& arm) {
  std::optional<double> mem, total;
  for (const auto& row : resp.rows()) {
    if (!row.has_scaled()) continue;
    if (row.name() == "PAPI_MEM_SCY") mem = row.scaled();
    if (row.name() == "PAPI_TOT_CYC") total = row.scaled();
  }
  if (mem && total && *total > 0) {
    arm.memory_stall_share = *mem / *total;
    arm.inputs["memory_stall_share.basis"] = "CPU: PAPI_MEM_SCY / PAPI_TOT_CYC";
    return;
  }
  std::string why = "no PAPI_MEM_SCY and PAPI_TOT_CYC counters were collected";
  if (resp.unavailable_size() > 0) {
    absl::StrAppend(&why, " (", GroupedReasons(resp.unavailable()), ")");
  }
  absl::StrAppend(&why, "; GPU warp-stall samples are not kept by the collector");
  arm.unavailable["memory_stall_share"] = why;
}

void SetReproducibilityInputs(const ArmSelection& selection, Arm& arm) {
  std::string hosts;
  for (const std::string& h : selection.hosts) {
    if (!hosts.empty()) hosts += ",";
    hosts += h;
  }
  arm.inputs["hosts"] = hosts;
  arm.inputs[arm.key == "revision" ? "revision" : "arm." + arm.key] = arm.revision;
  arm.inputs["opmap_version.report"] = selection.opmap_version;
  if (!selection.model.empty()) arm.inputs["model"] = selection.model;
  arm.inputs["windows"] = std::to_string(arm.windows.size());
  if (!arm.windows.empty()) {
    arm.inputs["first_window_start_ns"] = std::to_string(arm.windows.front().start_ns);
    arm.inputs["last_window_end_ns"] = std::to_string(arm.windows.back().end_ns);
  }
  if (const HardwareEnvelope* e = selection.envelope) {
    arm.inputs["envelope"] = e->name;
    arm.inputs["power_mode"] = e->power_mode.empty() ? "not given" : e->power_mode;
  }
  if (const WorkloadProfile* p = selection.profile) {
    if (!p->seed.empty()) arm.inputs["seed"] = p->seed;
    arm.inputs["precision"] = std::string(PrecisionName(p->PrecisionOf(ProfileRevision(arm))));
  }
}

}  // namespace opmap::analysis
