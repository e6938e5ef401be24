// The CLI's side of a collector connection: the --collector / --token / --tls-* flags,
// gRPC channels to one or more collector addresses (tried in order), and the per-call
// metadata `authorization: Bearer TOKEN`. Used by `import`, `query` and `export`.
//
// Thread safety: a CollectorClient is immutable after Create() apart from its channel
// cache, which is guarded; contexts may be prepared from any thread.
#ifndef OPMAP_CLI_GRPC_CLIENT_H_
#define OPMAP_CLI_GRPC_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::cli {

struct ConnectionFlags {
  std::vector<std::string> collectors;  // HOST:PORT, in failover order
  std::string token;                    // --token
  std::string token_file;               // --token-file
  std::string tls_ca;                   // --tls-ca: PEM roots; enables TLS
  std::string tls_cert;                 // --tls-cert: client certificate chain (mTLS)
  std::string tls_key;                  // --tls-key: its private key
  std::string tls_server_name;          // --tls-server-name: name to verify instead of HOST
  absl::Duration timeout = absl::Seconds(30);  // --timeout: per unary call
  bool timeout_given = false;
};

// The options block every collector command prints in its usage text.
extern const char kConnectionUsage[];

// When argv[*i] is a connection flag, consumes it and its value (advancing *i) and
// returns true; a flag with a missing or bad value sets *error (and returns true).
// Returns false for anything else.
bool ParseConnectionFlag(const std::vector<std::string>& argv, size_t* i,
                         ConnectionFlags* flags, std::string* error);

// Parses "30s", "1.5m", "2h", "500ms", "1d" (absl durations plus "d"). False when bad or < 0.
bool ParseDurationFlag(const std::string& text, absl::Duration* out);

class CollectorClient {
 public:
  // Resolves the token (--token, else --token-file's first line, else $OPMAP_TOKEN; none
  // is allowed: the collector then answers UNAUTHENTICATED) and reads the TLS files.
  // InvalidArgument naming the flag when something is missing or unreadable.
  static absl::StatusOr<std::unique_ptr<CollectorClient>> Create(const ConnectionFlags& flags);

  size_t endpoint_count() const { return endpoints_.size(); }
  const std::string& endpoint(size_t i) const { return endpoints_[i]; }
  bool has_token() const { return !token_.empty(); }
  // SHA-256 of the token (64 hex digits; "" without one): names the caller's principal
  // in derived ids without revealing the token.
  std::string TokenFingerprint() const;
  bool tls() const { return tls_; }

  // A channel of its own to endpoint i (no subchannel shared with other channels), so a
  // caller that reconnects with its own backoff is not held back by gRPC's.
  std::shared_ptr<grpc::Channel> NewChannel(size_t i) const;

  // Adds the bearer token and, when `deadline` is finite, a deadline from now.
  void PrepareContext(grpc::ClientContext* context, absl::Duration deadline) const;

  // Runs `call` on each endpoint in order (cached channels, a fresh context with the
  // token and flags.timeout each time) until one answers with something other than
  // UNAVAILABLE; returns that answer, or the last UNAVAILABLE. `*endpoint` (if not null)
  // receives the address that answered.
  using UnaryCall =
      std::function<grpc::Status(const std::shared_ptr<grpc::Channel>&, grpc::ClientContext&)>;
  grpc::Status CallWithFailover(const UnaryCall& call, std::string* endpoint = nullptr);

  absl::Duration timeout() const { return timeout_; }

 private:
  CollectorClient() = default;

  std::vector<std::string> endpoints_;
  std::string token_;
  bool tls_ = false;
  grpc::SslCredentialsOptions ssl_;
  std::string tls_server_name_;
  absl::Duration timeout_;
  std::mutex mu_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;  // guarded by mu_
};

// "UNAVAILABLE", "PERMISSION_DENIED", ...
const char* StatusCodeName(grpc::StatusCode code);
// One line: "CODE: message".
std::string StatusLine(const grpc::Status& status);
// The CLI exit code for a failed call: 2 for UNAUTHENTICATED, PERMISSION_DENIED and
// INVALID_ARGUMENT (the caller must change something), 1 for everything else
// (UNAVAILABLE: the collector is down or unreachable).
int ExitCodeFor(const grpc::Status& status);
// A hint appended to auth errors when no token was given, else "".
std::string AuthHint(const grpc::Status& status, const CollectorClient& client);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_GRPC_CLIENT_H_
