// A plain-text table for terminals: every column as wide as its widest cell, two spaces
// between columns, text left-aligned and numbers right-aligned, no blanks after a last
// text column.
#ifndef OPMAP_COMMON_TEXT_ALIGNED_TABLE_H_
#define OPMAP_COMMON_TEXT_ALIGNED_TABLE_H_

#include <string>
#include <vector>

namespace opmap::text {

class AlignedTable {
 public:
  // `numeric[c]` right-aligns column c. A row shorter than the header is padded with
  // empty cells; cells past the header's width are dropped.
  AlignedTable(std::vector<std::string> header, std::vector<bool> numeric);

  void Add(std::vector<std::string> row);
  // The header line, then one line per row, each ending in '\n'.
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_ALIGNED_TABLE_H_
