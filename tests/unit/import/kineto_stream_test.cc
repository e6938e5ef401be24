// The streaming import on documents larger than its windows: gzip and plain input give
// the same Trace and the same errors (byte offsets in the whole text, traceEvents[i]),
// events larger than a window, the per-event size limit, progress, and gzip damage
// reported as such even when the garbage it inflates to is invalid JSON.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/import/json_error_locator.h"
#include "analysis/import/event_consumer.h"
#include "analysis/import/kineto_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/gzip_bytes.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::GzipBytes;

using ::testing::HasSubstr;


std::string Event(size_t i) {
  switch (i % 4) {
    case 0:
      return absl::StrCat(R"J({"ph": "X", "cat": "kernel", "name": "k)J", i % 13,
                          R"J(", "pid": 0, "tid": 7, "ts": )J", 1000 + i, ".", i % 1000,
                          R"J(, "dur": 1.5, "args": {"device": 0, "stream": 7, "correlation": )J",
                          i, R"J(, "grid": [1, 2, 3], "skip": [true, null, {"x": "a,b}"}]}})J");
    case 1:
      return absl::StrCat(R"J({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", )J",
                          R"J("pid": 1, "tid": 1, "ts": )J", 999 + i, R"J(, "dur": 2, )J",
                          R"J("args": {"correlation": )J", i + 1, "}}");
    case 2:
      return absl::StrCat("{\n      \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm \\\"",
                          i, "\\\"\",\n      \"pid\": 1, \"tid\": 1, \"ts\": ", 990 + i,
                          ", \"dur\": 30,\n      \"args\": {\"Input Dims\": [[", i % 7,
                          ", 3], []], \"External id\": ", i, "}\n    }");
    default:
      return absl::StrCat(R"J({"name": "process_name", "ph": "M", "pid": )J", i,
                          R"J(, "args": {"name": "caf\u00e9 )J", i, R"J("}})J");
  }
}

// About 130 bytes an event: 40000 events span several read windows and batches.
std::string BigDoc(size_t n, const std::vector<std::pair<size_t, std::string>>& replace = {}) {
  std::string s = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (size_t i = 0; i < n; ++i) {
    std::string e = Event(i);
    for (const auto& [k, text] : replace) {
      if (k == i) e = text;
    }
    absl::StrAppend(&s, i ? ",\n    " : "    ", e);
  }
  absl::StrAppend(&s, "\n], \"deviceProperties\": [{\"name\": \"GPU Z\"}]}\n");
  return s;
}

std::string Summary(const absl::StatusOr<Trace>& t) {
  if (!t.ok()) return std::string(t.status().ToString());
  std::string s = absl::StrCat(t->gpu_events.size(), " ", t->api_calls.size(), " ",
                               t->ranges.size(), " ", t->strings.size(), "|");
  for (const std::string& g : t->info.gpu_names) absl::StrAppend(&s, g, "|");
  for (const GpuEvent& g : t->gpu_events) {
    absl::StrAppend(&s, g.start_ns, ",", g.dur_ns, ",", g.name, ",", g.correlation, ";");
  }
  for (const ApiCall& a : t->api_calls) absl::StrAppend(&s, a.start_ns, ",", a.correlation, ";");
  for (const Range& r : t->ranges) {
    absl::StrAppend(&s, r.start_ns, ",", std::string(t->strings.Get(r.name)), ",",
                    std::string(t->strings.Get(r.input_dims)), ";");
  }
  return s;
}

// Plain and gzip input must agree; returns the plain result.
absl::StatusOr<Trace> ImportBoth(const std::string& doc) {
  std::string plain = doc;
  absl::StatusOr<Trace> a = ImportKinetoJson(plain);
  EXPECT_EQ(plain, doc) << "ImportKinetoJson changed the text";
  absl::StatusOr<Trace> b = ImportKinetoBytes(GzipBytes(doc, 1));
  EXPECT_EQ(Summary(a), Summary(b));
  return a;
}

TEST(KinetoStreamTest, LargeDocumentPlainAndGzipAgree) {
  absl::StatusOr<Trace> t = ImportBoth(BigDoc(40000));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->gpu_events.size(), 10000u);
  EXPECT_EQ(t->api_calls.size(), 10000u);
  EXPECT_EQ(t->ranges.size(), 10000u);
  EXPECT_EQ(t->strings.Get(t->ranges[5].name), "aten::mm \"22\"");
  EXPECT_EQ(t->gpu_events.back().correlation, 39996);
  EXPECT_THAT(t->info.gpu_names, ::testing::ElementsAre("GPU Z"));
}

