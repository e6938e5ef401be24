// Bearer-token authorization for the collector's gRPC services.
//
// Tokens file: one token per line, `TOKEN ROLE [NAME]`; blank lines and lines starting
// with '#' are ignored, as is anything after a '#' field. Roles: `agent` (may ingest),
// `analyst` (may query), `admin` (both). NAME (default "line N") is what logs and
// errors show — never the token itself. Tokens are at least 16 characters, unique.
//
// Callers send call metadata `authorization: Bearer TOKEN`. Tokens are compared in
// constant time (no early exit on the first differing byte, every token checked).
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
};

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
  // `token_name`, when given, receives the matching token's name ("insecure-no-auth"
  // with AllowAll).
  absl::Status Check(std::optional<std::string_view> authorization, Permission permission,
                     std::string* token_name = nullptr) const;

  // Check() on the call's `authorization` metadata, as a gRPC status.
  grpc::Status Authorize(const grpc::ServerContext* context, Permission permission,
                         std::string* token_name = nullptr) const;

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
