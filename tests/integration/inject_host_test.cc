// libopmap_inject.so inside a real process (the inject_nvtx_host program), loaded the way
// production loads it (NVTX_INJECTION64_PATH, LD_PRELOAD), registered with a stand-in
// agent on a private socket: what each NVTX entry point records, nesting limits, ranges
// that straddle a window's start, window control, and the host's safety when the agent
// misbehaves or is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "agent/transport/capture_file.h"
#include "analysis/import/capture_record_view.h"
#include "abi/ring_records.h"
#include "abi/control_messages.h"
#include "tests/integration/inject_test_agent.h"

namespace opmap::inject_test {
namespace {

using ring::kCaptureCupti;
using ring::kCaptureNvtx;

constexpr absl::Duration kTimeout = absl::Seconds(30);

class InjectHostTest : public ::testing::Test {
 protected:
  InjectHostTest() : agent_(dir_.File("agent.sock")) {}

  EnvVars Env(EnvVars extra = {}) {
    extra.emplace_back("NVTX_INJECTION64_PATH", InjectLibPath());
    extra.emplace_back("OPMAP_AGENT_SOCKET", dir_.File("agent.sock"));
    return extra;
  }

  // Spawns the host in `mode`, accepts it and opens window 1 for the whole run.
  Child StartWithWindow(const std::vector<std::string>& args, uint32_t flags = kCaptureNvtx,
                        EnvVars extra = {}) {
    extra.emplace_back("OPMAP_INIT_WAIT_MS", "20000");
    std::vector<std::string> argv = {HostProgramPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    Child c = Spawn(argv, Env(extra));
    EXPECT_TRUE(agent_.Accept(kTimeout).ok());
    EXPECT_TRUE(agent_.channel().StartWindow(1, absl::InfiniteDuration(), flags).ok());
    return c;
  }

  TempDir dir_;
  TestAgent agent_;
};

std::map<std::string, Range> ByName(const std::vector<Range>& ranges) {
  std::map<std::string, Range> m;
  for (const Range& r : ranges) m[r.name] = r;
  return m;
}

TEST_F(InjectHostTest, RecordsEveryNvtxEntryPoint) {
  Child c = StartWithWindow({"basic"}, kCaptureNvtx, {{"OPMAP_MODEL", "host-model"}});
  const transport::Hello& hello = agent_.channel().hello();
  EXPECT_EQ(hello.peer_pid, c.pid);
  EXPECT_EQ(hello.body.pid, static_cast<uint32_t>(c.pid));
  EXPECT_EQ(hello.body.version, ring::kVersion);
  EXPECT_NE(hello.body.capabilities & kCaptureNvtx, 0u);
  EXPECT_EQ(hello.metadata.at("model"), "host-model");
  EXPECT_NE(hello.metadata.at("cmdline").find("inject_nvtx_host basic"), std::string::npos);
  EXPECT_EQ(hello.metadata.at("injection"), "nvtx");
  // The registration names the library's build (the tree's version, as --version says).
  EXPECT_EQ(hello.metadata.at("opmap_version").rfind("0.", 0), 0u)
      << hello.metadata.at("opmap_version");

  ExitInfo exit = Finish(c, kTimeout);
  ASSERT_TRUE(exit.exited);
  ASSERT_EQ(exit.code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto records = agent_.records();

  std::map<std::string, uint64_t> domain_ids;
  for (const auto& [id, name] : Domains(records)) domain_ids[name] = id;
  ASSERT_EQ(domain_ids.size(), 2u);
  const uint64_t host = domain_ids.at("opmap.host");
  const uint64_t wide = domain_ids.at("opmap.wide\xc3\xa9");

  const auto ranges = ByName(Ranges(records));
  ASSERT_EQ(ranges.size(), 7u);
  const Range& outer = ranges.at("outer");
  EXPECT_EQ(outer.depth, 0);
  EXPECT_EQ(outer.domain_id, 0u);
  EXPECT_EQ(outer.tid, static_cast<uint32_t>(c.pid));  // the main thread
  const Range& w = ranges.at("wide \xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(w.depth, 1);
  const Range& ex = ranges.at("ex_ascii");
  EXPECT_EQ(ex.depth, 2);
  EXPECT_EQ(ex.category, 7u);
  EXPECT_EQ(ex.color, 0xFF00FF00u);
  EXPECT_EQ(ex.payload_kind, ring::kPayloadInt64);
  EXPECT_EQ(static_cast<int64_t>(ex.payload), -5);
  // The shape suffix travels verbatim; the analysis parses it.
  const Range& op = ranges.at("host::matmul{flops=2048,bytes=96}");
  EXPECT_EQ(op.domain_id, host);
  EXPECT_EQ(op.depth, 2);
  EXPECT_EQ(op.payload_kind, ring::kPayloadUint64);
  EXPECT_EQ(op.payload, 42u);
  const Range& wide_op = ranges.at("host::wide\xe4\xb8\xad");
  EXPECT_EQ(wide_op.depth, 3);
  EXPECT_EQ(wide_op.payload_kind, ring::kPayloadDouble);
  double d;
  std::memcpy(&d, &wide_op.payload, sizeof(d));
  EXPECT_EQ(d, 1.5);
  EXPECT_EQ(ranges.at("wide_domain_range").domain_id, wide);
  EXPECT_EQ(ranges.at("wide_domain_range").depth, 2);
  const Range& worker = ranges.at("worker_op");
  EXPECT_EQ(worker.depth, 0);
  EXPECT_NE(worker.tid, outer.tid);
  for (const auto& [name, r] : ranges) {
    EXPECT_LE(r.start_ns, r.end_ns) << name;
    EXPECT_EQ(r.flags, 0) << name;
    if (r.depth > 0) {  // nested in time inside the outer range
      EXPECT_GE(r.start_ns, outer.start_ns) << name;
      EXPECT_LE(r.end_ns, outer.end_ns) << name;
    }
  }

  const auto starts = RangeStarts(records);
  const auto ends = RangeEnds(records);
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(ends.size(), 3u);
  std::map<std::string, RangeStart> start_by_name;
  for (const RangeStart& s : starts) start_by_name[s.name] = s;
  const RangeStart& request = start_by_name.at("request");
  EXPECT_EQ(request.domain_id, host);
  EXPECT_EQ(request.payload, 1001u);
  ASSERT_TRUE(start_by_name.count("local_start") && start_by_name.count("wide_start"));
  for (const auto& e : ends) {
    const auto it = std::find_if(starts.begin(), starts.end(),
                                 [&](const RangeStart& s) { return s.range_id == e.range_id; });
    ASSERT_NE(it, starts.end());
    EXPECT_GE(e.end_ns, it->start_ns);
    if (it->name == "request") {
      EXPECT_EQ(e.tid, worker.tid);  // ended on the other thread
    }
  }

  const auto counters = agent_.reader().Counters();
  EXPECT_EQ(counters.drops[ring::kUnmatchedPop], 1u);  // the stray pop at the end
  EXPECT_EQ(counters.TotalDrops(), 1u);
  EXPECT_EQ(counters.names_truncated, 0u);
  // Exit ended the window: end mark in the ring, kWindowDone on the socket.
  const auto windows = Windows(records);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].mark, ring::kWindowBegin);
  EXPECT_EQ(windows[1].mark, ring::kWindowEnd);
  auto done = agent_.WaitForMessage(ring::kWindowDone, absl::Seconds(5));
  ASSERT_TRUE(done.has_value());
  auto body = transport::ControlChannel::ParseWindowDone(*done);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->window_id, 1u);
  EXPECT_EQ(body->drops, 1u);
  EXPECT_EQ(body->records, records.size() - 2);  // everything but the two marks
}

TEST_F(InjectHostTest, NestingBeyondTheStackIsDroppedAndCounted) {
  Child c = StartWithWindow({"deep", "70"});
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto ranges = Ranges(agent_.records());
  ASSERT_EQ(ranges.size(), 64u);
  for (const Range& r : ranges) EXPECT_EQ(r.name, "level" + std::to_string(r.depth));
  const auto counters = agent_.reader().Counters();
  EXPECT_EQ(counters.drops[ring::kNestingTooDeep], 6u);
  EXPECT_EQ(counters.drops[ring::kUnmatchedPop], 0u);  // the 6 deep pops matched their drops
}

TEST_F(InjectHostTest, RangesOpenedBeforeTheWindowAreNotEmitted) {
  Child c = Spawn({HostProgramPath(), "prewindow"}, Env());
  ASSERT_TRUE(agent_.Accept(kTimeout).ok());
  ASSERT_EQ(ReadLine(c, kTimeout), "pushed");  // "outer" and a start are open, dormant
  ASSERT_TRUE(agent_.channel().StartWindow(3, absl::InfiniteDuration(), kCaptureNvtx).ok());
  ASSERT_TRUE(agent_.DrainUntil(
      [](auto rec) { return IsWindowMark(rec, ring::kWindowBegin); }, kTimeout));
  WriteLine(c, "go");
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto ranges = Ranges(agent_.records());
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].name, "inner");
  EXPECT_EQ(ranges[0].depth, 0);  // counted from the window's start on this thread
  EXPECT_EQ(ranges[1].name, "after");
  EXPECT_EQ(ranges[1].depth, 0);  // the stray pop did not corrupt the stack
  EXPECT_TRUE(RangeStarts(agent_.records()).empty());
  EXPECT_TRUE(RangeEnds(agent_.records()).empty());
  EXPECT_EQ(agent_.reader().Counters().drops[ring::kUnmatchedPop], 2u);  // the pop and the end
}

