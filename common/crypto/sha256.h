// SHA-256 of bytes (libcrypto's EVP), as raw digest or lowercase hex. Used for import
// session ids and the report digests sign-offs refer to.
#ifndef OPMAP_COMMON_CRYPTO_SHA256_H_
#define OPMAP_COMMON_CRYPTO_SHA256_H_

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

namespace opmap::crypto {

// The digest of the parts concatenated. libcrypto without SHA-256 is a broken install:
// aborts with a message rather than returning a made-up digest.
std::array<unsigned char, 32> Sha256(std::initializer_list<std::string_view> parts);
std::string Sha256Hex(std::string_view bytes);

// The same digest over bytes that come a piece at a time (a file read in chunks).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::string_view bytes);
  std::array<unsigned char, 32> Finish();  // once

 private:
  void* ctx_;  // EVP_MD_CTX
};

}  // namespace opmap::crypto

#endif  // OPMAP_COMMON_CRYPTO_SHA256_H_
