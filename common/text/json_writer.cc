#include "common/text/json_writer.h"

#include <cmath>

#include "common/text/utf8.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace opmap::text {

void AppendJsonEscaped(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out->append("\\u00");
            out->push_back(kHex[c >> 4]);
            out->push_back(kHex[c & 0xf]);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out->append("\xEF\xBF\xBD");  // U+FFFD
      ++i;
    } else {
      out->append(s.data() + i, n);
      i += n;
    }
  }
  out->push_back('"');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_.push_back(',');
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_.push_back('{');
  has_element_.push_back(false);
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  out_.push_back('}');
  has_element_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_.push_back('[');
  has_element_.push_back(false);
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  out_.push_back(']');
  has_element_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  AppendJsonEscaped(key, &out_);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  AppendJsonEscaped(value, &out_);
  return *this;
}
JsonWriter& JsonWriter::Int(int64_t value) {
  Separate();
  absl::StrAppend(&out_, value);
  return *this;
}
JsonWriter& JsonWriter::Double(double value, int decimals) {
  Separate();
  if (!std::isfinite(value)) {
    out_.append("null");
  } else if (decimals <= 0 && std::fabs(value) >= 0x1p63) {
    // "%.0f" would write an integer literal wider than int64, which strict readers
    // (simdjson, most typed decoders) refuse; the exponent form is the same double.
    absl::StrAppendFormat(&out_, "%.17g", value);
  } else {
    absl::StrAppendFormat(&out_, "%.*f", decimals, value);
  }
  return *this;
}
JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_.append(value ? "true" : "false");
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_.append("null");
  return *this;
}

}  // namespace opmap::text
