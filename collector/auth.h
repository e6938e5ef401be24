// Bearer-token authorization for the collector's gRPC services.
//
// Tokens file: one token per line, `TOKEN ROLE [NAME] [agents=ID,...] [cert=CN]`; blank
// lines and lines starting with '#' are ignored, as is anything after a '#' field.
// Roles: `agent` (may ingest), `analyst` (may query), `admin` (both). NAME (default
// "line N") is the principal logs and errors show — never the token itself. Tokens are
// at least 16 characters, unique.
//
// Identity (docs/security.md): `agents=` lists the agent ids the token may write, each an
// exact id or a prefix ending in '*' ("fleet-*"); a batch for any other agent id is
// refused PERMISSION_DENIED. Without `agents=` the token may write any agent id (the
// collector warns at start). `cert=CN`: with mTLS, the call must also come with a client
// certificate of that common name.
//
// Callers send call metadata `authorization: Bearer TOKEN`. Tokens are compared in
// constant time (no early exit on the first differing byte, every token checked).
// Fuzzed by tests/fuzz/config_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_COLLECTOR_AUTH_H_
#define OPMAP_COLLECTOR_AUTH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opmap::collector {

enum class Role { kAgent, kAnalyst, kAdmin };
enum class Permission { kIngest, kQuery };

std::string_view RoleName(Role role);          // "agent", "analyst", "admin"
bool RoleAllows(Role role, Permission permission);

inline constexpr size_t kMinTokenLength = 16;
inline constexpr std::string_view kAuthorizationKey = "authorization";

// Equal contents, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

struct TokenEntry {
  std::string token;
  Role role = Role::kAgent;
  std::string name;
  std::vector<std::string> agents;  // patterns; empty = any agent id
  std::string cert_cn;              // "" = no certificate binding
};

// Who a call is: the matching token's name and what it may write.
struct Principal {
  std::string name;                 // "insecure-no-auth" under AllowAll
  Role role = Role::kAdmin;
  std::vector<std::string> agents;  // empty = any agent id

  // OK, or PERMISSION_DENIED naming the principal, the agent id and what is allowed.
  absl::Status MayWriteAgent(std::string_view agent_id) const;
};

// "fleet-*" matches "fleet-a"; "a" matches only "a"; "*" everything.
bool AgentPatternMatches(std::string_view pattern, std::string_view agent_id);

class Authenticator {
 public:
  // `source` names the input in errors ("tokens.txt:3: unknown role 'root' ...").
  static absl::StatusOr<Authenticator> FromText(std::string_view text, std::string_view source);
  static absl::StatusOr<Authenticator> FromFile(const std::string& path);
  // --insecure-no-auth: every call is allowed.
  static Authenticator AllowAll();

  // `authorization` is the metadata value, or nullopt when the call has none.
  // OK, or UNAUTHENTICATED ("missing token", "unknown token", "malformed ...") or
  // PERMISSION_DENIED ("token 'NAME' has role analyst; ingest needs agent or admin").
  // `principal`, when given, receives who the caller is. `peer_cert_cn`: the common
  // name of the caller's verified client certificate (nullopt without one); a token
  // with `cert=` needs it to match.
  absl::Status Check(std::optional<std::string_view> authorization, Permission permission,
                     Principal* principal = nullptr,
                     std::optional<std::string_view> peer_cert_cn = std::nullopt) const;

  // Check() on the call's `authorization` metadata and its TLS peer, as a gRPC status.
  grpc::Status Authorize(const grpc::ServerContext* context, Permission permission,
                         Principal* principal = nullptr) const;

  // Names of agent/admin tokens without `agents=` (they may write any agent id).
  std::vector<std::string> UnboundWriters() const;

  bool allow_all() const { return allow_all_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<TokenEntry> entries_;
  bool allow_all_ = false;
};

// absl::Status -> grpc::Status (the codes are the same numbers).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_AUTH_H_
