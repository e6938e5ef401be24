// CallAdmission: limits in all and per principal, released with the ticket; refusals name
// the flag.
#include "collector/call_admission.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::collector::call_admission_testing {
namespace {

using ::testing::HasSubstr;

TEST(CallAdmission, PerPrincipalThenTotalAndReleasedWithTheTicket) {
  CallAdmission calls("Query calls", "--max-queries", 3, "--max-queries-per-token", 2);
  std::vector<CallAdmission::Ticket> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<CallAdmission::Ticket> t = calls.Admit("hog");
    ASSERT_TRUE(t.ok()) << t.status();
    held.push_back(*std::move(t));
  }
  absl::StatusOr<CallAdmission::Ticket> refused = calls.Admit("hog");
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "token 'hog' has 2 Query calls in progress, the limit per token "
            "(--max-queries-per-token 2); retry later");
  absl::StatusOr<CallAdmission::Ticket> other = calls.Admit("alice");
  ASSERT_TRUE(other.ok());
  EXPECT_THAT(calls.Admit("bob").status().message(),
              HasSubstr("the collector has 3 Query calls in progress, its limit (--max-queries 3)"));
  EXPECT_EQ(calls.in_progress(), 3);
  EXPECT_EQ(calls.refused(), 2);
  held.pop_back();  // a released slot is admitted again
  EXPECT_TRUE(calls.Admit("hog").ok());  // ... and released at once (a temporary)
  CallAdmission::Ticket moved = *std::move(other);
  EXPECT_EQ(calls.in_progress(), 2);
  moved = CallAdmission::Ticket();
  held.clear();
  EXPECT_EQ(calls.in_progress(), 0);
}

}  // namespace
}  // namespace opmap::collector::call_admission_testing
