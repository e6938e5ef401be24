#include "cli/collector_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/base/absl_view.h"

namespace opmap::cli {

absl::Status SetCollectors(std::string_view list, ConnectionFlags* flags) {
  bool any = false;
  for (absl::string_view part : absl::StrSplit(base::AbslView(list), ',', absl::SkipWhitespace())) {
    std::string addr(absl::StripAsciiWhitespace(part));
    if (addr.find(':') == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", addr, "' is not HOST:PORT"));
    }
    flags->collectors.push_back(addr);
    any = true;
  }
  if (!any) return absl::InvalidArgumentError("needs at least one HOST:PORT");
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
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return absl::InvalidArgumentError("needs KEY=VALUE");
    (*flags->filter.mutable_labels())[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return absl::OkStatus();
}

}  // namespace opmap::cli
