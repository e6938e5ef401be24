// The agent against hostile registrants (tests/integration/hostile_registrant.cc) next to
// the real demo workload under libopmap_inject: the real opmap-agent binary, no part
// replaced. Each test performs an attack from the trust-boundaries review and asserts
// that the agent stays up, keeps answering status and keeps capturing the well-behaved
// workload.
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/agent_fixture.h"

namespace opmap::testing {
namespace {

std::string HostileBin() { return BinDir() + "/../tests/hostile_registrant"; }

struct StatusFacts {
  bool answered = false;
  int64_t drops_total = -1;
  int64_t dropped_batches = -1;  // upload.dropped_batches: the outbox's drops
  int64_t demo_windows = 0;
};

StatusFacts ReadStatus(const AgentProcess& agent, pid_t demo) {
  StatusFacts f;
  const std::string json = agent.StatusJson();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json).get(doc) != simdjson::SUCCESS) return f;
  f.answered = true;
  int64_t drops = -1;
  if (doc["drops_total"].get_int64().get(drops) == simdjson::SUCCESS) f.drops_total = drops;
  if (doc["upload"]["dropped_batches"].get_int64().get(drops) == simdjson::SUCCESS) {
    f.dropped_batches = drops;
  }
  simdjson::dom::array processes;
  if (doc["processes"].get_array().get(processes) != simdjson::SUCCESS) return f;
  for (simdjson::dom::element p : processes) {
    int64_t pid = 0, windows = 0;
    if (p["pid"].get_int64().get(pid) == simdjson::SUCCESS && pid == demo &&
        p["windows"].get_int64().get(windows) == simdjson::SUCCESS) {
      f.demo_windows = windows;
    }
  }
  return f;
}

class AgentHostileTest : public ::testing::Test {
 protected:
  // The demo workload under the library, registered with `agent`, for `seconds`.
  void StartDemo(Child* demo, const AgentProcess& agent, const char* seconds, const char* rate) {
    ASSERT_TRUE(demo->Start({DemoBin(), "--duration", seconds, "--rate", rate, "--json",
                             "--stop-file", dir_.File("demo.stop")},
                            dir_.File("demo.out"), dir_.File("demo.err"),
                            InjectEnv(agent.socket()))
                    .ok());
  }
  // Finding 8, with the agent given `spool_flags` (and run under `wrapper`, when given):
  // the collector's outbox drops must equal the agent's and name `cause`.
  void ExpectOutboxDropsReachTheCollector(const std::vector<std::string>& spool_flags,
                                          const std::vector<std::string>& wrapper,
                                          const std::string& cause);
  TempDir dir_;
};

