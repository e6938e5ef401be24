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

TEST(RecentAgents, HoldsAtMostMaxIdsAndMakesRoomAsTheyExpire) {
  RecentAgents agents(absl::Minutes(5), 3);
  for (int i = 0; i < 5; ++i) agents.Saw(absl::StrCat("gpu-", i), kT0 + absl::Seconds(i));
  // Full of live ids: gpu-3 and gpu-4 are not counted.
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(10)), 3);
  agents.Saw("gpu-1", kT0 + absl::Seconds(200));  // a held id is refreshed
  // At 302 s gpu-0 and gpu-2 (seen at 0 and 2 s) have expired; the full table is swept
  // before gpu-9 is refused, so it is counted.
  agents.Saw("gpu-9", kT0 + absl::Seconds(302));
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(302)), 2);  // gpu-1, gpu-9
  EXPECT_EQ(agents.Count(kT0 + absl::Seconds(501)), 1);  // gpu-9 only
}

}  // namespace
}  // namespace opmap::collector
