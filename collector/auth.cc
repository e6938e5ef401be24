#include "collector/auth.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/absl_view.h"
#include "common/text/text_util.h"

namespace opmap::collector {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAgent: return "agent";
    case Role::kAnalyst: return "analyst";
    case Role::kAdmin: return "admin";
  }
  return "?";
}

bool RoleAllows(Role role, Permission permission) {
  if (role == Role::kAdmin) return true;
  return permission == Permission::kIngest ? role == Role::kAgent : role == Role::kAnalyst;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Walk the longer length; index both modulo their own length so no access depends on
  // where the first difference is. The length mismatch is folded in at the end.
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
  if (a.empty() || b.empty()) return a.size() == b.size();
  for (size_t i = 0; i < n; ++i) {
    diff = diff | static_cast<unsigned char>(a[i % a.size()] ^ b[i % b.size()]);
  }
  return diff == 0;
}

absl::StatusOr<Authenticator> Authenticator::FromText(std::string_view text,
                                                      std::string_view source) {
  Authenticator auth;
  absl::flat_hash_set<std::string> names;
  int line_no = 0;
  for (std::string_view line : text::Lines(text)) {
    ++line_no;
    std::vector<std::string_view> fields;
    std::vector<std::string_view> options;  // key=value fields after ROLE
    for (std::string_view f : text::Fields(line)) {
      if (f.front() == '#') break;
      if (fields.size() >= 2 && f.find('=') != std::string_view::npos) {
        options.push_back(f);
      } else {
        fields.push_back(f);
      }
    }
    if (fields.empty() && options.empty()) continue;
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", source, line_no, what));
    };
    constexpr const char* kFormat = "`TOKEN ROLE [NAME] [agents=ID,...] [cert=CN]`";
    if (fields.size() < 2) return error(absl::StrFormat("expected %s, found one field", kFormat));
    if (fields.size() > 3) {
      return error(absl::StrFormat("expected %s, found %d fields", kFormat, fields.size()));
    }
    TokenEntry entry;
    for (std::string_view option : options) {
      const size_t eq = option.find('=');
      std::string_view key = option.substr(0, eq), value = option.substr(eq + 1);
      if (key == "agents") {
        for (std::string_view id : text::Lines(value, ',')) {
          if (id.empty()) return error("agents=: an empty agent id");
          if (id.find('*') != std::string_view::npos && id.find('*') != id.size() - 1) {
            return error(absl::StrFormat("agents=: '%s': '*' may only end a pattern", id));
          }
          entry.agents.emplace_back(id);
        }
      } else if (key == "cert") {
        if (value.empty()) return error("cert=: an empty common name");
        entry.cert_cn = std::string(value);
      } else {
        return error(absl::StrFormat("unknown option '%s' (expected agents= or cert=)", key));
      }
    }
    entry.token = std::string(fields[0]);
    if (entry.token.size() < kMinTokenLength) {
      return error(absl::StrFormat("token is %d characters; at least %d are required",
                                   entry.token.size(), kMinTokenLength));
    }
    std::string role = text::Lower(fields[1]);
    if (role == "agent") {
      entry.role = Role::kAgent;
    } else if (role == "analyst") {
      entry.role = Role::kAnalyst;
    } else if (role == "admin") {
      entry.role = Role::kAdmin;
    } else {
      return error(absl::StrFormat("unknown role '%s' (expected agent, analyst or admin)",
                                   fields[1]));
    }
    entry.name = fields.size() == 3 ? std::string(fields[2]) : absl::StrFormat("line %d", line_no);
    for (const TokenEntry& other : auth.entries_) {
      if (other.token == entry.token) {
        return error(absl::StrFormat("token repeats the one of '%s'", other.name));
      }
    }
    if (!names.insert(entry.name).second) {
      return error(absl::StrFormat("name '%s' is used twice", entry.name));
    }
    auth.entries_.push_back(std::move(entry));
  }
  if (auth.entries_.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: no tokens", source));
  }
  return auth;
}

absl::StatusOr<Authenticator> Authenticator::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot read tokens file %s", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrFormat("error reading tokens file %s", path));
  return FromText(ss.str(), path);
}