TEST(KinetoStreamTest, ErrorsDeepInALargeDocumentNameTheWholeDocumentByte) {
  const std::string no_comma = R"J({"ph": "X", "cat": "zz" "skipped": [1, 2]})J";
  std::string doc = BigDoc(30000, {{25001, no_comma}});
  absl::StatusOr<Trace> t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr(absl::StrCat("invalid JSON at byte ", doc.find("\"skipped\""),
                                     " (in traceEvents[25001]): expected ',' or '}'")));
  // Brackets that don't pair up.
  doc = BigDoc(30000, {{26001, R"J({"ph": "X", "args": {"a": [1, 77}})J"}});
  t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr(absl::StrCat("invalid JSON at byte ", doc.find("77}}") + 2,
                                     " (in traceEvents[26001]): expected ',' or ']'")));
  // Garbage between events.
  doc = BigDoc(30000);
  const size_t gap = doc.find(",\n    ", doc.size() / 2);
  doc.insert(gap, " x");
  t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr(absl::StrCat("invalid JSON at byte ", gap + 1, " (in traceEvents[")));
  EXPECT_THAT(t.status().message(), HasSubstr("expected ',' or ']'"));

  // Invalid UTF-8 and control characters inside events are simdjson's first-stage errors.
  doc = BigDoc(30000, {{20002, "{\"ph\": \"X\", \"name\": \"bad \xff\"}"}});
  t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr(absl::StrCat("invalid JSON at byte ", doc.find('\xff'),
                                     " (in traceEvents[20002]): invalid UTF-8")));
  doc = BigDoc(30000, {{17003, "{\"ph\": \"X\", \"name\": \"tab\there\"}"}});
  t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr(absl::StrCat("invalid JSON at byte ", doc.find('\t'),
                                     " (in traceEvents[17003]): control character")));

  // Truncated: the end of the text.
  doc = BigDoc(30000);
  doc.resize(doc.find(",\n    ", doc.size() / 2) + 1);
  t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr(absl::StrCat("byte ", doc.size())));
}

TEST(KinetoStreamTest, EventErrorsComeInDocumentOrder) {
  // A missing "dur" in event 100 is reported before the bad UTF-8 in event 200, though
  // the first-stage error is found first.
  const std::string no_dur = R"J({"ph": "X", "cat": "cpu_op", "name": "op", "ts": 1})J";
  absl::StatusOr<Trace> t =
      ImportBoth(BigDoc(1000, {{100, no_dur}, {200, "{\"name\": \"\xc3\x28\"}"}}));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("traceEvents[100]"));
  EXPECT_THAT(t.status().message(), HasSubstr("missing field \"dur\""));
}

TEST(KinetoStreamTest, EventLargerThanAWindow) {
  const std::string big = absl::StrCat(R"J({"ph": "X", "cat": "cpu_op", "name": "big", "pid": 1,)J",
                                       R"J( "tid": 1, "ts": 5, "dur": 1, "args": {"blob": ")J",
                                       std::string(5 << 20, 'b'), "\"}}");
  absl::StatusOr<Trace> t = ImportBoth(BigDoc(2000, {{1000, big}}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ranges.size(), 501u);  // event 1000 was a kernel
  EXPECT_EQ(t->strings.Get(t->ranges[250].name), "big");
}

TEST(KinetoStreamTest, EventOverTheSizeLimitIsAnError) {
  std::string doc = BigDoc(10, {{7, "HUGE"}});
  doc.replace(doc.find("HUGE"), 4,
              absl::StrCat(R"J({"ph": "X", "args": {"blob": ")J",
                           std::string((64 << 20) + 10, 'h'), "\"}}"));
  absl::StatusOr<Trace> t = ImportBoth(doc);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("traceEvents[7]"));
  EXPECT_THAT(t.status().message(), HasSubstr("64 MiB"));
}

