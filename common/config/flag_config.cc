#include "common/config/flag_config.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "common/text/text_util.h"

namespace opmap::config {

absl::StatusOr<bool> ParseBool(std::string_view v) {
  std::string s = text::Lower(v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a boolean (true/false)", v));
}

namespace {

// A whole decimal int64 >= `min`; `what` names the expectation in the error.
absl::StatusOr<int64_t> ParseIntAtLeast(std::string_view v, int64_t min, std::string_view what) {
  int64_t x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x < min) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not %s", v, what));
  }
  return x;
}

}  // namespace

absl::StatusOr<int64_t> ParsePositive(std::string_view v) {
  return ParseIntAtLeast(v, 1, "a positive integer");
}

absl::StatusOr<int64_t> ParseCount(std::string_view v) {
  return ParseIntAtLeast(v, 0, "a count >= 0");
}

namespace {

// The one duration grammar (flag_config.h). Sums terms in absl::Duration, which
// saturates at ±infinity instead of overflowing; an infinite total is refused.
absl::StatusOr<absl::Duration> ParseDurationText(std::string_view text, bool allow_zero) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid duration '%s' (expected a %sduration such as 24h, 90m, 1.5s, 500ms, 7d, 1h30m)",
        text, allow_zero ? "" : "positive "));
  };
  std::string_view s = text::Trim(text);
  if (s.empty()) return bad();
  if (allow_zero && s == "0") return absl::ZeroDuration();
  absl::Duration total = absl::ZeroDuration();
  while (!s.empty()) {
    // Digits and at most one '.', never a sign, "inf" or an exponent.
    size_t n = 0;
    bool dot = false, digit = false;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || (s[n] == '.' && !dot))) {
      dot |= s[n] == '.';
      digit |= s[n] != '.';
      ++n;
    }
    if (!digit) return bad();
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + n, v);
    if (ec != std::errc() || p != s.data() + n) return bad();
    s.remove_prefix(n);
    static constexpr struct {
      std::string_view unit;
      absl::Duration (*make)(double);
    } kUnits[] = {
        {"ns", [](double x) { return absl::Nanoseconds(x); }},
        {"us", [](double x) { return absl::Microseconds(x); }},
        {"ms", [](double x) { return absl::Milliseconds(x); }},
        {"s", [](double x) { return absl::Seconds(x); }},
        {"m", [](double x) { return absl::Minutes(x); }},
        {"h", [](double x) { return absl::Hours(x); }},
        {"d", [](double x) { return absl::Hours(x) * 24; }},
    };
    bool matched = false;
    for (const auto& u : kUnits) {  // "ms" before "m", "ns" and "us" before "s"
      if (!s.starts_with(u.unit)) continue;
      total += u.make(v);
      s.remove_prefix(u.unit.size());
      matched = true;
      break;
    }
    if (!matched) return bad();
  }
  if (total == absl::InfiniteDuration()) return bad();
  if (allow_zero ? total < absl::ZeroDuration() : total <= absl::ZeroDuration()) return bad();
  return total;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseDuration(std::string_view text) {
  return ParseDurationText(text, /*allow_zero=*/false);
}

absl::StatusOr<absl::Duration> ParseDurationOrZero(std::string_view text) {
  return ParseDurationText(text, /*allow_zero=*/true);
}

absl::StatusOr<int64_t> ParseBytes(std::string_view text) {
  std::string_view s = text::Trim(text);
  int64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  std::string unit = text::Lower(s.substr(p - s.data()));
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  if (unit == "k" || unit == "kib") shift = 10;
  if (unit == "m" || unit == "mib") shift = 20;
  if (unit == "g" || unit == "gib") shift = 30;
  if (ec != std::errc() || p == s.data() || n <= 0 || shift < 0 ||
      n > (int64_t{1} << (62 - shift))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid size '%s' (expected bytes, or a number with KiB, MiB or GiB)", text));
  }
  return n << shift;
}

std::vector<std::string> SplitCommaList(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view part : text::Lines(list, ',')) {
    const std::string_view item = text::Trim(part);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseAddressList(std::string_view list) {
  std::vector<std::string> out;
  for (const std::string& addr : SplitCommaList(list)) {
    std::string host;
    int port = 0;
    if (!SplitHostPort(addr, &host, &port).ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("'%s' is not HOST:PORT", addr));
    }
    out.emplace_back(addr);
  }
  if (out.empty()) return absl::InvalidArgumentError("needs at least one HOST:PORT");
  return out;
}

absl::StatusOr<std::pair<std::string, std::string>> ParseLabel(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError("needs KEY=VALUE");
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

absl::Status SplitHostPort(std::string_view address, std::string* host, int* port) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("invalid address '%s': %s (expected HOST:PORT)", address, why));
  };
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view h = address.substr(0, colon);
  std::string_view p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return bad("an IPv6 host must be in brackets, e.g. [::1]:7700");
  }
  if (h.empty()) return bad("no host");
  int x = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), x);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || x < 0 || x > 65535) {
    return bad("port must be 0..65535");
  }
  *host = std::string(h);
  *port = x;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("--config: cannot read %s", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace internal {

absl::StatusOr<SplitArgs> SplitFlags(
    const std::vector<std::string>& args,
    const std::function<std::optional<bool>(std::string_view)>& is_boolean,
    const CommandShape& shape) {
  SplitArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      return out;
    }
    std::string short_flag;  // "-q" → "--quiet", from the shape's short names
    if (arg.size() == 2 && arg[0] == '-' && arg[1] != '-') {
      for (const auto& [letter, long_name] : shape.short_names) {
        if (letter == arg[1]) short_flag = "--" + std::string(long_name);
      }
      if (short_flag.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat("unknown flag %s (see --help)", arg));
      }
      arg = short_flag;
    }
    if (!arg.starts_with("--")) {
      if (shape.operands) {
        out.operands.emplace_back(arg);
        continue;
      }
      return absl::InvalidArgumentError(absl::StrFormat("unexpected argument '%s'", arg));
    }
    std::string_view name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string_view::npos) {
      value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    std::optional<bool> boolean =
        name == "config" && shape.config_file ? std::optional<bool>(false) : is_boolean(name);
    if (!boolean) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag --%s (see --help)", name));
    }
    if (!value) {
      if (*boolean) {
        value = "true";
      } else {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(absl::StrFormat("--%s needs a value", name));
        }
        value = args[++i];
      }
    }
    if (name == "config" && shape.config_file) {
      if (value->empty()) return absl::InvalidArgumentError("--config: empty value");
      out.config_file = *value;
      continue;
    }
    out.flags.emplace_back(std::string(name), std::move(*value));
  }
  return out;
}

void AppendHelpLine(std::string_view flag, std::string_view hint, std::string_view help,
                    std::string* out) {
  std::string left = absl::StrFormat("  --%s%s%s", flag, hint.empty() ? "" : " ", hint);
  absl::StrAppendFormat(out, "%-30s %s\n", left, help);
}

}  // namespace internal
}  // namespace opmap::config
