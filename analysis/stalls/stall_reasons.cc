#include "analysis/stalls/stall_reasons.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace opmap::analysis {
namespace {

// Longest first: "smsp__pcsamp_warps_issue_stalled_" must win over shorter forms.
constexpr std::array<std::string_view, 5> kPrefixes = {
    "smsp__average_warps_issue_stalled_", "smsp__pcsamp_warps_issue_stalled_",
    "smsp__warps_issue_stalled_", "warps_issue_stalled_", "stalled_"};
constexpr std::array<std::string_view, 4> kSuffixes = {
    "_per_issue_active.ratio", "_per_warp_active.pct", ".ratio", "_not_issued"};

}  // namespace

std::string_view StallClassName(StallClass c) {
  switch (c) {
    case StallClass::kSelected: return "selected";
    case StallClass::kMemory: return "memory";
    case StallClass::kOnChip: return "on_chip";
    case StallClass::kOther: return "other";
  }
  return "other";
}

std::string NormalizeStallReason(std::string_view name) {
  // absl::string_view is its own type on Debian's Abseil: convert at the boundary.
  std::string s = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(absl::string_view(name.data(), name.size())));
  absl::string_view v = s;
  for (std::string_view p : kPrefixes) {
    if (absl::ConsumePrefix(&v, absl::string_view(p.data(), p.size()))) break;
  }
  // Suffixes can stack ("_not_issued_per_issue_active.ratio"): strip until none applies.
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view x : kSuffixes) {
      if (absl::ConsumeSuffix(&v, absl::string_view(x.data(), x.size()))) stripped = true;
    }
  }
  return std::string(v);
}

StallClass ClassifyStallReason(std::string_view r) {
  if (r == "selected") return StallClass::kSelected;
  if (r == "long_scoreboard" || r == "lg_throttle" || r == "tex_throttle" || r == "drain" ||
      r == "membar" || r == "imc_miss") {
    return StallClass::kMemory;
  }
  if (r == "short_scoreboard" || r == "mio_throttle") return StallClass::kOnChip;
  return StallClass::kOther;
}

}  // namespace opmap::analysis
