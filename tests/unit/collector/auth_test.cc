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
  EXPECT_EQ(error("agent-token-0123456789\n"),
            "t.txt:1: expected `TOKEN ROLE [NAME] [agents=ID,...] [cert=CN]`, found one field");
  EXPECT_EQ(error("agent-token-0123456789 agent a b\n"),
            "t.txt:1: expected `TOKEN ROLE [NAME] [agents=ID,...] [cert=CN]`, found 4 fields");
  EXPECT_EQ(error("agent-token-0123456789 agent a agents=\n"), "t.txt:1: agents=: an empty agent id");
  EXPECT_EQ(error("agent-token-0123456789 agent a agents=*x\n"),
            "t.txt:1: agents=: '*x': '*' may only end a pattern");
  EXPECT_EQ(error("agent-token-0123456789 agent a color=red\n"),
            "t.txt:1: unknown option 'color' (expected agents= or cert=)");
  EXPECT_EQ(error("short agent\n"), "t.txt:1: token is 5 characters; at least 16 are required");
  EXPECT_EQ(error("agent-token-0123456789 agent a\nagent-token-0123456789 admin b\n"),
            "t.txt:2: token repeats the one of 'a'");
  EXPECT_EQ(error("agent-token-0123456789 agent a\nagent-token-9876543210 admin a\n"),
            "t.txt:2: name 'a' is used twice");
  EXPECT_EQ(error("# nothing\n\n"), "t.txt: no tokens");
  EXPECT_FALSE(Authenticator::FromFile("/nonexistent/tokens").ok());
}

// Identity: a token names the agent ids it may write; `cert=` binds it to an mTLS client
// certificate's common name.
TEST(AuthTest, TokensNameTheAgentsTheyMayWrite) {
  Authenticator auth = *Authenticator::FromText(
      "agent-token-0123456789 agent fleet agents=fleet-*,canary\n"
      "other-token-0123456789 agent any\n"
      "bound-token-0123456789 agent bound agents=b cert=host-b\n",
      "t.txt");
  Principal p;
  ASSERT_TRUE(auth.Check("Bearer agent-token-0123456789", Permission::kIngest, &p).ok());
  EXPECT_EQ(p.name, "fleet");
  EXPECT_TRUE(p.MayWriteAgent("fleet-a").ok());
  EXPECT_TRUE(p.MayWriteAgent("canary").ok());
  absl::Status denied = p.MayWriteAgent("opmap-import@host");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(),
            "token 'fleet' may not write agent 'opmap-import@host' (its agents= allows "
            "fleet-*,canary)");
  EXPECT_FALSE(p.MayWriteAgent("canary2").ok());
  EXPECT_FALSE(p.MayWriteAgent("fleet").ok());
  ASSERT_TRUE(auth.Check("Bearer other-token-0123456789", Permission::kIngest, &p).ok());
  EXPECT_TRUE(p.MayWriteAgent("anything").ok());
  EXPECT_EQ(auth.UnboundWriters(), std::vector<std::string>{"any"});
  // cert=: only with that client certificate.
  absl::Status s = auth.Check("Bearer bound-token-0123456789", Permission::kIngest, &p);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "token 'bound' is bound to client certificate 'host-b'; the call came with none");
  EXPECT_FALSE(auth.Check("Bearer bound-token-0123456789", Permission::kIngest, &p, "host-c").ok());
  EXPECT_TRUE(auth.Check("Bearer bound-token-0123456789", Permission::kIngest, &p, "host-b").ok());
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
