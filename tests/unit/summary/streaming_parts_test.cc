// StreamingParts' bounds on degenerate or hostile input: a part never grows past its
// limits, and what it had to let go is counted.
#include <vector>

#include "analysis/model/trace.h"
#include "analysis/summary/streaming_parts.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

struct Collected {
  int64_t parts = 0;
  size_t largest = 0;
  int64_t gpu_events = 0;
  int64_t ranges_ended = 0;
};

StreamingParts Make(StringTable* strings, Collected* out, StreamingPartsOptions options) {
  return StreamingParts(TraceInfo{}, strings, options, [out](const Trace& part, const PartRanges& r) {
    ++out->parts;
    out->largest = std::max(out->largest, part.gpu_events.size() + part.api_calls.size() +
                                              part.ranges.size());
    out->gpu_events += static_cast<int64_t>(part.gpu_events.size());
    for (uint8_t e : r.ends_here) out->ranges_ended += e;
  });
}

TEST(StreamingPartsTest, EventsAllAtOneTimeAreCutAtTheForcedSize) {
  StringTable strings;
  Collected got;
  StreamingParts parts = Make(&strings, &got, {.target_events = 100});
  for (int i = 0; i < 10000; ++i) {
    GpuEvent g;
    g.start_ns = 5;
    g.dur_ns = 1;
    parts.Add(g);
  }
  parts.Finish();
  EXPECT_EQ(got.gpu_events, 10000);
  EXPECT_LE(got.largest, 400u);  // target x forced_cut_factor
  EXPECT_GE(parts.stats().forced_cuts, 20);
}

TEST(StreamingPartsTest, LaunchCallsWaitingPastTheCapAreLetGoAndCounted) {
  StringTable strings;
  const StringId launch = strings.Intern("cudaLaunchKernel");
  Collected got;
  StreamingParts parts = Make(&strings, &got, {.target_events = 100, .max_carried_calls = 50});
  for (int i = 0; i < 1000; ++i) {  // launches whose kernels never come
    ApiCall a;
    a.start_ns = i;
    a.dur_ns = 1;
    a.name = launch;
    a.correlation = i + 1;
    parts.Add(a);
  }
  parts.Finish();
  EXPECT_GT(parts.stats().calls_past_cap, 0);
  EXPECT_LE(got.largest, 100u + 50u + 1u);
}

TEST(StreamingPartsTest, AKernelWhoseLaunchWasLetGoIsCounted) {
  StringTable strings;
  const StringId launch = strings.Intern("cudaLaunchKernel");
  Collected got;
  StreamingParts parts =
      Make(&strings, &got, {.target_events = 2, .launch_horizon_ns = 1000});
  ApiCall a;
  a.start_ns = 0;
  a.dur_ns = 10;
  a.name = launch;
  a.correlation = 7;
  parts.Add(a);
  for (int i = 1; i <= 3; ++i) {  // filler past the horizon
    Range r;
    r.start_ns = 5000 * i;
    r.dur_ns = 1;
    parts.Add(r);
  }
  GpuEvent g;
  g.start_ns = 20000;
  g.dur_ns = 5;
  g.correlation = 7;
  parts.Add(g);
  parts.Finish();
  EXPECT_EQ(parts.stats().launches_not_held, 1);
  EXPECT_EQ(got.ranges_ended, 3);  // each range ends once
  EXPECT_EQ(got.gpu_events, 1);
}

TEST(StreamingPartsTest, ARangeOpenAcrossCutsEndsOnceInItsLastPart) {
  StringTable strings;
  Collected got;
  StreamingParts parts = Make(&strings, &got, {.target_events = 3});
  Range outer;
  outer.start_ns = 0;
  outer.dur_ns = 1000;
  parts.Add(outer);
  for (int i = 1; i <= 20; ++i) {
    GpuEvent g;
    g.start_ns = 10 * i;
    g.dur_ns = 1;
    parts.Add(g);
  }
  parts.Finish();
  EXPECT_GE(got.parts, 5);
  EXPECT_EQ(got.ranges_ended, 1);
  EXPECT_EQ(got.gpu_events, 20);
}

}  // namespace
}  // namespace opmap::analysis
