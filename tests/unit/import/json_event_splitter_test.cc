// JsonEventSplitter: the same events and errors whatever the windows (down to one byte
// at a time), and the same error bytes and messages as LocateJsonError on the whole text
// for errors outside events.
#include "analysis/import/json_event_splitter.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/import/json_error_locator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::analysis {
namespace {

using Step = JsonEventSplitter::Step;

struct Outcome {
  std::vector<std::string> events;  // "index:text"
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // of the events, and of an unfinished one
  std::vector<std::string> device_properties;
  bool ok = false;
  SplitterError error;
  size_t event_count = 0;
  bool saw_events = false;
};

// Feeds `text` to a splitter through a rolling window that grows by `step` bytes whenever
// the splitter asks for more, dropping what it no longer needs.
Outcome Split(const std::string& text, size_t step, size_t batch_bytes = 64) {
  JsonEventSplitter s(batch_bytes);
  Outcome o;
  uint64_t base = 0;
  size_t have = std::min(step, text.size());  // text[0, have) read so far
  while (true) {
    // A fresh copy with read-ahead slack, so a read past the window is caught by ASan.
    const std::string window = text.substr(base, have - base) +
                               std::string(kSplitterReadAhead, '"');
    const bool final = have == text.size();
    const Step r = s.Scan(window.data(), have - base, base, final);
    for (size_t i = 0; i < s.events().size(); ++i) {
      const auto& e = s.events()[i];
      EXPECT_GE(e.begin, base);
      EXPECT_LE(e.end, have);
      o.events.push_back(absl::StrCat(s.first_event_index() + i, ":",
                                      text.substr(e.begin, e.end - e.begin)));
      o.spans.emplace_back(e.begin, e.end);
      if (e.comma != JsonEventSplitter::kNoComma) {
        EXPECT_EQ(text[e.comma], ',');
      }
    }
    s.events().clear();
    if (r == Step::kDeviceProperties) {
      const auto& d = s.device_properties();
      o.device_properties.push_back(text.substr(d.begin, d.end - d.begin));
    } else if (r == Step::kDone || r == Step::kError) {
      o.ok = r == Step::kDone;
      o.error = s.error();
      if (s.in_event()) o.spans.emplace_back(s.retain_from(), text.size());
      break;
    } else if (r == Step::kNeedMore) {
      EXPECT_FALSE(final);
      EXPECT_LE(base, s.retain_from());
      base = s.retain_from();
      have = std::min(text.size(), have + step);
    }
  }
  o.event_count = s.event_count();
  o.saw_events = s.saw_events();
  return o;
}

void ExpectSame(const Outcome& a, const Outcome& b, const std::string& where) {
  EXPECT_EQ(a.events, b.events) << where;
  EXPECT_EQ(a.device_properties, b.device_properties) << where;
  EXPECT_EQ(a.ok, b.ok) << where;
  EXPECT_EQ(a.event_count, b.event_count) << where;
  EXPECT_EQ(a.saw_events, b.saw_events) << where;
  if (!a.ok && !b.ok) {
    EXPECT_EQ(a.error.kind, b.error.kind) << where;
    EXPECT_EQ(a.error.offset, b.error.offset) << where;
    EXPECT_EQ(a.error.what, b.error.what) << where;
    EXPECT_EQ(a.error.in_events, b.error.in_events) << where;
    EXPECT_EQ(a.error.event_index, b.error.event_index) << where;
  }
}

const char kDoc[] = R"J({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU \"0\" caf\u00e9"}],
  "distributedInfo": {"backend": "nccl", "ranks": [0, 1, -2.5e+3, true, false, null], "x": {}},
  "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "void f<(anon)::X, {1}>[2]\\", "ts": 1.5, "dur": 2,
     "args": {"grid": [1, 2, 3], "Input Dims": [[], [[1]]], "s": "\"}]", "e": 1E-7}},
    {},
    {"ph": "i", "s": "t", "nested": {"a": {"b": [{"c": "\ud83d\ude00"}]}}}
  ],
  "traceName": "caf\u00e9 \u00e8 \u4e2d",
  "traceEvents": [{"second": "array"}]
})J";

