// Splits a Chrome-trace JSON document into its events without parsing them, and reports,
// in document order, the byte range of each element of the events array and of the
// top-level "deviceProperties" value. Everything outside events is checked against the
// grammar (RFC 8259 syntax, UTF-8, control characters) by a scalar scanner; inside an
// event only the brackets are matched (BracketMatcher, 64 bytes at a time): the caller
// parses events with simdjson, which checks the rest of what it reads.
//
// The root is an object whose "traceEvents" key holds the events array, or a bare array
// of events. The scanner is resumable: it is handed successive windows of the text (the
// caller keeps everything from retain_from() on), never consumes half a token, and can
// stop after a batch of events so that the caller parses them while they are in cache.
// Error messages are those of LocateJsonError (json_error_locator.h), at the same bytes;
// an event whose brackets don't pair up, or that the text ends in, is handed to it.
#ifndef OPMAP_ANALYSIS_IMPORT_JSON_EVENT_SPLITTER_H_
#define OPMAP_ANALYSIS_IMPORT_JSON_EVENT_SPLITTER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/import/json_bracket_matcher.h"

namespace opmap::analysis {

// Bytes the scanner may read (never use) past the end of a window.
inline constexpr size_t kSplitterReadAhead = BracketMatcher::kReadAhead;

struct SplitterError {
  enum Kind {
    kSyntax,              // `what` is the locator's message
    kEventNotObject,      // an element of the events array is not an object
    kTraceEventsNotArray, // the value of "traceEvents" is not an array
    kRootNotContainer,    // the document is a string, number or literal
  };
  Kind kind = kSyntax;
  uint64_t offset = 0;      // byte of the whole document
  std::string what;
  bool in_events = false;   // inside the events array: event_index names the element
  size_t event_index = 0;
};

class JsonEventSplitter {
 public:
  enum class Step {
    kNeedMore,          // the window is used up (not final): call again with more text
    kBatch,             // events() holds at least batch_bytes of events
    kDeviceProperties,  // device_properties() is complete
    kDone,              // the root value ended and only whitespace followed (final)
    kError,             // error(); events() still holds the complete events before it
  };
  struct Span {
    uint64_t begin = 0, end = 0;  // [begin, end) in the whole document
    uint64_t comma = kNoComma;    // the ',' before this element of the events array
  };
  static constexpr uint64_t kNoComma = ~uint64_t{0};

  explicit JsonEventSplitter(size_t batch_bytes) : batch_bytes_(batch_bytes) {}

  // `data` holds the document's bytes [base, base + size) and must stay readable for
  // kSplitterReadAhead bytes past its end; it must start at or before retain_from().
  // `final`: no text follows this window.
  Step Scan(const char* data, size_t size, uint64_t base, bool final);

  // Complete events not yet handed out, in order; the caller parses and clears them
  // before the next Scan (their bytes must be in that call's window).
  std::vector<Span>& events() { return events_; }
  size_t first_event_index() const { return event_count_ - events_.size(); }
  const Span& device_properties() const { return device_; }
  const SplitterError& error() const { return error_; }

  // The first byte a later Scan still needs: the start of an unfinished event, of an
  // unfinished "deviceProperties" value, or of the next token.
  uint64_t retain_from() const;
  bool in_event() const { return event_begin_ != kNoComma; }
  // The index the next (or unfinished) element of the events array will have.
  size_t event_count() const { return event_count_; }
  bool saw_events() const { return saw_events_; }

 private:
  // Where a stopped scan resumes.
  enum Expect : uint8_t {
    kValue, kObjectKeyOrEnd, kObjectKey, kColon, kAfterValue, kArrayValueOrEnd, kDone,
    kEventBody,
  };
  enum Role : uint8_t { kOther, kTraceEvents, kDeviceProperties };
  enum class Token { kOk, kIncomplete, kError };

  Step Fail(uint64_t offset, std::string what, SplitterError::Kind kind = SplitterError::kSyntax);
  // A syntax error in the event that starts at event_begin_, found before byte `stop`.
  Step FailInEvent(const char* data, uint64_t base, uint64_t stop, const char* what);
  // A value at a depth where events or top-level keys are recognised: true when it was
  // taken (a container opened, or *step = kError).
  bool ShallowValue(const char* p, uint64_t at, Step* step);
  // Pops the container closed at `at` (the byte after the bracket); true when that
  // completes the deviceProperties value (*step says so).
  bool Close(uint64_t at, Step* step);
  // A value at depth 1 ended at `at`: true when it was the deviceProperties value.
  bool ScalarDone(uint64_t at, Step* step);
  Token String(const char* p, const char* end, bool final, const char** out,
               const char** err_at, const char** what);
  Token Number(const char* p, const char* end, bool final, const char** out,
               const char** err_at, const char** what);

  const size_t batch_bytes_;
  std::vector<char> stack_;        // open containers: '{' or '['
  Expect expect_ = kValue;
  Role role_ = kOther;             // of the value after the current top-level key
  bool root_object_ = false;
  bool saw_events_ = false;
  size_t events_depth_ = 0;        // stack_.size() inside the events array; 0 outside
  uint64_t pos_ = 0;               // next byte to scan (outside events)
  uint64_t event_begin_ = kNoComma;  // of the unfinished event (kNoComma: none)
  uint64_t event_comma_ = kNoComma;
  uint64_t comma_ = kNoComma;      // the last ',' seen between events
  uint64_t device_begin_ = kNoComma;
  size_t event_count_ = 0;
  BracketMatcher matcher_;         // the unfinished event's end
  std::vector<Span> events_;
  Span device_;
  SplitterError error_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_JSON_EVENT_SPLITTER_H_
