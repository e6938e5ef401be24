#include "cli/command_flags.h"

#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"


namespace opmap::cli {

absl::Status ParseIntIn(std::string_view v, int64_t min, int64_t max, int64_t* out) {
  if (!absl::SimpleAtoi(std::string(v), out) || *out < min || *out > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an integer from ", min, " to ", max, ", got '", std::string(v), "'"));
  }
  return absl::OkStatus();
}

absl::Status UnknownFormat(std::string_view v) {
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format '", std::string(v), "' (expected table, json or csv)"));
}

int UsageFailure(std::string_view command, const std::string& message) {
  std::cerr << command << ": " << message << "\nrun '" << command << " --help' for usage\n";
  return 2;
}

int PrintHelp(const std::string& help) {
  std::cout << help;
  return 0;
}

}  // namespace opmap::cli
