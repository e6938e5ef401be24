#include "agent/daemon/control_protocol.h"

#include <charconv>

#include "absl/strings/str_format.h"
#include "common/text/text_util.h"

namespace opmap::agent {
namespace {

absl::StatusOr<int64_t> Int(std::string_view key, std::string_view v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: '%s' is not an integer in [%d, %d]", key, v, lo, hi));
  }
  return x;
}

}  // namespace

absl::StatusOr<ControlRequest> ParseControlRequest(std::string_view line) {
  std::vector<std::string_view> words = text::Fields(line);
  ControlRequest r;
  if (words.empty()) return absl::InvalidArgumentError("empty request");
  if (words[0] == "status") {
    r.kind = ControlRequest::Kind::kStatus;
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i] != "json") {
        return absl::InvalidArgumentError(absl::StrFormat("status: unknown word '%s'", words[i]));
      }
      r.json = true;
    }
    return r;
  }
  if (words[0] != "attach") {
    return absl::InvalidArgumentError(absl::StrFormat("unknown request '%s'", words[0]));
  }
  r.kind = ControlRequest::Kind::kAttach;
  bool have_pid = false;
  for (size_t i = 1; i < words.size(); ++i) {
    size_t eq = words[i].find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat("attach: '%s' is not key=value", words[i]));
    }
    std::string_view key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
    if (key == "pid") {
      absl::StatusOr<int64_t> pid = Int(key, value, 1, (int64_t{1} << 22));
      if (!pid.ok()) return pid.status();
      r.pid = *pid;
      have_pid = true;
    } else if (key == "duration_ms") {
      absl::StatusOr<int64_t> ms = Int(key, value, 1, 3'600'000);
      if (!ms.ok()) return ms.status();
      r.duration = absl::Milliseconds(*ms);
    } else if (key == "stalls") {
      absl::StatusOr<int64_t> on = Int(key, value, 0, 1);
      if (!on.ok()) return on.status();
      r.stalls = *on == 1;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat("attach: unknown key '%s'", key));
    }
  }
  if (!have_pid) return absl::InvalidArgumentError("attach: pid= is required");
  return r;
}

std::string FormatControlRequest(const ControlRequest& r) {
  if (r.kind == ControlRequest::Kind::kStatus) return r.json ? "status json\n" : "status\n";
  return absl::StrFormat("attach pid=%d duration_ms=%d stalls=%d\n", r.pid,
                         absl::ToInt64Milliseconds(r.duration), r.stalls ? 1 : 0);
}

std::string FormatAnswer(const std::map<std::string, std::string>& fields,
                         std::string_view message) {
  std::string out;
  // outcome first, so a reader sees it even in a truncated line.
  if (auto it = fields.find("outcome"); it != fields.end()) out += "outcome=" + it->second + " ";
  for (const auto& [k, v] : fields) {
    if (k != "outcome") absl::StrAppendFormat(&out, "%s=%s ", k, v);
  }
  out += "message=";
  for (char c : message) out.push_back(c == '\n' ? ' ' : c);
  out.push_back('\n');
  return out;
}

std::map<std::string, std::string> ParseAnswer(std::string_view line) {
  std::map<std::string, std::string> out;
  while (!line.empty()) {
    line = text::Trim(line);
    if (line.starts_with("message=")) {
      out["message"] = std::string(line.substr(8));
      break;
    }
    size_t sp = line.find(' ');
    std::string_view word = line.substr(0, sp);
    size_t eq = word.find('=');
    if (eq != std::string_view::npos) out[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
    if (sp == std::string_view::npos) break;
    line.remove_prefix(sp + 1);
  }
  return out;
}

}  // namespace opmap::agent
