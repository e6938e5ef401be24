// Gunzip: round trips through zlib's own gzip writer, concatenated members, the padding
// the JSON parser needs, and errors that name the compressed byte offset.
#include "analysis/import/gzip.h"
#include "analysis/import/gzip_pipeline.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/gzip_bytes.h"

namespace opmap::analysis {
namespace {

using ::opmap::testing::GzipBytes;

using ::testing::HasSubstr;


// Deterministic, compressible but not trivially so: a fake trace.
std::string FakeTraceText(size_t events) {
  std::string s = "{\"traceEvents\": [\n";
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < events; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(x % 97) +
         "\", \"ts\": " + std::to_string(1000000 + i * 7) + "." + std::to_string(x % 1000) +
         ", \"dur\": " + std::to_string(x % 5000) + "},\n";
  }
  s += "{}]}";
  return s;
}

constexpr size_t kPadding = 64;

TEST(LooksGzippedTest, Magic) {
  EXPECT_TRUE(LooksGzipped(std::string("\x1f\x8b", 2)));
  EXPECT_TRUE(LooksGzipped(GzipBytes("x")));
  EXPECT_FALSE(LooksGzipped(""));
  EXPECT_FALSE(LooksGzipped("\x1f"));
  EXPECT_FALSE(LooksGzipped("{\"traceEvents\": []}"));
  EXPECT_FALSE(LooksGzipped(std::string("\x8b\x1f", 2)));
}

TEST(GunzipTest, RoundTrip) {
  const std::string text = FakeTraceText(5000);
  for (int level : {0, 1, 6, 9}) {
    absl::StatusOr<std::string> out = Gunzip(GzipBytes(text, level), kPadding);
    ASSERT_TRUE(out.ok()) << "level " << level << ": " << out.status();
    EXPECT_EQ(*out, text) << "level " << level;
    EXPECT_GE(out->capacity(), out->size() + kPadding) << "level " << level;
  }
}

TEST(GunzipTest, EmptyAndTinyPayloads) {
  for (const std::string& text : {std::string(), std::string("x"), std::string("{}")}) {
    absl::StatusOr<std::string> out = Gunzip(GzipBytes(text), kPadding);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, text);
    EXPECT_GE(out->capacity(), out->size() + kPadding);
  }
}

TEST(GunzipTest, HighRatioPayloadGrowsPastTheFirstReserve) {
  // 24 MiB of one byte: compresses ~1000:1, inflates over several buffer growths.
  const std::string text(24u << 20, 'a');
  std::string gz = GzipBytes(text, 9);
  ASSERT_LT(gz.size(), 100000u);
  absl::StatusOr<std::string> out = Gunzip(gz, kPadding);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), text.size());
  EXPECT_TRUE(*out == text);
  EXPECT_GE(out->capacity(), out->size() + kPadding);
}

TEST(GunzipTest, ConcatenatedMembers) {
  const std::string a = FakeTraceText(300), b = "second member", c(100000, 'z');
  // The last member's ISIZE (a small one here) is only a hint for the whole output.
  std::string gz = GzipBytes(a) + GzipBytes(c) + GzipBytes(b);
  absl::StatusOr<std::string> out = Gunzip(gz, kPadding);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, a + c + b);
  EXPECT_GE(out->capacity(), out->size() + kPadding);
}

TEST(GunzipTest, PaddingIsHonouredForAnySize) {
  for (size_t padding : {size_t{0}, size_t{1}, size_t{64}, size_t{4096}, size_t{1} << 20}) {
    absl::StatusOr<std::string> out = Gunzip(GzipBytes(FakeTraceText(50)), padding);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_GE(out->capacity(), out->size() + padding) << "padding " << padding;
  }
}

TEST(GunzipTest, NotGzip) {
  absl::StatusOr<std::string> out = Gunzip("{\"traceEvents\": []}", kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("byte 0"));
}

// The first cut at or after `target` whose last 4 bytes, read as the trailer's ISIZE, say
// under 64 MiB: while Gunzip trusts that hint (see TruncatedFileDoesNotTrustGarbageSizeHint)
// a random cut could make each case touch up to 4 GiB.
size_t CheapCut(const std::string& gz, size_t target) {
  size_t cut = target;
  while (cut >= 18 && cut < gz.size() && static_cast<uint8_t>(gz[cut - 1]) >= 4) ++cut;
  return cut;
}

