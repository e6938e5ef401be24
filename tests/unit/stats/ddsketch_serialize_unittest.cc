// DDSketch::Serialize/Deserialize and FromBins: round trips, the golden byte layout,
// and hostile input (the blob is stored in databases and will be fuzzed).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "analysis/stats/ddsketch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace opmap::stats {
namespace {

using ::testing::HasSubstr;

DDSketch Sample(uint64_t seed, size_t n = 5000) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(std::log(1e4), 2.0);
  DDSketch s;
  for (size_t i = 0; i < n; ++i) s.Add(i % 10 == 0 ? 0.0 : d(rng));
  return s;
}

void ExpectIdentical(const DDSketch& a, const DDSketch& b) {
  EXPECT_EQ(a.scale(), b.scale());
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.zero_count(), b.zero_count());
  EXPECT_EQ(a.offset(), b.offset());
  EXPECT_EQ(a.bins(), b.bins());
  EXPECT_EQ(std::bit_cast<uint64_t>(a.sum()), std::bit_cast<uint64_t>(b.sum()));
  if (!a.empty()) {
    EXPECT_EQ(a.min(), b.min());
    EXPECT_EQ(a.max(), b.max());
  }
}

TEST(DDSketchSerializeTest, RoundTrip) {
  std::vector<DDSketch> cases = {DDSketch(), Sample(1), *DDSketch::WithScale(2)};
  cases[2].Add(3.0);
  DDSketch zeros;
  zeros.Add(0.0, 10);
  cases.push_back(zeros);
  DDSketch wide;  // folded, negative and positive offsets
  for (double e = -12; e < 14; e += 0.01) wide.Add(std::pow(10.0, e));
  cases.push_back(wide);
  for (const DDSketch& s : cases) {
    const std::string blob = s.Serialize();
    const absl::StatusOr<DDSketch> back = DDSketch::Deserialize(blob);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectIdentical(*back, s);
    EXPECT_EQ(back->Serialize(), blob);
  }
  EXPECT_EQ(DDSketch().Serialize(), std::string("\x01\x06\x00", 3));
  std::printf("5000-value lognormal sketch: %zu bins, %zu bytes\n", cases[1].bins().size(),
              cases[1].Serialize().size());
}

TEST(DDSketchSerializeTest, GoldenLayout) {
  DDSketch s;
  s.Add(1.5);  // index ceil(log2(1.5) * 64) - 1 = 37, zigzag 74
  const std::string want(
      "\x01\x06"                             // version 1, scale 6
      "\x01\x00"                             // count 1, zero_count 0
      "\x00\x00\x00\x00\x00\x00\xf8\x3f"     // sum 1.5
      "\x00\x00\x00\x00\x00\x00\xf8\x3f"     // min 1.5
      "\x00\x00\x00\x00\x00\x00\xf8\x3f"     // max 1.5
      "\x4a\x01\x01",                        // offset 37, 1 bin, count 1
      31);
  EXPECT_EQ(s.Serialize(), want);
}

TEST(DDSketchSerializeTest, EveryTruncationFails) {
  const std::string blob = Sample(2).Serialize();
  for (size_t n = 0; n < blob.size(); ++n) {
    const absl::StatusOr<DDSketch> r = DDSketch::Deserialize(blob.substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("at byte"));
  }
}

// Any accepted input must be canonical: it re-serializes to the same bytes.
void ExpectRejectedOrCanonical(const std::string& blob) {
  const absl::StatusOr<DDSketch> r = DDSketch::Deserialize(blob);
  if (!r.ok()) {
    EXPECT_THAT(r.status().message(), HasSubstr("at byte"));
    return;
  }
  EXPECT_EQ(r->Serialize(), blob);
  (void)r->Quantile(0.5);
}

