// A plain-text table for terminals: every column as wide as its widest cell in code points,
// two spaces between columns, text left-aligned and numbers right-aligned, no blanks after
// a last text column. A cell holding a name from elsewhere must come through
// PrintableCell (printable.h): the table lays cells out, it does not escape them.
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