TEST(JsonEventSplitterTest, FindsEventsAndDeviceProperties) {
  const Outcome o = Split(kDoc, sizeof(kDoc));
  ASSERT_TRUE(o.ok) << o.error.what << " at " << o.error.offset;
  ASSERT_EQ(o.events.size(), 4u);
  EXPECT_THAT(o.events[0], ::testing::StartsWith("0:{\"ph\": \"X\""));
  EXPECT_EQ(o.events[1], "1:{}");
  EXPECT_EQ(o.events[3], "3:{\"second\": \"array\"}");
  EXPECT_THAT(o.device_properties,
              ::testing::ElementsAre(R"J([{"id": 0, "name": "GPU \"0\" caf\u00e9"}])J"));
  EXPECT_EQ(o.event_count, 4u);
  EXPECT_TRUE(o.saw_events);
}

TEST(JsonEventSplitterTest, BareArrayOfEvents) {
  const Outcome o = Split("  [{\"a\": 1} ,\n{\"b\": [2]}]  \n", 100);
  ASSERT_TRUE(o.ok);
  EXPECT_THAT(o.events, ::testing::ElementsAre("0:{\"a\": 1}", "1:{\"b\": [2]}"));
}

TEST(JsonEventSplitterTest, AnyWindowSizeGivesTheSameResult) {
  const std::vector<std::string> docs = {
      kDoc,
      "[{\"a\": \"x\\u00e9\\\\\"}, {\"b\": -0.5e-3}]",
      "{\"traceEvents\": [{\"a\": 1}, 5]}",
      "{\"traceEvents\": [{\"a\": tru}]}",
      "{\"traceEvents\": {}}",
      "{\"deviceProperties\": [1, 2 3]}",
      "{\"x\": \"unterminated",
      "{\"x\": \"bad \\q escape\"}",
      "{\"x\": \"bad \\u12G4 escape\"}",
      "{\"x\": 1.}",
      "{\"x\": 1e+}",
      "{\"x\": -}",
      "{\"x\": nul",
      "[{}] x",
      "  ",
      "\"str\"",
      "{\"traceEvents\": [{\"a\": 1}, ]}",
      std::string("{\"k\": \"ctl \x01\"}"),
      std::string("{\"k\": \"utf8 \xc3\xa9 ok, bad \xc3\x28\"}"),
      std::string("{\"k\": \"truncated utf8 \xe2\x82"),
  };
  for (const std::string& doc : docs) {
    const Outcome whole = Split(doc, doc.size() + 1);
    for (size_t step = 1; step <= doc.size(); ++step) {
      ExpectSame(whole, Split(doc, step, 1 + step % 40), absl::StrCat(doc, " step ", step));
    }
  }
}

// Valid documents damaged one printable byte at a time. Outside events the splitter is
// the only check: it finds the locator's error at the same byte with the same words (or
// an importer-level one no later). Inside events it only matches brackets and leaves the
// rest to simdjson; an error it finds there is still the locator's.
TEST(JsonEventSplitterTest, AgreesWithTheLocatorOnDamagedDocuments) {
  const std::string doc = kDoc;
  const std::string alphabet = "{}[]:,\"\\ 0-.eE+tfnux/";
  uint64_t x = 88172645463325252ull;
  size_t compared = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::string bad = doc;
    const size_t at = x % bad.size();
    const char c = alphabet[(x >> 20) % alphabet.size()];
    switch ((x >> 40) % 3) {
      case 0: bad[at] = c; break;
      case 1: bad.insert(at, 1, c); break;
      default: bad.erase(at, 1); break;
    }
    const JsonErrorLocation located = LocateJsonError(bad);
    const Outcome o = Split(bad, 7 + x % 50, 1 + (x >> 8) % 300);
    SCOPED_TRACE(bad);
    bool in_event = false;
    for (const auto& [begin, end] : o.spans) {
      in_event |= located.found && begin <= located.offset && located.offset < end;
    }
    if (o.ok) {
      EXPECT_TRUE(!located.found || in_event) << located.what << " at " << located.offset;
      continue;
    }
    if (o.error.kind != SplitterError::kSyntax) {
      if (located.found && !in_event) {
        EXPECT_LE(o.error.offset, located.offset);
      }
      continue;
    }
    ASSERT_TRUE(located.found) << o.error.what << " at " << o.error.offset;
    EXPECT_GE(o.error.offset, located.offset);
    if (in_event && o.error.offset != located.offset) continue;  // simdjson's to find
    EXPECT_EQ(o.error.offset, located.offset);
    EXPECT_EQ(o.error.what, located.what);
    ++compared;
  }
  EXPECT_GT(compared, 1000u);
}

}  // namespace
}  // namespace opmap::analysis