TEST(DDSketchSerializeTest, CorruptBytesNeverCrash) {
  const std::string blob = Sample(3, 300).Serialize();
  for (size_t i = 0; i < blob.size(); ++i) {
    for (int x : {0x01, 0x02, 0x10, 0x40, 0x80, 0xff}) {
      std::string bad = blob;
      bad[i] = static_cast<char>(bad[i] ^ x);
      ExpectRejectedOrCanonical(bad);
    }
  }
  std::mt19937_64 rng(4);
  for (int i = 0; i < 20000; ++i) {
    std::string junk(rng() % 48, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (i % 2 == 0 && junk.size() >= 2) junk[0] = 1, junk[1] = 6;  // get past the header
    ExpectRejectedOrCanonical(junk);
  }
}

TEST(DDSketchSerializeTest, SpecificErrorsNameTheByte) {
  auto error = [](std::string_view blob) {
    return std::string(DDSketch::Deserialize(blob).status().message());
  };
  EXPECT_THAT(error(std::string("\x02\x06\x00", 3)), HasSubstr("unsupported version 2 at byte 0"));
  EXPECT_THAT(error(std::string("\x01\x07\x00", 3)), HasSubstr("scale 7 not in [0, 6] at byte 1"));
  EXPECT_THAT(error(std::string("\x01\x06\x00\x00", 4)), HasSubstr("trailing bytes at byte 3"));
  EXPECT_THAT(error(std::string("\x01\x06\x80\x00", 4)), HasSubstr("overlong varint at byte 2"));
  EXPECT_THAT(error(std::string("\x01\x06\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 12)),
              HasSubstr("varint overflows 64 bits at byte 2"));
  std::string golden = DDSketch().Serialize();
  DDSketch one;
  one.Add(1.5);
  golden = one.Serialize();
  std::string many_bins = golden;
  many_bins[29] = '\x81';  // bin count 0x81 0x20 = 4097
  many_bins.insert(30, "\x20");
  EXPECT_THAT(error(many_bins), HasSubstr("4097 bins > 2048 at byte 29"));
  std::string wrong_count = golden;
  wrong_count[2] = 2;
  EXPECT_THAT(error(wrong_count), HasSubstr("count differs from the sum of the bins at byte 2"));
  std::string wrong_max = golden;
  wrong_max[27] = '\x40';  // max 2.0 + a bit: not in the top bin
  EXPECT_THAT(error(wrong_max), HasSubstr("inconsistent sketch"));
}

TEST(DDSketchFromBinsTest, RebuildsFromColumns) {
  const DDSketch s = Sample(5);
  absl::StatusOr<DDSketch> r = DDSketch::FromBins(s.scale(), s.offset(), s.bins(),
                                                  s.zero_count(), s.sum(), s.min(), s.max());
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectIdentical(*r, s);

  // As after a server-side sumForEach over arrays aligned to a common offset.
  std::vector<uint64_t> padded(7, 0);
  padded.insert(padded.end(), s.bins().begin(), s.bins().end());
  padded.resize(padded.size() + 5, 0);
  r = DDSketch::FromBins(s.scale(), s.offset() - 7, padded, s.zero_count(), s.sum(), s.min(),
                         s.max());
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectIdentical(*r, s);
}

TEST(DDSketchFromBinsTest, FoldsLikeAdd) {
  DDSketch s;
  std::vector<uint64_t> bins(3000, 0);
  for (int i = 0; i < 3000; i += 3) {
    bins[i] = 1;
    s.Add(s.BinValue(i - 100));
  }
  const absl::StatusOr<DDSketch> r =
      DDSketch::FromBins(6, -100, bins, 0, s.sum(), s.min(), s.max());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->bins().size(), DDSketch::kMaxBins);
  ExpectIdentical(*r, s);
}

TEST(DDSketchFromBinsTest, RejectsInconsistentParts) {
  EXPECT_FALSE(DDSketch::FromBins(9, 0, {1}, 0, 1, 1, 1).ok());         // scale
  EXPECT_FALSE(DDSketch::FromBins(6, 0, {1}, 0, 1.0, 2.0, 1.0).ok());   // min > max
  EXPECT_FALSE(DDSketch::FromBins(6, 0, {1}, 0, 1.0, 0.5, 1.0).ok());   // 1.0 is bin -1
  EXPECT_FALSE(DDSketch::FromBins(6, 0, {1}, 1, 1.0, 1.01, 1.01).ok()); // zeros, min > 0
  EXPECT_FALSE(DDSketch::FromBins(6, 1 << 30, {1}, 0, 1, 1, 1).ok());   // out of range
  EXPECT_FALSE(DDSketch::FromBins(6, 0, {~uint64_t{0}, 2}, 0, 1, 1, 1).ok());  // overflow
  const absl::StatusOr<DDSketch> empty = DDSketch::FromBins(6, 0, {0, 0}, 0, 0, 0, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace opmap::stats
