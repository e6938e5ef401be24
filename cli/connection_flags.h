// The CLI's side of a collector connection: the --collector / --token / --tls-* /
// --timeout flags every collector command takes, parsed into client::ChannelOptions
// (client/collector_channel.h), and how a failed call becomes an exit code.
#ifndef OPMAP_CLI_GRPC_CLIENT_H_
#define OPMAP_CLI_GRPC_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/collector_channel.h"

namespace opmap::cli {

using client::CollectorChannel;
using client::StatusCodeName;
using client::StatusLine;

struct ConnectionFlags : client::ChannelOptions {
  bool timeout_given = false;  // --timeout was on the command line
};

// The options block every collector command prints in its usage text.
extern const char kConnectionUsage[];

// config::ParseDurationOrZero (common/config/flag_config.h: the grammar the daemons use
// too): "30s", "1.5m", "2h", "500ms", "1d", "0". False when bad.
bool ParseDurationFlag(const std::string& text, absl::Duration* out);

// The CLI exit code for a failed call: 2 for UNAUTHENTICATED, PERMISSION_DENIED and
// INVALID_ARGUMENT (the caller must change something), 1 for everything else
// (UNAVAILABLE: the collector is down or unreachable).
int ExitCodeFor(const grpc::Status& status);
// A hint appended to auth errors when no token was given, else "".
std::string AuthHint(const grpc::Status& status, const CollectorChannel& client);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_GRPC_CLIENT_H_
