// ProcessCounters on real child processes: each child burns a known amount of CPU and
// touches a known number of pages while we count it, and the counts are checked against
// what the kernel says the child used (/proc/<pid>/stat).
#include "agent/counters/process_counters.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/counters/memory_stall.h"
#include "tests/unit/counters/child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::agent {
namespace {

using ::opmap::agent::counters_test::Child;
using ::opmap::agent::counters_test::ProcStat;
using ::opmap::agent::counters_test::ReadProcStat;
using ::opmap::agent::counters_test::Work;
using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

const CounterReading* Find(const std::vector<CounterReading>& readings, absl::string_view name) {
  for (const CounterReading& r : readings) {
    // ":u" marks user-only counts when the kernel refused kernel-mode counting.
    if (r.name == name || r.name == absl::StrCat(name, ":u")) return &r;
  }
  return nullptr;
}

std::string Describe(const std::vector<CounterUnavailable>& unavailable) {
  return absl::StrJoin(unavailable, "\n", [](std::string* out, const CounterUnavailable& u) {
    absl::StrAppend(out, u.what, ": ", u.reason);
  });
}

// Opens counters on a child running `work`, lets it run, and reads once it is done.
struct Measured {
  std::vector<CounterReading> readings;
  std::vector<CounterUnavailable> unavailable;
  ProcStat stat;
};
Measured RunAndMeasure(const Work& work) {
  Measured m;
  Child child(work);
  EXPECT_TRUE(child.WaitFor('r'));
  absl::StatusOr<std::unique_ptr<ProcessCounters>> counters =
      ProcessCounters::Open(child.pid(), CounterOptions{});
  EXPECT_TRUE(counters.ok()) << counters.status();
  if (!counters.ok()) return m;
  EXPECT_TRUE(child.Send());
  EXPECT_TRUE(child.WaitFor('d'));
  absl::StatusOr<std::vector<CounterReading>> readings = (*counters)->Read();
  m.stat = ReadProcStat(child.pid());
  EXPECT_TRUE(readings.ok()) << readings.status();
  if (readings.ok()) m.readings = *readings;
  m.unavailable = (*counters)->unavailable();
  return m;
}

TEST(ProcessCountersTest, CountsCpuTimeAndPageFaultsOfAChild) {
  Work work;
  work.burn_ns = 200 * kMs;
  work.touch_pages = 4096;  // 16 MiB
  Measured m = RunAndMeasure(work);
  const CounterReading* clock = Find(m.readings, "perf::TASK-CLOCK");
  ASSERT_NE(clock, nullptr) << Describe(m.unavailable);
  EXPECT_EQ(clock->source, CounterSource::kPerfEvent);
  // The child burned 200 ms of CPU after Open; the kernel's own account bounds it.
  EXPECT_GE(clock->value, 150 * kMs);
  EXPECT_GE(clock->value, m.stat.cpu_ns / 2) << "stat cpu " << m.stat.cpu_ns;
  EXPECT_LE(clock->value, m.stat.cpu_ns + 100 * kMs) << "stat cpu " << m.stat.cpu_ns;
  EXPECT_GT(clock->time_running_ns, 0);
  EXPECT_GE(clock->time_enabled_ns, clock->time_running_ns);

  const CounterReading* faults = Find(m.readings, "perf::PAGE-FAULTS");
  ASSERT_NE(faults, nullptr) << Describe(m.unavailable);
  EXPECT_GE(faults->value, 4096);  // at least one per touched page
  EXPECT_LE(faults->value, m.stat.minflt + m.stat.majflt);  // no more than it ever had
  EXPECT_GT(faults->time_running_ns, 0);
  EXPECT_GE(faults->time_enabled_ns, faults->time_running_ns);

  const CounterReading* major = Find(m.readings, "perf::MAJOR-FAULTS");
  ASSERT_NE(major, nullptr) << Describe(m.unavailable);
  EXPECT_LE(major->value, m.stat.majflt);  // anonymous pages: none expected, never more
  // Read, or (without kernel-mode counting) listed with a reason.
  for (const char* name : {"perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS"}) {
    bool listed = false;
    for (const CounterUnavailable& u : m.unavailable) listed |= u.what == name;
    EXPECT_TRUE(Find(m.readings, name) != nullptr || listed) << name;
  }
  for (const CounterReading& r : m.readings) {
    EXPECT_EQ(r.source, absl::StartsWith(r.name, "perf::") ? CounterSource::kPerfEvent
                                                            : CounterSource::kPapi)
        << r.name;
  }
  for (const CounterUnavailable& u : m.unavailable) EXPECT_FALSE(u.reason.empty()) << u.what;
}

TEST(ProcessCountersTest, CountsThreadsThatExistedBeforeOpen) {
  // Only the two pre-existing threads burn: counting just the leader would see ~0.
  Work work;
  work.burn_ns = 150 * kMs;
  work.threads_before = 2;
  work.main_burns = false;
  Measured m = RunAndMeasure(work);
  const CounterReading* clock = Find(m.readings, "perf::TASK-CLOCK");
  ASSERT_NE(clock, nullptr) << Describe(m.unavailable);
  EXPECT_GE(clock->value, 250 * kMs);
  EXPECT_GE(clock->value, m.stat.cpu_ns / 2) << "stat cpu " << m.stat.cpu_ns;
  EXPECT_LE(clock->value, m.stat.cpu_ns + 100 * kMs) << "stat cpu " << m.stat.cpu_ns;
}

TEST(ProcessCountersTest, CountsThreadsCreatedAfterOpen) {
  Work work;
  work.burn_ns = 150 * kMs;
  work.threads_after = 2;
  work.main_burns = false;
  Measured m = RunAndMeasure(work);
  const CounterReading* clock = Find(m.readings, "perf::TASK-CLOCK");
  ASSERT_NE(clock, nullptr) << Describe(m.unavailable);
  EXPECT_GE(clock->value, 250 * kMs);  // inherited counters
  EXPECT_LE(clock->value, m.stat.cpu_ns + 100 * kMs) << "stat cpu " << m.stat.cpu_ns;
}

TEST(ProcessCountersTest, CountsContextSwitchesOrSaysWhyNot) {
  Work work;
  work.sleeps = 50;
  Measured m = RunAndMeasure(work);
  for (const char* name : {"perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS"}) {
    // Kernel-mode-only events are never reported user-only (they would read 0).
    EXPECT_EQ(Find(m.readings, absl::StrCat(name, ":u")), nullptr) << name;
  }
  const CounterReading* switches = Find(m.readings, "perf::CONTEXT-SWITCHES");
  if (switches == nullptr) {
    bool listed = false;
    for (const CounterUnavailable& u : m.unavailable) {
      if (u.what == "perf::CONTEXT-SWITCHES") {
        listed = true;
        EXPECT_THAT(u.reason, HasSubstr("perf_event_paranoid="));
      }
    }
    EXPECT_TRUE(listed) << Describe(m.unavailable);
    GTEST_SKIP() << "context switches not countable here: " << Describe(m.unavailable);
  }
  EXPECT_GE(switches->value, 50);  // each sleep blocks the only thread
}

TEST(ProcessCountersTest, ReadsAreCumulative) {
  Work work;
  work.burn_ns = 50 * kMs;
  Child child(work);
  ASSERT_TRUE(child.WaitFor('r'));
  auto counters = ProcessCounters::Open(child.pid(), CounterOptions{});
  ASSERT_TRUE(counters.ok()) << counters.status();
  auto before = (*counters)->Read();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(child.Send());
  ASSERT_TRUE(child.WaitFor('d'));
  auto after = (*counters)->Read();
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(before->size(), after->size());
  const CounterReading* a = Find(*before, "perf::TASK-CLOCK");
  const CounterReading* b = Find(*after, "perf::TASK-CLOCK");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_GE(b->value - a->value, 40 * kMs);
}

TEST(ProcessCountersTest, HardwareCountersAreReadOrUnavailableWithAReason) {
  Work work;
  work.burn_ns = 50 * kMs;
  Measured m = RunAndMeasure(work);
  const CounterOptions options;
  std::vector<std::string> missing;
  for (const std::string& preset : options.papi_presets) {
    const CounterReading* r = Find(m.readings, preset);
    if (r != nullptr) {
      EXPECT_EQ(r->source, CounterSource::kPapi);
      continue;
    }
    bool listed = false;
    for (const CounterUnavailable& u : m.unavailable) {
      if (u.what == preset) {
        listed = true;
        EXPECT_FALSE(u.reason.empty()) << preset;
        missing.push_back(absl::StrCat(preset, ": ", u.reason));
      }
    }
    EXPECT_TRUE(listed) << preset << " neither read nor listed unavailable";
  }
  const CounterReading* cycles = Find(m.readings, "PAPI_TOT_CYC");
  absl::StatusOr<MemoryStallFraction> stall = CpuMemoryStallFraction(m.readings, m.unavailable);
  if (cycles == nullptr) {
    // No PMU: the stall fraction must say why rather than print a number.
    ASSERT_FALSE(stall.ok());
    EXPECT_EQ(stall.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(stall.status().message(), HasSubstr("PAPI_TOT_CYC: "));
    GTEST_SKIP() << "no hardware counters on this host:\n" << absl::StrJoin(missing, "\n");
  }
  EXPECT_GE(cycles->value, 10 * kMs);  // 50 ms of CPU at >= 0.2 GHz
  const CounterReading* instructions = Find(m.readings, "PAPI_TOT_INS");
  if (instructions != nullptr) {
    EXPECT_GT(instructions->value, 0);
  }
  if (stall.ok()) {
    EXPECT_GE(stall->fraction, 0.0);
    EXPECT_LE(stall->fraction, 1.0);
  }
}

TEST(ProcessCountersTest, ReadAfterExitIsNotFoundNamingThePid) {
  Work work;
  Child child(work);
  ASSERT_TRUE(child.WaitFor('r'));
  auto counters = ProcessCounters::Open(child.pid(), CounterOptions{});
  ASSERT_TRUE(counters.ok()) << counters.status();
  ASSERT_TRUE((*counters)->Read().ok());
  ASSERT_TRUE(child.Send());
  ASSERT_TRUE(child.WaitFor('d'));
  ASSERT_TRUE(child.Send());  // exit
  ASSERT_TRUE(child.WaitExited());
  auto zombie = (*counters)->Read();  // exited, not yet reaped
  ASSERT_FALSE(zombie.ok());
  EXPECT_EQ(zombie.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(zombie.status().message(), HasSubstr(absl::StrCat("pid ", child.pid())));
  EXPECT_EQ(child.Reap(), 0);
  auto reaped = (*counters)->Read();
  ASSERT_FALSE(reaped.ok());
  EXPECT_EQ(reaped.status().code(), absl::StatusCode::kNotFound);

  auto reopen = ProcessCounters::Open(child.pid(), CounterOptions{});
  ASSERT_FALSE(reopen.ok());
  EXPECT_EQ(reopen.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reopen.status().message(), HasSubstr(absl::StrCat("pid ", child.pid())));
}

TEST(ProcessCountersTest, MaxThreadsShortfallIsListed) {
  Work work;
  work.threads_before = 3;
  Child child(work);
  ASSERT_TRUE(child.WaitFor('r'));
  CounterOptions options;
  options.max_threads = 2;
  auto counters = ProcessCounters::Open(child.pid(), options);
  ASSERT_TRUE(counters.ok()) << counters.status();
  bool listed = false;
  for (const CounterUnavailable& u : (*counters)->unavailable()) {
    if (u.what == "perf::* (threads)") {
      listed = true;
      EXPECT_THAT(u.reason, HasSubstr("has 4 threads; counting 2"));
    }
  }
  EXPECT_TRUE(listed) << Describe((*counters)->unavailable());
}

}  // namespace

// After a registered process exited and its pid was reused by a
// process of another uid, the agent opened counters on that process. Counters opened
// with the identity taken at registration refuse a pid whose process is not that one.
// A reused pid is stood in for by this test process: the identity is a child's that has
// exited, the pid asked for is alive.
TEST(ProcessCountersTest, AHeldIdentityRefusesAnotherProcessUnderThePid) {
  Work work;
  Child child(work);
  ASSERT_TRUE(child.WaitFor('r'));
  const ProcessIdentity id = TakeProcessIdentity(child.pid());
  ASSERT_GE(id.pidfd, 0) << "pidfd_open";
  EXPECT_GT(id.start_time, 0u);
  ASSERT_TRUE(child.Send());
  ASSERT_TRUE(child.WaitFor('d'));
  ASSERT_TRUE(child.Send());  // exit
  ASSERT_TRUE(child.WaitExited());
  EXPECT_EQ(child.Reap(), 0);
  CounterOptions options;
  options.pidfd = id.pidfd;
  options.start_time = id.start_time;
  auto successor = ProcessCounters::Open(getpid(), options);
  ASSERT_FALSE(successor.ok()) << "counters opened on another process under the pid";
  EXPECT_EQ(successor.status().code(), absl::StatusCode::kNotFound);
  ::close(id.pidfd);
}

}  // namespace opmap::agent
