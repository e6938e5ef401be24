// Finds where a JSON object or array ends, 64 bytes at a time: quotes and backslash
// escapes are tracked with bit masks (as in simdjson's first stage) so that brackets in
// strings don't count, and brackets must pair up ('{' with '}', '[' with ']'). Nothing
// else is checked: the caller parses what it finds. Resumable across windows of the text.
#ifndef OPMAP_ANALYSIS_IMPORT_JSON_BRACKET_MATCHER_H_
#define OPMAP_ANALYSIS_IMPORT_JSON_BRACKET_MATCHER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace opmap::analysis {

class BracketMatcher {
 public:
  // Bytes Scan may read (never use) past the end of its window.
  static constexpr size_t kReadAhead = 64;

  enum class Result {
    kClosed,    // *at: one past the closing bracket
    kNeedMore,  // the window ended first (when final: the text did)
    kMismatch,  // *at: a closing bracket that doesn't match, or one too many
  };

  // Matches the container whose opening bracket is at `begin` (an offset in the text).
  void Start(uint64_t begin);

  // `data` holds the text [base, base + size) from at least the last stopping point on;
  // `final`: nothing follows. Offsets are in the whole text.
  Result Scan(const char* data, size_t size, uint64_t base, bool final, uint64_t* at);

 private:
  uint64_t pos_ = 0;          // next byte to classify (a block start)
  uint64_t in_string_ = 0;    // all ones when the last block ended inside a string
  uint64_t escaped_ = 0;      // 1 when the last block ended with an unpaired backslash
  std::vector<char> stack_;   // open brackets
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_JSON_BRACKET_MATCHER_H_
