// The collector's SQLite store on a filesystem that fills up: a real
// 8 MiB tmpfs, mounted in a private mount namespace that a holder process keeps open for
// the test's length; the collector runs inside it (nsenter), the test reaches its files
// through /proc/HOLDER/root. Ingest until the disk is full, SIGKILL, a restart while it is
// still full, then space returns: the collector must start on its own and hold every batch
// it acknowledged, and take new ones. (It refused to start: the log ENOSPC left behind
// has a bad frame with more frames after it.)
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/collector_fixture.h"
#include "tests/integration/collector_test_util.h"

namespace opmap::testing {
namespace {

using ::testing::HasSubstr;

constexpr long kTmpfsMagic = 0x01021994;

// A Kineto trace of `kernels` kernels named "k" (about 130 bytes stored each).
std::string KernelTrace(int kernels) {
  std::string s = "{\"traceEvents\": [";
  for (int i = 0; i < kernels; ++i) {
    absl::StrAppend(&s, i ? ",\n" : "",
                    R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )",
                    10 + i * 3, R"(, "dur": 2, "args": {"device": 0, "stream": 7}})");
  }
  return s + "]}";
}

class CollectorDiskFullTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure() && collector_) std::cerr << "collector stderr:\n" << collector_->Log();
  }
  // The tmpfs as the test sees it.
  std::string Outside(const std::string& name) const {
    return absl::StrCat("/proc/", holder_.pid(), "/root", mount_, "/", name);
  }
  // `opmap import` of the trace as one more session; its exit code.
  int Import(int n) {
    RunResult r = Opmap({"import", dir_.File("trace.json"), "--collector", collector_->address(),
                         "--token", kAgentToken, "--label", absl::StrCat("n=", n),
                         "--retry-for", "3s"},
                        dir_.path());
    return r.exit_code;
  }
  // Complete sessions the collector holds, from `opmap query latency --group-by session`.
  int Sessions() {
    RunResult r = Opmap({"query", "latency", "--group-by", "session", "--format", "csv",
                         "--collector", collector_->address(), "--token", kAnalystToken},
                        dir_.path());
    if (r.exit_code != 0) return -1;
    int rows = 0;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      if (absl::StrContains(line, "import-")) ++rows;
    }
    return rows;
  }

  TempDir dir_;
  std::string mount_;
  Child holder_;
  std::unique_ptr<CollectorProcess> collector_;
};

TEST_F(CollectorDiskFullTest, FullDiskThenARestartWhileFullLosesNothingAcknowledged) {
  mount_ = dir_.File("mnt");
  ASSERT_EQ(mkdir(mount_.c_str(), 0700), 0) << mount_;
  ASSERT_TRUE(holder_
                  .Start({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                          "-c", "mount -t tmpfs -o size=8m,mode=0700 tmpfs \"$0\" && exec sleep 900",
                          mount_},
                         dir_.File("holder.out"), dir_.File("holder.err"))
                  .ok());
  struct statfs fs{};
  for (int i = 0; i < 100; ++i) {
    if (statfs(Outside("").c_str(), &fs) == 0 && fs.f_type == kTmpfsMagic) break;
    if (!holder_.running()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  if (fs.f_type != kTmpfsMagic) {
    GTEST_SKIP() << "unavailable: a private 8 MiB tmpfs (unshare --mount, mount -t tmpfs) is "
                    "refused here: "
                 << ReadFileOrEmpty(dir_.File("holder.err"));
  }
  // Space taken by something else, given back later.
  WriteFileOrDie(Outside("filler"), std::string(4 << 20, 'f'));
  WriteFileOrDie(dir_.File("trace.json"), KernelTrace(2000));

  CollectorProcess::Options options;
  options.dir = dir_.path();
  options.db = mount_ + "/c.db";
  options.wrapper = {"/usr/bin/nsenter", "-t", std::to_string(holder_.pid()), "-m", "--"};
  collector_ = std::make_unique<CollectorProcess>(options);
  ASSERT_TRUE(collector_->Start().ok()) << collector_->Log();

  // Until the disk is full: the collector refuses a batch it cannot store.
  int acknowledged = 0;
  for (int n = 0; n < 60; ++n) {
    if (Import(n) != 0) break;
    ++acknowledged;
  }
  ASSERT_GT(acknowledged, 0);
  ASSERT_LT(acknowledged, 60) << "the disk never filled";
  ASSERT_EQ(statfs(Outside("").c_str(), &fs), 0);
  std::cerr << acknowledged << " imports acknowledged; " << fs.f_bavail * fs.f_bsize
            << " bytes left\n";

  collector_->Kill();
  // A restart while still full: whether it comes up is not asserted (it may not), only
  // that it changes nothing acknowledged.
  (void)collector_->Restart();
  collector_->Kill();

  ASSERT_EQ(unlink(Outside("filler").c_str()), 0);
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_EQ(Sessions(), acknowledged);
  EXPECT_EQ(Import(100), 0) << "ingest did not resume";
  EXPECT_EQ(Sessions(), acknowledged + 1);
  // A recovery says so, and keeps what it could not prove beside the store.
  const bool recovered =
      absl::StrContains(collector_->Log(), "recovered a damaged write-ahead log");
  std::cerr << (recovered ? "the collector recovered a damaged write-ahead log\n"
                          : "the log was intact\n");
  if (recovered) {
    EXPECT_THAT(collector_->Log(), HasSubstr("acknowledged batch commits"));
    EXPECT_THAT(collector_->Log(), HasSubstr(mount_ + "/c.db-wal.damaged-"));
  }
  // And the next start is clean: nothing left to recover.
  const std::string before = collector_->Log();
  ASSERT_TRUE(collector_->Restart().ok()) << collector_->Log();
  EXPECT_FALSE(absl::StrContains(collector_->Log().substr(before.size()), "recovered"))
      << collector_->Log().substr(before.size());
  EXPECT_EQ(Sessions(), acknowledged + 1);
}

}  // namespace
}  // namespace opmap::testing
