// StreamingParts' bounds on degenerate or hostile input: a part never grows past its
// limits, and what it had to let go is counted.
#include <vector>

#include "analysis/mapping/kernel_mapper.h"
#include "analysis/model/trace.h"
#include "analysis/summary/streaming_parts.h"
#include "analysis/summary/summary_accumulator.h"
#include "analysis/summary/trace_summary.h"
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

// The whole trace's mapping tally against the streamed one, parts of `target` events.
void ExpectSameMapping(Trace& trace, size_t target) {
  const TraceSummary whole = Summarize(trace, MapGpuEvents(trace));
  SummaryAccumulator acc;
  StringTable strings = std::move(trace.strings);
  StreamingParts parts(trace.info, &strings, {.target_events = target},
                       [&](const Trace& part, const PartRanges& ranges) {
                         acc.Add(part, MapGpuEvents(part), &ranges);
                       });
  AddTraceInStartOrder(trace, &parts);
  trace.strings = std::move(strings);
  const TraceSummary streamed = acc.Finish(trace.info);
  EXPECT_EQ(streamed.by_rule, whole.by_rule);
  EXPECT_EQ(streamed.unmapped_by_reason, whole.unmapped_by_reason);
  ASSERT_EQ(streamed.operators.size(), whole.operators.size());
  for (size_t i = 0; i < whole.operators.size(); ++i) {
    EXPECT_EQ(streamed.operators[i].name, whole.operators[i].name);
    EXPECT_EQ(streamed.operators[i].gpu_time_ns, whole.operators[i].gpu_time_ns);
  }
  EXPECT_EQ(parts.stats().launches_not_held, 0);
}

// Two processes number their launches alike (each from 1, as Nsight exports do): a kernel
// of one must not take the other's launch, in a part or across a cut.
TEST(StreamingPartsTest, CorrelationIdsArePerProcess) {
  Trace t;
  const StringId op = t.strings.Intern("aten::mm");
  const StringId launch = t.strings.Intern("cudaLaunchKernel");
  const StringId kernel = t.strings.Intern("gemm");
  for (int64_t pid : {1, 2}) {
    Range r;
    r.start_ns = 90 + pid;
    r.dur_ns = 20;
    r.name = op;
    r.process = pid;
    r.thread = pid;
    t.ranges.push_back(r);
    ApiCall a;
    a.start_ns = 100 + pid;
    a.dur_ns = 2;
    a.name = launch;
    a.process = pid;
    a.thread = pid;
    a.correlation = 7;
    t.api_calls.push_back(a);
  }
  GpuEvent g;  // process 2's kernel first, process 1's after a cut
  g.name = kernel;
  g.correlation = 7;
  g.process = 2;
  g.start_ns = 150;
  g.dur_ns = 5;
  t.gpu_events.push_back(g);
  g.process = 1;
  g.start_ns = 170;
  t.gpu_events.push_back(g);
  for (int i = 0; i < 6; ++i) {  // filler so that parts are cut between them
    Range filler;
    filler.start_ns = 155 + i;
    filler.dur_ns = 1;
    filler.name = op;
    filler.process = 9;
    filler.thread = 9;
    t.ranges.push_back(filler);
  }
  ExpectSameMapping(t, 2);
}

// An operator ending exactly where a part is cut still encloses a zero-length launch there.
TEST(StreamingPartsTest, ARangeEndingAtTheCutStillEnclosesALaunchThere) {
  Trace t;
  Range r;
  r.start_ns = 100;
  r.dur_ns = 10;  // [100, 110]
  r.name = t.strings.Intern("aten::add");
  r.process = 1;
  r.thread = 1;
  t.ranges.push_back(r);
  ApiCall a;
  a.start_ns = 110;
  a.dur_ns = 0;
  a.name = t.strings.Intern("cudaLaunchKernel");
  a.process = 1;
  a.thread = 1;
  a.correlation = 3;
  t.api_calls.push_back(a);
  GpuEvent g;
  g.name = t.strings.Intern("add_kernel");
  g.correlation = 3;
  g.process = 1;
  g.start_ns = 120;
  g.dur_ns = 4;
  t.gpu_events.push_back(g);
  ExpectSameMapping(t, 1);
}

}  // namespace
}  // namespace opmap::analysis
