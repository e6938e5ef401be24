#include "analysis/serving/step_of_range.h"

#include <algorithm>

namespace opmap::analysis {

StepOfRange::StepOfRange(const Trace& trace) : trace_(trace) {
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    std::optional<StepAnnotation> parsed = ParseStepAnnotation(trace.strings.Get(r.name));
    if (!parsed) continue;
    Step s;
    s.range = static_cast<int32_t>(i);
    s.sums = HasAttentionSums(*parsed);
    s.parsed = std::move(*parsed);
    by_thread_[{r.process, r.thread}].push_back(static_cast<int32_t>(steps_.size()));
    steps_.push_back(std::move(s));
  }
  for (auto& [key, v] : by_thread_) {
    // Outer first on equal starts, so a nested step follows the step that encloses it.
    std::stable_sort(v.begin(), v.end(), [&](int32_t a, int32_t b) {
      const Range& ra = trace.ranges[steps_[a].range];
      const Range& rb = trace.ranges[steps_[b].range];
      if (ra.start_ns != rb.start_ns) return ra.start_ns < rb.start_ns;
      return ra.end_ns() > rb.end_ns();
    });
    std::vector<int32_t> open;  // the chain of steps enclosing the current one
    for (int32_t s : v) {
      const Range& r = trace.ranges[steps_[s].range];
      while (!open.empty() && trace.ranges[steps_[open.back()].range].end_ns() < r.end_ns()) {
        open.pop_back();
      }
      steps_[s].parent = open.empty() ? -1 : open.back();
      open.push_back(s);
    }
    if (!IsReplayThread(key.second)) {
      replay_origin_[{key.first, ReplayThread(key.second)}].push_back(key.second);
    }
  }
}

int32_t StepOfRange::StepIndex(int32_t range) const {
  if (range < 0 || static_cast<size_t>(range) >= trace_.ranges.size() || steps_.empty()) {
    return -1;
  }
  const Range& r = trace_.ranges[range];
  std::vector<int64_t> threads;
  if (IsReplayThread(r.thread)) {
    auto origin = replay_origin_.find({r.process, r.thread});
    if (origin != replay_origin_.end()) threads = origin->second;
  } else {
    threads.push_back(r.thread);
  }
  const Step* innermost = nullptr;
  const Step* with_sums = nullptr;
  for (int64_t t : threads) {
    auto it = by_thread_.find({r.process, t});
    if (it == by_thread_.end()) continue;
    const std::vector<int32_t>& v = it->second;
    // The last step starting at or before the range: the innermost enclosing step, if any,
    // is it or on its chain of enclosing steps.
    auto pos = std::upper_bound(v.begin(), v.end(), r.start_ns, [&](int64_t t0, int32_t s) {
      return t0 < trace_.ranges[steps_[s].range].start_ns;
    });
    if (pos == v.begin()) continue;
    int32_t s = *std::prev(pos);
    const Step* found = nullptr;
    const Step* found_sums = nullptr;
    for (; s >= 0; s = steps_[s].parent) {
      const Step& step = steps_[s];
      const Range& sr = trace_.ranges[step.range];
      if (step.range == range || sr.start_ns > r.start_ns || sr.end_ns() < r.end_ns()) continue;
      if (found == nullptr) found = &step;
      if (step.sums) {
        found_sums = &step;
        break;
      }
    }
    // Several origin threads (ids that collide modulo 2^29) cannot both enclose one copy in
    // a well-formed trace; the first that does wins.
    if (found != nullptr && innermost == nullptr) {
      innermost = found;
      with_sums = found_sums;
    }
  }
  const Step* best = with_sums != nullptr ? with_sums : innermost;
  return best != nullptr ? static_cast<int32_t>(best - steps_.data()) : -1;
}

int32_t StepOfRange::StepRange(int32_t range) const {
  const int32_t s = StepIndex(range);
  return s < 0 ? -1 : steps_[s].range;
}

const StepAnnotation* StepOfRange::StepFor(int32_t range) const {
  const int32_t s = StepIndex(range);
  return s < 0 ? nullptr : &steps_[s].parsed;
}

}  // namespace opmap::analysis
