// The debug capture file (agent/inject/capture_file_format.h): writer → reader round trip,
// and a reader that refuses or flags every malformed file instead of trusting it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/transport/capture_file.h"
#include "analysis/import/capture_record_view.h"

namespace opmap::transport {
namespace {

std::string RangeBytes(const std::string& name, uint64_t payload) {
  ring::RangeRecord r{};
  const uint32_t size = ring::AlignRecord(static_cast<uint32_t>(sizeof(r) + name.size()));
  r.h.size_and_commit = size | ring::kCommitBit;
  r.h.type = ring::kRange;
  r.payload = payload;
  r.name_len = static_cast<uint16_t>(name.size());
  std::string out(size, '\0');
  std::memcpy(out.data(), &r, sizeof(r));
  std::memcpy(out.data() + sizeof(r), name.data(), name.size());
  return out;
}

std::span<const uint8_t> Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CaptureFileTest : public ::testing::Test {
 protected:
  std::string path_ = "/tmp/opmap_capture_file_test_" + std::to_string(getpid()) + ".cap";
  ~CaptureFileTest() override { unlink(path_.c_str()); }

  // A complete file with two ranges.
  std::string Complete() {
    auto w = CaptureFileWriter::Create(path_, 77, 1 << 16, "pid=77\nmodel=m\n");
    EXPECT_TRUE(w.ok()) << w.status();
    EXPECT_TRUE(w->Append(Span(RangeBytes("demo::gelu{flops=1,bytes=2}", 5))).ok());
    EXPECT_TRUE(w->Append(Span(RangeBytes("forward", 6))).ok());
    capfile::TrailerRecord t{};
    t.drops[ring::kRingFull] = 3;
    t.records_committed = 2;
    EXPECT_TRUE(w->Finish(t).ok());
    return Slurp(path_);
  }
};

TEST_F(CaptureFileTest, RoundTrip) {
  Complete();
  auto f = ReadCaptureFile(path_);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->header.pid, 77u);
  EXPECT_EQ(f->header.ring_capacity, 1u << 16);
  EXPECT_EQ(f->metadata, "pid=77\nmodel=m\n");
  ASSERT_EQ(f->records.size(), 2u);
  EXPECT_EQ(analysis::RecordName(Span(f->records[0])), "demo::gelu{flops=1,bytes=2}");
  EXPECT_EQ(analysis::FixedPart<ring::RangeRecord>(Span(f->records[1]))->payload, 6u);
  ASSERT_TRUE(f->trailer.has_value());
  EXPECT_EQ(f->trailer->records_written, 2u);
  EXPECT_EQ(f->trailer->drops[ring::kRingFull], 3u);
  EXPECT_FALSE(f->cut_short);
}

TEST_F(CaptureFileTest, FileCutShortKeepsTheRecordsBeforeTheCut) {
  const std::string bytes = Complete();
  const size_t trailer = sizeof(capfile::TrailerRecord);
  // Without the trailer: complete records, no trailer, not cut inside a record.
  auto f = analysis::ParseCaptureFile(std::string_view(bytes).substr(0, bytes.size() - trailer));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->records.size(), 2u);
  EXPECT_FALSE(f->trailer.has_value());
  EXPECT_FALSE(f->cut_short);
  // Cut inside the second range.
  f = analysis::ParseCaptureFile(std::string_view(bytes).substr(0, bytes.size() - trailer - 20));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->records.size(), 1u);
  EXPECT_TRUE(f->cut_short);
}

TEST_F(CaptureFileTest, RejectsMalformedFiles) {
  const std::string good = Complete();
  const size_t first = sizeof(capfile::FileHeader);
  auto corrupt = [&](size_t offset, uint32_t value) {
    std::string b = good;
    std::memcpy(b.data() + offset, &value, sizeof(value));
    return b;
  };
  EXPECT_FALSE(analysis::ParseCaptureFile("OPMAP").ok()) << "shorter than the header";
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(0, 0x58585858)).ok()) << "magic";
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(8, 9)).ok()) << "version";
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(first, 12 | ring::kCommitBit)).ok()) << "size % 8";
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(first, 24)).ok()) << "no commit bit";
  // The metadata record claims more text than it holds.
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(first + 8, 4096)).ok()) << "metadata length";
  // A range whose size is below RangeRecord's fixed part.
  const size_t meta = ring::AlignRecord(sizeof(capfile::MetadataRecord) + 15);
  EXPECT_FALSE(analysis::ParseCaptureFile(corrupt(first + meta, 16 | ring::kCommitBit)).ok())
      << "short range";
  // Data after the trailer.
  EXPECT_FALSE(analysis::ParseCaptureFile(good + RangeBytes("late", 1)).ok()) << "after the trailer";
}

}  // namespace
}  // namespace opmap::transport
