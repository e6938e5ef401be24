// Gunzip for trace bytes held in memory. The importer is handed bytes, never a path:
// reading files is the caller's business (analysis/ does no I/O).
#ifndef OPMAP_ANALYSIS_IMPORT_GZIP_H_
#define OPMAP_ANALYSIS_IMPORT_GZIP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

struct z_stream_s;

namespace opmap::analysis {

bool LooksGzipped(std::string_view bytes);

// Inflates a gzip stream (one or more members) into a string whose capacity leaves at
// least `tail_padding` spare bytes past size() — simdjson reads that far ahead, so the
// parser can use the result in place without a second copy. The gzip trailer's ISIZE is
// used to size the buffer once. Errors name the compressed byte offset where the stream
// broke (e.g. a truncated file).
absl::StatusOr<std::string> Gunzip(std::string_view compressed, size_t tail_padding);

// Inflates a gzip stream (one or more members) a piece at a time, into buffers the caller
// owns: the whole text never has to be in memory. Errors are Gunzip's, and sticky.
class GzipChunkReader {
 public:
  // `compressed` must outlive the reader.
  explicit GzipChunkReader(std::string_view compressed);
  ~GzipChunkReader();
  GzipChunkReader(const GzipChunkReader&) = delete;
  GzipChunkReader& operator=(const GzipChunkReader&) = delete;

  // Inflates up to `capacity` (> 0) bytes into `out`; returns how many. Fewer than
  // `capacity` only at the end of the stream, after which done() is true.
  absl::StatusOr<size_t> Read(char* out, size_t capacity);
  bool done() const { return done_; }
  // Bytes inflated so far.
  uint64_t total_out() const { return total_out_; }
  // Compressed bytes zlib has consumed so far.
  size_t total_in() const;
  // The trailer's ISIZE (the last member's size mod 2^32), capped by deflate's maximum
  // ratio: a hint for progress reports and buffer sizes, not a promise. 0 when unknown.
  size_t size_hint() const { return hint_; }

 private:
  std::string_view compressed_;
  std::unique_ptr<z_stream_s> zs_;
  size_t fed_ = 0;      // bytes of `compressed_` handed to zlib
  uint64_t total_out_ = 0;
  size_t hint_ = 0;
  bool done_ = false;
  absl::Status status_;
};

}  // namespace opmap::analysis

#endif  // OPMAP_ANALYSIS_IMPORT_GZIP_H_
