// WindowPolicy: when the agent opens a capture window on a process and how long it lasts.
// Pure: it reads no clock and draws no random numbers itself (the caller passes the time
// and uniform draws), so it is tested on a fake clock with fixed draws.
//
// - A registered process gets its first window kFirstWindowDelay after registration
//   plus up to a second (so processes started together do not all capture at once),
//   then one every `every`, each ± `jitter` (a fraction of `every`).
// - A window lasts `window` × scale, at least 100 ms. The scale keeps the agent's own
//   CPU (cores, averaged over about 60 s) under `cpu_budget`: each second over budget
//   it shrinks by 10% (down to 5%), each second under half the budget it grows by 5%
//   (up to 100%).
#ifndef OPMAP_AGENT_DAEMON_WINDOW_POLICY_H_
#define OPMAP_AGENT_DAEMON_WINDOW_POLICY_H_

#include "absl/time/time.h"

namespace opmap::agent {

struct WindowPolicyOptions {
  absl::Duration every = absl::Seconds(60);
  absl::Duration window = absl::Seconds(2);
  double jitter = 0.2;       // in [0, 1)
  double cpu_budget = 0.01;  // cores
};

class WindowPolicy {
 public:
  static constexpr absl::Duration kFirstWindowDelay = absl::Seconds(1);
  static constexpr absl::Duration kMinWindow = absl::Milliseconds(100);
  static constexpr double kMinScale = 0.05;

  explicit WindowPolicy(const WindowPolicyOptions& options) : options_(options) {}

  // The first window of a process registered at `registered`; `u01` is a uniform draw
  // in [0, 1).
  absl::Time FirstWindow(absl::Time registered, double u01) const;
  // The window after one scheduled at `from`; `u11` is a uniform draw in [-1, 1].
  absl::Time NextWindow(absl::Time from, double u11) const;
  // The length of a window opened now.
  absl::Duration WindowLength() const;

  // The agent's own CPU time so far (`cpu_seconds`) at `now`. The first call only sets
  // the baseline; later ones update the load and the scale once a second or more has
  // passed since the last update (more often is ignored).
  void ObserveCpu(absl::Time now, double cpu_seconds);
  // Whether ObserveCpu at `now` would update anything (so the caller reads its CPU
  // time once a second, not every tick).
  bool WantsCpuSample(absl::Time now) const {
    return !have_baseline_ || now - sampled_at_ >= absl::Seconds(1);
  }

  double cpu_load() const { return cpu_load_; }        // cores, smoothed
  double window_scale() const { return window_scale_; }

 private:
  WindowPolicyOptions options_;
  bool have_baseline_ = false;
  absl::Time sampled_at_;
  double cpu_seconds_at_ = 0;
  double cpu_load_ = 0;
  double window_scale_ = 1;
};

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_DAEMON_WINDOW_POLICY_H_