TEST_F(InjectHostTest, WindowsEndByDeadlineByStopAndAtExit) {
  Child c = Spawn({HostProgramPath(), "wait"}, Env());
  ASSERT_TRUE(agent_.Accept(kTimeout).ok());
  transport::ControlChannel& ch = agent_.channel();
  // Window 1 ends by itself.
  ASSERT_TRUE(ch.StartWindow(1, absl::Milliseconds(100), kCaptureNvtx).ok());
  auto done = agent_.WaitForMessage(ring::kWindowDone, kTimeout);
  ASSERT_TRUE(done.has_value());
  auto d1 = transport::ControlChannel::ParseWindowDone(*done);
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(d1->window_id, 1u);
  EXPECT_GE(d1->end_ns - d1->begin_ns, 100'000'000);
  EXPECT_EQ(d1->records, 0u);
  // Window 2 ends on kStopWindow (a stop naming another window is ignored).
  ASSERT_TRUE(ch.StartWindow(2, absl::InfiniteDuration(), kCaptureNvtx).ok());
  ASSERT_TRUE(ch.StopWindow(99).ok());
  ASSERT_TRUE(ch.StopWindow(2).ok());
  done = agent_.WaitForMessage(ring::kWindowDone, kTimeout);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(transport::ControlChannel::ParseWindowDone(*done)->window_id, 2u);
  // Window 3 is open when the process exits.
  ASSERT_TRUE(ch.StartWindow(3, absl::InfiniteDuration(), kCaptureNvtx).ok());
  ASSERT_TRUE(agent_.DrainUntil(
      [](auto rec) {
        const auto w = analysis::FixedPart<ring::WindowRecord>(rec);
        return IsWindowMark(rec, ring::kWindowBegin) && w->window_id == 3;
      },
      kTimeout));
  WriteLine(c, "go");
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  done = agent_.WaitForMessage(ring::kWindowDone, kTimeout);
  ASSERT_TRUE(done.has_value());
  auto d3 = transport::ControlChannel::ParseWindowDone(*done);
  EXPECT_EQ(d3->window_id, 3u);
  EXPECT_EQ(d3->records, 1u);  // the "after" range
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto windows = Windows(agent_.records());
  ASSERT_EQ(windows.size(), 6u);
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_EQ(windows[i].window_id, i / 2 + 1);
    EXPECT_EQ(windows[i].mark, i % 2 == 0 ? ring::kWindowBegin : ring::kWindowEnd);
  }
  ASSERT_EQ(Ranges(agent_.records()).size(), 1u);
}