TEST(KinetoStreamTest, TwoTraceEventsArraysAndDevicePropertiesAnywhere) {
  const std::string k = R"J({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1})J";
  absl::StatusOr<Trace> t = ImportBoth(absl::StrCat(
      R"J({"traceEvents": [)J", k, ", ", k, R"J(], "deviceProperties": [{"name": "A"}], )J",
      R"J("traceEvents": [)J", k, R"J(, {"ph": "X", "cat": "kernel", "ts": 1, "dur": 1}]})J"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("traceEvents[3]"));
  t = ImportBoth(absl::StrCat(R"J({"traceEvents": [)J", k, R"J(], "traceEvents": [)J", k, "]}"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->gpu_events.size(), 2u);
}

TEST(KinetoStreamTest, GzipProgressEndsAtTheTextSize) {
  const std::string doc = BigDoc(40000);
  std::vector<std::pair<size_t, size_t>> calls;
  KinetoImportOptions options;
  options.progress = [&](size_t done, size_t total) { calls.emplace_back(done, total); };
  absl::StatusOr<Trace> t = ImportKinetoBytes(GzipBytes(doc, 1), options);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_GT(calls.size(), 3u);
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_LE(calls[i - 1].first, calls[i].first);
    EXPECT_LE(calls[i].first, calls[i].second);
  }
  EXPECT_EQ(calls.back(), std::make_pair(doc.size(), doc.size()));
  EXPECT_EQ(calls.front().second, doc.size());  // the gzip trailer's size hint
}

TEST(KinetoStreamTest, CorruptGzipWinsOverTheGarbageItInflatesTo) {
  const std::string gz = GzipBytes(BigDoc(40000), 6);
  for (size_t k : {gz.size() / 4, gz.size() / 2}) {
    std::string bad = gz;
    for (size_t i = k; i < k + 16; ++i) bad[i] = static_cast<char>(~bad[i]);
    absl::StatusOr<Trace> t = ImportKinetoBytes(bad);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();
    EXPECT_THAT(t.status().message(), HasSubstr("gzip")) << t.status();
  }
  // A cut file: truncation, wherever the JSON stops.
  absl::StatusOr<Trace> t = ImportKinetoBytes(gz.substr(0, gz.size() / 3));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("truncated gzip")) << t.status();
}

// Outside events the grammar of everything is checked, values the importer skips too
// (inside events simdjson checks what the importer reads, as before).
TEST(KinetoStreamTest, InvalidJsonOutsideEventsIsRejected) {
  const std::string events = R"J("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}])J";
  struct Case {
    std::string doc, bad, what;
  } cases[] = {
      {"{\"x\": tru, " + events + "}", "tru,", "invalid literal"},
      {"{" + events + ", \"x\": [1 2]}", "2]", "expected ',' or ']'"},
      {"{" + events + R"J(, "deviceProperties": [{"name": "x" "id": 0}]})J", "\"id\"",
       "expected ',' or '}'"},
      {"{\"distributedInfo\": {\"rank\": 01.}, " + events + "}", "}, ", "digits expected after '.'"},
      {"{\"s\": \"a\\qb\", " + events + "}", "\\q", "bad escape in string"},
      {"{\"s\": \"caf\xc3\", " + events + "}", "\xc3", "invalid UTF-8 in string"},
      {"{" + events + ", \"n\": -}", "-}", "invalid value"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Trace> t = ImportBoth(c.doc);
    ASSERT_FALSE(t.ok()) << c.doc;
    EXPECT_THAT(t.status().message(),
                HasSubstr(absl::StrCat("invalid JSON at byte ", c.doc.find(c.bad), ": ", c.what)))
        << c.doc;
  }
}

