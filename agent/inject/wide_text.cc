#include "agent/inject/wide_text.h"

namespace opmap::inject {

size_t WideToUtf8(const wchar_t* text, char* out, size_t cap, bool* truncated) {
  *truncated = false;
  size_t n = 0;
  if (text == nullptr) return 0;
  for (const wchar_t* p = text; *p != 0; ++p) {
    uint32_t c = static_cast<uint32_t>(*p);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    char buf[4];
    size_t len;
    if (c < 0x80) {
      buf[0] = static_cast<char>(c);
      len = 1;
    } else if (c < 0x800) {
      buf[0] = static_cast<char>(0xC0 | (c >> 6));
      buf[1] = static_cast<char>(0x80 | (c & 0x3F));
      len = 2;
    } else if (c < 0x10000) {
      buf[0] = static_cast<char>(0xE0 | (c >> 12));
      buf[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      buf[2] = static_cast<char>(0x80 | (c & 0x3F));
      len = 3;
    } else {
      buf[0] = static_cast<char>(0xF0 | (c >> 18));
      buf[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      buf[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      buf[3] = static_cast<char>(0x80 | (c & 0x3F));
      len = 4;
    }
    if (n + len > cap) {
      *truncated = true;
      break;
    }
    for (size_t i = 0; i < len; ++i) out[n + i] = buf[i];
    n += len;
  }
  return n;
}

}  // namespace opmap::inject
