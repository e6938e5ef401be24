// wchar_t → UTF-8 for NVTX's W entry points (wchar_t is UTF-32 on Linux). Invalid code
// points (surrogates, > U+10FFFF) become U+FFFD. Allocation-free: it runs inside hooks.
#ifndef OPMAP_AGENT_INJECT_WIDE_TEXT_H_
#define OPMAP_AGENT_INJECT_WIDE_TEXT_H_

#include <cstddef>
#include <cstdint>

namespace opmap::inject {

// Converts the NUL-terminated `text` into `out` (at most `cap` bytes, never a partial
// character) and returns the bytes written. `*truncated` is set when the text did not fit.
size_t WideToUtf8(const wchar_t* text, char* out, size_t cap, bool* truncated);

}  // namespace opmap::inject

#endif  // OPMAP_AGENT_INJECT_WIDE_TEXT_H_
