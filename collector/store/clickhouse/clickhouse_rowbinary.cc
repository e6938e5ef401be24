#include "collector/store/clickhouse/clickhouse_rowbinary.h"

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"

namespace opmap::collector::clickhouse_internal {

absl::Status RowBinaryReader::Short(size_t need) const {
  return absl::DataLossError(absl::StrFormat(
      "ClickHouse answer: RowBinary ends at byte %d of %d, %d more expected", pos_,
      data_.size(), need));
}

absl::StatusOr<uint64_t> RowBinaryReader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return Short(1);
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return absl::DataLossError(absl::StrFormat("ClickHouse answer: bad length at byte %d", pos_));
}

absl::StatusOr<std::string_view> RowBinaryReader::String() {
  ASSIGN_OR_RETURN(const uint64_t n, Varint());
  if (data_.size() - pos_ < n) return Short(n);
  std::string_view s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

absl::StatusOr<std::vector<uint64_t>> RowBinaryReader::ArrayUInt64() {
  ASSIGN_OR_RETURN(const uint64_t n, Varint());
  if ((data_.size() - pos_) / 8 < n) return Short(n * 8);
  std::vector<uint64_t> v(n);
  for (uint64_t& x : v) {
    ASSIGN_OR_RETURN(x, UInt64());
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> RowBinaryReader::ArrayInt64() {
  ASSIGN_OR_RETURN(const uint64_t n, Varint());
  if ((data_.size() - pos_) / 8 < n) return Short(n * 8);
  std::vector<int64_t> v(n);
  for (int64_t& x : v) {
    ASSIGN_OR_RETURN(x, Int64());
  }
  return v;
}

absl::StatusOr<std::vector<std::string>> RowBinaryReader::ArrayString() {
  ASSIGN_OR_RETURN(const uint64_t n, Varint());
  if (data_.size() - pos_ < n) return Short(n);
  std::vector<std::string> v;
  v.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(std::string_view s, String());
    v.emplace_back(s);
  }
  return v;
}

}  // namespace opmap::collector::clickhouse_internal
