// Finds where a JSON document first goes wrong. simdjson's first stage rejects a bad
// document as a whole (unclosed string, bad UTF-8, misplaced structure) without saying
// where; this slow but exact scanner runs only on that error path so the message can
// name a byte offset.
#ifndef OPMAP_ANALYSIS_IMPORT_JSON_ERROR_LOCATOR_H_
#define OPMAP_ANALYSIS_IMPORT_JSON_ERROR_LOCATOR_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace opmap::analysis {

struct JsonErrorLocation {
  bool found = false;  // false: the scanner saw no syntax error
  size_t offset = 0;   // byte offset of the first offending byte (size() for early end)
  std::string what;    // e.g. "unterminated string", "expected ',' or '}'"
};

// Validates RFC 8259 syntax (not UTF-8) iteratively: deep nesting can't overflow the stack.
JsonErrorLocation LocateJsonError(std::string_view json);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_JSON_ERROR_LOCATOR_H_
