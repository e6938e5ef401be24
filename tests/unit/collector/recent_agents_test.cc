#include "collector/recent_agents.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace opmap::collector {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

TEST(RecentAgents, CountsDistinctIdsWithinTheWindow) {
  RecentAgents agents(absl::Minutes(5), 10);
  EXPECT_EQ(agents.Count(kT0), 0);
  agents.Saw("gpu-a", kT0);
  agents.Saw("gpu-a", kT0 + absl::Seconds(60));  // one id, seen twice
  agents.Saw("gpu-b", kT0 + absl::Seconds(30));
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(90)), 2);
  // gpu-b's last batch is 5 minutes old: gone; gpu-a's is not.
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(330)), 1);
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(360)), 0);
}

TEST(RecentAgents, HoldsAtMostMaxIdsDroppingTheOldest) {
  RecentAgents agents(absl::Minutes(5), 3);
  for (int i = 0; i < 5; ++i) agents.Saw(absl::StrCat("gpu-", i), kT0 + absl::Seconds(i));
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(10)), 3);
  // The two seen first made room: gpu-2, gpu-3 and gpu-4 are held.
  agents.Saw("gpu-4", kT0 + absl::Seconds(11));
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(11)), 3);
  // Expired ids make room before a live one is dropped: at 302 s gpu-2 (seen at 2 s) is
  // 5 minutes old, gpu-3 is not.
  agents.Saw("gpu-9", kT0 + absl::Seconds(302));
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(302)), 3);  // gpu-3, gpu-4, gpu-9
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(311)), 1);  // gpu-9 only
}

}  // namespace
}  // namespace opmap::collector
