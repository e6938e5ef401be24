#include "cli/connection_flags.h"

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/config/flag_config.h"

namespace opmap::cli {

const char kConnectionUsage[] = R"(connection:
  --collector A[,B...]  collector address HOST:PORT; several are tried in order (failover)
  --token T             bearer token (visible in `ps`: prefer --token-file or $OPMAP_TOKEN)
  --token-file F        read the token from the first line of F
  --tls-ca F            verify the collector with the PEM CA bundle F (enables TLS)
  --tls-cert F          client certificate chain (PEM) for mutual TLS; needs --tls-key
  --tls-key F           its private key (PEM)
  --tls-server-name N   name to verify in the collector's certificate instead of HOST
  --timeout D           per-call deadline, e.g. 30s (default), 2m
)";

bool ParseDurationFlag(const std::string& text, absl::Duration* out) {
  absl::StatusOr<absl::Duration> d = config::ParseDurationOrZero(text);
  if (!d.ok()) return false;
  *out = *d;
  return true;
}

int ExitCodeFor(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return 0;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 2;
    default:
      return 1;
  }
}

std::string AuthHint(const grpc::Status& status, const CollectorChannel& client) {
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED && !client.has_token()) {
    return " (no token given: use --token, --token-file or $OPMAP_TOKEN)";
  }
  return "";
}

}  // namespace opmap::cli
