// Flags plus an optional config file of `key = value` lines with the same keys as the
// flags (without the leading "--"), shared by opmap-collector and opmap-agent so both
// parse, validate and explain settings the same way. Flags override the file. Errors name
// the flag, or the file and line.
//
//   const std::vector<ConfigKey<MyConfig>> keys = {
//       {"listen", false, "HOST:PORT", "gRPC address", StringSetter(&MyConfig::listen)}};
//   ASSIGN_OR_RETURN(bool help, ParseArgsInto(argv, keys, &config, &config.config_file));
#ifndef OPMAP_COMMON_CONFIG_FLAG_CONFIG_H_
#define OPMAP_COMMON_CONFIG_FLAG_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/text/key_value.h"
#include "common/text/text_util.h"

namespace opmap::config {

template <typename Config>
struct ConfigKey {
  std::string_view name;        // flag without "--", and config-file key
  bool boolean = false;         // a flag that takes no value ("--x" means true)
  std::string_view value_hint;  // "FILE", "HOST:PORT", ... for --help
  std::string_view help;
  std::function<absl::Status(std::string_view value, Config*)> set;
};

absl::StatusOr<bool> ParseBool(std::string_view v);
absl::StatusOr<int64_t> ParsePositive(std::string_view v);
// A count that may be 0 ("none"): a decimal integer >= 0.
absl::StatusOr<int64_t> ParseCount(std::string_view v);
// The one grammar for every duration opmap reads, in flags and config files, daemons and
// CLI alike: a sum of NUMBER·UNIT terms, NUMBER decimal (1, 1.5, .5), UNIT ns, us, ms, s,
// m, h or d: "24h", "90m", "1.5s", "500ms", "1h30m", "7d". ParseDuration wants > 0;
// ParseDurationOrZero also takes "0" and "0s".
absl::StatusOr<absl::Duration> ParseDuration(std::string_view text);
absl::StatusOr<absl::Duration> ParseDurationOrZero(std::string_view text);
// "1GiB", "64MiB", "512KiB", "1048576" (bytes), > 0.
absl::StatusOr<int64_t> ParseBytes(std::string_view text);
// "host:port" / "[v6]:port"; the port must be 0..65535.
absl::Status SplitHostPort(std::string_view address, std::string* host, int* port);
// The one comma-list grammar of every flag that takes a list (--group-by, --quantiles,
// --arms, --engines, collector addresses): items separated by commas, the spaces around
// each trimmed, empty items ignored. "a, b,,c " -> {"a", "b", "c"}.
std::vector<std::string> SplitCommaList(std::string_view list);
// "h1:p1, h2:p2": the addresses in order (SplitCommaList), each HOST:PORT (not resolved);
// at least one. Every list of collectors (opmap's --collector, the agent's `collector`).
absl::StatusOr<std::vector<std::string>> ParseAddressList(std::string_view list);
// "KEY=VALUE" (a label): KEY non-empty, VALUE may be empty or hold '='.
absl::StatusOr<std::pair<std::string, std::string>> ParseLabel(std::string_view text);
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

// Setters for the common field types.
template <typename Config>
auto StringSetter(std::string Config::*field, bool allow_empty = false) {
  return [field, allow_empty](std::string_view v, Config* c) -> absl::Status {
    if (v.empty() && !allow_empty) return absl::InvalidArgumentError("empty value");
    c->*field = std::string(v);
    return absl::OkStatus();
  };
}
template <typename Config, typename T>
auto ParsedSetter(T Config::*field, absl::StatusOr<T> (*parse)(std::string_view)) {
  return [field, parse](std::string_view v, Config* c) -> absl::Status {
    absl::StatusOr<T> x = parse(v);
    if (!x.ok()) return x.status();
    c->*field = *x;
    return absl::OkStatus();
  };
}

// The shape of a command line beyond its flags, for commands with operands (`opmap
// analyze TRACE...`). Daemons have none: their argv is flags and --config only.
struct CommandShape {
  bool config_file = true;   // --config FILE is understood
  bool operands = false;     // arguments that are not flags are kept in order
  std::vector<std::pair<char, std::string_view>> short_names;  // {'q', "quiet"}: -q
};

namespace internal {
// argv → (flag name, value) pairs. `is_boolean(name)` is nullopt for an unknown flag.
struct SplitArgs {
  bool help = false;
  std::string config_file;
  std::vector<std::pair<std::string, std::string>> flags;
  std::vector<std::string> operands;
};
absl::StatusOr<SplitArgs> SplitFlags(
    const std::vector<std::string>& args,
    const std::function<std::optional<bool>(std::string_view)>& is_boolean,
    const CommandShape& shape = {});
void AppendHelpLine(std::string_view flag, std::string_view hint, std::string_view help,
                    std::string* out);
}  // namespace internal

template <typename Config>
const ConfigKey<Config>* FindKey(const std::vector<ConfigKey<Config>>& keys,
                                 std::string_view name) {
  for (const ConfigKey<Config>& k : keys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// `status` with every `password=` value in its message replaced by "***": flag and
// config errors quote the values they refuse, and a value may be a URL with a password.
inline absl::Status Redacted(const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), text::RedactPasswords(std::string_view(
                                          status.message().data(), status.message().size())));
}

// Applies a config file's text to `config`. `source` names the file in errors.
template <typename Config>
absl::Status ApplyConfigText(std::string_view text, std::string_view source,
                             const std::vector<ConfigKey<Config>>& keys, Config* config) {
  absl::StatusOr<std::vector<text::KeyValueLine>> lines =
      text::SplitKeyValueText(text, source);
  if (!lines.ok()) return lines.status();
  for (const text::KeyValueLine& l : *lines) {
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", source, l.line, what));
    };
    if (l.key == "config") return error("`config` cannot be set in a config file");
    const ConfigKey<Config>* k = FindKey(keys, l.key);
    if (k == nullptr) return error(absl::StrFormat("unknown key '%s'", l.key));
    if (absl::Status s = k->set(l.value, config); !s.ok()) {
      return error(absl::StrFormat("%s: %s", l.key, s.message()));
    }
  }
  return absl::OkStatus();
}

