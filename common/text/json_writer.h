// A minimal streaming JSON writer: enough for reports, with correct string escaping and
// no trailing-comma bookkeeping at call sites. Numbers that are not finite are written
// as null (JSON has no NaN); callers print "unavailable" fields explicitly instead.
#ifndef OPMAP_COMMON_TEXT_JSON_WRITER_H_
#define OPMAP_COMMON_TEXT_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opmap::text {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value, int decimals = 3);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // Shorthands for a key followed by a value.
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, int value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, double value, int decimals = 3) {
    return Key(key).Double(value, decimals);
  }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Separate();
  std::string out_;
  // Per open container: whether it already holds an element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Appends `s` as a JSON string literal (quotes included), escaping as JSON requires and
// replacing invalid UTF-8 sequences with U+FFFD, so every report is valid JSON.
void AppendJsonEscaped(std::string_view s, std::string* out);

}  // namespace opmap::text

#endif  // OPMAP_COMMON_TEXT_JSON_WRITER_H_
