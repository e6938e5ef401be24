// RateLimitedLog on a fake clock: the burst passes, then the steady rate; what is left
// out is counted and announced with the next line let through.
#include "common/log/rate_limited_log.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace opmap::log {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST(RateLimitedLog, BurstThenSteadyRateWithTheCountOfWhatWasLeftOut) {
  std::vector<std::string> lines;
  int64_t now = 5 * kSecond;
  RateLimitedLog log([&](const std::string& l) { lines.push_back(l); },
                     RateLimit{.burst = 3, .per_minute = 60}, [&] { return now; });
  for (int i = 0; i < 10; ++i) log.Write("line " + std::to_string(i));
  EXPECT_EQ(lines, (std::vector<std::string>{"line 0", "line 1", "line 2"}));
  EXPECT_EQ(log.suppressed_total(), 7);

  now += kSecond / 2;  // half a line regained: still nothing
  log.Write("line 10");
  EXPECT_EQ(lines.size(), 3u);
  now += kSecond / 2;  // one whole line
  log.Write("line 11");
  log.Write("line 12");
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "line 0", "line 1", "line 2",
                       "(8 log lines suppressed: more than 60 a minute)", "line 11"}));
  EXPECT_EQ(log.suppressed_total(), 9);

  // A long quiet spell refills to the burst, never past it.
  now += 3600 * kSecond;
  lines.clear();
  for (int i = 0; i < 5; ++i) log.Write("after " + std::to_string(i));
  EXPECT_EQ(lines, (std::vector<std::string>{"(1 log lines suppressed: more than 60 a minute)",
                                             "after 0", "after 1", "after 2"}));
  EXPECT_EQ(log.suppressed_total(), 11);
}

TEST(RateLimitedLog, AClockGoingBackRegainsNothing) {
  std::vector<std::string> lines;
  int64_t now = 100 * kSecond;
  RateLimitedLog log([&](const std::string& l) { lines.push_back(l); },
                     RateLimit{.burst = 1, .per_minute = 60}, [&] { return now; });
  log.Write("a");
  now -= 50 * kSecond;
  log.Write("b");
  now += 50 * kSecond;  // back where it was: still nothing regained
  log.Write("c");
  EXPECT_EQ(lines, (std::vector<std::string>{"a"}));
  now += kSecond;
  log.Write("d");
  EXPECT_EQ(lines.back(), "d");
}

}  // namespace
}  // namespace opmap::log
