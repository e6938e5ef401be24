// CSV fields (RFC 4180): a field holding a comma, a quote or a line break is quoted, its
// quotes doubled; any other field is written as it is. Every CSV opmap prints goes
// through here, so a name that carries a comma cannot shift a column.
#ifndef OPMAP_COMMON_TEXT_CSV_H_
#define OPMAP_COMMON_TEXT_CSV_H_

#include <string>
#include <string_view>

namespace opmap::text {

inline void AppendCsvField(std::string_view s, std::string* out) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
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
