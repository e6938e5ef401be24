// `opmap import TRACE... --collector ADDR`: sends Kineto traces to a collector through
// Ingest exactly as an agent would (batches, sequence numbers, acks, resend after a
// reconnect). One capture session per trace, with an id derived from the file's bytes
// and the import options, so re-importing the same file is stored once.
#ifndef OPMAP_CLI_IMPORT_COMMAND_H_
#define OPMAP_CLI_IMPORT_COMMAND_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/crypto/sha256.h"

namespace opmap::cli {

// Returns the process exit code: 0 every batch stored; 2 bad usage, bad input, refused
// by the collector or a batch rejected; 1 collector unreachable or internal error.
int RunImport(const std::vector<std::string>& args);

// The session id `opmap import` gives a trace: "import-" + the first 32 hex digits of
// SHA-256(file bytes, then "\0opmap-import\0" + `options`), where `options` is the
// canonical text of everything that changes the batches (version, --batch-records and
// the resource flags).
std::string ImportSessionId(std::string_view file_bytes, std::string_view options);
// The same from a digest that has been fed the file's bytes (a file read in pieces).
std::string ImportSessionIdOf(crypto::Sha256Stream& file_digest, std::string_view options);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_IMPORT_COMMAND_H_
