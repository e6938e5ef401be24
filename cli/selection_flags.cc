#include "cli/selection_flags.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "cli/grpc_client.h"

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

bool ParseSelectionFlag(const std::vector<std::string>& argv, size_t* i,
                        SelectionFlags* flags, std::string* error) {
  const std::string& a = argv[*i];
  auto value = [&]() -> const std::string* {
    if (*i + 1 >= argv.size()) {
      *error = a + " needs a value";
      return nullptr;
    }
    return &argv[++*i];
  };
  if (a == "--since") {
    const std::string* v = value();
    absl::Duration d;
    if (v && (!ParseDurationFlag(*v, &d) || d <= absl::ZeroDuration())) {
      *error = "--since needs a positive duration such as 15m, 1h or 7d";
    } else if (v) {
      flags->since = d;
    }
    return true;
  }
  if (a == "--from" || a == "--to") {
    const std::string* v = value();
    int64_t ns;
    if (v && !absl::SimpleAtoi(*v, &ns)) {
      *error = a + " needs an integer: ns since the Unix epoch";
    } else if (v) {
      (a == "--from" ? flags->from_ns : flags->to_ns) = ns;
    }
    return true;
  }
  if (a == "--host" || a == "--model" || a == "--revision") {
    const std::string* v = value();
    if (!v) return true;
    if (a == "--host") flags->filter.set_host(*v);
    if (a == "--model") flags->filter.set_model(*v);
    if (a == "--revision") flags->filter.set_revision(*v);
    return true;
  }
  if (a == "--label") {
    const std::string* v = value();
    if (!v) return true;
    size_t eq = v->find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "--label needs KEY=VALUE";
    } else {
      (*flags->filter.mutable_labels())[v->substr(0, eq)] = v->substr(eq + 1);
    }
    return true;
  }
  return false;
}

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
