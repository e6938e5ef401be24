#include "tests/testing/gzip_bytes.h"

#include <zlib.h>

#include <cstring>

#include "gtest/gtest.h"

namespace opmap::testing {

std::string GzipBytes(const std::string& data, int level) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // windowBits 15 + 16: a gzip header and trailer, not a zlib one.
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace opmap::testing
