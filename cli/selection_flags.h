// The flags that select what a collector query or export covers: a time range
// (--since D, or --from NS --to NS) and a resource filter (--host, --model, --revision,
// --label k=v). Shared by `opmap query` and `opmap export`.
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

// Like ParseConnectionFlag: true when argv[*i] was one of these flags (*error set when
// its value is bad).
bool ParseSelectionFlag(const std::vector<std::string>& argv, size_t* i,
                        SelectionFlags* flags, std::string* error);

// The request's range, [start, end) ns CLOCK_REALTIME: --since D gives [now − D, +∞),
// --from/--to as given (either alone leaves that side open: INT64_MIN / INT64_MAX).
// Without any of them *has_range is false: the request carries no range (every time).
// Sets *error when --since is mixed with --from/--to or the range is empty.
bool MakeTimeRange(const SelectionFlags& flags, opmap::v1::TimeRange* range, bool* has_range,
                   std::string* error);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_SELECTION_FLAGS_H_
