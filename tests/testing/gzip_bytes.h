// gzip (RFC 1952) bytes of a string, written by zlib: the compressed traces the import
// tests feed to the readers.
#ifndef OPMAP_TESTS_TESTING_GZIP_BYTES_H_
#define OPMAP_TESTS_TESTING_GZIP_BYTES_H_

#include <string>

namespace opmap::testing {

// `level` is zlib's: 1 (fast) … 9 (small); -1 is zlib's default (6). A zlib failure is a
// test failure (EXPECT), not an exception.
std::string GzipBytes(const std::string& data, int level = -1);

}  // namespace opmap::testing

#endif  // OPMAP_TESTS_TESTING_GZIP_BYTES_H_
