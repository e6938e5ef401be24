#include "common/text/aligned_table.h"

#include <algorithm>
#include <utility>

#include "common/text/utf8.h"

namespace opmap::text {

AlignedTable::AlignedTable(std::vector<std::string> header, std::vector<bool> numeric)
    : header_(std::move(header)), numeric_(std::move(numeric)) {
  numeric_.resize(header_.size(), false);
}

void AlignedTable::Add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string AlignedTable::Render() const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = Utf8CodePoints(header_[c]);
    for (const auto& r : rows_) width[c] = std::max(width[c], Utf8CodePoints(r[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) {
      if (c) out += "  ";
      const std::string pad(width[c] - Utf8CodePoints(r[c]), ' ');
      if (numeric_[c]) {
        out += pad + r[c];
      } else {
        out += r[c];
        if (c + 1 < r.size()) out += pad;
      }
    }
    out += '\n';
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return out;
}

}  // namespace opmap::text
