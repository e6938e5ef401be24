// What the selection flags (collector_flags.h: --since D, or --from NS --to NS, and
// --host, --model, --revision, --label k=v) select, and the request range they make.
// Shared by `opmap query`, `opmap export` and `opmap report`.
#ifndef OPMAP_CLI_SELECTION_FLAGS_H_
#define OPMAP_CLI_SELECTION_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "opmap/v1/query.pb.h"

namespace opmap::cli {

struct SelectionFlags {
  std::optional<absl::Duration> since;
  std::optional<int64_t> from_ns, to_ns;
  opmap::v1::Filter filter;
};

extern const char kSelectionUsage[];

// The request's range, [start, end) ns CLOCK_REALTIME: --since D gives [now − D, +∞),
// --from/--to as given (either alone leaves that side open: INT64_MIN / INT64_MAX).
// Without any of them *has_range is false: the request carries no range (every time).
// Sets *error when --since is mixed with --from/--to or the range is empty.
bool MakeTimeRange(const SelectionFlags& flags, opmap::v1::TimeRange* range, bool* has_range,
                   std::string* error);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_SELECTION_FLAGS_H_
