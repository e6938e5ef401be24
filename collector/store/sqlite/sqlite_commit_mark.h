// How many batch commits this store has acknowledged, kept beside the database file
// (PATH-acked) as well as inside it (meta 'commits').
//
// Why: a damaged write-ahead log is cut by SQLite at the first bad frame, silently, and
// the commits after it vanish; a torn frame left by a kill in mid-write looks the same
// to a reader of the log, so the log alone cannot tell "never acknowledged" from "lost".
// The mark can: it is written after each commit returns (a plain write, which survives
// a process kill as the WAL does), so at open a database that holds fewer commits than
// were acknowledged has lost acknowledged data and is refused.
#ifndef OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_COMMIT_MARK_H_
#define OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_COMMIT_MARK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace opmap::collector {

class CommitMark {
 public:
  // Opens (creating, 0600) `db_path`-acked. A file that is not a mark (wrong size or
  // check word) is DataLoss naming it.
  static absl::StatusOr<std::unique_ptr<CommitMark>> Open(const std::string& db_path);
  ~CommitMark();
  CommitMark(const CommitMark&) = delete;
  CommitMark& operator=(const CommitMark&) = delete;

  int64_t acknowledged() const { return acknowledged_; }  // 0 for a new file
  const std::string& path() const { return path_; }
  // Records `commits` acknowledged (16 bytes at offset 0).
  absl::Status Write(int64_t commits);

 private:
  CommitMark(int fd, std::string path, int64_t acknowledged)
      : fd_(fd), path_(std::move(path)), acknowledged_(acknowledged) {}
  int fd_;
  std::string path_;
  int64_t acknowledged_;
};

}  // namespace opmap::collector

#endif  // OPMAP_COLLECTOR_STORE_SQLITE_SQLITE_COMMIT_MARK_H_
