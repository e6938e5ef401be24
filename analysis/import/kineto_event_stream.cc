#include "analysis/import/kineto_event_stream.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "analysis/import/gzip_pipeline.h"
#include "analysis/import/json_error_locator.h"
#include "analysis/import/json_event_splitter.h"

namespace opmap::analysis {
namespace {

namespace od = simdjson::ondemand;
using Span = JsonEventSplitter::Span;
using Step = JsonEventSplitter::Step;

// Sizes that keep a batch in cache between inflate, split and parse (measured: 256 KiB
// to 1 MiB are about equal; 4 MiB is slower).
constexpr size_t kBatchBytes = size_t{512} << 10;  // events parsed per simdjson call (about)
constexpr size_t kParserBytes = size_t{1} << 20;   // the parser's capacity: > a batch
constexpr size_t kReadBytes = size_t{512} << 10;   // text inflated per read
// simdjson's padding, plus the ']' written past the last event of a batch.
constexpr size_t kPadding = simdjson::SIMDJSON_PADDING + 8;
static_assert(kPadding >= kSplitterReadAhead);

class EventStream {
 public:
  EventStream(KinetoEventSink& sink, const KinetoProgressFn& progress)
      : sink_(sink), progress_(progress), splitter_(kBatchBytes) {}

  absl::Status RunPlain(std::string& json) {
    plain_ = true;
    const size_t size = json.size();
    // No batch of a document is larger than the document: a small file gets a small
    // parser (its allocation, not the parse, was most of the cost of a 10 KB trace).
    Reserve(std::min(kParserBytes, size + kPadding));
    // The padding is part of the string while it is parsed: ParseMany may write there.
    json.resize(size + kPadding, ' ');
    char* data = json.data();
    const uint64_t base = 0;
    const bool final = true;
    absl::Status status = Loop(data, size, base, final, [] {
      return absl::InternalError("JSON splitter wants text past the end");
    });
    json.resize(size);
    return status;
  }

  absl::Status RunSource(KinetoTextSource& reader) {
    hint_ = reader.size_hint();
    // As in RunPlain, a text known to be small gets a small parser and window (their
    // allocation was most of the cost of streaming a 4 KB trace). A hint below the truth
    // (a gzip trailer's size is mod 2^32) costs a reallocation: iterate() grows the
    // parser, and past the hint the window grows as it does without one.
    const bool small = hint_ > 0 && hint_ < kParserBytes;
    Reserve(small ? hint_ + kPadding : kParserBytes);
    cap_ = small ? hint_ + 1 : 2 * kReadBytes;
    buf_.reset(new char[cap_ + kPadding]);
    char* data = buf_.get();
    std::memset(data, ' ', kPadding);
    size_t size = 0;
    uint64_t base = 0;
    bool final = false;
    absl::Status status = Loop(data, size, base, final, [&]() -> absl::Status {
      // Keep what the splitter still needs, then append freshly inflated text.
      // ...and the byte before it: ParseMany writes '[' there.
      const uint64_t retain = splitter_.retain_from();
      const uint64_t keep = retain > base ? retain - 1 : base;
      const size_t drop = static_cast<size_t>(keep - base);
      std::memmove(data, data + drop, size - drop);
      size -= drop;
      base = keep;
      // Room for a read worth making: half a read, or what the hint says is left.
      const uint64_t left = hint_ > base + size ? hint_ - (base + size) : 0;
      const size_t room = left > 0 && left < kReadBytes / 2 ? left + 1 : kReadBytes / 2;
      if (cap_ - size < room) {
        if (size > kMaxKinetoEventBytes) return TooLarge(splitter_.retain_from());
        const size_t cap = std::max(cap_ * 2, size + kReadBytes);
        std::unique_ptr<char[]> grown(new char[cap + kPadding]);
        std::memcpy(grown.get(), data, size);
        buf_ = std::move(grown);
        data = buf_.get();
        cap_ = cap;
      }
      // Read more at once while one value is kept whole: rescans stay linear.
      const size_t want = std::min(cap_ - size, std::max(kReadBytes, size));
      ASSIGN_OR_RETURN(size_t n, reader.Read(data + size, want));
      size += n;
      // The splitter's read-ahead and simdjson's padding never see uninitialised bytes.
      std::memset(data + size, ' ', kPadding);
      final = reader.done();
      return absl::OkStatus();
    });
    if (!status.ok() && !reader.done()) {
      // The text may be garbage from a corrupt stream: a gzip error explains it better.
      while (!reader.done()) {
        absl::StatusOr<size_t> n = reader.Read(data, cap_);
        if (!n.ok()) return n.status();
      }
    }
    return status;
  }

  KinetoStreamResult result() const {
    return KinetoStreamResult{splitter_.saw_events(), splitter_.event_count(), text_bytes_};
  }

