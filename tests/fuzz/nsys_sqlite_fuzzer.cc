// libFuzzer target for Nsight Systems SQLite exports (analysis/import/nsys_importer.h):
// the input is the database image, opened with sqlite3_deserialize (read-only, no I/O)
// by ImportNsysSqlite, then analyzed as `opmap analyze` does (fuzz_analyze.h).
// Seeds: the real exports in ../shared/nsys, cut down to a few rows per table
// (tests/fuzz/make_seeds_real.py). Invariants: errors say why; a Trace that imports
// analyzes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/import/nsys_importer.h"
#include "tests/fuzz/fuzz_analyze.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opmap;
  const std::string bytes(fuzz::AsText(data, size));
  fuzz::Check(analysis::LooksLikeSqlite(bytes) == bytes.starts_with(std::string("SQLite format 3\0", 16)),
              "LooksLikeSqlite");
  absl::StatusOr<analysis::Trace> trace = analysis::ImportNsysSqlite(bytes);
  if (!trace.ok()) {
    fuzz::CheckErrorSaysWhy(trace.status(), "ImportNsysSqlite");
    return 0;
  }
  fuzz::AnalyzeTrace(*trace);
  return 0;
}
