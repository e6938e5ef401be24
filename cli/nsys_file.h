// An Nsight Systems export opened in place, read-only and immutable (no journal, no lock,
// nothing of it loaded): what `opmap analyze` and `opmap import` stream from with
// StreamNsysEvents (analysis/import/nsys_importer.h).
#ifndef OPMAP_CLI_NSYS_FILE_H_
#define OPMAP_CLI_NSYS_FILE_H_

#include <sqlite3.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace opmap::cli {

struct NsysDbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using NsysDb = std::unique_ptr<sqlite3, NsysDbCloser>;

// True when the file starts with the SQLite header.
bool IsNsysFile(const std::string& path);

// An Nsight export that can be streamed: not one that recorded CUDA graph nodes, whose
// node-id merge needs the whole trace (analysis/graphs/node_id_merge.h).
bool IsStreamableNsysFile(const std::string& path);

absl::StatusOr<NsysDb> OpenNsysFile(const std::string& path);

}  // namespace opmap::cli

#endif  // OPMAP_CLI_NSYS_FILE_H_
