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

absl::StatusOr<std::string> Gunzip(std::string_view compressed, size_t tail_padding) {
  if (!LooksGzipped(compressed)) {
    return absl::InvalidArgumentError("not a gzip stream (bad magic at byte 0)");
  }
  // ISIZE is the uncompressed size mod 2^32 of the last member: a hint, not a promise.
  // In a truncated file these are 4 arbitrary bytes: never trust more than deflate's
  // maximum ratio (1032:1) allows.
  size_t hint = 0;
  if (compressed.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, compressed.data() + compressed.size() - 4, 4);
    hint = std::min<size_t>(isize, compressed.size() * 1032);
  }
  std::string out;
  out.reserve(hint + tail_padding);

  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 16 + MAX_WBITS: expect a gzip header.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib inflateInit2 failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (true) {
    if (out.capacity() - out.size() < tail_padding + (1 << 16)) {
      out.reserve(out.capacity() * 2 + (1 << 20));
    }
    // Zero-fill (resize) at most 16 MiB ahead of what inflate has written: reserved but
    // untouched capacity costs no memory.
    size_t room = std::min<size_t>(out.capacity() - out.size() - tail_padding, size_t{1} << 24);
    size_t old = out.size();
    // resize_and_overwrite is C++23; resize zero-fills, which is cheap next to inflate.
    out.resize(old + room);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    zs.avail_out = static_cast<uInt>(room);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(old + (room - zs.avail_out));
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are legal (e.g. `cat a.gz b.gz`).
      if (zs.avail_in > 0 && LooksGzipped(std::string_view(
                                  reinterpret_cast<const char*>(zs.next_in), zs.avail_in))) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      size_t at = compressed.size();
      inflateEnd(&zs);
      return absl::DataLossError(absl::StrFormat(
          "truncated gzip stream: compressed data ends at byte %d before the end of the "
          "stream (%d bytes inflated so far)", at, out.size()));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      size_t at = compressed.size() - zs.avail_in;
      std::string msg = zs.msg ? zs.msg : "inflate error";
      inflateEnd(&zs);
      return absl::DataLossError(
          absl::StrFormat("corrupt gzip stream at compressed byte %d: %s", at, msg));
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace opmap::analysis
