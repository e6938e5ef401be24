// Test helpers for the real data in ../shared: locating it, reading files and the peer
// tools' reference CSVs. Tests skip (GTEST_SKIP) with a message when ../shared is absent.
#ifndef OPMAP_TESTS_TESTING_SHARED_DATA_H_
#define OPMAP_TESTS_TESTING_SHARED_DATA_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opmap::testing {

// OPMAP_SHARED_DIR (compile-time default) unless the OPMAP_SHARED_DIR env var overrides.
std::string SharedDir();
bool SharedFileExists(const std::string& relative);
std::string SharedPath(const std::string& relative);

// A gtest parameter name for a file under ../shared: "traces/a-b.json.gz" -> "a_b_json_gz".
std::string SharedTestName(const std::string& relative);

// Whole file; aborts the test binary with a message on failure (tests only).
std::string ReadFileOrDie(const std::string& path);

// A CSV with a header row; handles quoted fields with commas and doubled quotes.
using CsvRow = std::map<std::string, std::string>;
std::vector<CsvRow> ReadCsv(const std::string& path);
double ToDouble(const std::string& s);

}  // namespace opmap::testing

// Skips the current test when ../shared (or one file in it) is missing.
#define OPMAP_REQUIRE_SHARED(relative)                                                   \
  do {                                                                                   \
    if (!::opmap::testing::SharedFileExists(relative)) {                                 \
      GTEST_SKIP() << "shared data not found: " << ::opmap::testing::SharedPath(relative) \
                   << " (tests read ../shared in place)";                                \
    }                                                                                    \
  } while (0)

#endif  // OPMAP_TESTS_TESTING_SHARED_DATA_H_
