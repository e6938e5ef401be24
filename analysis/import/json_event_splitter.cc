#include "analysis/import/json_event_splitter.h"

#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "analysis/import/json_error_locator.h"
#include "common/text/utf8.h"

namespace opmap::analysis {
namespace {

constexpr bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline const char* SkipSpace(const char* p, const char* end) {
  while (p < end && IsSpace(*p)) ++p;
  return p;
}

inline const char* SkipDigits(const char* p, const char* end) {
  while (p < end && absl::ascii_isdigit(*p)) ++p;
  return p;
}

// Bytes a UTF-8 sequence with this lead byte claims (0: not a lead byte).
constexpr size_t Utf8Claim(unsigned char c) {
  return (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
}

}  // namespace

uint64_t JsonEventSplitter::retain_from() const {
  if (event_begin_ != kNoComma) return event_begin_;
  if (device_begin_ != kNoComma) return device_begin_;
  return pos_;
}

JsonEventSplitter::Step JsonEventSplitter::FailInEvent(const char* data, uint64_t base,
                                                       uint64_t stop, const char* what) {
  // The first syntax error in the event's text, as the locator names it.
  const JsonErrorLocation located = LocateJsonError(
      std::string_view(data + (event_begin_ - base), static_cast<size_t>(stop - event_begin_)));
  if (located.found) return Fail(event_begin_ + located.offset, located.what);
  return Fail(stop, what);
}

JsonEventSplitter::Step JsonEventSplitter::Fail(uint64_t offset, std::string what,
                                                SplitterError::Kind kind) {
  error_.kind = kind;
  error_.offset = offset;
  error_.what = std::move(what);
  error_.in_events = events_depth_ != 0;
  error_.event_index = event_count_;
  return Step::kError;
}

JsonEventSplitter::Token JsonEventSplitter::String(const char* p, const char* end, bool final,
                                                   const char** out, const char** err_at,
                                                   const char** what) {
  const char* q = p + 1;
  while (true) {
    if (q >= end) goto incomplete;
    const unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') {
      *out = q + 1;
      return Token::kOk;
    }
    if (c == '\\') {
      if (end - q < 2) goto incomplete;
      const char e = q[1];
      if (e == 'u') {
        if (end - q < 6 && !final) return Token::kIncomplete;
        for (int k = 2; k < 6; ++k) {
          if (q + k >= end || !absl::ascii_isxdigit(q[k])) {
            *err_at = q;
            *what = "bad \\u escape";
            return Token::kError;
          }
        }
        q += 6;
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                 e == 'r' || e == 't') {
        q += 2;
      } else {
        *err_at = q;
        *what = "bad escape in string";
        return Token::kError;
      }
      continue;
    }
    if (c < 0x20) {
      *err_at = q;
      *what = "control character in string";
      return Token::kError;
    }
    if (c >= 0x80) {
      const size_t claim = Utf8Claim(c);
      if (claim != 0 && static_cast<size_t>(end - q) < claim && !final) {
        return Token::kIncomplete;
      }
      const size_t n = text::Utf8SequenceLength(std::string_view(q, end - q), 0);
      if (n == 0) {
        *err_at = q;
        *what = "invalid UTF-8 in string";
        return Token::kError;
      }
      q += n;
      continue;
    }
    ++q;
  }
incomplete:
  if (!final) return Token::kIncomplete;
  *err_at = p;
  *what = "unterminated string";
  return Token::kError;
}

JsonEventSplitter::Token JsonEventSplitter::Number(const char* p, const char* end, bool final,
                                                   const char** out, const char** err_at,
                                                   const char** what) {
  const char* q = p;
  if (*q == '-') ++q;
  const char* d = q;
  q = SkipDigits(q, end);
  if (q == end && !final) return Token::kIncomplete;
  if (q == d) {
    *err_at = p;
    *what = "invalid value";
    return Token::kError;
  }
  if (q < end && *q == '.') {
    d = ++q;
    q = SkipDigits(q, end);
    if (q == end && !final) return Token::kIncomplete;
    if (q == d) {
      *err_at = q;
      *what = "digits expected after '.'";
      return Token::kError;
    }
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    d = q;
    while (q < end && absl::ascii_isdigit(*q)) ++q;
    if (q == end && !final) return Token::kIncomplete;
    if (q == d) {
      *err_at = q;
      *what = "digits expected in exponent";
      return Token::kError;
    }
  }
  *out = q;
  return Token::kOk;
}

bool JsonEventSplitter::Close(uint64_t at, Step* step) {
  stack_.pop_back();
  const size_t depth = stack_.size();
  if (depth + 1 == events_depth_) events_depth_ = 0;  // the events array ended
  return ScalarDone(at, step);
}

bool JsonEventSplitter::ScalarDone(uint64_t at, Step* step) {
  if (device_begin_ != kNoComma && stack_.size() == 1) {
    device_ = Span{device_begin_, at, kNoComma};
    device_begin_ = kNoComma;
    *step = Step::kDeviceProperties;
    return true;
  }
  return false;
}

// Returns true when the value was handled (a container opened) or an error stops the scan
// (*step = kError); false when the caller scans it as an ordinary value.
bool JsonEventSplitter::ShallowValue(const char* p, uint64_t at, Step* step) {
  const char c = *p;
  if (stack_.empty()) {
    if (c == '{' || c == '[') {
      stack_.push_back(c);
      root_object_ = c == '{';
      if (c == '[') {
        events_depth_ = 1;
        saw_events_ = true;
      }
      return true;
    }
    const bool scalar =
        c == '"' || c == 't' || c == 'f' || c == 'n' || c == '-' || absl::ascii_isdigit(c);
    *step = scalar ? Fail(at, "", SplitterError::kRootNotContainer) : Fail(at, "invalid value");
    return true;
  }
  if (stack_.size() == events_depth_) {
    if (c == '{') {
      event_begin_ = at;
      event_comma_ = comma_;
      comma_ = kNoComma;
      matcher_.Start(at);
      return true;
    }
    if (c == ']' || c == ',' || c == '}' || c == ':') {
      *step = Fail(at, "invalid value");
    } else {
      *step = Fail(at, "traceEvents[" + std::to_string(event_count_) + "] is not an object",
                   SplitterError::kEventNotObject);
    }
    return true;
  }
  if (stack_.size() == 1 && root_object_) {
    const Role role = role_;
    role_ = kOther;
    if (role == kTraceEvents) {
      if (c != '[') {
        *step = Fail(at, "field \"traceEvents\" is not an array",
                     SplitterError::kTraceEventsNotArray);
        return true;
      }
      stack_.push_back('[');
      events_depth_ = 2;
      saw_events_ = true;
      return true;
    }
    if (role == kDeviceProperties) device_begin_ = at;
  }
  return false;
}

// Recursive descent over an explicit stack, as straight-line code between gotos: the
// token sequence inside objects ("key": value,) costs no state dispatch. expect_ is
// only written when the scan stops, to say where to resume.
JsonEventSplitter::Step JsonEventSplitter::Scan(const char* data, size_t size, uint64_t base,
                                                bool final) {
  const char* const end = data + size;
  const char* p = data + (pos_ - base);
  auto at = [&](const char* q) { return base + static_cast<uint64_t>(q - data); };
  Step step = Step::kNeedMore;
  const char *out = nullptr, *err_at = nullptr, *what = nullptr;
  Token t;
  char c;
#define OPMAP_SKIP_SPACE() p = SkipSpace(p, end)
#define OPMAP_STOP_AT_END(state) \
  if (p == end) {                \
    expect_ = state;             \
    goto at_end;                 \
  }

  switch (expect_) {
    case kValue: goto value;
    case kObjectKeyOrEnd: goto object_first;
    case kObjectKey: goto object_key;
    case kColon: goto colon;
    case kAfterValue: goto after_value;
    case kArrayValueOrEnd: goto array_first;
    case kDone: goto done;
    case kEventBody: goto event_body;
  }

event_body: {  // an element of the events array: only its end is looked for here
  uint64_t stop = 0;
  switch (matcher_.Scan(data, size, base, final, &stop)) {
    case BracketMatcher::Result::kClosed:
      events_.push_back(Span{event_begin_, stop, event_comma_});
      event_begin_ = kNoComma;
      ++event_count_;
      p = data + (stop - base);
      if (stop - events_.front().begin >= batch_bytes_) {
        step = Step::kBatch;
        goto yield;
      }
      goto after_value;
    case BracketMatcher::Result::kNeedMore:
      if (final) return FailInEvent(data, base, base + size, "unexpected end of document");
      expect_ = kEventBody;
      pos_ = event_begin_;
      return Step::kNeedMore;
    case BracketMatcher::Result::kMismatch:
      return FailInEvent(data, base, stop + 1, "mismatched bracket");
  }
  return Fail(event_begin_, "bracket matcher failed");
}

object_first:  // after '{'
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kObjectKeyOrEnd);
  if (*p == '}') {
    ++p;
    goto close;
  }
  goto object_key_here;
object_key:  // after ',' in an object
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kObjectKey);
object_key_here:
  if (*p != '"') return Fail(at(p), "expected a string key");
  t = String(p, end, final, &out, &err_at, &what);
  if (t != Token::kOk) {
    if (t == Token::kError) return Fail(at(err_at), what);
    expect_ = kObjectKey;
    pos_ = at(p);
    return Step::kNeedMore;
  }
  if (stack_.size() == 1 && root_object_) {
    const std::string_view key(p + 1, static_cast<size_t>(out - p - 2));
    role_ = key == "traceEvents"        ? kTraceEvents
            : key == "deviceProperties" ? kDeviceProperties
                                        : kOther;
  }
  p = out;