 private:
  // Scans the window [base, base + size) of the text, parsing events as they are found;
  // `refill` makes the window move on (for gzip), `final` says it can't.
  template <typename Refill>
  absl::Status Loop(char* const& data, const size_t& size, const uint64_t& base,
                    const bool& final, Refill&& refill) {
    while (true) {
      window_end_ = data + size;
      window_end_size_ = base + size;
      const Step step = splitter_.Scan(data, size, base, final);
      RETURN_IF_ERROR(Flush(data, base));
      switch (step) {
        case Step::kBatch:
          break;
        case Step::kDeviceProperties:
          DeviceProperties(data, base);
          break;
        case Step::kDone:
          text_bytes_ = base + size;
          if (progress_) progress_(text_bytes_, text_bytes_);
          return absl::OkStatus();
        case Step::kError:
          return SplitterStatus();
        case Step::kNeedMore:
          RETURN_IF_ERROR(refill());
          break;
      }
    }
  }

  // Parses the events the splitter has found (they lie in `data`, which starts at `base`).
  absl::Status Flush(char* data, uint64_t base) {
    std::vector<Span>& events = splitter_.events();
    if (events.empty()) return absl::OkStatus();
    const size_t first = splitter_.first_event_index();
    size_t fit = 0;  // events before the first one that is too large
    while (fit < events.size() && events[fit].end - events[fit].begin <= kMaxKinetoEventBytes) {
      ++fit;
    }
    absl::Status status;
    for (size_t i = 0; i < fit && status.ok();) {
      // A run of events separated by commas only (two "traceEvents" arrays are not).
      size_t run = i + 1;
      while (run < fit && events[run].comma != JsonEventSplitter::kNoComma) ++run;
      status = ParseMany(data, base, &events[i], run - i, first + i);
      i = run;
    }
    if (status.ok() && fit < events.size()) status = TooLarge(events[fit].begin, first + fit);
    const uint64_t done = events.back().end;
    events.clear();
    if (status.ok() && progress_) {
      progress_(done, plain_ ? window_end_size_ : std::max<uint64_t>(hint_, done));
    }
    return status;
  }

  // simdjson parses the events as one array: the separator before the first one and the
  // byte after the last one become '[' and ']' for the call. Everything between them
  // (the events, and commas and spaces) is what the splitter checked.
  absl::Status ParseMany(char* data, uint64_t base, const Span* ev, size_t n, size_t first) {
    char* const open = data + (ev[0].begin - base) - 1;
    char* const close = data + (ev[n - 1].end - base);
    const char saved_open = *open, saved_close = *close;
    *open = '[';
    *close = ']';
    absl::Status status = ParseArray(data, base, ev, n, first, open, close + 1);
    *open = saved_open;
    *close = saved_close;
    return status;
  }

  absl::Status ParseArray(char* data, uint64_t base, const Span* ev, size_t n, size_t first,
                          const char* begin, const char* end) {
    simdjson::padded_string_view view(begin, static_cast<size_t>(end - begin),
                                      static_cast<size_t>(window_end_ + kPadding - begin));
    od::document doc;
    od::array events;
    simdjson::error_code err = parser_.iterate(view).get(doc);
    if (!err) err = doc.get_array().get(events);
    if (err) return BatchError(err, data, base, ev, n, 0, first);
    size_t k = 0;
    for (auto element : events) {
      if (k == n) return OutOfStep(k + 1, n, ev[0].begin);
      od::object obj;
      absl::Status status;
      err = element.get_object().get(obj);
      if (!err) err = sink_.OnEvent(obj, first + k, &status);
      RETURN_IF_ERROR(status);
      if (err) {
        const char* at = nullptr;
        if (doc.current_location().get(at)) at = nullptr;
        return EventError(err, at, data, base, ev[k], first + k);
      }
      ++k;
    }
    if (k != n) return OutOfStep(k, n, ev[0].begin);
    return absl::OkStatus();
  }

  static absl::Status OutOfStep(size_t parsed, size_t split, uint64_t at) {
    return absl::InternalError(absl::StrFormat(
        "JSON parser found %d events where the splitter found %d (from byte %d)", parsed,
        split, at));
  }

  // One event on its own (after a batch failed in simdjson's first stage).
  absl::Status ParseOne(char* data, uint64_t base, const Span& ev, size_t index) {
    const char* text = data + (ev.begin - base);
    const size_t len = static_cast<size_t>(ev.end - ev.begin);
    simdjson::padded_string_view view(text, len,
                                      static_cast<size_t>(window_end_ + kPadding - text));
    od::document doc;
    od::object obj;
    absl::Status status;
    simdjson::error_code err = one_parser_.iterate(view).get(doc);
    if (!err) err = doc.get_object().get(obj);
    if (!err) err = sink_.OnEvent(obj, index, &status);
    RETURN_IF_ERROR(status);
    if (!err) return absl::OkStatus();
    const char* at = nullptr;
    if (doc.current_location().get(at)) at = nullptr;
    return EventError(err, at, data, base, ev, index);
  }

