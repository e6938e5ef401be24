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

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace opmap::collector {

// OK when `db_path`-wal is absent, empty, or intact; DataLoss naming the file, the frame
// and its offset when a frame fails its checksum (or the header does while frames
// follow): SQLite would silently drop the commits from there on. Reads the file front to
// back once, a frame at a time. With DataLoss, `*damaged_from` (when given) is the byte
// offset where the damage starts: the bad frame, or 0 for a bad header.
absl::Status CheckWalFile(const std::string& db_path, uint64_t* damaged_from = nullptr);

// Copies the bytes of `db_path`-wal from `from` to its end (what SQLite ignores: the
// damage and everything after it) to `db_path`-wal.damaged-<the log's mtime s.ns>-from-
// <from> (0600, synced; kept as it is when that copy exists already) and returns that
// path. The store calls it before it checkpoints the log's valid prefix and empties the
// log, so what cannot be proven acknowledged is kept, not deleted. An error (the disk
// still full) names both files.
absl::StatusOr<std::string> KeepWalTail(const std::string& db_path, uint64_t from);

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_WAL_CHECK_H_
