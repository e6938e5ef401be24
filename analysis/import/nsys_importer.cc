#include "analysis/import/nsys_importer.h"

#include <sqlite3.h>

#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "analysis/import/cuda_names.h"
#include "analysis/import/nvtx_names.h"

namespace opmap::analysis {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // plus its NUL: 16 bytes
constexpr int64_t kNvtxPushPop = 59;                 // ENUM_NSYS_EVENT_TYPE
constexpr int64_t kNvtxStartEnd = 60;

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

int64_t Pid(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
int64_t Tid(int64_t global_tid) { return global_tid & 0xFFFFFF; }

class NsysImporter {
 public:
  explicit NsysImporter(sqlite3* db) : db_(db) {}

  // The whole export into a Trace: every table in turn, in its start order.
  absl::StatusOr<Trace> Run() {
    RETURN_IF_ERROR(Begin());
    ASSIGN_OR_RETURN(std::vector<Cursor> cursors, Cursors());
    for (Cursor& c : cursors) {
      Event e;
      while (true) {
        ASSIGN_OR_RETURN(bool more, c.Next(&e));
        if (!more) break;
        Keep(e);
      }
    }
    if (HasTable("CUDA_GRAPH_NODE_EVENTS")) RETURN_IF_ERROR(LoadGraphNodes());
    return Finish();
  }

  // Whether the export recorded graph node creation (--cuda-graph-trace=node): a trace
  // the node-id merge needs whole (analysis/graphs/node_id_merge.h).
  absl::StatusOr<bool> RecordsGraphNodes() {
    RETURN_IF_ERROR(Harden());
    RETURN_IF_ERROR(LoadTables());
    if (!HasTable("CUDA_GRAPH_NODE_EVENTS")) return false;
    bool any = false;
    RETURN_IF_ERROR(ForEachRow("CUDA_GRAPH_NODE_EVENTS",
                               "SELECT 1 FROM CUDA_GRAPH_NODE_EVENTS LIMIT 1",
                               [&](sqlite3_stmt*, int64_t) {
                                 any = true;
                                 return absl::OkStatus();
                               }));
    return any;
  }

  // The same, every table's rows merged in start order (ties: kernels, memcpy, memset,
  // runtime calls, NVTX ranges) and handed to `consumer`, never held.
  absl::StatusOr<Trace> Stream(EventConsumer& consumer) {
    RETURN_IF_ERROR(Begin());
    RETURN_IF_ERROR(LoadFirstCorrelations());
    ASSIGN_OR_RETURN(std::vector<Cursor> cursors, Cursors());
    consumer.OnStart(trace_.info, &trace_.strings);
    std::vector<Event> heads(cursors.size());
    auto later = [&](size_t a, size_t b) {
      if (heads[a].start() != heads[b].start()) return heads[a].start() > heads[b].start();
      return a > b;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
    for (size_t i = 0; i < cursors.size(); ++i) {
      ASSIGN_OR_RETURN(bool more, cursors[i].Next(&heads[i]));
      if (more) heap.push(i);
    }
    while (!heap.empty()) {
      const size_t i = heap.top();
      heap.pop();
      const Event& e = heads[i];
      if (e.kind == Event::kGpu) consumer.OnGpuEvent(e.gpu);
      if (e.kind == Event::kCall) consumer.OnApiCall(e.call);
      if (e.kind == Event::kRange) consumer.OnRange(e.range);
      ASSIGN_OR_RETURN(bool more, cursors[i].Next(&heads[i]));
      if (more) heap.push(i);
    }
    consumer.OnFinish();
    return Finish();
  }

  // One row as an event of the model.
  struct Event {
    enum Kind : uint8_t { kGpu, kCall, kRange } kind = kGpu;
    GpuEvent gpu;
    ApiCall call;
    Range range;
    int64_t start() const {
      return kind == kGpu ? gpu.start_ns : kind == kCall ? call.start_ns : range.start_ns;
    }
  };
  // A table's rows in start order, turned into events one at a time.
  using Convert = std::function<absl::StatusOr<bool>(sqlite3_stmt*, int64_t, Event*)>;
  class Cursor {
   public:
    Cursor(NsysImporter* importer, std::string table, Stmt st, Convert convert)
        : importer_(importer), table_(std::move(table)), st_(std::move(st)),
          convert_(std::move(convert)) {}
    // The next row that is an event (NVTX ranges still open are skipped, counted).
    absl::StatusOr<bool> Next(Event* out) {
      while (true) {
        const int rc = sqlite3_step(st_.get());
        if (rc == SQLITE_DONE) return false;
        if (rc != SQLITE_ROW) return importer_->Error(absl::StrFormat("%s row %d", table_, index_));
        ASSIGN_OR_RETURN(bool event, convert_(st_.get(), index_++, out));
        if (event) return true;
      }
    }

   private:
    NsysImporter* importer_;
    std::string table_;
    Stmt st_;
    Convert convert_;
    int64_t index_ = 0;
  };

  absl::Status Begin() {
    RETURN_IF_ERROR(Harden());
    RETURN_IF_ERROR(LoadTables());
    for (const char* required :
         {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
      if (!tables_.contains(std::string(required))) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "not an Nsight Systems export: no table %s (export with `nsys export --type "
            "sqlite` and CUDA trace enabled)",
            required));
      }
    }
    trace_.info.format = "nsys-sqlite";
    RETURN_IF_ERROR(LoadStrings());
    RETURN_IF_ERROR(LoadWindow());
    if (HasTable("TARGET_INFO_GPU")) RETURN_IF_ERROR(LoadGpuNames());
    if (!HasTable("NVTX_EVENTS")) {
      trace_.info.unavailable.emplace_back("nvtx", "the export has no NVTX_EVENTS table");
    }
    return absl::OkStatus();
  }

  Trace Finish() {
    if (open_ranges_ > 0) trace_.info.counters.emplace_back("nvtx_open_ranges", open_ranges_);
    if (output_markers_ > 0) {
      trace_.info.counters.emplace_back("nvtx_output_markers", output_markers_);
    }
    return std::move(trace_);
  }

  void Keep(const Event& e) {
    if (e.kind == Event::kGpu) trace_.gpu_events.push_back(e.gpu);
    if (e.kind == Event::kCall) trace_.api_calls.push_back(e.call);
    if (e.kind == Event::kRange) trace_.ranges.push_back(e.range);
  }

  absl::StatusOr<std::vector<Cursor>> Cursors() {
    std::vector<Cursor> out;
    ASSIGN_OR_RETURN(Cursor kernels, Kernels());
    out.push_back(std::move(kernels));
    if (HasTable("CUPTI_ACTIVITY_KIND_MEMCPY")) {
      ASSIGN_OR_RETURN(Cursor memcpy, Memcpy());
      out.push_back(std::move(memcpy));
    }
    if (HasTable("CUPTI_ACTIVITY_KIND_MEMSET")) {
      ASSIGN_OR_RETURN(Cursor memset, Memset());
      out.push_back(std::move(memset));
    }
    ASSIGN_OR_RETURN(Cursor runtime, Runtime());
    out.push_back(std::move(runtime));
    if (HasTable("NVTX_EVENTS")) {
      ASSIGN_OR_RETURN(Cursor nvtx, Nvtx());
      out.push_back(std::move(nvtx));
    }
    return out;
  }

  absl::StatusOr<Cursor> Open(std::string_view table, const std::string& sql, Convert convert) {
    ASSIGN_OR_RETURN(Stmt st, Prepare(sql));
    return Cursor(this, std::string(table), std::move(st), std::move(convert));
  }

  // The smallest runtime-call correlation per process, for parts of the export.
  absl::Status LoadFirstCorrelations() {
    return ForEachRow(
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "SELECT globalTid, MIN(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME "
        "WHERE correlationId IS NOT NULL GROUP BY (globalTid >> 24) & 16777215",
        [&](sqlite3_stmt* st, int64_t) {
          trace_.info.first_correlation.emplace_back(Pid(sqlite3_column_int64(st, 0)),
                                                     sqlite3_column_int64(st, 1));
          return absl::OkStatus();
        });
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", what, sqlite3_errmsg(db_)));
  }

  absl::StatusOr<Stmt> Prepare(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      return Error(absl::StrFormat("query \"%s\"", sql));
    }
    return Stmt(st);
  }

