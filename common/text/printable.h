// Names a workload chose (operators, modules, kernels, labels) shown to a person: in a
// terminal table, CSV or Markdown they must not move the cursor, retitle the window,
// recolour the screen, break a row or reorder what is shown. Every such output escapes
// its cells here, so one rule holds everywhere (docs/security.md, "Output"):
//   C0 controls and DEL      \n \r \t, else \xNN         ("\x1b]0;pwned\x07" → \x1b]0;pwned\x07)
//   C1 controls U+0080–U+009F  \u0080 … \u009f
//   bidi and zero-width      \u200b–\u200f, \u202a–\u202e, \u2066–\u2069, \ufeff
//   invalid UTF-8 bytes      \xNN
//   backslash                \\  (so an escape cannot be forged)
// Anything else is kept as it is. JSON and HTML have their own escapes.
#ifndef OPMAP_COMMON_TEXT_PRINTABLE_H_
#define OPMAP_COMMON_TEXT_PRINTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace opmap::text {

std::string Printable(std::string_view s);

// Printable(s) in at most `width` code points (width ≥ 4), "..." ending one that was cut.
std::string PrintableCell(std::string_view s, size_t width);

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_PRINTABLE_H_
