// UTF-8 validation of one sequence (RFC 3629: no overlongs, surrogates or code points
// past U+10FFFF). Kernel and range names come from programs we don't control.
#ifndef OPMAP_COMMON_TEXT_UTF8_H_
#define OPMAP_COMMON_TEXT_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace opmap::text {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = s.size() - i;
  if (c < 0x80) return 1;
  auto cont = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    unsigned char c1 = byte(i + 1);
    if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c == 0xED && c1 > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    unsigned char c1 = byte(i + 1);
    if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xF4 && c1 > 0x8F) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

// Characters a terminal or an SVG text run shows for s: every byte that does not continue
// a sequence (so an invalid byte counts as one, as its U+FFFD replacement would).
inline size_t Utf8CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// s cut to at most `max` code points (as Utf8CodePoints counts them), the last of them
// `ellipsis` when it was cut ("…" for plots, "..." for terminals); never inside a UTF-8
// sequence. The one way text is shortened for display.
inline std::string ShortenToCodePoints(std::string_view s, size_t max, std::string_view ellipsis) {
  if (Utf8CodePoints(s) <= max) return std::string(s);
  const size_t keep = max > Utf8CodePoints(ellipsis) ? max - Utf8CodePoints(ellipsis) : 0;
  size_t n = 0, at = 0;
  for (; at < s.size(); ++at) {
    if ((static_cast<unsigned char>(s[at]) & 0xC0) != 0x80 && n++ == keep) break;
  }
  std::string out(s.substr(0, at));
  out.append(ellipsis);
  return out;
}

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_UTF8_H_
