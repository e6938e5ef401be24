// Helpers for the store tests: a temporary folder, batches and rollups with known values,
// and a raw SQLite connection for looking at (or tampering with) the file behind a store.
#ifndef OPMAP_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_
#define OPMAP_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/summary/rollup.h"
#include "opmap/v1/telemetry.pb.h"

struct sqlite3;

namespace opmap::collector::testing {

// A fresh folder under the test temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct BatchSpec {
  std::string agent = "agent-1";
  std::string session = "s1";
  uint64_t seq = 1;
  std::string host = "host-a";
  std::string model = "llama";
  std::string revision = "r1";
  std::map<std::string, std::string> labels;
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  bool last = false;
  // GPUs the resource lists: (ordinal, uuid, name).
  struct Gpu {
    uint32_t device;
    std::string uuid, name;
  };
  std::vector<Gpu> gpus;
};
opmap::v1::Batch MakeBatch(const BatchSpec& spec);

// A rollup row whose count/sum/min/max/sketch summarise `values_ns`.
analysis::RollupRow Row(analysis::RollupSubject subject, const std::string& layer_type,
                        const std::string& op, const std::string& kernel,
                        const std::vector<int64_t>& values_ns);

// A batch of `kernels` kernel records shaped like the agent's: ~60 distinct names
// (interned on seq 1), realistic start/duration/correlation/grid columns.
opmap::v1::Batch MakeKernelBatch(const std::string& agent, const std::string& session,
                                 uint64_t seq, int kernels, uint64_t seed);

// Raw connection to a store file (tests only: aborts the test on open failure).
class RawDb {
 public:
  explicit RawDb(const std::string& path);
  ~RawDb();
  // Runs SQL; returns "" or SQLite's error message.
  std::string Exec(const std::string& sql);
  // The first column of the first row as an integer (-1 when there is no row).
  int64_t Int(const std::string& sql);
  std::string Text(const std::string& sql);

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace opmap::collector::testing

#endif  // OPMAP_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_
