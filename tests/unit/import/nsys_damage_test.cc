// A damaged Nsight Systems export is refused, and the same way by the whole import and the
// streamed one, whatever was read before it in the process.
//
// The input is fuzz finding 15 (docs/fuzzing.md): page 54 of its NVTX_EVENTS table has cell
// offsets outside the page. Read without SQLite's cell-size check, whether the export
// imported or streamed depended on earlier reads: replaying the corpus, the whole import
// took it and the streamed one called it malformed; alone, both refused it. That memory
// is not reproducible here, so the test also checks that the reader set the connection up
// as SQLite advises for untrusted files (which is what makes the answer not depend on it).
#include <sqlite3.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "analysis/import/nsys_importer.h"
#include "analysis/model/trace.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"

namespace opmap::analysis {
namespace {

constexpr char kDamaged[] = OPMAP_FUZZ_REGRESSIONS
    "/nsys_sqlite_fuzzer/nvtx_page_cells_outside_the_page.sqlite";

class IgnoringConsumer : public EventConsumer {
 public:
  void OnGpuEvent(const GpuEvent&) override {}
  void OnApiCall(const ApiCall&) override {}
  void OnRange(const Range&) override {}
};

absl::Status Streamed(std::string image) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  EXPECT_EQ(sqlite3_deserialize(db.get(), "main", reinterpret_cast<unsigned char*>(image.data()),
                                static_cast<sqlite3_int64>(image.size()),
                                static_cast<sqlite3_int64>(image.size()),
                                SQLITE_DESERIALIZE_READONLY),
            SQLITE_OK);
  IgnoringConsumer consumer;
  absl::Status status = StreamNsysEvents(db.get(), consumer).status();
  // The reader set the connection up for an untrusted file before its first read.
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db.get(), "PRAGMA cell_size_check", -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1) << "cell_size_check";
  sqlite3_finalize(st);
  int defensive = -1, trusted_schema = -1;
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive);
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &trusted_schema);
  EXPECT_EQ(defensive, 1);
  EXPECT_EQ(trusted_schema, 0);
  return status;
}

TEST(NsysDamage, APageWithCellsOutsideItIsRefusedByBothReaders) {
  const std::string bytes = ::opmap::testing::ReadFileOrDie(kDamaged);
  // Three rounds, so that each read comes after others (the old answer depended on them).
  for (int round = 0; round < 3; ++round) {
    absl::StatusOr<Trace> whole = ImportNsysSqlite(bytes);
    ASSERT_FALSE(whole.ok()) << "round " << round;
    EXPECT_EQ(whole.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(whole.status().message(), "the file is truncated or damaged"))
        << whole.status();
    absl::Status streamed = Streamed(bytes);
    ASSERT_FALSE(streamed.ok()) << "round " << round;
    EXPECT_EQ(streamed.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(streamed.message(), "the file is truncated or damaged"))
        << streamed;
  }
}

}  // namespace
}  // namespace opmap::analysis