colon:
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kColon);
  if (*p != ':') return Fail(at(p), "expected ':' after key");
  ++p;
value:
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kValue);
value_here:
  if (stack_.size() <= 1 || stack_.size() == events_depth_) {
    if (ShallowValue(p, at(p), &step)) {
      if (step == Step::kError) return step;
      if (event_begin_ != kNoComma) goto event_body;
      ++p;
      if (stack_.back() == '{') goto object_first;
      goto array_first;
    }
  }
  c = *p;
  if (c == '{') {
    stack_.push_back('{');
    ++p;
    goto object_first;
  }
  if (c == '[') {
    stack_.push_back('[');
    ++p;
    goto array_first;
  }
  if (c == '"') {
    t = String(p, end, final, &out, &err_at, &what);
  } else if (c == 't' || c == 'f' || c == 'n') {
    const char* word = c == 't' ? "true" : c == 'f' ? "false" : "null";
    const size_t n = c == 'f' ? 5 : 4;
    if (static_cast<size_t>(end - p) < n && !final) {
      t = Token::kIncomplete;
    } else if (static_cast<size_t>(end - p) < n || std::memcmp(p, word, n) != 0) {
      t = Token::kError;
      err_at = p;
      what = "invalid literal";
    } else {
      t = Token::kOk;
      out = p + n;
    }
  } else {
    t = Number(p, end, final, &out, &err_at, &what);
  }
  if (t != Token::kOk) {
    if (t == Token::kError) return Fail(at(err_at), what);
    expect_ = kValue;
    pos_ = at(p);
    return Step::kNeedMore;
  }
  p = out;
  if (stack_.size() == 1 && ScalarDone(at(p), &step)) goto yield;
