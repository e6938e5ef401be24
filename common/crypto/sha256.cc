#include "common/crypto/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <iostream>

namespace opmap::crypto {

std::array<unsigned char, 32> Sha256(std::initializer_list<std::string_view> parts) {
  std::array<unsigned char, 32> out{};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  for (std::string_view p : parts) ok = ok && EVP_DigestUpdate(ctx, p.data(), p.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, digest, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok || len != out.size()) {
    std::cerr << "opmap: SHA-256 unavailable in libcrypto\n";
    std::abort();
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = digest[i];
  return out;
}

namespace {
[[noreturn]] void Unavailable() {
  std::cerr << "opmap: SHA-256 unavailable in libcrypto\n";
  std::abort();
}
}  // namespace

Sha256Stream::Sha256Stream() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
    Unavailable();
  }
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Stream::Update(std::string_view bytes) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size()) != 1) {
    Unavailable();
  }
}

std::array<unsigned char, 32> Sha256Stream::Finish() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::array<unsigned char, 32> out{};
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &len) != 1 || len != out.size()) {
    Unavailable();
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = digest[i];
  return out;
}

std::string Sha256Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : Sha256({bytes})) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

}  // namespace opmap::crypto