TEST(GunzipTest, TruncatedStreamNamesTheOffset) {
  const std::string gz = GzipBytes(FakeTraceText(600));  // < 64 KiB inflated
  ASSERT_GT(gz.size(), 1000u);
  // Cut in the header, in the deflate data, and in the 8-byte trailer.
  for (size_t target : {size_t{2}, size_t{5}, size_t{9}, size_t{10}, size_t{11}, size_t{100},
                        gz.size() / 2, gz.size() - 9, gz.size() - 8, gz.size() - 4,
                        gz.size() - 1}) {
    const size_t cut = CheapCut(gz, target);
    if (cut >= gz.size()) continue;
    absl::StatusOr<std::string> out = Gunzip(std::string_view(gz).substr(0, cut), kPadding);
    ASSERT_FALSE(out.ok()) << "cut at " << cut;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut;
    EXPECT_THAT(out.status().message(), HasSubstr("truncated")) << "cut at " << cut;
    EXPECT_THAT(out.status().message(), HasSubstr("byte " + std::to_string(cut)))
        << "cut at " << cut << ": " << out.status();
  }
}

TEST(GunzipTest, TruncatedSecondMember) {
  const std::string first = GzipBytes("first"), second = GzipBytes(FakeTraceText(100));
  const std::string both = first + second;
  const std::string gz = both.substr(0, CheapCut(both, first.size() + second.size() / 2));
  ASSERT_LT(gz.size(), both.size());
  absl::StatusOr<std::string> out = Gunzip(gz, kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(out.status().message(), HasSubstr("byte " + std::to_string(gz.size())));
}

TEST(GunzipTest, CorruptStreamNamesACompressedOffset) {
  const std::string gz = GzipBytes(FakeTraceText(3000));
  const size_t k = gz.size() / 2;
  std::string bad = gz;
  for (size_t i = k; i < k + 8; ++i) bad[i] = static_cast<char>(~bad[i]);
  absl::StatusOr<std::string> out = Gunzip(bad, kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  std::string msg(out.status().message());
  ASSERT_THAT(msg, HasSubstr("corrupt gzip stream at compressed byte "));
  size_t at = std::stoul(msg.substr(msg.find("compressed byte ") + 16));
  // zlib notices a corruption at or after the damaged bytes, never before.
  EXPECT_GE(at, k) << msg;
  EXPECT_LE(at, gz.size()) << msg;
}

TEST(GunzipTest, BadCrcAndLengthInTrailer) {
  const std::string text = FakeTraceText(200);
  std::string gz = GzipBytes(text);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 0x55;
  absl::StatusOr<std::string> out = Gunzip(bad_crc, kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(out.status().message(), HasSubstr("corrupt gzip stream at compressed byte"));
  EXPECT_THAT(out.status().message(), HasSubstr("incorrect data check"));

  std::string bad_len = gz;
  bad_len[gz.size() - 4] ^= 0x01;
  out = Gunzip(bad_len, kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("incorrect length check"));
}

TEST(GunzipTest, BadHeader) {
  std::string gz = GzipBytes("hello");
  gz[2] = 7;  // compression method other than deflate
  absl::StatusOr<std::string> out = Gunzip(gz, kPadding);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(out.status().message(), HasSubstr("corrupt gzip stream at compressed byte"));
}

long ResidentKiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// The trailer's ISIZE is a hint. In a truncated file the last 4 bytes are whatever
// compressed data the cut left there, so the hint can say up to 4 GiB. Gunzip reserves
// hint + padding and then zero-fills all of that room before inflating into it, so a cut
// 1 KB file makes the process touch hint bytes. This test fails today (defect: see
// gzip.cc, "out.reserve(hint + tail_padding)" and the resize of the whole room).
TEST(GunzipTest, TruncatedFileDoesNotTrustGarbageSizeHint) {
  // A stored (level 0) member copies its input verbatim, so we choose what the last 4
  // bytes of the cut are: here 0x10000000 = 256 MiB as little-endian ISIZE.
  std::string text(2000, 'q');
  text.replace(1000, 4, std::string("\x00\x00\x00\x10", 4));
  const std::string gz = GzipBytes(text, 0);
  const size_t pos = gz.find(std::string("qq\x00\x00\x00\x10", 6));
  ASSERT_NE(pos, std::string::npos);
  const std::string cut = gz.substr(0, pos + 6);
  uint32_t isize;
  std::memcpy(&isize, cut.data() + cut.size() - 4, 4);
  ASSERT_EQ(isize, 0x10000000u);

  // Measure in a child so the parent's earlier peaks don't hide the growth.
  const long before_kib = ResidentKiB();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    absl::StatusOr<std::string> out = Gunzip(cut, kPadding);
    _exit(!out.ok() && out.status().code() == absl::StatusCode::kDataLoss ? 0 : 3);
  }
  int status = 0;
  struct rusage usage;
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "truncated input must give DataLoss";
  const long grew_kib = usage.ru_maxrss - before_kib;
  EXPECT_LT(grew_kib, 64 * 1024)
      << "inflating a " << cut.size() << "-byte truncated stream touched " << grew_kib / 1024
      << " MiB: Gunzip trusted the garbage ISIZE hint " << isize;
}

// The inflating thread's reader: the same bytes as Gunzip over many chunks whatever the
// read size, the text before a break and then the sticky error, and an early destruction
// while the thread waits for room.
TEST(PipelinedGzipReaderTest, SameTextAsGunzipAcrossChunks) {
  const std::string text = FakeTraceText(120000);  // ~9 MiB: more than the queue holds
  ASSERT_GT(text.size(), PipelinedGzipReader::kChunkBytes * PipelinedGzipReader::kQueueChunks);
  const std::string gz = GzipBytes(text);
  for (size_t read_size : {size_t{1} << 10, size_t{700000}, size_t{3} << 20}) {
    PipelinedGzipReader reader(gz);
    std::string out;
    std::string buffer(read_size, '\0');
    while (!reader.done()) {
      absl::StatusOr<size_t> n = reader.Read(buffer.data(), buffer.size());
      ASSERT_TRUE(n.ok()) << n.status();
      if (!reader.done()) {
        EXPECT_EQ(*n, read_size);  // short only at the end
      }
      out.append(buffer.data(), *n);
    }
    EXPECT_EQ(out.size(), text.size());
    EXPECT_TRUE(out == text) << "read size " << read_size;
  }
}

TEST(PipelinedGzipReaderTest, ATruncatedStreamGivesItsTextThenAStickyError) {
  const std::string text = FakeTraceText(60000);
  const std::string gz = GzipBytes(text);
  const std::string cut = gz.substr(0, gz.size() / 2);
  PipelinedGzipReader reader(cut);
  std::string out;
  std::string buffer(size_t{1} << 16, '\0');
  absl::Status error;
  while (true) {
    absl::StatusOr<size_t> n = reader.Read(buffer.data(), buffer.size());
    if (!n.ok()) {
      error = n.status();
      break;
    }
    ASSERT_GT(*n, 0u) << "a stream that broke must not look finished";
    out.append(buffer.data(), *n);
  }
  EXPECT_TRUE(absl::IsDataLoss(error)) << error;
  EXPECT_FALSE(reader.done());
  EXPECT_GT(out.size(), 0u);
  EXPECT_EQ(out, text.substr(0, out.size()));
  EXPECT_EQ(reader.Read(buffer.data(), buffer.size()).status(), error);
}

TEST(PipelinedGzipReaderTest, DestroyedWhileTheThreadWaitsForRoom) {
  const std::string gz = GzipBytes(FakeTraceText(120000));
  for (int i = 0; i < 20; ++i) {
    PipelinedGzipReader reader(gz);
    char byte = 0;
    ASSERT_TRUE(reader.Read(&byte, 1).ok());
    EXPECT_EQ(byte, '{');
  }  // each destructor returns: the test ending is the assertion
}

}  // namespace
}  // namespace opmap::analysis
