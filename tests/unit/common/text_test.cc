// common/text: the one JSON escaper, CSV field, aligned table and `key = value` splitter.
#include <limits>
#include <string>

#include "common/text/aligned_table.h"
#include "common/text/csv.h"
#include "common/text/printable.h"
#include "common/text/json_writer.h"
#include "common/text/key_value.h"
#include "common/text/utf8.h"
#include "gtest/gtest.h"

namespace opmap::text {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonEscaped(s, &out);
  return out;
}

TEST(JsonEscape, QuotesControlsAndInvalidUtf8) {
  EXPECT_EQ(Json("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Json("\n\t\x01\x7f"), R"("\n\t\u0001\u007f")");
  EXPECT_EQ(Json("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // valid UTF-8 passes through
  EXPECT_EQ(Json("caf\xe9"), "\"caf\xEF\xBF\xBD\"");    // Latin-1 é becomes U+FFFD
  EXPECT_EQ(Json("\xed\xa0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
}

TEST(JsonWriter, ObjectsArraysAndNonFiniteNumbers) {
  JsonWriter w;
  w.BeginObject().Field("n", int64_t{3}).Field("x", 1.5, 2).Key("a").BeginArray();
  w.Double(std::numeric_limits<double>::quiet_NaN()).String("s").EndArray().EndObject();
  EXPECT_EQ(w.str(), R"({"n":3,"x":1.50,"a":[null,"s"]})");
}

// A whole number wider than int64 (a hostile ncu export's dram_bytes) is written in
// exponent form: as an integer literal, simdjson and typed readers refuse the report.
TEST(JsonWriter, WholeNumbersBeyondInt64UseTheExponentForm) {
  JsonWriter w;
  w.BeginArray().Double(1.5e110, 0).Double(-1e19, 0).Double(9.2e18, 0).Double(1e20, 2);
  w.EndArray();
  EXPECT_EQ(w.str(), "[1.5e+110,-1e+19,9200000000000000000,"
                     "100000000000000000000.00]");
}

TEST(Csv, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  // A line break cannot end a row: it is escaped (printable.h), so no quoting is needed.
  EXPECT_EQ(CsvField("two\nlines"), "two\\nlines");
  EXPECT_EQ(CsvField("a,\x1b[2J"), "\"a,\\x1b[2J\"");
}

// The hostile-input probe's names: what reached analysts' terminals raw.
TEST(Printable, ControlsBidiAndInvalidBytesAreShownNotObeyed) {
  EXPECT_EQ(Printable("aten::mm"), "aten::mm");
  EXPECT_EQ(Printable("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");     // OSC: retitle
  EXPECT_EQ(Printable("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");  // clear, colour
  EXPECT_EQ(Printable("row\nfake row\r\t"), "row\\nfake row\\r\\t");
  EXPECT_EQ(Printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(Printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(Printable("c1\xc2\x9b" "31m"), "c1\\u009b31m");             // C1 CSI
  EXPECT_EQ(Printable("evil\xe2\x80\xaetxt.exe"), "evil\\u202etxt.exe");  // RLO
  EXPECT_EQ(Printable("zero\xe2\x80\x8bwidth"), "zero\\u200bwidth");
  EXPECT_EQ(Printable("bad\xff\xc3"), "bad\\xff\\xc3");                  // invalid UTF-8
  EXPECT_EQ(Printable("µs → naïve"), "µs → naïve");                       // text stays
  EXPECT_EQ(Printable("a\\x1b"), "a\\\\x1b");  // a literal backslash cannot forge one
  EXPECT_EQ(PrintableCell("\x1b[31mabcdefgh", 10), "\\x1b[31...");
  EXPECT_EQ(PrintableCell("ééééé", 4), "é...");
  EXPECT_EQ(PrintableCell("short", 40), "short");
}

TEST(AlignedTable, TextLeftNumbersRightNoTrailingBlanks) {
  AlignedTable t({"name", "count"}, {false, true});
  t.Add({"gemm", "12"});
  t.Add({"softmax_kernel", "3"});
  t.Add({"short"});  // padded with an empty cell
  EXPECT_EQ(t.Render(),
            "name            count\n"
            "gemm               12\n"
            "softmax_kernel      3\n"
            "short                \n");
  AlignedTable last_text({"n", "what"}, {true, false});
  last_text.Add({"1", "x"});
  last_text.Add({"100", "longer"});
  EXPECT_EQ(last_text.Render(), "  n  what\n  1  x\n100  longer\n");
}

TEST(KeyValue, SplitsCommentsQuotesAndLineNumbers) {
  absl::StatusOr<std::vector<KeyValueLine>> lines =
      SplitKeyValueText("# header\n\n a = 1 \nname = \"x y\" # note\nempty =\n", "f.conf");
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].line, 3);
  EXPECT_EQ((*lines)[0].key, "a");
  EXPECT_EQ((*lines)[0].value, "1");
  EXPECT_EQ((*lines)[1].line, 4);
  EXPECT_EQ((*lines)[1].value, "x y");
  EXPECT_EQ((*lines)[2].key, "empty");
  EXPECT_EQ((*lines)[2].value, "");
  absl::StatusOr<std::vector<KeyValueLine>> bad = SplitKeyValueText("a = 1\nno equals\n", "f.conf");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "f.conf:2: expected `key = value`");
}

}  // namespace
}  // namespace opmap::text

namespace opmap::text {
namespace {

// The one shortening: counts code points, never splits a UTF-8 sequence.
TEST(ShortenToCodePoints, CutsWholeCharactersAndEndsWithTheEllipsis) {
  EXPECT_EQ(ShortenToCodePoints("short", 5, "..."), "short");
  EXPECT_EQ(ShortenToCodePoints("abcdefgh", 6, "..."), "abc...");
  // "é" is two bytes, "€" three: a byte cut would split them.
  EXPECT_EQ(ShortenToCodePoints("ééééé€€", 4, "\xE2\x80\xA6"), "ééé\xE2\x80\xA6");
  EXPECT_EQ(ShortenToCodePoints("€€€€€", 3, "..."), "...");
  EXPECT_EQ(Utf8CodePoints(ShortenToCodePoints("日本語のテキスト", 5, "…")), 5u);
}

}  // namespace
}  // namespace opmap::text