  // Steps through all rows, calling `row` on each; a row error names the table and row.
  template <typename Row>
  absl::Status ForEachRow(std::string_view table, const std::string& sql, Row&& row) {
    ASSIGN_OR_RETURN(Stmt st, Prepare(sql));
    int64_t index = 0;
    while (true) {
      const int rc = sqlite3_step(st.get());
      if (rc == SQLITE_DONE) return absl::OkStatus();
      if (rc != SQLITE_ROW) return Error(absl::StrFormat("%s row %d", table, index));
      RETURN_IF_ERROR(row(st.get(), index));
      ++index;
    }
  }

  // An export is a file from elsewhere; SQLite's advice for such files
  // (sqlite.org/security.html): check each cell's size as a page is read, so a damaged page
  // is refused at once rather than parsed (parsed, whether the same file imported or
  // streamed depended on what the process had read before: fuzz finding 15); defensive
  // mode; functions in the schema only if harmless; no memory-mapped reads.
  absl::Status Harden() {
    int unused = 0;
    if (sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, &unused) != SQLITE_OK ||
        sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &unused) != SQLITE_OK ||
        sqlite3_exec(db_, "PRAGMA cell_size_check=ON; PRAGMA mmap_size=0", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      return Error("setting up the read of an untrusted file");
    }
    return absl::OkStatus();
  }

  absl::Status LoadTables() {
    ASSIGN_OR_RETURN(Stmt st, Prepare("SELECT name FROM sqlite_master WHERE type = 'table'"));
    while (true) {
      const int rc = sqlite3_step(st.get());
      if (rc == SQLITE_DONE) return absl::OkStatus();
      if (rc != SQLITE_ROW) return Error("reading the table list");
      tables_.insert(reinterpret_cast<const char*>(sqlite3_column_text(st.get(), 0)));
    }
  }

  // The column if the table has it, else NULL (older exports lack graph ids, for one).
  std::string Column(std::string_view table, std::string_view column) {
    auto& columns = columns_[std::string(table)];
    if (columns.empty()) {
      absl::StatusOr<Stmt> st = Prepare(absl::StrFormat("PRAGMA table_info(%s)", table));
      if (st.ok()) {
        while (sqlite3_step(st->get()) == SQLITE_ROW) {
          columns.insert(reinterpret_cast<const char*>(sqlite3_column_text(st->get(), 1)));
        }
      }
    }
    return columns.contains(std::string(column)) ? std::string(column) : "NULL";
  }

  absl::Status LoadStrings() {
    return ForEachRow("StringIds", "SELECT id, value FROM StringIds",
                      [&](sqlite3_stmt* st, int64_t) {
                        const unsigned char* text = sqlite3_column_text(st, 1);
                        strings_[sqlite3_column_int64(st, 0)] =
                            text ? reinterpret_cast<const char*>(text) : "";
                        return absl::OkStatus();
                      });
  }

  std::string_view String(sqlite3_stmt* st, int col) {
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return {};
    auto it = strings_.find(sqlite3_column_int64(st, col));
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }

  absl::Status LoadWindow() {
    if (!HasTable("META_DATA_EXPORT")) return absl::OkStatus();
    return ForEachRow(
        "META_DATA_EXPORT",
        "SELECT value FROM META_DATA_EXPORT WHERE name = 'DERIVED_WINDOW_NS'",
        [&](sqlite3_stmt* st, int64_t) {
          const char* v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
          std::vector<std::string> parts = absl::StrSplit(v ? v : "", '-');
          int64_t a, b;
          if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &a) &&
              absl::SimpleAtoi(parts[1], &b) && a <= b) {
            trace_.info.window_start_ns = a;
            trace_.info.window_end_ns = b;
          }
          return absl::OkStatus();
        });
  }

  absl::Status CheckTimes(std::string_view table, int64_t index, sqlite3_stmt* st) {
    if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s row %d: start or end is NULL", table, index));
    }
    const int64_t start = sqlite3_column_int64(st, 0);
    const int64_t end = sqlite3_column_int64(st, 1);
    // The bounds every source keeps (model/trace.h): no end or difference overflows.
    if (start < -kMaxTimestampNs || start > kMaxTimestampNs || end < -kMaxTimestampNs ||
        end > kMaxTimestampNs) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s row %d: start %d or end %d is out of range (|t| > 2^62 ns)", table, index, start, end));
    }
    if (end >= start && end - start > kMaxDurationNs) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s row %d: end - start = %d ns is out of range (> 2^52 ns)", table, index, end - start));
    }
    if (sqlite3_column_int64(st, 1) < sqlite3_column_int64(st, 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s row %d: end %d < start %d", table, index, sqlite3_column_int64(st, 1),
          sqlite3_column_int64(st, 0)));
    }
    return absl::OkStatus();
  }

  static int64_t IntOr(sqlite3_stmt* st, int col, int64_t none) {
    return sqlite3_column_type(st, col) == SQLITE_NULL ? none : sqlite3_column_int64(st, col);
  }
  // Graph ids: NULL and 0 both mean "not launched from a graph".
  static int64_t NonZeroOr(sqlite3_stmt* st, int col) {
    const int64_t v = IntOr(st, col, 0);
    return v == 0 ? kNone : v;
  }

  absl::StatusOr<Cursor> Kernels() {
    constexpr std::string_view t = "CUPTI_ACTIVITY_KIND_KERNEL";
    const std::string sql = absl::StrFormat(
        "SELECT start, end, deviceId, streamId, correlationId, globalPid, %s, %s, "
        "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
        "staticSharedMemory, dynamicSharedMemory, %s, %s FROM %s ORDER BY start",
        Column(t, "demangledName"), Column(t, "shortName"), Column(t, "graphId"),
        Column(t, "graphNodeId"), t);
    return Open(t, sql, [this, t](sqlite3_stmt* st, int64_t index, Event* out) -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(CheckTimes(t, index, st));
      GpuEvent& e = out->gpu;
      e = GpuEvent();
      out->kind = Event::kGpu;
      e.start_ns = sqlite3_column_int64(st, 0);
      e.dur_ns = sqlite3_column_int64(st, 1) - e.start_ns;
      e.device = static_cast<int32_t>(sqlite3_column_int64(st, 2));
      e.stream = sqlite3_column_int64(st, 3);
      e.correlation = IntOr(st, 4, kNone);
      e.process = Pid(sqlite3_column_int64(st, 5));
      std::string_view name = String(st, 6);
      if (name.empty()) name = String(st, 7);
      e.name = trace_.strings.Intern(name);
      e.registers_per_thread = static_cast<int32_t>(IntOr(st, 8, -1));
      for (int i = 0; i < 3; ++i) {
        e.grid[i] = static_cast<int32_t>(sqlite3_column_int64(st, 9 + i));
        e.block[i] = static_cast<int32_t>(sqlite3_column_int64(st, 12 + i));
      }
      e.shared_memory_bytes = sqlite3_column_int64(st, 15) + sqlite3_column_int64(st, 16);
      e.graph_id = NonZeroOr(st, 17);
      e.graph_node_id = NonZeroOr(st, 18);
      return true;
    });
  }

  absl::StatusOr<Cursor> Memcpy() {
    constexpr std::string_view t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    const std::string sql = absl::StrFormat(
        "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind, "
        "srcKind, dstKind, %s FROM %s ORDER BY start",
        Column(t, "graphNodeId"), t);
    return Open(t, sql, [this, t](sqlite3_stmt* st, int64_t index, Event* out) -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(CheckTimes(t, index, st));
      out->kind = Event::kGpu;
      GpuEvent& e = out->gpu;
      e = MemoryEvent(st, GpuEventKind::kMemcpy);
      e.name = trace_.strings.Intern(MemcpyName(sqlite3_column_int64(st, 7),
                                                sqlite3_column_int64(st, 8),
                                                sqlite3_column_int64(st, 9)));
      e.graph_node_id = NonZeroOr(st, 10);
      return true;
    });
  }

  absl::StatusOr<Cursor> Memset() {
    constexpr std::string_view t = "CUPTI_ACTIVITY_KIND_MEMSET";
    const std::string sql = absl::StrFormat(
        "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, %s, %s "
        "FROM %s ORDER BY start",
        Column(t, "memKind"), Column(t, "graphNodeId"), t);
    return Open(t, sql, [this, t](sqlite3_stmt* st, int64_t index, Event* out) -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(CheckTimes(t, index, st));
      out->kind = Event::kGpu;
      GpuEvent& e = out->gpu;
      e = MemoryEvent(st, GpuEventKind::kMemset);
      e.name = trace_.strings.Intern(MemsetName(IntOr(st, 7, 0)));
      e.graph_node_id = NonZeroOr(st, 8);
      return true;
    });
  }

  // Columns 0..6: start, end, deviceId, streamId, correlationId, globalPid, bytes.
  static GpuEvent MemoryEvent(sqlite3_stmt* st, GpuEventKind kind) {
    GpuEvent e;
    e.kind = kind;
    e.start_ns = sqlite3_column_int64(st, 0);
    e.dur_ns = sqlite3_column_int64(st, 1) - e.start_ns;
    e.device = static_cast<int32_t>(sqlite3_column_int64(st, 2));
    e.stream = sqlite3_column_int64(st, 3);
    e.correlation = IntOr(st, 4, kNone);
    e.process = Pid(sqlite3_column_int64(st, 5));
    e.bytes = sqlite3_column_int64(st, 6);
    return e;
  }

  absl::StatusOr<Cursor> Runtime() {
    constexpr std::string_view t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    const std::string sql = absl::StrFormat(
        "SELECT start, end, globalTid, correlationId, nameId FROM %s ORDER BY start", t);
    return Open(t, sql, [this, t](sqlite3_stmt* st, int64_t index, Event* out) -> absl::StatusOr<bool> {
      RETURN_IF_ERROR(CheckTimes(t, index, st));
      out->kind = Event::kCall;
      ApiCall& a = out->call;
      a = ApiCall();
      a.start_ns = sqlite3_column_int64(st, 0);
      a.dur_ns = sqlite3_column_int64(st, 1) - a.start_ns;
      const int64_t gtid = sqlite3_column_int64(st, 2);
      a.process = Pid(gtid);
      a.thread = Tid(gtid);
      a.correlation = IntOr(st, 3, kNone);
      a.name = trace_.strings.Intern(StripApiVersion(String(st, 4)));
      a.kind = ApiKind::kRuntime;
      return true;
    });
  }

  absl::StatusOr<Cursor> Nvtx() {
    constexpr std::string_view t = "NVTX_EVENTS";
    const std::string sql = absl::StrFormat(
        "SELECT start, end, eventType, text, textId, globalTid FROM %s "
        "WHERE eventType IN (%d, %d) ORDER BY start",
        t, kNvtxPushPop, kNvtxStartEnd);
    return Open(t, sql, [this, t](sqlite3_stmt* st, int64_t index, Event* out) -> absl::StatusOr<bool> {
      // A range still open when the capture ended has no end: counted, not guessed.
      if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
        ++open_ranges_;
        return false;
      }
      RETURN_IF_ERROR(CheckTimes(t, index, st));
      std::string_view text;
      if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
        text = reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
      } else {
        text = String(st, 4);
      }
      out->kind = Event::kRange;
      Range& r = out->range;
      r = Range();
      if (!NameNvtxRange(text, trace_.strings, r)) {
        ++output_markers_;
        return false;
      }
      r.start_ns = sqlite3_column_int64(st, 0);
      r.dur_ns = sqlite3_column_int64(st, 1) - r.start_ns;
      r.kind = RangeKind::kNvtx;
      const int64_t gtid = sqlite3_column_int64(st, 5);
      r.process = Pid(gtid);
      r.thread = Tid(gtid);
      return true;
    });
  }

  // Graph node creations and clones; a row without a node id names nothing and is
  // counted, a row without a thread still links a clone to its original.
  absl::Status LoadGraphNodes() {
    constexpr std::string_view t = "CUDA_GRAPH_NODE_EVENTS";
    int64_t without_id = 0;
    RETURN_IF_ERROR(ForEachRow(
        t,
        absl::StrFormat("SELECT start, %s, graphNodeId, %s FROM %s ORDER BY start",
                        Column(t, "globalTid"), Column(t, "originalGraphNodeId"), t),
        [&](sqlite3_stmt* st, int64_t) {
          GraphNodeEvent e;
          e.node_id = NonZeroOr(st, 2);
          if (e.node_id == kNone) {
            ++without_id;
            return absl::OkStatus();
          }
          e.time_ns = sqlite3_column_int64(st, 0);
          if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
            const int64_t gtid = sqlite3_column_int64(st, 1);
            e.process = Pid(gtid);
            e.thread = Tid(gtid);
          }
          e.original_node_id = NonZeroOr(st, 3);
          trace_.graph_nodes.push_back(e);
          return absl::OkStatus();
        }));
    if (without_id > 0) {
      trace_.info.counters.emplace_back("graph_node_events_without_node_id", without_id);
    }
    return absl::OkStatus();
  }

  absl::Status LoadGpuNames() {
    return ForEachRow("TARGET_INFO_GPU", "SELECT DISTINCT name FROM TARGET_INFO_GPU",
                      [&](sqlite3_stmt* st, int64_t) {
                        const unsigned char* n = sqlite3_column_text(st, 0);
                        if (n) trace_.info.gpu_names.emplace_back(reinterpret_cast<const char*>(n));
                        return absl::OkStatus();
                      });
  }

  bool HasTable(const char* name) const { return tables_.contains(std::string(name)); }

  sqlite3* db_;
  Trace trace_;
  absl::flat_hash_set<std::string> tables_;
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> columns_;
  absl::flat_hash_map<int64_t, std::string> strings_;
  int64_t open_ranges_ = 0;
  int64_t output_markers_ = 0;
};

