#include "agent/daemon/window_policy.h"

#include <algorithm>

namespace opmap::agent {

absl::Time WindowPolicy::FirstWindow(absl::Time registered, double u01) const {
  return registered + kFirstWindowDelay + absl::Seconds(1) * std::clamp(u01, 0.0, 1.0);
}

absl::Time WindowPolicy::NextWindow(absl::Time from, double u11) const {
  const double jitter = options_.jitter * std::clamp(u11, -1.0, 1.0);
  return from + options_.every * (1.0 + jitter);
}

absl::Duration WindowPolicy::WindowLength() const {
  return std::max(kMinWindow, options_.window * window_scale_);
}

void WindowPolicy::ObserveCpu(absl::Time now, double cpu_seconds) {
  if (!have_baseline_) {
    have_baseline_ = true;
    sampled_at_ = now;
    cpu_seconds_at_ = cpu_seconds;
    return;
  }
  if (!WantsCpuSample(now)) return;
  const double load = (cpu_seconds - cpu_seconds_at_) / absl::ToDoubleSeconds(now - sampled_at_);
  sampled_at_ = now;
  cpu_seconds_at_ = cpu_seconds;
  // About 60 s of exponential averaging: one-second samples, weight 1/60.
  cpu_load_ = cpu_load_ == 0 ? load : cpu_load_ + (load - cpu_load_) / 60.0;
  if (cpu_load_ > options_.cpu_budget) {
    window_scale_ = std::max(kMinScale, window_scale_ * 0.9);
  } else if (cpu_load_ < options_.cpu_budget * 0.5) {
    window_scale_ = std::min(1.0, window_scale_ * 1.05);
  }
}

}  // namespace opmap::agent
