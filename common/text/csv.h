// CSV fields (RFC 4180): a field is first made printable (control characters escaped,
// printable.h: a line break becomes `\n`), then quoted, its quotes doubled, when it holds
// a comma or a quote; any other field is written as it is. Every CSV opmap prints goes
// through here, so a name cannot shift a column, break a row or reach a terminal raw.
#ifndef OPMAP_COMMON_TEXT_CSV_H_
#define OPMAP_COMMON_TEXT_CSV_H_

#include <string>
#include <string_view>

#include "common/text/printable.h"

namespace opmap::text {

inline void AppendCsvField(std::string_view raw, std::string* out) {
  const std::string s = Printable(raw);
  if (s.find_first_of(",\"") == std::string::npos) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

inline std::string CsvField(std::string_view s) {
  std::string out;
  AppendCsvField(s, &out);
  return out;
}

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_CSV_H_