// Every hostile mode at once for 8 s beside the demo: a producer flooding its ring
// (finding 2: the supervisor never ticked, RSS passed 3 GB), producer-written counters
// jumping to random values (finding 14: a total drop count of 6.5e18), 100k window marks
// per window (finding 12: quadratic lookup), random bytes over a ring (finding 14: ~100
// log lines per second), and rings shrunk under the reader (finding 1: SIGBUS).
TEST_F(AgentHostileTest, HostileRegistrantsDoNotStallCrashOrBloatTheAgent) {
  AgentProcess agent(dir_.path(), {"--capture-every", "1s", "--capture-window", "500ms",
                                   "--capture-jitter", "0"});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  Child demo;
  ASSERT_NO_FATAL_FAILURE(StartDemo(&demo, agent, "10", "100"));
  std::vector<std::unique_ptr<Child>> hostile;
  for (const char* mode : {"flood", "counters", "windows", "garbage"}) {
    auto c = std::make_unique<Child>();
    ASSERT_TRUE(c->Start({HostileBin(), agent.socket(), mode, "8"},
                         dir_.File(absl::StrCat(mode, ".out")),
                         dir_.File(absl::StrCat(mode, ".err")))
                    .ok());
    hostile.push_back(std::move(c));
  }
  int shrink_runs = 0;
  std::unique_ptr<Child> shrink;
  // The agent's share of a status call: the call (a process of its own) less a run of the
  // same binary that does not talk to the agent, timed just before it on the same loaded
  // machine. Process start on 2 busy cores once took 5.3 s of a status call by itself.
  int64_t slowest_status_ms = 0, slowest_status_call_ms = 0;
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - t)
                                    .count());
  };
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8)) {
    if (shrink == nullptr || !shrink->running()) {  // one shrinking ring after another
      shrink = std::make_unique<Child>();
      ASSERT_TRUE(shrink->Start({HostileBin(), agent.socket(), "shrink", "1"},
                                dir_.File("shrink.out"), dir_.File("shrink.err"))
                      .ok());
      ++shrink_runs;
    }
    const auto v0 = std::chrono::steady_clock::now();
    ASSERT_EQ(opmap::testing::Run({AgentBin(), "--version"}, dir_.path(), {}, absl::Seconds(30))
                  .exit_code,
              0);
    const int64_t start_ms = ms_since(v0);
    const auto s0 = std::chrono::steady_clock::now();
    const StatusFacts f = ReadStatus(agent, demo.pid());
    const int64_t call_ms = ms_since(s0);
    slowest_status_call_ms = std::max(slowest_status_call_ms, call_ms);
    slowest_status_ms = std::max(slowest_status_ms, call_ms - start_ms);
    ASSERT_TRUE(f.answered) << "the agent stopped answering status\n" << agent.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  for (auto& c : hostile) EXPECT_TRUE(c->Wait(absl::Seconds(20)).has_value());
  EXPECT_TRUE(ReadFileOrEmpty(dir_.File("flood.out")).starts_with("registered"))
      << "the flood never registered: the test would prove nothing";
  EXPECT_GE(shrink_runs, 3);

  // A liveness bound, not a timing target: a stalled supervisor took 10 s and more, up to
  // 74 s, to answer.
  EXPECT_LT(slowest_status_ms, 5000) << "the agent's share of a status call took "
                                     << slowest_status_ms << " ms (the whole call "
                                     << slowest_status_call_ms << " ms)";
  // The well-behaved workload kept being captured (1 s cadence over 8 s).
  EXPECT_TRUE(agent.WaitForProcess(demo.pid(), 3, absl::Seconds(10))) << agent.StatusJson();
  const StatusFacts f = ReadStatus(agent, demo.pid());
  // Producer-written counters move at most 2^40 per window, 2^40 × windows in all.
  EXPECT_GE(f.drops_total, 0);
  EXPECT_LT(f.drops_total, int64_t{1} << 46) << agent.StatusJson();
  // Memory stays bounded whatever the producers write (dropped at the ring, never grown).
  const double rss = PeakRssMiB(agent.pid());
  EXPECT_GT(rss, 0);
  EXPECT_LT(rss, 512) << "agent peak RSS " << rss << " MiB";
  std::printf("hostile registrants: slowest status %lld ms (agent's share; whole call %lld ms), "
              "agent peak RSS %.1f MiB, drops_total "
              "%lld, shrinking rings %d\n",
              static_cast<long long>(slowest_status_ms),
              static_cast<long long>(slowest_status_call_ms), rss,
              static_cast<long long>(f.drops_total), shrink_runs);
  // The poisoned ring is logged once, not on every tick.
  const std::string log = agent.Log();
  int ring_lines = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, ": ring: ")) ++ring_lines;
  }
  EXPECT_LE(ring_lines, 8) << log;
  ASSERT_EQ(demo.Wait(absl::Seconds(30)), 0) << ReadFileOrEmpty(dir_.File("demo.err"));
  EXPECT_EQ(agent.Stop(), 0) << agent.Log();
}

// A registrant whose socket refuses the agent's commands (read side shut: kStartWindow
// fails with EPIPE) while reads still see it alive. The agent forgot it in the scheduling
// loop and, on the next tick, read its released channel: SIGSEGV (found by the combined
// test above under load). Now it is forgotten, and the agent keeps serving the demo.
TEST_F(AgentHostileTest, ARegistrantThatCannotBeSentToIsForgottenNotACrash) {
  // The demo outlives the deaf registrants however slow the machine (in CI, 5 s was not
  // enough: it had exited before its third window), and a CPU budget the agent does not
  // reach keeps the windows full size: this test is about forgetting, not about the budget.
  AgentProcess agent(dir_.path(), {"--capture-every", "500ms", "--capture-window", "200ms",
                                   "--capture-jitter", "0", "--cpu-budget", "0.5"});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  Child demo;
  ASSERT_NO_FATAL_FAILURE(StartDemo(&demo, agent, "15", "100"));
  std::vector<std::unique_ptr<Child>> deaf;
  for (int i = 0; i < 3; ++i) {
    auto c = std::make_unique<Child>();
    ASSERT_TRUE(c->Start({HostileBin(), agent.socket(), "deaf", "4"},
                         dir_.File(absl::StrCat("deaf", i, ".out")),
                         dir_.File(absl::StrCat("deaf", i, ".err")))
                    .ok());
    deaf.push_back(std::move(c));
  }
  for (auto& c : deaf) EXPECT_EQ(c->Wait(absl::Seconds(20)), 0);
  EXPECT_TRUE(ReadFileOrEmpty(dir_.File("deaf0.out")).starts_with("registered"));
  const StatusFacts f = ReadStatus(agent, demo.pid());
  EXPECT_TRUE(f.answered) << "the agent died\n" << agent.Log();
  EXPECT_TRUE(agent.WaitForProcess(demo.pid(), 3, absl::Seconds(10))) << agent.StatusJson();
  WriteFileOrDie(dir_.File("demo.stop"), "");  // served on past the forgetting: enough
  ASSERT_EQ(demo.Wait(absl::Seconds(30)), 0) << ReadFileOrEmpty(dir_.File("demo.err"));
  EXPECT_EQ(agent.Stop(), 0) << agent.Log();
}