absl::Status SayDamaged(absl::Status status) {
  if (!status.ok() && absl::StrContains(status.message(), "malformed")) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s (the file is truncated or damaged)", status.message()));
  }
  return status;
}

template <typename T>
absl::StatusOr<T> SayDamaged(absl::StatusOr<T> result) {
  if (!result.ok()) return SayDamaged(result.status());
  return result;
}

}  // namespace

bool LooksLikeSqlite(std::string_view head) {
  return head.size() >= sizeof(kSqliteMagic) &&
         std::memcmp(head.data(), kSqliteMagic, sizeof(kSqliteMagic)) == 0;
}

absl::StatusOr<Trace> ImportNsysSqlite(std::string bytes) {
  if (!LooksLikeSqlite(bytes)) {
    return absl::InvalidArgumentError("not an SQLite database (no \"SQLite format 3\" header)");
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return absl::InternalError("sqlite3_open_v2(:memory:) failed");
  }
  Db db(raw);
  // Read-only over our buffer, which outlives `db` (declared before it in this scope).
  const int rc = sqlite3_deserialize(
      db.get(), "main", reinterpret_cast<unsigned char*>(bytes.data()),
      static_cast<sqlite3_int64>(bytes.size()), static_cast<sqlite3_int64>(bytes.size()),
      SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot open the SQLite image: %s", sqlite3_errmsg(db.get())));
  }
  NsysImporter importer(db.get());
  return SayDamaged(importer.Run());
}

absl::StatusOr<bool> NsysRecordsGraphNodes(sqlite3* db) {
  NsysImporter importer(db);
  return SayDamaged(importer.RecordsGraphNodes());
}

absl::StatusOr<Trace> StreamNsysEvents(sqlite3* db, EventConsumer& consumer) {
  NsysImporter importer(db);
  return SayDamaged(importer.Stream(consumer));
}

}  // namespace opmap::analysis
