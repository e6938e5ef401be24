#include "common/text/printable.h"

#include "absl/strings/str_format.h"
#include "common/text/utf8.h"

namespace opmap::text {
namespace {

// The code point of a valid sequence of `n` bytes at s[i].
char32_t CodePoint(std::string_view s, size_t i, size_t n) {
  auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (n) {
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    case 4:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    default: return b(0);
  }
}

// Code points that reorder or hide text: C1 controls, zero-width and bidi controls, BOM.
bool Hidden(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || (c >= 0x200B && c <= 0x200F) ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF;
}

}  // namespace

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c < 0x80) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: absl::StrAppendFormat(&out, "\\x%02x", c);
      }
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
      ++i;
      continue;
    }
    const char32_t cp = CodePoint(s, i, n);
    if (Hidden(cp)) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<uint32_t>(cp));
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string PrintableCell(std::string_view s, size_t width) {
  std::string p = Printable(s);
  if (width < 4) return p;
  return ShortenToCodePoints(p, width, "...");
}

}  // namespace opmap::text
