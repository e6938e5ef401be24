// Finds a damaged write-ahead log before SQLite opens the database.
//
// Why: SQLite treats the first WAL frame whose checksum fails as the end of the log and
// silently ignores every frame after it, commits included. After a crash that left the
// WAL damaged, the collector would start and answer queries from data older than what
// it had acknowledged. Read here first (format: sqlite.org/fileformat.html, "WAL file
// format"): a frame of the log's current generation (its salts match the header) whose
// cumulative checksum fails means committed data is about to vanish.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_WAL_CHECK_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_WAL_CHECK_H_

#include <string>

#include "absl/status/status.h"

namespace opmap::collector {

// OK when `db_path`-wal is absent, empty, or intact; DataLoss naming the file, the frame
// and its offset when a frame fails its checksum (or the header does while frames
// follow). Reads the file front to back once, a frame at a time.
absl::Status CheckWalFile(const std::string& db_path);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_WAL_CHECK_H_