// Parses argv (argv[0] skipped): `--flag value` or `--flag=value`; boolean flags take no
// value; `--config FILE` (when the shape has it) is read first and the other flags
// applied over it, in order, each through its key's setter (a repeatable flag's setter
// appends). Operands, when the shape allows them, land in `operands`. Returns true when
// --help/-h was given (nothing else is applied then). Errors name the flag.
template <typename Config>
absl::StatusOr<bool> ParseCommandLine(const std::vector<std::string>& args,
                                      const std::vector<ConfigKey<Config>>& keys,
                                      const CommandShape& shape, Config* config,
                                      std::vector<std::string>* operands,
                                      std::string* config_file = nullptr) {
  absl::StatusOr<internal::SplitArgs> split = internal::SplitFlags(
      args,
      [&](std::string_view name) -> std::optional<bool> {
        const ConfigKey<Config>* k = FindKey(keys, name);
        if (k == nullptr) return std::nullopt;
        return k->boolean;
      },
      shape);
  if (!split.ok()) return split.status();
  if (split->help) return true;
  if (!split->config_file.empty()) {
    absl::StatusOr<std::string> text = ReadConfigFile(split->config_file);
    if (!text.ok()) return text.status();
    if (absl::Status s = ApplyConfigText(*text, split->config_file, keys, config); !s.ok()) {
      return s;
    }
    if (config_file != nullptr) *config_file = split->config_file;
  }
  for (const auto& [name, value] : split->flags) {
    if (absl::Status s = FindKey(keys, name)->set(value, config); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("--%s: %s", name, s.message()));
    }
  }
  if (operands != nullptr) *operands = std::move(split->operands);
  return false;
}

// A daemon's argv: flags and --config only (the file is read first, flags override it).
template <typename Config>
absl::StatusOr<bool> ParseArgsInto(const std::vector<std::string>& args,
                                   const std::vector<ConfigKey<Config>>& keys, Config* config,
                                   std::string* config_file) {
  return ParseCommandLine(args, keys, CommandShape{}, config, nullptr, config_file);
}

// "  --flag HINT    help" lines for every key, plus --config (for a shape that takes one)
// and --help.
template <typename Config>
std::string FlagHelp(const std::vector<ConfigKey<Config>>& keys,
                     const CommandShape& shape = CommandShape{}) {
  std::string out;
  if (shape.config_file) {
    internal::AppendHelpLine("config", "FILE", "read `key = value` settings from FILE", &out);
  }
  for (const ConfigKey<Config>& k : keys) internal::AppendHelpLine(k.name, k.value_hint, k.help, &out);
  internal::AppendHelpLine("help", "", "print this help", &out);
  return out;
}

}  // namespace opmap::config

#endif  // OPMAP_COMMON_CONFIG_FLAG_CONFIG_H_