Authenticator Authenticator::AllowAll() {
  Authenticator auth;
  auth.allow_all_ = true;
  return auth;
}

bool AgentPatternMatches(std::string_view pattern, std::string_view agent_id) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return agent_id.substr(0, pattern.size()) == pattern;
  }
  return pattern == agent_id;
}

absl::Status Principal::MayWriteAgent(std::string_view agent_id) const {
  if (agents.empty()) return absl::OkStatus();
  for (const std::string& pattern : agents) {
    if (AgentPatternMatches(pattern, agent_id)) return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrFormat("token '%s' may not write agent '%s' (its agents= allows %s)", name,
                      absl::CHexEscape(base::AbslView(agent_id)), absl::StrJoin(agents, ",")));
}

std::vector<std::string> Authenticator::UnboundWriters() const {
  std::vector<std::string> out;
  for (const TokenEntry& entry : entries_) {
    if (entry.role != Role::kAnalyst && entry.agents.empty()) out.push_back(entry.name);
  }
  return out;
}

absl::Status Authenticator::Check(std::optional<std::string_view> authorization,
                                  Permission permission, Principal* principal,
                                  std::optional<std::string_view> peer_cert_cn) const {
  if (allow_all_) {
    if (principal != nullptr) *principal = Principal{"insecure-no-auth", Role::kAdmin, {}};
    return absl::OkStatus();
  }
  if (!authorization.has_value() || authorization->empty()) {
    return absl::UnauthenticatedError(
        "missing token: send call metadata \"authorization: Bearer <token>\"");
  }
  std::string_view value = *authorization;
  constexpr std::string_view kBearer = "bearer ";
  if (value.size() <= kBearer.size() ||
      !text::EqualsIgnoreCase(value.substr(0, kBearer.size()), kBearer)) {
    return absl::UnauthenticatedError(
        "malformed authorization metadata: expected \"Bearer <token>\"");
  }
  std::string_view token = text::Trim(value.substr(kBearer.size()));
  const TokenEntry* found = nullptr;
  for (const TokenEntry& entry : entries_) {  // every entry, no early exit
    bool eq = ConstantTimeEquals(entry.token, token);
    if (eq && found == nullptr) found = &entry;
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown token");
  if (!RoleAllows(found->role, permission)) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "token '%s' has role %s; %s needs %s or admin", found->name, RoleName(found->role),
        permission == Permission::kIngest ? "ingest" : "query",
        permission == Permission::kIngest ? "agent" : "analyst"));
  }
  if (!found->cert_cn.empty() &&
      (!peer_cert_cn.has_value() || !ConstantTimeEquals(*peer_cert_cn, found->cert_cn))) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "token '%s' is bound to client certificate '%s'; the call came with %s", found->name,
        found->cert_cn,
        peer_cert_cn.has_value() ? absl::StrCat("'", absl::CHexEscape(absl::string_view(peer_cert_cn->data(), peer_cert_cn->size())), "'")
                                 : std::string("none")));
  }
  if (principal != nullptr) *principal = Principal{found->name, found->role, found->agents};
  return absl::OkStatus();
}

grpc::Status Authenticator::Authorize(const grpc::ServerContext* context,
                                      Permission permission, Principal* principal) const {
  if (allow_all_) return ToGrpcStatus(Check(std::nullopt, permission, principal));
  std::optional<std::string_view> value;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(grpc::string_ref(kAuthorizationKey.data(), kAuthorizationKey.size()));
  if (it != metadata.end()) value = std::string_view(it->second.data(), it->second.size());
  // The verified client certificate's common name, when the call came over mTLS.
  std::string cn;
  std::optional<std::string_view> peer_cn;
  if (std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
      auth != nullptr && auth->IsPeerAuthenticated()) {
    std::vector<grpc::string_ref> names = auth->FindPropertyValues("x509_common_name");
    if (!names.empty()) {
      cn.assign(names.front().data(), names.front().size());
      peer_cn = cn;
    }
  }
  return ToGrpcStatus(Check(value, permission, principal, peer_cn));
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace opmap::collector
