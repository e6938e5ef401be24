#include "analysis/import/json_error_locator.h"

#include <cctype>
#include <cstdint>
#include <vector>

#include "common/text/utf8.h"

namespace opmap::analysis {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  JsonErrorLocation Run() {
    std::vector<char> stack;  // open containers: '{' or '['
    Expect expect = kValue;
    SkipSpace();
    while (true) {
      if (pos_ >= s_.size()) {
        if (expect == kDone) return Ok();
        return Fail(stack.empty() ? "empty document" : "unexpected end of document");
      }
      char c = s_[pos_];
      switch (expect) {
        case kDone:
          return Fail("unexpected content after the document");
        case kValue:
        case kArrayValueOrEnd:
          if (expect == kArrayValueOrEnd && c == ']') {
            ++pos_;
            stack.pop_back();
            expect = AfterValue(stack);
            break;
          }
          if (c == '{') {
            stack.push_back('{');
            ++pos_;
            expect = kObjectKeyOrEnd;
          } else if (c == '[') {
            stack.push_back('[');
            ++pos_;
            expect = kArrayValueOrEnd;
          } else {
            if (!ScalarValue()) return Fail(what_);
            expect = AfterValue(stack);
          }
          break;
        case kObjectKeyOrEnd:
        case kObjectKey:
          if (expect == kObjectKeyOrEnd && c == '}') {
            ++pos_;
            stack.pop_back();
            expect = AfterValue(stack);
            break;
          }
          if (c != '"') return Fail("expected a string key");
          if (!String()) return Fail(what_);
          expect = kColon;
          break;
        case kColon:
          if (c != ':') return Fail("expected ':' after key");
          ++pos_;
          expect = kValue;
          break;
        case kObjectCommaOrEnd:
          if (c == ',') {
            ++pos_;
            expect = kObjectKey;
          } else if (c == '}') {
            ++pos_;
            stack.pop_back();
            expect = AfterValue(stack);
          } else {
            return Fail("expected ',' or '}'");
          }
          break;
        case kArrayCommaOrEnd:
          if (c == ',') {
            ++pos_;
            expect = kValue;
          } else if (c == ']') {
            ++pos_;
            stack.pop_back();
            expect = AfterValue(stack);
          } else {
            return Fail("expected ',' or ']'");
          }
          break;
      }
      SkipSpace();
    }
  }

 private:
  // What the scanner expects next, given the innermost open container.
  enum Expect { kValue, kObjectKeyOrEnd, kObjectKey, kColon, kObjectCommaOrEnd,
                kArrayValueOrEnd, kArrayCommaOrEnd, kDone };

  // After a complete value: the enclosing container's separator, or the end.
  static Expect AfterValue(const std::vector<char>& stack) {
    if (stack.empty()) return kDone;
    return stack.back() == '{' ? kObjectCommaOrEnd : kArrayCommaOrEnd;
  }

  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) {
      ++pos_;
    }
  }

  bool String() {
    size_t start = pos_++;
    while (pos_ < s_.size()) {
      unsigned char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (pos_ + 1 >= s_.size()) break;
        char e = s_[pos_ + 1];
        if (e == 'u') {
          for (int k = 2; k < 6; ++k) {
            if (pos_ + k >= s_.size() || !isxdigit(static_cast<unsigned char>(s_[pos_ + k]))) {
              what_ = "bad \\u escape";
              return false;
            }
          }
          pos_ += 6;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          what_ = "bad escape in string";
          return false;
        }
        pos_ += 2;
        continue;
      }
      if (c < 0x20) {
        what_ = "control character in string";
        return false;
      }
      if (c >= 0x80) {
        size_t n = text::Utf8SequenceLength(s_, pos_);
        if (n == 0) {
          what_ = "invalid UTF-8 in string";
          return false;
        }
        pos_ += n;
        continue;
      }
      ++pos_;
    }
    pos_ = start;
    what_ = "unterminated string";
    return false;
  }

  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) {
      what_ = "invalid literal";
      return false;
    }
    pos_ += word.size();
    return true;
  }

  bool Number() {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d;
    };
    if (!digits()) {
      pos_ = start;
      what_ = "invalid value";
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) {
        what_ = "digits expected after '.'";
        return false;
      }
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) {
        what_ = "digits expected in exponent";
        return false;
      }
    }
    return true;
  }

  bool ScalarValue() {
    char c = s_[pos_];
    if (c == '"') return String();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Number();
  }

  JsonErrorLocation Ok() { return {}; }
  JsonErrorLocation Fail(std::string what) {
    return JsonErrorLocation{true, pos_, std::move(what)};
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace

JsonErrorLocation LocateJsonError(std::string_view json) { return Scanner(json).Run(); }

}  // namespace opmap::analysis