TEST_F(InjectHostTest, CuptiStatusIsReportedOnBothPaths) {
  Child c = StartWithWindow({"basic"}, kCaptureNvtx | kCaptureCupti);
  auto update = agent_.WaitForMessage(ring::kStatusUpdate, kTimeout);
  ASSERT_TRUE(update.has_value());
  auto status = transport::ControlChannel::ParseStatusUpdate(*update);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->component, ring::kComponentCupti);
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto statuses = Statuses(agent_.records());
  ASSERT_FALSE(statuses.empty());
  EXPECT_EQ(statuses[0].component, ring::kComponentCupti);
  EXPECT_EQ(statuses[0].message, status->message);
  EXPECT_FALSE(statuses[0].message.empty());
  // No GPU here: unavailable, with CUPTI's own reason (or "not built" without the part).
  if (status->code == ring::kStatusUnavailable) {
    RecordProperty("cupti_unavailable", status->message);
  }
}

TEST_F(InjectHostTest, AgentVanishingOrDetachingNeverDisturbsTheHost) {
  {
    Child c = Spawn({HostProgramPath(), "wait"}, Env());
    ASSERT_TRUE(agent_.Accept(kTimeout).ok());
    ASSERT_TRUE(agent_.channel().StartWindow(1, absl::InfiniteDuration(), kCaptureNvtx).ok());
    ASSERT_TRUE(agent_.DrainUntil(
        [](auto rec) { return IsWindowMark(rec, ring::kWindowBegin); }, kTimeout));
    agent_.CloseChannel();  // the agent dies mid-window
    WriteLine(c, "go");
    const ExitInfo e = Finish(c, kTimeout);
    EXPECT_TRUE(e.exited);
    EXPECT_EQ(e.code, 0);
  }
  {
    Child c = Spawn({HostProgramPath(), "wait"}, Env());
    ASSERT_TRUE(agent_.Accept(kTimeout).ok());
    ASSERT_TRUE(agent_.channel().StartWindow(2, absl::InfiniteDuration(), kCaptureNvtx).ok());
    ASSERT_TRUE(agent_.channel().Detach().ok());
    auto done = agent_.WaitForMessage(ring::kWindowDone, kTimeout);
    ASSERT_TRUE(done.has_value());  // detach ends the open window and reports it
    WriteLine(c, "go");             // dormant for good: nothing more is recorded
    EXPECT_EQ(Finish(c, kTimeout).code, 0);
    ASSERT_TRUE(agent_.DrainOnce().ok());
    EXPECT_TRUE(Ranges(agent_.records()).empty());
  }
}

