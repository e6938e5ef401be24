// Imports an Nsight Systems SQLite export (`nsys export --type sqlite`, or the .sqlite
// `nsys stats` leaves beside a report) into a Trace: kernels, memcpy/memset, CUDA runtime
// calls, NVTX push/pop and start/end ranges, strings, graph ids. Kernels then map to
// operators by the one mapping (analysis/mapping): kernel → runtime launch with the same
// correlationId in the same process → innermost NVTX range on the launching thread.
//
// ImportNsysSqlite opens the database from bytes already in memory (sqlite3_deserialize,
// read-only); StreamNsysEvents queries a handle its caller opened: no I/O here. Errors are kInvalidArgument and name what is wrong — "not an SQLite
// database", "not an Nsight Systems export: no table CUPTI_ACTIVITY_KIND_KERNEL",
// "CUPTI_ACTIVITY_KIND_KERNEL row 17: end < start", a truncated file's SQLite error.
//
// Processes and threads: Nsight's globalPid/globalTid carry the pid in bits 24..47 and the
// tid in bits 0..23; ranges, launches and kernels get those pids and tids. NVTX names go
// through ParseNvtxName (emit_nvtx decorations dropped, shape payloads read). Graph node
// creations and clones (CUDA_GRAPH_NODE_EVENTS) go to Trace::graph_nodes.
// Fuzzed by tests/fuzz/nsys_sqlite_fuzzer.cc (docs/fuzzing.md).
#ifndef OPMAP_ANALYSIS_IMPORT_NSYS_IMPORTER_H_
#define OPMAP_ANALYSIS_IMPORT_NSYS_IMPORTER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/import/event_consumer.h"
#include "analysis/model/trace.h"

struct sqlite3;

namespace opmap::analysis {

// True when `head` (the file's first bytes) starts like an SQLite database.
bool LooksLikeSqlite(std::string_view head);

absl::StatusOr<Trace> ImportNsysSqlite(std::string bytes);

// Whether the export recorded CUDA graph node creation (CUDA_GRAPH_NODE_EVENTS rows, from
// --cuda-graph-trace=node): then ImportNsysSqlite fills Trace::graph_nodes and the node-id
// merge (analysis/graphs/node_id_merge.h) needs the whole trace, not a stream.
absl::StatusOr<bool> NsysRecordsGraphNodes(sqlite3* db);

// The same over a database the caller opened (a file opened read-only in place: nothing
// of it is loaded), with the events handed to `consumer` in start order (every table's
// rows merged; SQLite sorts each table, through temporary files when it is large) instead
// of kept. The Trace returned holds the info (with first_correlation) and the names.
absl::StatusOr<Trace> StreamNsysEvents(sqlite3* db, EventConsumer& consumer);

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_NSYS_IMPORTER_H_
