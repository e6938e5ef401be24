// Helpers shared by the spool tests: a temp dir per test, deterministic batch bytes,
// draining an outbox, and looking at the segment files on disk.
#ifndef OPMAP_TESTS_UNIT_SPOOL_SPOOL_TEST_UTIL_H_
#define OPMAP_TESTS_UNIT_SPOOL_SPOOL_TEST_UTIL_H_

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/spool/outbox.h"
#include "agent/spool/spool_record.h"
#include "gtest/gtest.h"

namespace opmap::agent::testing {

// The payload size the spool tests push, and its record's size on disk for a
// one-character session id.
inline constexpr size_t kPayload = 1000;
inline constexpr uint64_t kRecord = SpoolRecordSize(1, kPayload);

// Bytes that differ for every (session, seq) and every position.
inline std::string BatchBytes(const std::string& session, uint64_t seq, size_t size) {
  std::string b(size, '\0');
  uint64_t x = std::hash<std::string>{}(session) ^ (seq * 0x9E3779B97F4A7C15ull);
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b[i] = static_cast<char>(x);
  }
  return b;
}

// "session/seq" of each item, for order checks.
inline std::vector<std::string> Keys(const std::vector<OutboxItem>& items) {
  std::vector<std::string> out;
  for (const OutboxItem& i : items) out.push_back(i.key.session_id + "/" + std::to_string(i.key.seq));
  return out;
}

// Everything NextUnsent hands out now; each item's bytes must be the ones pushed
// (payload_size bytes, or big_size for seqs >= big_from).
inline std::vector<OutboxItem> Drain(Outbox& outbox, size_t payload_size,
                                     uint64_t big_from = UINT64_MAX, size_t big_size = 0) {
  std::vector<OutboxItem> items;
  for (;;) {
    absl::StatusOr<std::optional<OutboxItem>> next = outbox.NextUnsent();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || !next->has_value()) break;
    EXPECT_EQ((*next)->bytes, BatchBytes((*next)->key.session_id, (*next)->key.seq,
                                       (*next)->key.seq >= big_from ? big_size : payload_size))
        << (*next)->key.session_id << "/" << (*next)->key.seq;
    items.push_back(std::move(**next));
  }
  return items;
}

inline std::vector<std::filesystem::path> SegmentFiles(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("spool-", 0) == 0 && name.size() == 26) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline uint64_t SegmentBytesOnDisk(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& p : SegmentFiles(dir)) total += std::filesystem::file_size(p);
  return total;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "opmap_spool_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/spool";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  OutboxOptions Options(size_t memory_bytes) const {
    OutboxOptions o;
    o.memory_bytes = memory_bytes;
    o.spool_dir = dir_;
    o.fsync = false;  // SIGKILL safety does not need it; keeps the tests fast
    o.state_write_interval = absl::ZeroDuration();
    return o;
  }
  std::unique_ptr<Outbox> OpenOrDie(const OutboxOptions& o) {
    absl::StatusOr<std::unique_ptr<Outbox>> outbox = Outbox::Open(o);
    EXPECT_TRUE(outbox.ok()) << outbox.status();
    return outbox.ok() ? *std::move(outbox) : nullptr;
  }

  std::string root_;
  std::string dir_;
};

}  // namespace opmap::agent::testing

#endif  // OPMAP_TESTS_UNIT_SPOOL_SPOOL_TEST_UTIL_H_