TEST_F(InjectHostTest, LongNamesAreCutAndFlagged) {
  Child c = StartWithWindow({"long"});
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto ranges = Ranges(agent_.records());
  ASSERT_EQ(ranges.size(), 5u);
  int flagged = 0;
  for (const Range& r : ranges) {
    const bool cut = (r.flags & ring::kFlagNameTruncated) != 0;
    flagged += cut;
    const char letter = r.depth == 0 ? 'a' : 'b';
    EXPECT_EQ(r.name, std::string(r.name.size(), letter));  // a prefix, never garbage
    if (r.depth == 0) {
      EXPECT_EQ(r.name.size(), ring::kMaxInlineName);
      EXPECT_TRUE(cut);
    }
    if (!cut) {
      EXPECT_EQ(r.name.size(), r.depth == 0 ? 5000u : 4000u);
    }
  }
  EXPECT_EQ(flagged, 2);  // the 5000-byte name, and the one the 16 KiB arena had no room for
  EXPECT_EQ(agent_.reader().Counters().names_truncated, 2u);
}

TEST_F(InjectHostTest, RegisteredStringsAreBounded) {
  Child c = StartWithWindow({"strings", "70000"});
  const ExitInfo e = Finish(c, kTimeout);
  ASSERT_EQ(e.code, 0);
  EXPECT_NE(e.stdout_text.find("null_handles 4464"), std::string::npos) << e.stdout_text;
  EXPECT_EQ(agent_.reader().Counters().drops[ring::kTooManyStrings], 70000u - 65536u);
}

TEST_F(InjectHostTest, AForkedChildStaysOutOfTheParentsWindow) {
  Child c = StartWithWindow({"fork"});
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto ranges = Ranges(agent_.records());
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].name, "parent");
  EXPECT_EQ(Windows(agent_.records()).size(), 2u);  // one begin, one end: the parent's
  EXPECT_EQ(agent_.reader().Counters().TotalDrops(), 0u);
}

