#include "client/collector_channel.h"

#include <array>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/crypto/sha256.h"
#include "common/io/read_file.h"

namespace opmap::client {

namespace {

constexpr int kConnectTimeoutMs = 10'000;

// Token bytes go into an HTTP/2 header: printable ASCII without spaces.
bool ValidToken(const std::string& t) {
  for (unsigned char c : t) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::string> bytes = io::ReadFileBytes(path);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": ", bytes.status().message()));
  }
  if (bytes->find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": not a PEM file"));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CollectorChannel>> CollectorChannel::Create(
    const ChannelOptions& options) {
  if (options.collectors.empty()) {
    return absl::InvalidArgumentError("--collector HOST:PORT is required");
  }
  std::unique_ptr<CollectorChannel> c(new CollectorChannel());
  c->endpoints_ = options.collectors;
  c->timeout_ = options.timeout;
  c->tls_server_name_ = options.tls_server_name;

  if (!options.token.empty()) {
    c->token_ = options.token;
  } else if (!options.token_file.empty()) {
    absl::StatusOr<std::string> bytes = io::ReadFileBytes(options.token_file);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file ", options.token_file, ": ", bytes.status().message()));
    }
    std::string_view first = *bytes;
    first = first.substr(0, first.find('\n'));
    absl::string_view line(first.data(), first.size());
    c->token_ = std::string(absl::StripAsciiWhitespace(line));
    if (c->token_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file ", options.token_file, ": first line is empty"));
    }
  } else if (const char* env = std::getenv("OPMAP_TOKEN"); env && *env) {
    c->token_ = env;
  }
  if (!ValidToken(c->token_)) {
    return absl::InvalidArgumentError(
        "the token may hold only printable ASCII characters without spaces");
  }

  if (!options.tls_cert.empty() != !options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!options.tls_cert.empty() && options.tls_ca.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --tls-ca (mutual TLS is TLS first)");
  }
  if (!options.tls_ca.empty()) {
    c->tls_ = true;
    absl::StatusOr<std::string> ca = ReadPem("--tls-ca", options.tls_ca);
    if (!ca.ok()) return ca.status();
    c->ssl_.pem_root_certs = std::move(*ca);
    if (!options.tls_cert.empty()) {
      absl::StatusOr<std::string> cert = ReadPem("--tls-cert", options.tls_cert);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadPem("--tls-key", options.tls_key);
      if (!key.ok()) return key.status();
      c->ssl_.pem_cert_chain = std::move(*cert);
      c->ssl_.pem_private_key = std::move(*key);
    }
  } else if (!options.tls_server_name.empty()) {
    return absl::InvalidArgumentError("--tls-server-name needs --tls-ca");
  }
  c->channels_.resize(c->endpoints_.size());
  return c;
}

std::shared_ptr<grpc::Channel> CollectorChannel::NewChannel(size_t i) const {
  grpc::ChannelArguments args;
  // A channel of its own: a shared subchannel would carry gRPC's reconnect backoff
  // (1 s growing to 120 s) over from an earlier channel to the same address.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // Despite its name, gRPC reads this as the least time a connection attempt is given
  // (TCP, TLS, the server's SETTINGS). At 100 ms a loaded host or a TLS handshake over a
  // long link failed every call with "timed out before receiving SETTINGS frame". A hung
  // endpoint costs this long before the call fails over to the next one.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kConnectTimeoutMs);
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  args.SetMaxSendMessageSize(64 * 1024 * 1024);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (tls_) {
    creds = grpc::SslCredentials(ssl_);
    if (!tls_server_name_.empty()) args.SetSslTargetNameOverride(tls_server_name_);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(endpoints_[i], creds, args);
}

void CollectorChannel::PrepareContext(grpc::ClientContext* context,
                                     absl::Duration deadline) const {
  if (!token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
  if (deadline != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  }
}

grpc::Status CollectorChannel::CallWithFailover(const UnaryCall& call, std::string* endpoint) {
  grpc::Status last;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    std::shared_ptr<grpc::Channel> channel;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!channels_[i]) channels_[i] = NewChannel(i);
      channel = channels_[i];
    }
    grpc::ClientContext context;
    PrepareContext(&context, timeout_);
    last = call(channel, context);
    if (endpoint) *endpoint = endpoints_[i];
    if (last.error_code() != grpc::StatusCode::UNAVAILABLE) return last;
  }
  return last;
}

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "UNKNOWN";
  }
}

std::string StatusLine(const grpc::Status& status) {
  std::string msg = status.error_message();
  for (char& ch : msg) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  return absl::StrCat(StatusCodeName(status.error_code()), ": ", msg);
}

std::string CollectorChannel::TokenFingerprint() const {
  if (token_.empty()) return "";
  static constexpr char kSep[] = "\0opmap-token\0";
  const std::array<unsigned char, 32> digest =
      crypto::Sha256({std::string_view(kSep, sizeof(kSep) - 1), token_});
  std::string hex;
  for (unsigned char c : digest) absl::StrAppend(&hex, absl::Hex(c, absl::kZeroPad2));
  return hex;
}

}  // namespace opmap::client
