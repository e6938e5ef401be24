#include "cli/collector_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/base/absl_view.h"
#include "common/config/flag_config.h"

namespace opmap::cli {

absl::Status SetCollectors(std::string_view list, ConnectionFlags* flags) {
  absl::StatusOr<std::vector<std::string>> addresses = config::ParseAddressList(list);
  if (!addresses.ok()) return addresses.status();
  for (std::string& a : *addresses) flags->collectors.push_back(std::move(a));
  return absl::OkStatus();
}

absl::Status SetTimeout(std::string_view text, ConnectionFlags* flags) {
  flags->timeout_given = true;
  if (!ParseDurationFlag(std::string(text), &flags->timeout) ||
      flags->timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("needs a positive duration such as 30s or 2m");
  }
  return absl::OkStatus();
}

absl::Status SetSelection(std::string_view flag, std::string_view value, SelectionFlags* flags) {
  const std::string v(value);
  if (flag == "since") {
    absl::Duration d;
    if (!ParseDurationFlag(v, &d) || d <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("needs a positive duration such as 15m, 1h or 7d");
    }
    flags->since = d;
  } else if (flag == "from" || flag == "to") {
    int64_t ns;
    if (!absl::SimpleAtoi(v, &ns)) {
      return absl::InvalidArgumentError("needs an integer: ns since the Unix epoch");
    }
    (flag == "from" ? flags->from_ns : flags->to_ns) = ns;
  } else if (flag == "host") {
    flags->filter.set_host(v);
  } else if (flag == "model") {
    flags->filter.set_model(v);
  } else if (flag == "revision") {
    flags->filter.set_revision(v);
  } else if (flag == "label") {
    absl::StatusOr<std::pair<std::string, std::string>> label = config::ParseLabel(v);
    if (!label.ok()) return label.status();
    (*flags->filter.mutable_labels())[label->first] = label->second;
  }
  return absl::OkStatus();
}

}  // namespace opmap::cli
