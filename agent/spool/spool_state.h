// The spool's small state file ("spool.state"), replaced atomically (write a temp file,
// fsync, rename), so a crash leaves either the old or the new one:
//   - per session, the highest seq the collector acked: recovery skips those records in
//     segments that are only partly acked;
//   - the drop counters, so that drops are still reported after a restart.
//
//   u32 magic "OPST" | u32 version (1) | u32 crc32 of what follows |
//   u64 dropped_batches | u64 dropped_bytes | u32 n | n × (u32 len, id bytes, u64 seq)
#ifndef OPMAP_AGENT_SPOOL_SPOOL_STATE_H_
#define OPMAP_AGENT_SPOOL_SPOOL_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace opmap::agent {

struct SpoolState {
  uint64_t dropped_batches = 0;
  uint64_t dropped_bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> acked;  // (session_id, acked seq)
};

std::string EncodeSpoolState(const SpoolState& state);
// DataLoss, naming the byte offset, when the bytes are not a whole valid state.
absl::StatusOr<SpoolState> DecodeSpoolState(absl::string_view bytes);

}  // namespace opmap::agent

#endif  // OPMAP_AGENT_SPOOL_SPOOL_STATE_H_
