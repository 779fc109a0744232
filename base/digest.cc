#include "base/digest.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace slotserve::base {
namespace {

EVP_MD_CTX* Context(void* context) { return static_cast<EVP_MD_CTX*>(context); }

}  // namespace

// OpenSSL's digest calls fail only on allocation failure or misuse; both are fatal here.
Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr || EVP_DigestInit_ex(Context(context_), EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(Context(context_)); }

void Sha256::Update(std::span<const uint8_t> bytes) {
  if (EVP_DigestUpdate(Context(context_), bytes.data(), bytes.size()) != 1) std::abort();
}

void Sha256::Update(std::string_view bytes) {
  Update(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

Digest Sha256::Finish() {
  Digest digest;
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(Context(context_), digest.data(), &length) != 1 ||
      length != digest.size()) {
    std::abort();
  }
  return digest;
}

Digest Sha256Of(std::span<const uint8_t> bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.Finish();
}

Digest HmacSha256(std::string_view key, std::span<const uint8_t> bytes) {
  Digest digest;
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes.data(), bytes.size(),
           digest.data(), &length) == nullptr ||
      length != digest.size()) {
    std::abort();
  }
  return digest;
}

bool DigestsEqual(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string HexOf(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t byte : bytes) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace slotserve::base
