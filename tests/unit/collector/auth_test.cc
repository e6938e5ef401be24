#include "collector/auth.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace opmap::collector {
namespace {

constexpr char kTokens[] =
    "# opmap collector tokens\n"
    "agent-token-0123456789 agent fleet-agents\n"
    "\n"
    "analyst-token-0123456789   analyst  alice   # the SRE on call\n"
    "admin-token-01234567890 ADMIN\n";

TEST(AuthTest, ParsesTokensWithRolesAndNames) {
  absl::StatusOr<Authenticator> auth = Authenticator::FromText(kTokens, "tokens.txt");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ(auth->size(), 3u);
  EXPECT_FALSE(auth->allow_all());
}

TEST(AuthTest, RolesGrantPermissions) {
  Authenticator auth = *Authenticator::FromText(kTokens, "tokens.txt");
  auto check = [&](const char* header, Permission p) { return auth.Check(header, p); };
  EXPECT_TRUE(check("Bearer agent-token-0123456789", Permission::kIngest).ok());
  EXPECT_TRUE(check("bearer agent-token-0123456789", Permission::kIngest).ok());
  EXPECT_TRUE(check("Bearer analyst-token-0123456789", Permission::kQuery).ok());
  EXPECT_TRUE(check("Bearer admin-token-01234567890", Permission::kIngest).ok());
  EXPECT_TRUE(check("Bearer admin-token-01234567890", Permission::kQuery).ok());

  absl::Status denied = check("Bearer analyst-token-0123456789", Permission::kIngest);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(), "token 'alice' has role analyst; ingest needs agent or admin");
  denied = check("Bearer agent-token-0123456789", Permission::kQuery);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(), "token 'fleet-agents' has role agent; query needs analyst or admin");
}

TEST(AuthTest, MissingUnknownAndMalformedTokens) {
  Authenticator auth = *Authenticator::FromText(kTokens, "tokens.txt");
  absl::Status s = auth.Check(std::nullopt, Permission::kIngest);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StartsWith(s.message(), "missing token")) << s;
  s = auth.Check("Bearer agent-token-0123456788", Permission::kIngest);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(s.message(), "unknown token");
  s = auth.Check("Bearer agent-token-012345678", Permission::kIngest);  // a prefix
  EXPECT_EQ(s.message(), "unknown token");
  s = auth.Check("Bearer agent-token-01234567890", Permission::kIngest);  // longer
  EXPECT_EQ(s.message(), "unknown token");
  s = auth.Check("agent-token-0123456789", Permission::kIngest);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StartsWith(s.message(), "malformed")) << s;
  s = auth.Check("Bearer ", Permission::kIngest);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
}

TEST(AuthTest, AllowAllAcceptsAnything) {
  Authenticator auth = Authenticator::AllowAll();
  EXPECT_TRUE(auth.allow_all());
  EXPECT_TRUE(auth.Check(std::nullopt, Permission::kIngest).ok());
  EXPECT_TRUE(auth.Check("Bearer nonsense", Permission::kQuery).ok());
}

TEST(AuthTest, TokensFileErrorsNameTheLine) {
  auto error = [](const char* text) {
    absl::StatusOr<Authenticator> a = Authenticator::FromText(text, "t.txt");
    EXPECT_FALSE(a.ok());
    return std::string(a.status().message());
  };
  EXPECT_EQ(error("# c\nagent-token-0123456789 root\n"),
            "t.txt:2: unknown role 'root' (expected agent, analyst or admin)");
  EXPECT_EQ(error("agent-token-0123456789\n"), "t.txt:1: expected `TOKEN ROLE [NAME]`, found one field");
  EXPECT_EQ(error("agent-token-0123456789 agent a b\n"),
            "t.txt:1: expected `TOKEN ROLE [NAME]`, found 4 fields");
  EXPECT_EQ(error("short agent\n"), "t.txt:1: token is 5 characters; at least 16 are required");
  EXPECT_EQ(error("agent-token-0123456789 agent a\nagent-token-0123456789 admin b\n"),
            "t.txt:2: token repeats the one of 'a'");
  EXPECT_EQ(error("agent-token-0123456789 agent a\nagent-token-9876543210 admin a\n"),
            "t.txt:2: name 'a' is used twice");
  EXPECT_EQ(error("# nothing\n\n"), "t.txt: no tokens");
  EXPECT_FALSE(Authenticator::FromFile("/nonexistent/tokens").ok());
}

TEST(AuthTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abcdef", "abcdef"));
  EXPECT_FALSE(ConstantTimeEquals("abcdef", "abcdeg"));
  EXPECT_FALSE(ConstantTimeEquals("abcdef", "abcde"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcabc"));  // wrap-around must not alias
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_FALSE(ConstantTimeEquals("a", ""));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

TEST(AuthTest, RoleNames) {
  EXPECT_EQ(RoleName(Role::kAgent), "agent");
  EXPECT_TRUE(RoleAllows(Role::kAdmin, Permission::kIngest));
  EXPECT_FALSE(RoleAllows(Role::kAnalyst, Permission::kIngest));
  EXPECT_FALSE(RoleAllows(Role::kAgent, Permission::kQuery));
}

}  // namespace
}  // namespace opmap::collector