TEST_F(InjectHostTest, WithoutAnAgentTheLibraryStaysDormant) {
  const absl::Time start = absl::Now();
  Child c = Spawn({HostProgramPath(), "spin", "100000"},
                  {{"NVTX_INJECTION64_PATH", InjectLibPath()},
                   {"OPMAP_AGENT_SOCKET", dir_.File("nobody.sock")}});
  const ExitInfo e = Finish(c, kTimeout);
  EXPECT_TRUE(e.exited);
  EXPECT_EQ(e.code, 0);
  EXPECT_NE(e.stdout_text.find("done"), std::string::npos);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // exit never waits for the control thread
}

TEST_F(InjectHostTest, FullRingDropsAreCountedAndTheHostRunsOn) {
  constexpr int kPairs = 200000;
  Child c = StartWithWindow({"spin", std::to_string(kPairs)}, kCaptureNvtx,
                            {{"OPMAP_RING_BYTES", "65536"}});
  // Nobody drains while it runs.
  const ExitInfo e = Finish(c, kTimeout);
  ASSERT_EQ(e.code, 0);
  ASSERT_TRUE(agent_.DrainOnce().ok());
  const auto records = agent_.records();
  const auto counters = agent_.reader().Counters();
  const uint64_t ranges = Ranges(records).size();
  EXPECT_GT(counters.drops[ring::kRingFull], 0u);
  EXPECT_LT(ranges, static_cast<uint64_t>(kPairs));
  // Nothing lost silently: every range is either in the ring or counted, and so is the
  // window's end mark (it found the ring full too, unless it fit).
  const uint64_t end_marks = CountType(records, ring::kWindow) - 1;
  EXPECT_EQ(ranges + counters.drops[ring::kRingFull], kPairs + (1 - end_marks));
  auto done = agent_.WaitForMessage(ring::kWindowDone, absl::Seconds(5));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(transport::ControlChannel::ParseWindowDone(*done)->drops,
            counters.drops[ring::kRingFull]);
}

TEST_F(InjectHostTest, PreloadCaptureFileOnAProcessWithoutNvtx) {
  const std::string path = dir_.File("none.cap");
  Child c = Spawn({HostProgramPath(), "none"},
                  {{"LD_PRELOAD", InjectLibPath()}, {"OPMAP_CAPTURE_FILE", path},
                   {"OPMAP_CAPTURE_SECONDS", "30"}});
  const ExitInfo e = Finish(c, kTimeout);
  ASSERT_TRUE(e.exited);
  ASSERT_EQ(e.code, 0);
  auto file = transport::ReadCaptureFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->header.pid, static_cast<uint32_t>(c.pid));
  EXPECT_NE(file->metadata.find("injection=preload"), std::string::npos);
  ASSERT_TRUE(file->trailer.has_value());  // exit closed the file properly
  EXPECT_EQ(file->trailer->records_written, file->records.size());
  const auto windows = Windows(file->records);
  ASSERT_EQ(windows.size(), 2u);
  bool cupti_unavailable = false;
  for (const Status& s : Statuses(file->records)) {
    if (s.component == ring::kComponentCupti && s.code == ring::kStatusUnavailable) {
      cupti_unavailable = !s.message.empty();
      RecordProperty("cupti_reason", s.message);
    }
  }
  EXPECT_TRUE(cupti_unavailable) << "no GPU here: CUPTI must say why it is unavailable";
}

TEST_F(InjectHostTest, PreloadAloneAttachesNvtxToo) {
  const std::string path = dir_.File("basic.cap");
  Child c = Spawn({HostProgramPath(), "basic"},
                  {{"LD_PRELOAD", InjectLibPath()}, {"OPMAP_CAPTURE_FILE", path}});
  ASSERT_EQ(Finish(c, kTimeout).code, 0);
  auto file = transport::ReadCaptureFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(Ranges(file->records).size(), 7u);
  EXPECT_EQ(RangeStarts(file->records).size(), 3u);
  ASSERT_TRUE(file->trailer.has_value());
  EXPECT_EQ(file->trailer->drops[ring::kUnmatchedPop], 1u);
}

}  // namespace
}  // namespace opmap::inject_test