// Finding 8: batches the agent's outbox dropped while the collector was away were counted
// only in `opmap-agent status`. Now each drop reaches the collector as a drop record in the
// next batch and shows in `opmap query counters`.
void AgentHostileTest::ExpectOutboxDropsReachTheCollector(
    const std::vector<std::string>& spool_flags, const std::vector<std::string>& wrapper,
    const std::string& cause) {
  // A port for the collector, free now; the agent starts first and finds nobody there.
  CollectorProcess::Options options;
  options.dir = dir_.path();
  CollectorProcess probe(options);
  ASSERT_TRUE(probe.Start().ok()) << probe.Log();
  const int port = probe.port();
  probe.Kill();
  WriteFileOrDie(dir_.File("agent.token"), absl::StrCat(kAgentToken, "\n"));
  std::vector<std::string> flags = {"--capture-every", "500ms", "--capture-window", "300ms",
                                    "--capture-jitter", "0", "--collector",
                                    absl::StrCat("127.0.0.1:", port), "--insecure",
                                    "--token-file", dir_.File("agent.token"), "--memory-queue",
                                    "1KiB",
                                    // Windows at their set rate: at the default 1 % budget a
                                    // loaded host scaled them to one per 10 s, and the last
                                    // drops found no later window to ride on.
                                    "--cpu-budget", "0.5"};
  flags.insert(flags.end(), spool_flags.begin(), spool_flags.end());
  AgentProcess agent(dir_.path(), flags);
  agent.set_wrapper(wrapper);
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  Child demo;
  // Long enough that windows still come after the collector does: the outbox's drop counts
  // ride on the next batch, and at 12 s, and once at 25 s under test.sh's parallel ctest,
  // a loaded machine ran out of windows first (the demo had exited, 2 of 4 drops sent).
  ASSERT_NO_FATAL_FAILURE(StartDemo(&demo, agent, "40", "200"));
  // Until the agent has dropped batches.
  int64_t dropped = 0;
  for (int i = 0; i < 60 && dropped <= 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    dropped = ReadStatus(agent, demo.pid()).dropped_batches;
  }
  ASSERT_GT(dropped, 0) << agent.StatusJson();
  // The collector comes (on the port the agent was told), and later windows go out.
  CollectorProcess::Options later = options;
  later.listen = absl::StrCat("127.0.0.1:", port);
  CollectorProcess collector(later);
  ASSERT_TRUE(collector.Start().ok()) << collector.Log();
  // Every batch the outbox dropped reaches the collector as a count: the collector's sum
  // of "agent outbox: ..." drops equals the agent's dropped_batches (no more are dropped
  // once the collector is there; the last ones ride with the next window's batch).
  auto collector_dropped = [&](std::string* reasons) {
    RunResult q = opmap::testing::Run({OpmapBin(), "query", "counters", "--format", "json",
                                       "--collector", collector.address(), "--token",
                                       kAnalystToken},
                                      dir_.path());
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    int64_t sum = 0;
    if (parser.parse(q.out).get(doc) != simdjson::SUCCESS) return int64_t{-1};
    simdjson::dom::array drops;
    if (doc["drops"].get_array().get(drops) != simdjson::SUCCESS) return int64_t{0};
    for (simdjson::dom::element d : drops) {
      std::string_view reason;
      int64_t count = 0;
      if (d["reason"].get_string().get(reason) != simdjson::SUCCESS ||
          d["count"].get_int64().get(count) != simdjson::SUCCESS) {
        continue;
      }
      if (reason.starts_with("agent outbox: ")) {
        sum += count;
        absl::StrAppend(reasons, std::string(reason), "=", count, "; ");
      }
    }
    return sum;
  };
  int64_t at_agent = -1, at_collector = -1;
  std::string reasons;
  for (int i = 0; i < 80; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    at_agent = ReadStatus(agent, demo.pid()).dropped_batches;
    reasons.clear();
    at_collector = collector_dropped(&reasons);
    if (at_agent > 0 && at_collector == at_agent) break;
  }
  EXPECT_GT(at_agent, 0);
  EXPECT_EQ(at_collector, at_agent) << reasons << "\n" << agent.StatusJson();
  EXPECT_THAT(reasons, ::testing::HasSubstr("agent outbox: " + cause));
  // Seen: the rest of the demo's 40 s adds nothing (it must still end well).
  WriteFileOrDie(dir_.File("demo.stop"), "");
  ASSERT_EQ(demo.Wait(absl::Seconds(60)), 0) << ReadFileOrEmpty(dir_.File("demo.err"));
  EXPECT_EQ(agent.Stop(), 0) << agent.Log();
}