after_value:  // a value inside a container ended
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kAfterValue);
  c = *p;
  if (stack_.back() == '{') {
    if (c == ',') {
      ++p;
      goto object_key;
    }
    if (c != '}') return Fail(at(p), "expected ',' or '}'");
    ++p;
    goto close;
  }
  if (c == ',') {
    if (stack_.size() == events_depth_) comma_ = at(p);
    ++p;
    goto value;
  }
  if (c != ']') return Fail(at(p), "expected ',' or ']'");
  ++p;
  goto close;
array_first:  // after '['
  OPMAP_SKIP_SPACE();
  OPMAP_STOP_AT_END(kArrayValueOrEnd);
  if (*p != ']') goto value_here;
  ++p;
close:  // p is past a closing bracket
  if (Close(at(p), &step)) goto yield;
  if (!stack_.empty()) goto after_value;
done:
  OPMAP_SKIP_SPACE();
  if (p == end) {
    expect_ = kDone;
    pos_ = at(p);
    return final ? Step::kDone : Step::kNeedMore;
  }
  return Fail(at(p), "unexpected content after the document");
at_end:
  pos_ = at(p);
  if (!final) return Step::kNeedMore;
  return Fail(pos_, stack_.empty() ? "empty document" : "unexpected end of document");
yield:  // a batch or the deviceProperties value is ready; resume after it
  expect_ = kAfterValue;
  pos_ = at(p);
  return step;
#undef OPMAP_SKIP_SPACE
#undef OPMAP_STOP_AT_END
}

}  // namespace opmap::analysis
