// Arms for the release tests: 200 request latencies 10..19.95 ms (× scale), four 60 s
// windows of 50 requests, MFU 40%, memory-stall share 30%, no errors. Every figure the
// tests assert is derived from these by hand in the test that asserts it.
#ifndef OPMAP_TESTS_UNIT_RELEASE_RELEASE_FIXTURE_H_
#define OPMAP_TESTS_UNIT_RELEASE_RELEASE_FIXTURE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/release/release_recommendation.h"
#include "analysis/stats/ddsketch.h"
#include "gtest/gtest.h"

namespace opmap::analysis::release_test {

inline constexpr double kMs = 1e6;
inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kStart = 1'700'000'000 * kSecond;  // an epoch-like origin

// p50 15 ms, p95 19.5 ms, p99 19.9 ms at scale 1 (set, not computed: the recommendation
// takes percentiles from the caller's sketches).
inline Arm MakeArm(std::string revision, double scale, int samples = 200, int windows = 4) {
  Arm a;
  a.revision = std::move(revision);
  a.relative_accuracy = stats::DDSketch::kRelativeAccuracy;
  for (int i = 0; i < samples; ++i) a.latencies_ns.push_back({(10 + 0.05 * i) * kMs * scale, 1});
  a.p50_ns = 15 * kMs * scale;
  a.p95_ns = 19.5 * kMs * scale;
  a.p99_ns = 19.9 * kMs * scale;
  for (int w = 0; w < windows; ++w) {
    ArmWindow win;
    win.id = "agent-1/session-" + std::to_string(w);
    win.start_ns = kStart + w * 60 * kSecond;
    win.end_ns = win.start_ns + 60 * kSecond;
    win.requests = static_cast<uint64_t>(samples / windows);
    win.p50_ns = a.p50_ns;
    win.p95_ns = a.p95_ns;
    win.p99_ns = a.p99_ns;
    win.mfu = 0.40;
    win.memory_stall_share = 0.30;
    win.errors = 0;
    win.gpu_watts = 400;
    win.requests_per_joule = static_cast<double>(win.requests) / (400 * 60.0);
    a.windows.push_back(win);
  }
  a.requests = static_cast<uint64_t>(samples);
  if (windows > 0) a.throughput_rps = samples / (windows * 60.0);
  a.mfu = 0.40;
  a.memory_stall_share = 0.30;
  a.errors = 0;
  a.gpu_watts = 400;
  if (windows > 0) a.requests_per_joule = *a.throughput_rps / 400;
  a.inputs = {{"seed", "7"}, {"runtime", "vllm 0.6.3"}};
  return a;
}

inline ReleaseInputs Inputs(Arm baseline, Arm candidate, const WorkloadProfile* p = nullptr) {
  ReleaseInputs in;
  in.baseline = std::move(baseline);
  in.candidate = std::move(candidate);
  in.profile = p;
  return in;
}

inline const Trigger& FindTrigger(const Recommendation& r, std::string_view name) {
  for (const Trigger& t : r.triggers) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no trigger " << name;
  static const Trigger kNone;
  return kNone;
}

inline const ValidationRow& FindRow(const Recommendation& r, std::string_view metric) {
  for (const ValidationRow& row : r.matrix) {
    if (row.metric == metric) return row;
  }
  ADD_FAILURE() << "no row " << metric;
  static const ValidationRow kNone;
  return kNone;
}

}  // namespace opmap::analysis::release_test

#endif  // OPMAP_TESTS_UNIT_RELEASE_RELEASE_FIXTURE_H_