// A document damaged one printable byte at a time: when the import says "invalid JSON",
// it names the byte and the words of an exact scan of the whole text.
TEST(KinetoStreamTest, SyntaxErrorsAreWhereTheLocatorSaysOnDamagedDocuments) {
  const std::string doc = BigDoc(12);
  const std::string alphabet = "{}[]:,\"\\ 0-.eE+tfnux/";
  uint64_t x = 88172645463325252ull;
  size_t compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::string bad = doc;
    const size_t at = x % bad.size();
    const char c = alphabet[(x >> 20) % alphabet.size()];
    switch ((x >> 40) % 3) {
      case 0: bad[at] = c; break;
      case 1: bad.insert(at, 1, c); break;
      default: bad.erase(at, 1); break;
    }
    std::string copy = bad;
    absl::StatusOr<Trace> t = ImportKinetoJson(copy);
    if (t.ok()) continue;
    const std::string msg(t.status().message());
    const size_t colon = msg.find(": ");
    if (msg.rfind("invalid JSON at byte ", 0) != 0 || colon == std::string::npos) continue;
    const JsonErrorLocation located = LocateJsonError(bad);
    const std::string what = msg.substr(colon + 2);
    // Only the locator's words: simdjson's own (a type error in a field the importer
    // reads) and importer-level ones ("is not an object") are named where they are seen.
    static const char* const kLocatorWords[] = {
        "expected a string key", "expected ':' after key", "expected ',' or '}'",
        "expected ',' or ']'", "unexpected content after the document", "empty document",
        "unexpected end of document", "unterminated string", "bad \\u escape",
        "bad escape in string", "control character in string", "invalid UTF-8 in string",
        "invalid literal", "invalid value", "digits expected after '.'",
        "digits expected in exponent"};
    if (std::find(std::begin(kLocatorWords), std::end(kLocatorWords), what) ==
        std::end(kLocatorWords)) {
      continue;
    }
    ASSERT_TRUE(located.found) << msg << "\n" << bad;
    EXPECT_EQ(msg.substr(21, msg.find_first_not_of("0123456789", 21) - 21),
              std::to_string(located.offset))
        << msg << " / " << located.what << "\n" << bad;
    EXPECT_EQ(what, located.what) << msg << "\n" << bad;
    ++compared;
  }
  EXPECT_GT(compared, 500u);
}

// Text from memory with a size hint that may be wrong.
class HintedText : public KinetoTextSource {
 public:
  HintedText(const std::string& text, size_t hint) : text_(text), hint_(hint) {}
  absl::StatusOr<size_t> Read(char* out, size_t capacity) override {
    const size_t n = std::min(capacity, text_.size() - at_);
    std::copy_n(text_.data() + at_, n, out);
    at_ += n;
    return n;
  }
  bool done() const override { return at_ == text_.size(); }
  size_t size_hint() const override { return hint_; }

 private:
  const std::string& text_;
  size_t hint_, at_ = 0;
};

class KeepEvents : public EventConsumer {
 public:
  void OnGpuEvent(const GpuEvent& e) override { trace.gpu_events.push_back(e); }
  void OnApiCall(const ApiCall& c) override { trace.api_calls.push_back(c); }
  void OnRange(const Range& r) override { trace.ranges.push_back(r); }
  Trace trace;
};

absl::StatusOr<Trace> ImportFromSource(const std::string& doc, size_t hint) {
  HintedText text(doc, hint);
  KeepEvents keep;
  absl::StatusOr<Trace> names = ImportKinetoEvents(text, keep);
  if (!names.ok()) return names.status();
  names->gpu_events = std::move(keep.trace.gpu_events);
  names->api_calls = std::move(keep.trace.api_calls);
  names->ranges = std::move(keep.trace.ranges);
  return names;
}

// The window and the parser are sized from the source's hint: a hint that is right, absent,
// far below or above the text's size, on small and large documents, one with an event
// larger than any window and one damaged deep inside, gives the same events and errors.
TEST(KinetoStreamTest, ASourceSizeHintRightOrWrongChangesNothing) {
  const std::string big = absl::StrCat(R"J({"ph": "X", "cat": "cpu_op", "name": "big", "pid": 1,)J",
                                       R"J( "tid": 1, "ts": 5, "dur": 1, "args": {"blob": ")J",
                                       std::string(3 << 20, 'b'), "\"}}");
  const std::vector<std::string> docs = {BigDoc(3), BigDoc(40000), BigDoc(2000, {{1000, big}}),
                                         BigDoc(20000, {{15000, R"J({"ph": "X", "ts": })J"}})};
  for (size_t d = 0; d < docs.size(); ++d) {
    const std::string& doc = docs[d];
    const std::string want = Summary(ImportFromSource(doc, 0));
    if (d < 3) {
      std::string plain = doc;
      ASSERT_EQ(Summary(ImportKinetoJson(plain)), want) << "document " << d;
    } else {
      ASSERT_THAT(want, HasSubstr("traceEvents[15000]"));
    }
    for (size_t hint : {doc.size(), size_t{1}, size_t{100}, doc.size() / 3, doc.size() - 1,
                        doc.size() + 1, doc.size() * 2, SIZE_MAX}) {
      EXPECT_EQ(Summary(ImportFromSource(doc, hint)), want)
          << "document " << d << " (" << doc.size() << " bytes), hint " << hint;
    }
  }
}

}  // namespace
}  // namespace opmap::analysis
