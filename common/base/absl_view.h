// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view), so handing a std::string_view to absl::StrSplit, absl::SimpleAtoi
// and friends needs this conversion. One copy of it, for every folder.
#ifndef OPMAP_COMMON_BASE_ABSL_VIEW_H_
#define OPMAP_COMMON_BASE_ABSL_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace opmap::base {

inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace opmap::base

#endif  // OPMAP_COMMON_BASE_ABSL_VIEW_H_
