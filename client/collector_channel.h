// How a program talks to one or more collectors: gRPC channels to the addresses (tried in
// order: failover), TLS or mutual TLS, and the per-call metadata `authorization: Bearer
// TOKEN`. Parses no command line: opmap (cli/connection_flags.h) and opmap-agent fill the
// options from their own flags. Used by `opmap import/query/export/report`, the agent's
// uploader and the ingest benchmark.
//
// Thread safety: a CollectorChannel is immutable after Create() apart from its channel
// cache, which is guarded; contexts may be prepared from any thread.
#ifndef OPMAP_CLIENT_COLLECTOR_CHANNEL_H_
#define OPMAP_CLIENT_COLLECTOR_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace opmap::client {

// Errors name the flags both programs spell these with (--collector, --token-file, ...).
struct ChannelOptions {
  std::vector<std::string> collectors;  // HOST:PORT, in failover order
  std::string token;                    // the bearer token itself, or
  std::string token_file;               // the first line of this file, else $OPMAP_TOKEN
  std::string tls_ca;                   // PEM roots file; enables TLS
  std::string tls_cert;                 // client certificate chain file (mTLS)
  std::string tls_key;                  // its private key file
  std::string tls_server_name;          // name to verify instead of HOST
  absl::Duration timeout = absl::Seconds(30);  // per unary call
};

class CollectorChannel {
 public:
  // Resolves the token (token, else token_file's first line, else $OPMAP_TOKEN; none
  // is allowed: the collector then answers UNAUTHENTICATED) and reads the TLS files.
  // InvalidArgument naming the flag when something is missing or unreadable.
  static absl::StatusOr<std::unique_ptr<CollectorChannel>> Create(const ChannelOptions& options);

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
  // token and options.timeout each time) until one answers with something other than
  // UNAVAILABLE; returns that answer, or the last UNAVAILABLE. `*endpoint` (if not null)
  // receives the address that answered.
  using UnaryCall =
      std::function<grpc::Status(const std::shared_ptr<grpc::Channel>&, grpc::ClientContext&)>;
  grpc::Status CallWithFailover(const UnaryCall& call, std::string* endpoint = nullptr);

  absl::Duration timeout() const { return timeout_; }

 private:
  CollectorChannel() = default;

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
}  // namespace opmap::client

#endif  // OPMAP_CLIENT_COLLECTOR_CHANNEL_H_
