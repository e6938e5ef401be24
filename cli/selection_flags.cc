#include "cli/selection_flags.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "cli/connection_flags.h"

namespace opmap::cli {

const char kSelectionUsage[] = R"(
selection (default: everything stored):
  --since D             events that start within the last D, e.g. 15m, 1h, 7d
  --from NS --to NS     events that start in [NS, NS), ns since the Unix epoch
  --host H              Resource.host equals H
  --model M             Resource.model_name equals M
  --revision R          Resource.model_revision equals R
  --label k=v           the job label k equals v; repeatable (all must hold)
)";

bool MakeTimeRange(const SelectionFlags& flags, opmap::v1::TimeRange* range, bool* has_range,
                   std::string* error) {
  *has_range = flags.since || flags.from_ns || flags.to_ns;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (flags.since && (flags.from_ns || flags.to_ns)) {
    *error = "--since and --from/--to exclude each other";
    return false;
  }
  if (flags.since) {
    range->set_start_ns(absl::ToUnixNanos(absl::Now() - *flags.since));
    range->set_end_ns(kMax);
    return true;
  }
  range->set_start_ns(flags.from_ns.value_or(kMin));
  range->set_end_ns(flags.to_ns.value_or(kMax));
  if (range->end_ns() <= range->start_ns()) {
    *error = "--to must be after --from";
    return false;
  }
  return true;
}

}  // namespace opmap::cli