// The spool reaches its --spool-size.
TEST_F(AgentHostileTest, OutboxDropsReachTheCollector) {
  ExpectOutboxDropsReachTheCollector({"--spool-size", "64KiB"}, {}, "spool full");
}

// The review's case: the filesystem under the spool is full (ENOSPC) long before
// --spool-size. A real one: a 64 KiB tmpfs in a mount namespace of the agent's own, which
// goes with the agent. Needs CAP_SYS_ADMIN (root, or a user namespace the kernel allows).
TEST_F(AgentHostileTest, SpoolOnAFullFilesystemDropsReachTheCollector) {
  const std::string spool = dir_.File("spool");
  ASSERT_EQ(mkdir(spool.c_str(), 0700), 0) << spool;
  const std::vector<std::string> wrapper = {
      "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
      "mount -t tmpfs -o size=64k,mode=0700 tmpfs \"$0\" && exec \"$@\"", spool};
  std::vector<std::string> probe = wrapper;
  probe.push_back("/bin/true");
  if (RunResult r = opmap::testing::Run(probe, dir_.path()); r.exit_code != 0) {
    GTEST_SKIP() << "unavailable: a private 64 KiB tmpfs (unshare --mount, mount -t tmpfs) "
                    "is refused here: "
                 << r.err;
  }
  ExpectOutboxDropsReachTheCollector({"--spool-size", "1MiB"}, wrapper,
                                     "spool write error");
}


// The agent's socket is 0666 and it refuses other uids, but it logged
// every refusal (six uid-65534 flooders: 428,834 lines in 30 s) and served its accept queue
// a few connections a tick, so a real workload could not register for a minute. Now the
// queue is drained of refusals each tick, the lines are rate-limited and counted, and the
// workload registers while the flood runs.
TEST_F(AgentHostileTest, ALocalFloodOfForeignConnectionsDoesNotShutOutTheWorkload) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to run the flooders as uid 65534";
  AgentProcess agent(dir_.path(), {"--capture-every", "1s", "--capture-window", "500ms",
                                   "--capture-jitter", "0"});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  // The flooders connect through the agent's directory: let uid 65534 in, as a 0666
  // socket in a world-readable /run/opmap would.
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  std::vector<std::unique_ptr<Child>> flooders;
  for (int i = 0; i < 6; ++i) {
    auto c = std::make_unique<Child>();
    ASSERT_TRUE(c->Start({HostileBin(), agent.socket(), "foreign", "8"},
                         dir_.File(absl::StrCat("foreign", i, ".out")),
                         dir_.File(absl::StrCat("foreign", i, ".err")))
                    .ok());
    flooders.push_back(std::move(c));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the flood is on
  Child demo;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(StartDemo(&demo, agent, "6", "50"));
  const bool registered = agent.WaitForProcess(demo.pid(), 0, absl::Seconds(5));
  const int64_t registered_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count();
  const std::string status = agent.StatusJson();
  for (auto& c : flooders) EXPECT_TRUE(c->Wait(absl::Seconds(20)).has_value());
  EXPECT_TRUE(registered) << "the workload did not register during the flood\n"
                          << status << "\n" << ReadFileOrEmpty(dir_.File("demo.err"));
  const std::string flood = ReadFileOrEmpty(dir_.File("foreign0.out"));
  ASSERT_TRUE(flood.starts_with("foreign connections")) << flood
      << ReadFileOrEmpty(dir_.File("foreign0.err"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(status).get(doc), simdjson::SUCCESS) << status;
  int64_t refused = 0;
  ASSERT_EQ(doc["registrations_refused_foreign"].get_int64().get(refused), simdjson::SUCCESS);
  EXPECT_GT(refused, 1000) << "the flood reached the agent: " << status;
  // Refusal lines: a burst of 100, then 60 a minute, plus the lines saying how many were
  // left out; the agent's own lines besides.
  const std::string log = agent.Log();
  const int64_t refusal_lines = [&] {
    int64_t n = 0;
    for (size_t at = log.find("registration refused"); at != std::string::npos;
         at = log.find("registration refused", at + 1)) {
      ++n;
    }
    return n;
  }();
  EXPECT_LT(refusal_lines, 200) << refused << " refusals";
  std::printf("foreign flood: %lld refusals, %lld logged; workload registered after %lld ms\n",
              static_cast<long long>(refused), static_cast<long long>(refusal_lines),
              static_cast<long long>(registered_ms));
}

}  // namespace
}  // namespace opmap::testing
