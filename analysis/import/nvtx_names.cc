#include "analysis/import/nvtx_names.h"

#include <cstddef>
#include <limits>

namespace opmap::analysis {
namespace {

// Parses "flops=1,bytes=2" (the text between the braces) into `out`; false when any
// entry is not key=digits or a number overflows int64.
bool ParsePayload(std::string_view body, NvtxName& out) {
  if (body.empty()) return false;
  NvtxName parsed;
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view entry = body.substr(0, comma);
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) return false;
    const std::string_view key = entry.substr(0, eq);
    int64_t value = 0;
    for (char c : entry.substr(eq + 1)) {
      if (c < '0' || c > '9') return false;
      if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return false;
      value = value * 10 + (c - '0');
    }
    if (key == "flops") parsed.flops = value;
    if (key == "bytes") parsed.bytes = value;
  }
  out.flops = parsed.flops;
  out.bytes = parsed.bytes;
  return true;
}

// PyTorch emit_nvtx appends ", seq = N", ", op_id = N", ", sizes = [...]" (and older
// versions ", stashed seq = N") after the operator: the operator is what precedes the
// first ", <known key> =".
std::string_view StripEmitNvtx(std::string_view name) {
  static constexpr std::string_view kKeys[] = {", seq = ", ", op_id = ", ", sizes = ",
                                               ", stashed seq = ", ", input_op_ids = "};
  size_t cut = std::string_view::npos;
  for (std::string_view key : kKeys) {
    const size_t at = name.find(key);
    if (at != std::string_view::npos && at < cut) cut = at;
  }
  return cut == std::string_view::npos ? name : name.substr(0, cut);
}

}  // namespace

NvtxName ParseNvtxName(std::string_view text) {
  NvtxName out;
  out.name = text;
  if (!text.empty() && text.back() == '}') {
    const size_t open = text.rfind('{');
    if (open != std::string_view::npos && open > 0 &&
        ParsePayload(text.substr(open + 1, text.size() - open - 2), out)) {
      out.name = text.substr(0, open);
    }
  }
  out.name = StripEmitNvtx(out.name);
  return out;
}

}  // namespace opmap::analysis
