#include "common/text/key_value.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/text/text_util.h"

namespace opmap::text {

absl::StatusOr<std::vector<KeyValueLine>> SplitKeyValueText(std::string_view text,
                                                            std::string_view source) {
  std::vector<KeyValueLine> out;
  int line_no = 0;
  for (std::string_view line : Lines(text)) {
    ++line_no;
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: expected `key = value`", source, line_no));
    }
    std::string_view value = Trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    out.push_back({line_no, std::string(Trim(line.substr(0, eq))), std::string(value)});
  }
  return out;
}

}  // namespace opmap::text
