// The store engines the shared store tests run against: "one behaviour, two engines" —
// the ingest and query suites are parameterized over them and must give the same answers
// on the same input.
//
// ClickHouse comes from, in order: OPMAP_CLICKHOUSE_URL (a clickhouse:// URL; its
// database is replaced per test), OPMAP_CLICKHOUSE_ENV (the cluster.env that
// scripts/clickhouse_cluster.sh writes: CH_URL), or a cluster this process starts with
// that script in a temporary folder (stopped at exit) when clickhouse-server is installed.
// Each test gets a database of its own, created by the store (ON CLUSTER) and dropped
// after the test. When none can be had the ClickHouse tests FAIL with the reason, unless
// OPMAP_NO_CLICKHOUSE=1, when they are skipped with it.
#ifndef OPMAP_TESTS_UNIT_STORE_STORE_ENGINES_H_
#define OPMAP_TESTS_UNIT_STORE_STORE_ENGINES_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/store/store.h"
#include "gtest/gtest.h"
#include "tests/unit/store/store_test_util.h"

namespace opmap::collector::testing {

// A ClickHouse URL whose database is `database` (fresh per call when empty); the error
// says why no ClickHouse is at hand.
absl::StatusOr<std::string> ClickHouseUrl(const std::string& database = "");

// A fixture parameterized by engine name ("sqlite", "clickhouse"): SetUp makes a fresh
// store URL (SQLite: a file in a temporary folder; ClickHouse: a new database) and opens
// it; TearDown drops the ClickHouse database.
class EngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;

  bool clickhouse() const { return GetParam() == "clickhouse"; }
  // Opens the test's store again (another collector process, or a restart).
  std::unique_ptr<Store> Reopen();
  // The SQLite file behind the store (sqlite only).
  std::string SqlitePath() const { return dir_.File("store.db"); }

  TempDir dir_;
  std::string url_;
  std::unique_ptr<Store> store_;
};

// INSTANTIATE_TEST_SUITE_P for a suite over both engines, named by engine.
#define OPMAP_INSTANTIATE_ENGINES(suite)                                       \
  INSTANTIATE_TEST_SUITE_P(Engines, suite,                                    \
                           ::testing::Values(std::string("sqlite"),           \
                                             std::string("clickhouse")),      \
                           [](const ::testing::TestParamInfo<std::string>& i) { \
                             return i.param;                                  \
                           })

}  // namespace opmap::collector::testing

#endif  // OPMAP_TESTS_UNIT_STORE_STORE_ENGINES_H_
