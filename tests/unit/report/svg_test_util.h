// Helpers the report rendering tests share: counting substrings, spotting NaN/Inf text.
#ifndef OPMAP_TESTS_UNIT_REPORT_SVG_TEST_UTIL_H_
#define OPMAP_TESTS_UNIT_REPORT_SVG_TEST_UTIL_H_

#include <regex>
#include <string>

namespace opmap::analysis::testing_report {

inline size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// "nan"/"inf" as whole words: a real number that went wrong, not "inference".
inline bool HasNonFinite(const std::string& s) {
  static const std::regex re("(^|[^A-Za-z])-?(nan|inf|infinity)([^A-Za-z]|$)", std::regex::icase);
  return std::regex_search(s, re);
}

}  // namespace opmap::analysis::testing_report

#endif  // OPMAP_TESTS_UNIT_REPORT_SVG_TEST_UTIL_H_
