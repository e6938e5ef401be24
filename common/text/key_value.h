// `key = value` text, the format of opmap's config files, workload profiles and hardware
// envelopes: one pair per line, '#' starts a comment, blank lines are skipped, a value may
// be "quoted". Only the split is here; each reader checks its own keys and values.
#ifndef OPMAP_COMMON_TEXT_KEY_VALUE_H_
#define OPMAP_COMMON_TEXT_KEY_VALUE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace opmap::text {

struct KeyValueLine {
  int line = 0;  // 1-based line number in the text
  std::string key;
  std::string value;
};

// The pairs in order. A non-blank line without '=' is an error naming
// "<source>:<line>", so a reader can say which file and line to fix.
absl::StatusOr<std::vector<KeyValueLine>> SplitKeyValueText(std::string_view text,
                                                            std::string_view source);

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_KEY_VALUE_H_
