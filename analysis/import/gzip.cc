#include "analysis/import/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"

namespace opmap::analysis {

bool LooksGzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
         static_cast<uint8_t>(bytes[1]) == 0x8b;
}

GzipChunkReader::GzipChunkReader(std::string_view compressed) : compressed_(compressed) {
  if (!LooksGzipped(compressed)) {
    status_ = absl::InvalidArgumentError("not a gzip stream (bad magic at byte 0)");
    return;
  }
  // ISIZE is the uncompressed size mod 2^32 of the last member: a hint, not a promise.
  // In a truncated file these are 4 arbitrary bytes: never trust more than deflate's
  // maximum ratio (1032:1) allows.
  if (compressed.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, compressed.data() + compressed.size() - 4, 4);
    hint_ = std::min<size_t>(isize, compressed.size() * 1032);
  }
  zs_ = std::make_unique<z_stream>();
  std::memset(zs_.get(), 0, sizeof(z_stream));
  // 16 + MAX_WBITS: expect a gzip header.
  if (inflateInit2(zs_.get(), 16 + MAX_WBITS) != Z_OK) {
    zs_.reset();
    status_ = absl::InternalError("zlib inflateInit2 failed");
  }
}

GzipChunkReader::~GzipChunkReader() {
  if (zs_) inflateEnd(zs_.get());
}

size_t GzipChunkReader::total_in() const { return fed_ - zs_->avail_in; }

absl::StatusOr<size_t> GzipChunkReader::Read(char* out, size_t capacity) {
  if (!status_.ok()) return status_;
  if (done_ || capacity == 0) return 0;
  z_stream& zs = *zs_;
  constexpr size_t kMaxStep = size_t{1} << 30;  // zlib counts in 32 bits
  const size_t want = std::min(capacity, kMaxStep);
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(want);
  auto consumed = [&] { return fed_ - zs.avail_in; };
  while (zs.avail_out > 0) {
    if (zs.avail_in == 0 && fed_ < compressed_.size()) {
      const size_t n = std::min(compressed_.size() - fed_, kMaxStep);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed_.data() + fed_));
      zs.avail_in = static_cast<uInt>(n);
      fed_ += n;
    }
    const uInt avail_before = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are legal (e.g. `cat a.gz b.gz`).
      if (LooksGzipped(compressed_.substr(consumed()))) {
        inflateReset(&zs);
        continue;
      }
      done_ = true;
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && fed_ == compressed_.size()) {
      status_ = absl::DataLossError(absl::StrFormat(
          "truncated gzip stream: compressed data ends at byte %d before the end of the "
          "stream (%d bytes inflated so far)",
          compressed_.size(), total_out_ + (want - zs.avail_out)));
      return status_;
    }
    if ((rc != Z_OK && rc != Z_BUF_ERROR) ||
        (rc == Z_BUF_ERROR && zs.avail_in > 0 && zs.avail_out == avail_before)) {
      status_ = absl::DataLossError(
          absl::StrFormat("corrupt gzip stream at compressed byte %d: %s", consumed(),
                          zs.msg ? zs.msg : "inflate error"));
      return status_;
    }
  }
  const size_t produced = want - zs.avail_out;
  total_out_ += produced;
  return produced;
}

absl::StatusOr<std::string> Gunzip(std::string_view compressed, size_t tail_padding) {
  GzipChunkReader reader(compressed);
  std::string out;
  out.reserve(reader.size_hint() + tail_padding);
  while (!reader.done()) {
    if (out.capacity() - out.size() < tail_padding + (1 << 16)) {
      out.reserve(out.capacity() * 2 + (1 << 20));
    }
    // Zero-fill (resize) at most 16 MiB ahead of what inflate has written: reserved but
    // untouched capacity costs no memory.
    size_t room = std::min<size_t>(out.capacity() - out.size() - tail_padding, size_t{1} << 24);
    size_t old = out.size();
    // resize_and_overwrite is C++23; resize zero-fills, which is cheap next to inflate.
    out.resize(old + room);
    absl::StatusOr<size_t> n = reader.Read(out.data() + old, room);
    if (!n.ok()) return n.status();
    out.resize(old + *n);
  }
  return out;
}

}  // namespace opmap::analysis