  // simdjson rejected the batch (its first stage: UTF-8, control characters) at document
  // k: find the first event that is bad, after parsing the good ones before it.
  absl::Status BatchError(simdjson::error_code err, char* data, uint64_t base, const Span* ev,
                          size_t n, size_t k, size_t first) {
    for (size_t j = k; j < n; ++j) {
      const JsonErrorLocation located = LocateJsonError(
          std::string_view(data + (ev[j].begin - base), ev[j].end - ev[j].begin));
      if (!located.found) continue;
      for (size_t i = k; i < j; ++i) RETURN_IF_ERROR(ParseOne(data, base, ev[i], first + i));
      return JsonError(ev[j].begin + located.offset, true, first + j, located.what);
    }
    return JsonError(ev[k].begin, true, first + k, simdjson::error_message(err));
  }

  // simdjson failed inside event `ev`; `at` is where its parse stood (null: unknown).
  absl::Status EventError(simdjson::error_code err, const char* at, const char* data,
                          uint64_t base, const Span& ev, size_t index) const {
    uint64_t offset = at != nullptr ? base + static_cast<uint64_t>(at - data) : ev.end;
    offset = std::clamp(offset, ev.begin, ev.end);
    std::string what = simdjson::error_message(err);
    if (err != simdjson::INCORRECT_TYPE) {
      // simdjson can't say where a syntax error is; an exact scan of the event can.
      const JsonErrorLocation located =
          LocateJsonError(std::string_view(data + (ev.begin - base), ev.end - ev.begin));
      if (located.found) {
        offset = ev.begin + located.offset;
        what = located.what;
      }
    }
    return JsonError(offset, true, index, what);
  }

  void DeviceProperties(const char* data, uint64_t base) {
    const Span& s = splitter_.device_properties();
    simdjson::padded_string text(data + (s.begin - base), s.end - s.begin);
    od::parser parser;
    od::document doc;
    if (!parser.iterate(text).get(doc)) sink_.OnDeviceProperties(doc);
  }

  absl::Status SplitterStatus() const {
    const SplitterError& e = splitter_.error();
    if (e.kind == SplitterError::kRootNotContainer) {
      return absl::InvalidArgumentError(
          "invalid trace: the JSON document is neither an object nor an array (byte 0)");
    }
    return JsonError(e.offset, e.in_events, e.event_index, e.what);
  }

  static absl::Status JsonError(uint64_t offset, bool in_events, size_t index,
                                std::string_view what) {
    if (in_events) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid JSON at byte %d (in traceEvents[%d]): %s", offset, index, what));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("invalid JSON at byte %d: %s", offset, what));
  }

  absl::Status TooLarge(uint64_t begin) const {
    if (splitter_.in_event()) return TooLarge(begin, splitter_.event_count());
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid trace: the JSON value at byte %d is over %d MiB", begin,
        kMaxKinetoEventBytes >> 20));
  }
  static absl::Status TooLarge(uint64_t begin, size_t index) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid event traceEvents[%d] (at byte %d): over %d MiB of JSON", index, begin,
        kMaxKinetoEventBytes >> 20));
  }

  KinetoEventSink& sink_;
  const KinetoProgressFn& progress_;
  JsonEventSplitter splitter_;
  // Batches are about the same size: allocate once, not at each new largest one.
  void Reserve(size_t bytes) {
    const simdjson::error_code ignored = parser_.allocate(bytes);  // iterate() retries
    (void)ignored;
  }

  od::parser parser_;      // batches
  od::parser one_parser_;  // single events, on the error path
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  const char* window_end_ = nullptr;
  uint64_t window_end_size_ = 0;  // text bytes up to window_end_
  bool plain_ = false;
  uint64_t hint_ = 0;
  uint64_t text_bytes_ = 0;
};

}  // namespace

size_t KinetoStreamPadding() { return kPadding; }

absl::StatusOr<KinetoStreamResult> StreamKinetoJson(std::string& json, KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress) {
  EventStream stream(sink, progress);
  RETURN_IF_ERROR(stream.RunPlain(json));
  return stream.result();
}

absl::StatusOr<KinetoStreamResult> StreamKinetoGzip(std::string_view compressed,
                                                     KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress,
                                                     const std::function<void(size_t)>& consumed) {
  PipelinedGzipReader reader(compressed, consumed);  // inflates on a thread of its own
  return StreamKinetoText(reader, sink, progress);
}

absl::StatusOr<KinetoStreamResult> StreamKinetoText(KinetoTextSource& source,
                                                     KinetoEventSink& sink,
                                                     const KinetoProgressFn& progress) {
  EventStream stream(sink, progress);
  RETURN_IF_ERROR(stream.RunSource(source));
  return stream.result();
}

}  // namespace opmap::analysis
