// Small std::string_view text helpers for the config and token-file parsers. (Debian's Abseil has
// its own absl::string_view, so absl::StrSplit & co. don't take std::string_view.)
#ifndef OPMAP_COMMON_TEXT_TEXT_UTIL_H_
#define OPMAP_COMMON_TEXT_TEXT_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

namespace opmap::text {

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits on `sep`, keeping empty pieces ("a\n\nb" -> "a", "", "b").
inline std::vector<std::string_view> Lines(std::string_view s, char sep = '\n') {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = s.find(sep);
    if (at == std::string_view::npos) {
      out.push_back(s);
      return out;
    }
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
}

// Whitespace-separated fields, empty ones skipped.
inline std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// ASCII case ignored; no allocation (request-range names are compared per range).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// `s` with the value of every `password=` (up to the next '&') replaced by "***": what
// errors and logs show of a URL or an argument that may carry one.
inline std::string RedactPasswords(std::string_view s) {
  std::string out(s);
  for (size_t at = out.find("password="); at != std::string::npos;
       at = out.find("password=", at + 9)) {
    const size_t start = at + 9;
    const size_t end = out.find('&', start);
    out.replace(start, end == std::string::npos ? std::string::npos : end - start, "***");
  }
  return out;
}

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_TEXT_UTIL_H_
