#include "tests/testing/nsys_graph_export.h"

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace opmap::testing {
namespace {

constexpr int64_t kPid = 4242, kTid = 4243;
// Nsight's serialized ids: the pid in bits 24..47, the tid in bits 0..23.
constexpr int64_t kGlobalPid = (int64_t{1} << 56) | (kPid << 24);
constexpr int64_t kGlobalTid = kGlobalPid | kTid;
constexpr int kPushPop = 59;

void Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "?";
    sqlite3_free(error);
    GTEST_FAIL_AT(__FILE__, __LINE__) << "nsys export: " << message << " in: " << sql;
  }
}

}  // namespace

void WriteNsysGraphExport(const std::string& path, const NsysGraphExportOptions& options) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  Exec(db, R"(
    CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
      nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
      shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,
      gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
      blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
      staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
      graphNodeId INTEGER, graphId INTEGER);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
      endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
    CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL,
      graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER);
    INSERT INTO StringIds VALUES (1, 'cudaStreamBeginCapture_v10000'),
      (2, 'cudaLaunchKernel_v7000'), (3, 'cudaStreamEndCapture_v10000'),
      (4, 'cudaGraphInstantiate_v12000'), (5, 'cudaGraphLaunch_v10000'),
      (6, 'gemm_kernel'), (7, 'rms_norm_kernel'), (8, 'cudaLaunchKernel'),
      (9, 'cudaGraphInstantiate');
  )");
  std::string sql;
  auto call = [&](int64_t start, int64_t end, int64_t correlation, int name) {
    absl::StrAppendFormat(&sql,
                          "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%d, %d, 1, %d, %d, "
                          "%d, 0, NULL);\n",
                          start, end, kGlobalTid, correlation, name);
  };
  auto range = [&](int64_t start, int64_t end, const char* text) {
    absl::StrAppendFormat(&sql,
                          "INSERT INTO NVTX_EVENTS VALUES (%d, %d, %d, NULL, NULL, NULL, '%s', "
                          "%d, NULL, NULL, 0);\n",
                          start, end, kPushPop, text, kGlobalTid);
  };
  auto kernel = [&](int64_t start, int64_t end, int64_t correlation, int name, int64_t node) {
    absl::StrAppendFormat(&sql,
                          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%d, %d, 0, 1, 7, %d, "
                          "%d, %d, %d, NULL, 32, 4, 1, 1, 128, 1, 1, 0, 0, %d, 5);\n",
                          start, end, correlation, kGlobalPid, name, name, node);
  };
  auto node = [&](int64_t time, int64_t id, const char* original, int name) {
    absl::StrAppendFormat(&sql,
                          "INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (%d, %d, 1, %d, %d, %d, "
                          "%s);\n",
                          time, time, kGlobalTid, name, id, original);
  };
  // The capture, at start-up.
  call(1000, 1010, 1, 1);
  range(1050, 1450, "decoder.0");
  range(1090, 1200, "aten::mm");
  call(1100, 1110, 2, 2);
  range(1290, 1400, "aten::rms_norm");
  call(1300, 1310, 3, 2);
  call(1420, 1430, 4, 3);
  call(1500, 1600, 5, 4);
  if (!options.without_node_events) {
    node(1105, 11, "NULL", 8);
    node(1305, 12, "NULL", 8);
    node(1550, 21, "11", 9);
    node(1551, 22, "12", 9);
  }
  // Two replays under the serving loop's step range.
  for (int i = 0; i < 2; ++i) {
    const int64_t t = 2000 + 1000 * i;
    range(t - 50, t + 400, "decode_step");
    call(t, t + 20, 6 + i, 5);
    kernel(t + 100, t + 200, 6 + i, 6, 21);
    kernel(t + 200, t + 250, 6 + i, 7, 22);
  }
  if (options.foreign_replay) {
    call(4000, 4020, 8, 5);
    kernel(4100, 4180, 8, 6, 99);
  }
  Exec(db, absl::StrCat("BEGIN;\n", sql, "COMMIT;"));
  sqlite3_close(db);
}

}  // namespace opmap::testing
