// SetPower (arm_figures.h): perf per watt from the Power query's per-session GPU rows.
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/release/arm_figures.h"

namespace opmap::analysis {

void SetPower(const opmap::v1::PowerResponse& by_session, const WorkloadProfile* profile,
              Arm& arm) {
  // Σ over a window's GPUs: a process on two GPUs draws both.
  std::map<std::string, double> watts;
  std::set<std::string> names, limits, modes;
  for (const opmap::v1::PowerRow& row : by_session.rows()) {
    if (row.domain() != opmap::v1::POWER_DOMAIN_GPU || row.key_size() < 1) continue;
    if (!row.name().empty()) names.insert(row.name());
    if (row.has_power_limit_min_mw()) {
      limits.insert(absl::StrFormat("%.0f", row.power_limit_min_mw() / 1e3));
      limits.insert(absl::StrFormat("%.0f", row.power_limit_max_mw() / 1e3));
    }
    if (!row.mode().empty()) modes.insert(row.mode());
    if (!row.has_average_w()) continue;
    watts[row.key(0)] += row.average_w();
  }
  double joules = 0, seconds = 0, requests = 0;
  for (ArmWindow& w : arm.windows) {
    auto it = watts.find(w.id);
    const double s = static_cast<double>(w.end_ns - w.start_ns) * 1e-9;
    if (it == watts.end() || it->second <= 0 || s <= 0) continue;
    w.gpu_watts = it->second;
    w.requests_per_joule = static_cast<double>(w.requests) / (it->second * s);
    if (w.mfu) w.mfu_per_watt = *w.mfu / it->second;
    joules += it->second * s;
    seconds += s;
    requests += static_cast<double>(w.requests);
  }
  if (!names.empty()) arm.inputs["power.gpu"] = absl::StrJoin(names, ",");
  if (!limits.empty()) arm.inputs["power.limit_w"] = absl::StrJoin(limits, ",");
  if (!modes.empty()) arm.inputs["power.mode"] = absl::StrJoin(modes, " | ");
  if (joules <= 0) {
    std::string why = "no window of the arm has GPU power";
    if (by_session.unavailable_size() > 0) {
      absl::StrAppend(&why, " (", GroupedReasons(by_session.unavailable()), ")");
    }
    arm.unavailable["perf_per_watt"] = why;
    return;
  }
  arm.gpu_watts = joules / seconds;
  arm.requests_per_joule = requests / joules;
  if (arm.mfu) {
    arm.mfu_per_watt = *arm.mfu / *arm.gpu_watts;
  } else {
    arm.unavailable["mfu_per_watt"] = "no MFU for the arm (see mfu)";
  }
  if (profile != nullptr && profile->decode_tokens) {
    arm.tokens_per_joule = *arm.requests_per_joule * static_cast<double>(*profile->decode_tokens);
    arm.inputs["perf_per_watt.tokens_per_request"] = absl::StrCat(*profile->decode_tokens,
                                                                  " (decode_tokens)");
  } else {
    arm.unavailable["tokens_per_joule"] = "no decode_tokens in the workload profile";
  }
  if (arm.achieved_flops_per_s && arm.throughput_rps && *arm.throughput_rps > 0) {
    // FLOP per request × requests per joule.
    arm.flops_per_joule = *arm.achieved_flops_per_s / *arm.throughput_rps * *arm.requests_per_joule;
  } else {
    arm.unavailable["flops_per_joule"] = "model FLOPs per request unknown (see mfu)";
  }
}

}  // namespace opmap::analysis
