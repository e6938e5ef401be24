// Every `opmap` subcommand parses its command line with the daemons' table-driven parser
// (common/config/flag_config.h: one ConfigKey per flag, setters that return a Status), so
// the grammar, the duration syntax and the error wording are the same everywhere. This
// header adds the setters the subcommands share and the one place that turns a parse into
// help text or exit code 2; collector_flags.h has the connection and selection groups.
#ifndef OPMAP_CLI_COMMAND_FLAGS_H_
#define OPMAP_CLI_COMMAND_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/config/flag_config.h"

namespace opmap::cli {

template <typename C>
using FlagKeys = std::vector<config::ConfigKey<C>>;

// A setter for a std::string field that refuses an empty value.
template <typename C>
auto TextField(std::string C::*field) {
  return config::StringSetter(field);
}
// A setter for a boolean flag (`--quiet`: the parser passes "true").
template <typename C>
auto SwitchField(bool C::*field) {
  return [field](std::string_view, C* c) {
    c->*field = true;
    return absl::OkStatus();
  };
}

// An integer flag in [min, max] (`--top N`, `--min-samples N`).
absl::Status ParseIntIn(std::string_view v, int64_t min, int64_t max, int64_t* out);
template <typename C, typename Int>
auto IntField(Int C::*field, int64_t min, int64_t max) {
  return [field, min, max](std::string_view v, C* c) {
    int64_t n = 0;
    if (absl::Status s = ParseIntIn(v, min, max, &n); !s.ok()) return s;
    c->*field = static_cast<Int>(n);
    return absl::OkStatus();
  };
}

// `--format table|json|csv` for a command whose Format enum has kTable, kJson and kCsv.
absl::Status UnknownFormat(std::string_view v);
template <typename C, typename Format>
auto TableJsonCsvField(Format C::*field) {
  return [field](std::string_view v, C* c) {
    if (v == "table") {
      c->*field = Format::kTable;
    } else if (v == "json") {
      c->*field = Format::kJson;
    } else if (v == "csv") {
      c->*field = Format::kCsv;
    } else {
      return UnknownFormat(v);
    }
    return absl::OkStatus();
  };
}

// "COMMAND: MESSAGE" and "run 'COMMAND --help' for usage" on stderr; returns 2.
int UsageFailure(std::string_view command, const std::string& message);
int PrintHelp(const std::string& help);  // on stdout; returns 0

// Parses `argv` for `command` ("opmap export"). nullopt: go on. Otherwise the exit code
// to return: 0 after printing `help` for --help, 2 after printing the error and a pointer
// to --help on stderr.
template <typename C>
std::optional<int> ParseCommandFlags(std::string_view command, const std::vector<std::string>& argv,
                                     const FlagKeys<C>& keys, const config::CommandShape& shape,
                                     const std::string& help, C* flags,
                                     std::vector<std::string>* operands) {
  absl::StatusOr<bool> wants_help =
      config::ParseCommandLine(argv, keys, shape, flags, operands);
  if (!wants_help.ok()) return UsageFailure(command, std::string(wants_help.status().message()));
  if (*wants_help) return PrintHelp(help);
  return std::nullopt;
}

}  // namespace opmap::cli

#endif  // OPMAP_CLI_COMMAND_FLAGS_H_
