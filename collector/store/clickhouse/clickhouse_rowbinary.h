// ClickHouse's RowBinary format, both ways: rows written for `INSERT ... FORMAT RowBinary`
// and read back from `SELECT ... FORMAT RowBinary`. Private to collector/store.
//
// Why RowBinary and not TSV: it needs no escaping (payloads are arbitrary bytes, names
// arbitrary UTF-8), and it is a pure function of the values, so the same rows always give
// the same bytes — which is what ClickHouse's insert-block deduplication hashes (a resent
// batch must be byte-identical to be dropped).
//
// Layout (little endian): integers and floats in their width; String = LEB128 length +
// bytes; Array(T) = LEB128 count + elements; Tuple = its elements in order.
//
// Thread-compatible.
#ifndef OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_ROWBINARY_H_
#define OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_ROWBINARY_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opmap::collector::clickhouse_internal {

class RowBinaryWriter {
 public:
  void UInt8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void UInt32(uint32_t v) { Fixed(v); }
  void Int32(int32_t v) { Fixed(v); }
  void UInt64(uint64_t v) { Fixed(v); }
  void Int64(int64_t v) { Fixed(v); }
  void Float64(double v) { Fixed(v); }
  void String(std::string_view s) {
    Varint(s.size());
    out_.append(s.data(), s.size());
  }
  void ArrayUInt64(const std::vector<uint64_t>& v) {
    Varint(v.size());
    for (uint64_t x : v) UInt64(x);
  }
  void ArrayString(const std::vector<std::string>& v) {
    Varint(v.size());
    for (const std::string& s : v) String(s);
  }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  template <typename T>
  void Fixed(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));  // x86-64 and aarch64 are little endian
    out_.append(buf, sizeof(T));
  }
  std::string out_;
};

// Reads values in the order the SELECT lists them; every read fails with DataLoss
// naming the position when the body ends early (a truncated or mistyped answer).
class RowBinaryReader {
 public:
  explicit RowBinaryReader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }

  absl::StatusOr<uint8_t> UInt8() { return Fixed<uint8_t>(); }
  absl::StatusOr<uint32_t> UInt32() { return Fixed<uint32_t>(); }
  absl::StatusOr<int32_t> Int32() { return Fixed<int32_t>(); }
  absl::StatusOr<uint64_t> UInt64() { return Fixed<uint64_t>(); }
  absl::StatusOr<int64_t> Int64() { return Fixed<int64_t>(); }
  absl::StatusOr<double> Float64() { return Fixed<double>(); }
  absl::StatusOr<std::string_view> String();
  absl::StatusOr<uint64_t> Varint();
  // Array(UInt64) / Array(Int64) / Array(String).
  absl::StatusOr<std::vector<uint64_t>> ArrayUInt64();
  absl::StatusOr<std::vector<int64_t>> ArrayInt64();
  absl::StatusOr<std::vector<std::string>> ArrayString();

 private:
  absl::Status Short(size_t need) const;
  template <typename T>
  absl::StatusOr<T> Fixed() {
    if (data_.size() - pos_ < sizeof(T)) return Short(sizeof(T));
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace opmap::collector::clickhouse_internal

#endif  // OPMAP_COLLECTOR_STORE_CLICKHOUSE_CLICKHOUSE_ROWBINARY_H_
