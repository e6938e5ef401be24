#include "analysis/import/csv_records.h"

#include "absl/strings/str_format.h"

namespace opmap::analysis {

absl::StatusOr<CsvRecords> ParseCsvRecords(std::string_view text) {
  CsvRecords out;
  size_t i = 0;
  const size_t n = text.size();
  int64_t line = 1;
  auto skip_line = [&] {
    while (i < n && text[i] != '\n') ++i;
    if (i < n) ++i;
    ++line;
  };
  while (i < n) {
    // At a record start: skip blank lines and the tool's "==PROF==" chatter.
    size_t eol = text.find('\n', i);
    std::string_view rest = text.substr(i, (eol == std::string_view::npos ? n : eol) - i);
    if (rest.starts_with("==")) {
      ++out.skipped_tool_lines;
      skip_line();
      continue;
    }
    if (rest.find_first_not_of(" \t\r") == std::string_view::npos) {
      skip_line();
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool done = false;
    while (!done) {
      field.clear();
      if (i < n && text[i] == '"') {
        const int64_t open_line = line;
        const size_t column = rec.fields.size() + 1;
        ++i;
        for (;;) {
          if (i >= n) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "line %d, column %d: quoted field never closed", open_line, column));
          }
          char c = text[i++];
          if (c == '"') {
            if (i < n && text[i] == '"') {
              field.push_back('"');
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field.push_back(c);
        }
        if (i < n && text[i] == '\r') ++i;
        if (i < n && text[i] != ',' && text[i] != '\n') {
          return absl::InvalidArgumentError(absl::StrFormat(
              "line %d, column %d: unexpected '%c' after a closing quote", line, column,
              text[i]));
        }
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n') field.push_back(text[i++]);
        if (!field.empty() && field.back() == '\r') field.pop_back();
      }
      rec.fields.push_back(field);
      if (i >= n) {
        done = true;
      } else if (text[i] == ',') {
        ++i;
      } else {  // '\n'
        ++i;
        ++line;
        done = true;
      }
    }
    out.records.push_back(std::move(rec));
  }
  return out;
}

}  // namespace opmap::analysis
