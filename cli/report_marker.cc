#include "cli/report_marker.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace opmap::cli {
namespace {

constexpr absl::string_view kPrefix = "opmap-report ";

bool Plain(unsigned char c) {
  return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '@' || c == '/' ||
         c == '+' || c == '-';
}

std::string Escape(std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (Plain(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string FormatReportMarker(const ReportMarker& m) {
  return absl::StrCat(kPrefix, "kind=", Escape(m.kind), " baseline=", Escape(m.baseline),
                      " candidate=", Escape(m.candidate), " verdict=", Escape(m.verdict));
}

absl::StatusOr<ReportMarker> FindReportMarker(std::string_view text) {
  const size_t at = text.find(std::string_view(kPrefix.data(), kPrefix.size()));
  if (at == std::string_view::npos) {
    return absl::InvalidArgumentError(
        "no 'opmap-report' marker: not a report written by opmap report or opmap analyze "
        "--report");
  }
  ReportMarker m;
  size_t i = at + kPrefix.size();
  for (const char* key : {"kind", "baseline", "candidate", "verdict"}) {
    const std::string want = absl::StrCat(key, "=");
    if (text.substr(i, want.size()) != want) {
      return absl::InvalidArgumentError(
          absl::StrCat("report marker at byte ", at, ": expected '", want, "' at byte ", i));
    }
    i += want.size();
    std::string value;
    while (i < text.size() && (Plain(static_cast<unsigned char>(text[i])) || text[i] == '%')) {
      if (text[i] == '%') {
        if (i + 2 >= text.size() || HexValue(text[i + 1]) < 0 || HexValue(text[i + 2]) < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("report marker: bad escape at byte ", i));
        }
        value.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
        i += 3;
      } else {
        value.push_back(text[i++]);
      }
    }
    if (std::string_view(key) == "kind") m.kind = value;
    if (std::string_view(key) == "baseline") m.baseline = value;
    if (std::string_view(key) == "candidate") m.candidate = value;
    if (std::string_view(key) == "verdict") m.verdict = value;
    if (i < text.size() && text[i] == ' ') ++i;
  }
  if (m.kind != "release" && m.kind != "handoff" && m.kind != "fit") {
    return absl::InvalidArgumentError(absl::StrCat("report marker at byte ", at, ": kind '", m.kind,
                                                   "' is not release, handoff or fit"));
  }
  return m;
}

}  // namespace opmap::cli
